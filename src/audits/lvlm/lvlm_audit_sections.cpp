// Sections of the LVLM counterfactual analysis (lvlm_audit.h, docs/methods.md#paper-003): the
// helpers they share (lvlm_audit_internal.h), responses and ratings per group, and the registry of
// the sections that `vlbias metric` prints.
#include <algorithm>
#include <cassert>
#include <map>
#include <numeric>
#include <unordered_map>

#include "lvlm_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

namespace audits_internal {

Json level_json(const std::vector<std::string>& columns, const std::string& key) {
  if (columns.empty()) return Json::object();
  return key_json(columns, split_key(key));
}

std::string level_text(const Json& level) {
  if (!level.is_object() || level.empty()) return "all";
  std::string out;
  for (auto it = level.begin(); it != level.end(); ++it) {
    if (!out.empty()) out += ", ";
    out += it.key() + "=" + it.value().get<std::string>();
  }
  return out;
}

void put_level(TableBuilder& t, const std::vector<std::string>& columns, const std::string& key) {
  if (columns.empty()) return;
  const std::vector<std::string> parts = split_key(key);
  for (std::size_t i = 0; i < columns.size(); ++i) t.put(columns[i], parts[i]);
}

std::vector<std::vector<std::uint32_t>> groups_by_level(const LvlmState& s) {
  std::vector<std::vector<std::uint32_t>> out(s.by_levels.size());
  for (const auto& c : s.cells) out[c.first].push_back(c.second);
  for (auto& v : out) std::sort(v.begin(), v.end());
  return out;
}

std::vector<std::vector<std::uint32_t>> sets_by_level(const LvlmState& s) {
  std::vector<std::vector<std::uint32_t>> sets_of(s.by_levels.size());
  for (std::size_t i = 0; i < s.set_keys.size(); ++i) sets_of[s.set_by[i]].push_back(i);
  return sets_of;
}

std::vector<std::uint32_t> set_clusters(const LvlmState& s, const LvlmConfig& config,
                                        const LvlmReportOptions& o,
                                        std::span<const std::uint32_t> sets) {
  if (o.cluster.empty()) return {};
  std::vector<std::size_t> positions;
  for (const std::string& c : o.cluster) {
    const auto it = std::find(config.set_key.begin(), config.set_key.end(), c);
    VLBIAS_CHECK(it != config.set_key.end(), UsageError,
                 "cluster column '{}' is not a set-key column ({}): a cluster groups whole "
                 "counterfactual sets, e.g. the set key without its seed",
                 c, fmt::join(config.set_key, ", "));
    positions.push_back(static_cast<std::size_t>(it - config.set_key.begin()));
  }
  std::unordered_map<std::string, std::uint32_t> ids;
  std::vector<std::uint32_t> out;
  out.reserve(sets.size());
  for (const std::uint32_t i : sets) {
    const std::vector<std::string> parts = split_key(s.set_keys[i]);  // the set-key values
    assert(parts.size() == config.set_key.size());
    std::string cluster;
    for (const std::size_t p : positions) {
      cluster += parts[p];
      cluster += '\x1f';
    }
    const auto id = static_cast<std::uint32_t>(ids.size());
    out.push_back(ids.emplace(std::move(cluster), id).first->second);
  }
  return out;
}

std::string bootstrap_unit(const LvlmReportOptions& o, const std::string& set_unit) {
  if (o.cluster.empty()) return set_unit;
  return fmt::format("cluster ({}), then {} within it", fmt::join(o.cluster, ", "), set_unit);
}

namespace {

// Units 0..n-1 grouped by cluster id (0..C-1).
std::vector<std::vector<std::uint32_t>> cluster_members(std::span<const std::uint32_t> cluster) {
  std::vector<std::vector<std::uint32_t>> members;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    if (cluster[i] >= members.size()) members.resize(cluster[i] + 1);
    members[cluster[i]].push_back(static_cast<std::uint32_t>(i));
  }
  return members;
}

}  // namespace

std::pair<stats::Interval, stats::Interval> bootstrap_mean_p90(
    std::span<const double> x, std::span<const double> base, std::span<const std::uint32_t> cluster,
    const LvlmReportOptions& o, std::uint64_t seed) {
  const std::size_t n = x.size();
  const bool paired = !base.empty();
  assert(cluster.empty() || cluster.size() == n);
  stats::check_resamples(o.bootstrap, "bootstrap");
  const std::vector<std::vector<std::uint32_t>> members = cluster_members(cluster);
  // Units a draw may pick: one per unit (flat) or per cluster (two-stage); fewer than 2
  // leave every replicate the estimate itself, so there is no interval.
  const std::size_t units = cluster.empty() ? n : members.size();
  std::vector<double> means(o.bootstrap, kNaN), p90s(o.bootstrap, kNaN);
  if (units >= 2) {
    parallel_for(o.bootstrap, [&](std::size_t b) {
      Rng rng(seed, b);
      std::vector<double> a, c;
      a.reserve(n);
      c.reserve(paired ? n : 0);
      const auto take = [&](std::size_t u) {
        a.push_back(x[u]);
        if (paired) c.push_back(base[u]);
      };
      if (cluster.empty()) {
        for (std::size_t i = 0; i < n; ++i) take(rng.uniform_index(n));
      } else {
        for (std::size_t j = 0; j < units; ++j) {
          const std::vector<std::uint32_t>& m = members[rng.uniform_index(units)];
          for (std::size_t t = 0; t < m.size(); ++t) take(m[rng.uniform_index(m.size())]);
        }
      }
      const double size = static_cast<double>(a.size());
      means[b] =
          (std::accumulate(a.begin(), a.end(), 0.0) - std::accumulate(c.begin(), c.end(), 0.0)) /
          size;
      p90s[b] = stats::percentile_select(a, 90) - (paired ? stats::percentile_select(c, 90) : 0.0);
    });
  }
  return {stats::percentile_interval(means, o.ci, seed),
          stats::percentile_interval(p90s, o.ci, seed)};
}

