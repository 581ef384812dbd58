// The geo-diversity audit's analyses.filtered section (geo_audit_internal.h): per region, the share
// of requested generations the endpoint refused (a content-policy answer) or filtered, from the
// outcomes tables `generate t2i` writes (paper 002 reports filtered generations per region).
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "geo_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

namespace {

// The refusal intervals are at 95%, as the lvlm audit's: the rates are a description, not
// one of the indicators whose `ci` the spec sets.
constexpr double kRateLevel = 0.95;

struct RegionCount {
  std::size_t ok = 0, refused = 0, filtered = 0;
  std::size_t requested() const { return ok + refused + filtered; }
  std::size_t blocked() const { return refused + filtered; }
};

struct FilteredCounts {
  std::map<std::string, RegionCount> regions;  // aliased region -> counts
  std::size_t rows = 0, failed = 0, pending = 0, without_region = 0;
};

// One outcomes table's rows added to `c`: ok, refused and filtered rows count for their
// (aliased) region; failed and pending ones (no verdict of the endpoint) and rows without a
// region (the object form) are only counted.
void count_outcomes(const GeoAuditSpec& g, const GeoSource& src, FilteredCounts& c) {
  const Table t = read_table(src.outcomes.string());
  const Column& region = t.column(src.region_column);
  const Column& status = t.column("status");
  for (std::size_t i = 0; i < t.rows; ++i) {
    ++c.rows;
    const std::string s = status.text(i);
    VLBIAS_CHECK(s == "ok" || s == "refused" || s == "filtered" || s == "failed" || s == "pending",
                 InputError,
                 "{} line {}: column 'status' holds '{}'; expected ok, refused, filtered, failed "
                 "or pending",
                 t.source, t.line_of_row[i], s);
    if (s == "failed" || s == "pending") {
      ++(s == "failed" ? c.failed : c.pending);
      continue;
    }
    if (region.text(i).empty()) {
      ++c.without_region;
      continue;
    }
    RegionCount& r = c.regions[aliased(g.region_aliases, region.text(i))];
    ++(s == "ok" ? r.ok : s == "refused" ? r.refused : r.filtered);
  }
}

stats::TestResult chi_square_test(const FilteredCounts& c, TableBuilder& table) {
  std::vector<std::size_t> blocked, requested;
  for (const auto& [name, r] : c.regions) {
    blocked.push_back(r.blocked());
    requested.push_back(r.requested());
  }
  const stats::TestResult t = stats::chi_square_rates(blocked, requested);
  table.row();
  table.put("regions", static_cast<double>(requested.size()));
  table.put("chi_square", t.statistic);
  table.put("df", t.df.empty() ? stats::kNaN : t.df[0]);
  table.put("p_value", t.p_value);
  table.put("cramers_v", t.effect_size);
  return t;
}

}  // namespace

AnalysisOutput filtered_analysis(const GeoAuditSpec& g) {
  FilteredCounts c;
  GeoFiltered section;
  for (const GeoSource& src : g.generated) {
    if (src.outcomes.empty()) continue;
    count_outcomes(g, src, c);
    section.sources.push_back(src.outcomes.string());
  }
  AnalysisOutput out;
  TableBuilder table(kGeoFilteredSection);
  for (const auto& [name, r] : c.regions) {
    const double rate = static_cast<double>(r.blocked()) / static_cast<double>(r.requested());
    const stats::Interval ci = stats::wilson_interval(r.blocked(), r.requested(), kRateLevel);
    section.regions.push_back({name, static_cast<double>(r.requested()),
                               static_cast<double>(r.refused), static_cast<double>(r.filtered),
                               rate, ci.lower, ci.upper, kRateLevel});
    table.row();
    table.put("region", name);
    table.put("requested", static_cast<double>(r.requested()));
    table.put("refused", static_cast<double>(r.refused));
    table.put("filtered", static_cast<double>(r.filtered));
    table.put("rate", rate);
    table.put("ci_lower", ci.lower);
    table.put("ci_upper", ci.upper);
  }
  TableBuilder test_table("filtered_test");
  section.definition =
      "Per region: requested = generations the endpoint answered (status ok, refused or "
      "filtered in the outcomes tables); rate = (refused + filtered) / requested with a 95% "
      "Wilson interval; Pearson's chi-square test that every region has the same rate (no "
      "continuity correction; Cramer's V). Failed and pending requests are left out.";
  section.test = chi_square_test(c, test_table);
  section.rows = c.rows;
  section.failed = c.failed;
  section.pending = c.pending;
  section.without_region = c.without_region;
  out.json = to_json(section);
  out.pilot.filtered = std::move(section);
  if (c.failed + c.pending > 0) {
    out.notes.push_back(fmt::format(
        "filtered: {} failed and {} pending requests (no answer of the endpoint) are left out "
        "of the rates",
        c.failed, c.pending));
  }
  if (c.without_region > 0) {
    out.notes.push_back(fmt::format(
        "filtered: {} outcome rows have no region (object-form prompts) and are left out",
        c.without_region));
  }
  out.tables.emplace_back(kGeoFilteredSection, table.build());
  out.tables.emplace_back("filtered_test", test_table.build());
  return out;
}

GeoScores read_geo_scores(const GeoAuditSpec& g, const GeneratedData& gen) {
  const bool any_image = std::any_of(gen.image_path.begin(), gen.image_path.end(),
                                     [](const std::string& p) { return !p.empty(); });
  VLBIAS_CHECK(any_image, InputError,
               "scores: no generated table has the image column '{}' (features_model.column) the "
               "scores tables' key is matched to",
               g.features_model.column);
  GeoScores out;
  out.data = read_scores(g.scores, gen.image_path,
                         "the generated tables' column '" + g.features_model.column + "'");
  std::vector<std::string> with_region;
  for (const std::string& r : gen.region) {
    if (!r.empty()) with_region.push_back(r);
  }
  const Labels regions(with_region);
  ScoreGrouping by_region{"region", regions.names, {}};
  for (const std::string& r : gen.region) {
    by_region.of_unit.push_back(r.empty() ? kNoScoreGroup : regions.find(r));
  }
  out.groupings.push_back(std::move(by_region));
  check_score_groups(out.data, out.groupings);
  return out;
}

}  // namespace vlbias::audits_internal