Json interval_json(const stats::Interval& i, std::size_t resamples) {
  stats::Interval c = i;
  c.resamples = resamples;
  return to_json(c);
}

}  // namespace audits_internal

using namespace audits_internal;  // NOLINT(build/namespaces): lvlm_audit_internal.h

// ------------------------------------------------------------------ responses

namespace {

// Per by-level: Pearson's chi-square test that every group has the same refusal rate (paper
// 002 reports filtered generations per region; the API's refusals are generate lvlm's
// `refused` column, read with refusal_column).
Json refusal_tests(const LvlmState& s, const LvlmConfig& config, TableBuilder& table) {
  std::vector<std::vector<std::size_t>> refused(s.by_levels.size()), n(s.by_levels.size());
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    const auto h = hist_stats(s.lengths[c], [](std::uint32_t k) { return static_cast<double>(k); });
    refused[s.cells[c].first].push_back(s.refused[c]);
    n[s.cells[c].first].push_back(h.n);
  }
  Json tests = Json::array();
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    if (n[b].empty()) continue;
    const stats::TestResult t = stats::chi_square_rates(refused[b], n[b]);
    Json r = Json::object();
    if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[b]);
    r["groups"] = n[b].size();
    r["test"] = to_json(t);
    tests.push_back(std::move(r));
    table.row();
    put_level(table, config.by, s.by_levels[b]);
    table.put("groups", static_cast<double>(n[b].size()));
    table.put("chi_square", t.statistic);
    table.put("df", t.df.empty() ? kNaN : t.df[0]);
    table.put("p_value", t.p_value);
    table.put("cramers_v", t.effect_size);
  }
  return tests;
}

}  // namespace

AnalysisOutput lvlm_responses(const LvlmState& s, const LvlmConfig& config,
                              const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.responses, UsageError, "the scan did not measure responses");
  AnalysisOutput out;
  TableBuilder table("responses");
  Json results = Json::array();
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    const auto h = hist_stats(s.lengths[c], [](std::uint32_t k) { return static_cast<double>(k); });
    const double n = static_cast<double>(h.n);
    Json r = Json::object();
    if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[s.cells[c].first]);
    r["group"] = level_json(config.group, s.groups[s.cells[c].second]);
    r["n"] = h.n;
    r["length_mean"] = json_number(h.mean);
    r["length_sd"] = json_number(h.sd);
    r["length_median"] = json_number(h.median);
    r["refused"] = s.refused[c];
    r["refusal_rate"] = json_number(static_cast<double>(s.refused[c]) / n);
    const stats::Interval wilson = stats::wilson_interval(s.refused[c], h.n, o.ci);
    r["refusal_ci"] = {{"lower", json_number(wilson.lower)},
                       {"upper", json_number(wilson.upper)},
                       {"level", o.ci},
                       {"method", "wilson"}};
    r["empty"] = s.empty[c];
    r["flag_small"] = h.n < o.min_group_size;
    table.row();
    put_level(table, config.by, s.by_levels[s.cells[c].first]);
    put_level(table, config.group, s.groups[s.cells[c].second]);
    table.put("n", n);
    table.put("length_mean", h.mean);
    table.put("length_sd", h.sd);
    table.put("length_median", h.median);
    table.put("refused", static_cast<double>(s.refused[c]));
    table.put("refusal_rate", static_cast<double>(s.refused[c]) / n);
    table.put("refusal_lower", wilson.lower);
    table.put("refusal_upper", wilson.upper);
    table.put("empty", static_cast<double>(s.empty[c]));
    results.push_back(std::move(r));
  }
  out.json["definition"] =
      "length = words (the tokeniser of text_measures.h); refusal = "
      "a refusal pattern matches (case-insensitive) or the refusal column is true; refusal "
      "rates with Wilson intervals, and per by-level Pearson's chi-square test that every "
      "group has the same refusal rate (no continuity correction; Cramer's V).";
  out.json["refusal"] = config.refusal_column.empty()
                            ? Json{{"patterns", config.refusal_patterns.empty()
                                                    ? RefusalPatterns::defaults().patterns()
                                                    : config.refusal_patterns}}
                            : Json{{"column", config.refusal_column}};
  out.json["results"] = std::move(results);
  TableBuilder tests_table("refusal_tests");
  out.json["refusal_tests"] = refusal_tests(s, config, tests_table);
  out.tables.emplace_back("responses", table.build());
  out.tables.emplace_back("refusal_tests", tests_table.build());
  return out;
}

// ------------------------------------------------------------------ ratings

AnalysisOutput lvlm_ratings(const LvlmState& s, const LvlmConfig& config,
                            const LvlmReportOptions& o) {
  VLBIAS_CHECK(!config.ratings.empty(), UsageError, "the scan had no rating measure");
  AnalysisOutput out;
  TableBuilder table("ratings");
  Json measures = Json::array();
  for (std::size_t r = 0; r < config.ratings.size(); ++r) {
    const RatingSpec& spec = config.ratings[r];
    const auto& acc = s.ratings[r];
    Json cells = Json::array();
    std::uint64_t asked = 0;
    for (const auto& [c, n] : acc.rows) {
      asked += n;
      static const std::map<double, std::uint64_t> kEmpty;
      const auto it = acc.values.find(c);
      const auto h =
          hist_stats(it == acc.values.end() ? kEmpty : it->second, [](double v) { return v; });
      Json j = Json::object();
      if (!config.by.empty()) j["by"] = level_json(config.by, s.by_levels[s.cells[c].first]);
      j["group"] = level_json(config.group, s.groups[s.cells[c].second]);
      j["rows"] = n;
      j["n"] = h.n;
      j["mean"] = json_number(h.mean);
      j["sd"] = json_number(h.sd);
      j["median"] = json_number(h.median);
      j["flag_small"] = h.n < o.min_group_size;
      cells.push_back(std::move(j));
      table.row();
      table.put("measure", spec.name);
      put_level(table, config.by, s.by_levels[s.cells[c].first]);
      put_level(table, config.group, s.groups[s.cells[c].second]);
      table.put("rows", static_cast<double>(n));
      table.put("n", static_cast<double>(h.n));
      table.put("mean", h.mean);
      table.put("sd", h.sd);
      table.put("median", h.median);
    }
    Json examples = Json::array();
    for (const auto& [hash, text] : acc.examples) examples.push_back(text);
    Json m = Json::object();
    m["name"] = spec.name;
    m["kind"] = to_string(spec.kind);
    if (!spec.where_column.empty()) {
      m["where"] = {{"column", spec.where_column}, {"values", spec.where_values}};
    }
    if (!spec.where_expression.empty()) m["where_expression"] = spec.where_expression;
    m["rows"] = asked;
    m["excluded"] = {{"no_number", acc.no_number}, {"out_of_range", acc.out_of_range}};
    m["excluded_examples"] = std::move(examples);
    m["cells"] = std::move(cells);
    measures.push_back(std::move(m));
  }
  out.json["definition"] =
      "rating: the first number that is not part of a scale mention, kept in [1, 10]; salary: "
      "the first amount ($, commas, k, thousand, million; hourly x 2000), kept in [1000, 1e7] "
      "(text_measures.h).";
  out.json["measures"] = std::move(measures);
  out.tables.emplace_back("ratings", table.build());
  return out;
}

namespace {

// Each measure's name and section function.
struct MeasureEntry {
  LvlmMeasure measure;
  const char* name;
  AnalysisOutput (*section)(const LvlmState&, const LvlmConfig&, const LvlmReportOptions&);
};
constexpr MeasureEntry kMeasures[] = {
    {LvlmMeasure::MaxGap, "maxgap", lvlm_maxgap},
    {LvlmMeasure::Pmi, "pmi", lvlm_pmi},
    {LvlmMeasure::Lexicon, "lexicon", lvlm_lexicon},
    {LvlmMeasure::Ratings, "ratings", lvlm_ratings},
    {LvlmMeasure::Responses, "responses", lvlm_responses},
    {LvlmMeasure::Paired, "paired", lvlm_paired},
};

const MeasureEntry& entry(LvlmMeasure m) {
  for (const auto& e : kMeasures) {
    if (e.measure == m) return e;
  }
  VLBIAS_FAIL(InternalError, "unknown LVLM measure {}", static_cast<int>(m));
}

}  // namespace

const char* to_string(LvlmMeasure m) {
  return entry(m).name;
}

Json lvlm_measure_json(const LvlmState& state, const LvlmConfig& config,
                       const LvlmReportOptions& options, LvlmMeasure m) {
  AnalysisOutput section = entry(m).section(state, config, options);
  Json out = Json::object();
  out["rows"] = state.rows;
  out["rows_missing_group"] = state.rows_missing_group;
  out["rows_missing_key"] = state.rows_missing_key;
  // Without `by` and with one score, MaxGap's single result is the object itself.
  if (m == LvlmMeasure::MaxGap && config.by.empty() && config.scores.size() == 1) {
    Json r = section.json["results"][0];
    section.json.erase("results");
    for (auto& [k, v] : r.items()) section.json[k] = v;
  }
  for (auto& [k, v] : section.json.items()) out[k] = v;
  return out;
}

}  // namespace vlbias
