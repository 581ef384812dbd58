// The Consistency indicator of the geo-diversity audit (geo_audit_internal.h): CLIPScore of
// each generation against the text "{object}"; per object the p-th percentile, and the mean
// over objects, overall and per region, with bootstrap intervals and the gaps between regions.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "geo_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/metrics/clipscore.h"
#include "vlbias/report/summary.h"

namespace vlbias::audits_internal {

namespace {

// Object text embedding row per generated row (Labels::kNone when the object has none).
std::vector<std::uint32_t> object_text_rows(const GeoAuditSpec& geo, const GeneratedData& gen,
                                            const Table& objects, std::set<std::string>& missing) {
  const Column& col = objects.column(geo.objects_column);
  std::map<std::string, std::uint32_t> row_of;
  for (std::size_t i = 0; i < objects.rows; ++i) {
    const std::string v = col.text(i);
    VLBIAS_CHECK(!v.empty(), InputError, "{} line {}: the object column '{}' is empty.",
                 objects.source, objects.line_of_row[i], geo.objects_column);
    VLBIAS_CHECK(row_of.emplace(v, static_cast<std::uint32_t>(i)).second, InputError,
                 "{} line {}: object '{}' appears twice; each object text needs one row.",
                 objects.source, objects.line_of_row[i], v);
  }
  std::vector<std::uint32_t> out(gen.features.rows, Labels::kNone);
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto it = row_of.find(gen.raw_object[i]);
    if (it == row_of.end()) it = row_of.find(gen.object[i]);
    if (it != row_of.end()) {
      out[i] = it->second;
    } else if (gen.has_clip[i]) {
      missing.insert(gen.raw_object[i]);
    }
  }
  return out;
}

// The generated rows that enter the indicator (from a source with CLIP embeddings, with a text
// embedding for their object, and in the balanced selection when balancing is on) and their
// CLIPScore against "{object}".
struct ScoredRows {
  std::vector<std::uint32_t> rows;  // generated rows, in order
  ClipScores scores;                // scores.score[k] belongs to rows[k]
  ClipScoreVariant variant = ClipScoreVariant{};
};

ScoredRows score_generations(const GeoAuditSpec& geo, const GeneratedData& gen,
                             const GeneratedSets& sets, std::vector<std::string>& notes) {
  const GeoAuditSpec::Consistency& c = geo.consistency;
  const Table objects = read_table(geo.objects_table.string());
  const Matrix texts = read_embeddings(geo.objects_embeddings.path, geo.objects_embeddings.tensor);
  VLBIAS_CHECK(objects.rows == texts.rows, InputError,
               "{} has {} rows but {} has {}; expected one text embedding per object.",
               objects.source, objects.rows, geo.objects_embeddings.path.string(), texts.rows);
  VLBIAS_CHECK(texts.cols == gen.clip.cols, InputError,
               "{} has {} columns but the generated CLIP embeddings have {}; both must come from "
               "the same CLIP model.",
               geo.objects_embeddings.path.string(), texts.cols, gen.clip.cols);
  std::set<std::string> missing;
  const std::vector<std::uint32_t> text_row = object_text_rows(geo, gen, objects, missing);
  if (!missing.empty()) {
    notes.push_back(fmt::format(
        "consistency: generated objects without a text embedding in {} (not scored): {}",
        objects.source, first_few(missing)));
  }
  // Which rows enter: all scored rows, or the balanced selection when balancing is on.
  std::vector<bool> selected(gen.features.rows, geo.generated_per_cell == 0);
  if (geo.generated_per_cell > 0) {
    for (const auto& per_form : sets.cell)
      for (const auto& per_object : per_form)
        for (const auto& rows : per_object)
          for (const std::uint32_t r : rows) selected[r] = true;
  }
  const auto without_clip = static_cast<std::size_t>(
      std::count(gen.has_clip.begin(), gen.has_clip.end(), std::uint8_t{0}));
  if (without_clip > 0) {
    notes.push_back(fmt::format(
        "consistency: {} generated rows come from sources without clip embeddings and are not "
        "scored",
        without_clip));
  }
  ScoredRows out;
  std::vector<std::uint32_t> trow;
  for (std::size_t i = 0; i < gen.features.rows; ++i) {
    if (selected[i] && gen.has_clip[i] && text_row[i] != Labels::kNone) {
      out.rows.push_back(static_cast<std::uint32_t>(i));
      trow.push_back(text_row[i]);
    }
  }
  out.variant = parse_clipscore_variant(c.variant);
  const Matrix images = select_rows(gen.clip, out.rows);
  std::vector<std::size_t> trow_size(trow.begin(), trow.end());
  out.scores = clipscores(images, texts, trow_size, out.variant);
  return out;
}

// The summary (one row per form and region) and per-object tables of the indicator.
struct ConsistencyTables {
  TableBuilder summary{"geo_consistency"};
  TableBuilder per_object{"geo_consistency_objects"};
  // Per (form, region or "all"): each object's percentile, whose mean is the indicator
  // (summary.json's units).
  std::vector<std::pair<std::string, Table>> units;
};

using Strata = std::map<std::string, std::vector<double>>;  // object -> scores

// The indicator of one stratification (object -> scores) of form f: the mean over objects of
// each object's percentile, with its bootstrap interval (stream `cell`); writes the summary row
// and a row per object. Returns it with the number of scores.
std::pair<PercentileMean, std::size_t> indicator(const AuditCommonSpec& spec,
                                                 const GeoAuditSpec& geo, Form f,
                                                 const Strata& strata, std::uint64_t cell,
                                                 const std::string& region,
                                                 ConsistencyTables& tables) {
  const GeoAuditSpec::Consistency& c = geo.consistency;
  std::vector<std::vector<double>> v;
  std::size_t n = 0;
  for (const auto& [o, s] : strata) {
    v.push_back(s);
    n += s.size();
  }
  PercentileMean pm = percentile_mean(v, c.percentile, c.bootstrap, c.ci,
                                      cell_seed(spec.seed, kSeedConsistencyBootstrap, cell));
  TableBuilder& summary = tables.summary;
  summary.row();
  summary.put("form", form_name(f));
  summary.put("region", region);
  summary.put("objects", static_cast<double>(v.size()));
  summary.put("n", static_cast<double>(n));
  summary.put("indicator", pm.value);
  summary.put("ci_lower", pm.ci.lower);
  summary.put("ci_upper", pm.ci.upper);
  std::size_t i = 0;
  for (const auto& [o, s] : strata) {
    TableBuilder& per_object = tables.per_object;
    per_object.row();
    per_object.put("form", form_name(f));
    per_object.put("region", region);
    per_object.put("object", o);
    per_object.put("n", static_cast<double>(s.size()));
    per_object.put("percentile", pm.per_stratum[i++]);
  }
  TableBuilder u("units");
  i = 0;
  for (const auto& [o, s] : strata) {
    u.row();
    u.put("object", o);
    u.put("value", pm.per_stratum[i++]);
  }
  tables.units.emplace_back(units_table_name("consistency", {form_name(f), region}), u.build());
  return std::make_pair(pm, n);
}

// Each object's percentile of the region ({object, n, value}, in the strata's order): the
// distribution the report draws as a box per region (paper 002 Fig. 17).
Json per_object_json(const Strata& strata, const PercentileMean& pm) {
  Json out = Json::array();
  std::size_t i = 0;
  for (const auto& [o, s] : strata) {
    out.push_back(
        Json{{"object", o}, {"n", s.size()}, {"value", json_number(pm.per_stratum[i++])}});
  }
  return out;
}

// Form f's indicator, overall and per region, and the gaps between its regions (appended to
// `gaps`); null when no scored generation has the form.
Json form_consistency(const AuditCommonSpec& spec, const GeoAuditSpec& geo, Form f,
                      const GeneratedData& gen, const ScoredRows& scored, ConsistencyTables& tables,
                      std::vector<GapRow>& gaps) {
  const GeoAuditSpec::Consistency& c = geo.consistency;
  // strata: object -> scores, and (region, object) -> scores
  Strata by_object;
  std::map<std::string, Strata> by_region;
  for (std::size_t k = 0; k < scored.rows.size(); ++k) {
    const std::uint32_t i = scored.rows[k];
    if (gen.form[i] != f) continue;
    by_object[gen.object[i]].push_back(scored.scores.score[k]);
    if (f != Form::Object) {
      by_region[gen.region[i]][gen.object[i]].push_back(scored.scores.score[k]);
    }
  }
  if (by_object.empty()) return Json();
  const int fi = static_cast<int>(f);
  const auto [overall, n_all] = indicator(spec, geo, f, by_object, fi * 100000, "all", tables);
  Json regions = Json::array();
  std::vector<std::tuple<std::string, double, std::vector<double>>> region_values;
  std::size_t ri = 0;
  for (const auto& [region, strata] : by_region) {
    const auto [pm, n] = indicator(spec, geo, f, strata, fi * 100000 + 1 + ri++, region, tables);
    Json rj{{"region", region},
            {"objects", strata.size()},
            {"n", n},
            {"indicator", json_number(pm.value)}};
    if (c.bootstrap > 0) rj["ci"] = bounds_json(pm.ci);  // bootstrap: 0 draws no interval
    rj["per_object"] = per_object_json(strata, pm);
    regions.push_back(std::move(rj));
    region_values.emplace_back(region, pm.value, pm.replicates);
  }
  for (std::size_t a = 0; a < region_values.size() && c.bootstrap > 0; ++a) {
    for (std::size_t b = a + 1; b < region_values.size(); ++b) {
      GapRow g;
      g.form = form_name(f);
      g.metric = "consistency";
      g.a = std::get<0>(region_values[a]);
      g.b = std::get<0>(region_values[b]);
      g.value_a = std::get<1>(region_values[a]);
      g.value_b = std::get<1>(region_values[b]);
      g.gap = bootstrap_gap(g.value_a, std::get<2>(region_values[a]), g.value_b,
                            std::get<2>(region_values[b]), c.ci);
      gaps.push_back(std::move(g));
    }
  }
  Json fj{{"form", form_name(f)},
          {"prompt", form_template(f)},
          {"objects", by_object.size()},
          {"n", n_all},
          {"indicator", json_number(overall.value)}};
  if (c.bootstrap > 0) fj["ci"] = bounds_json(overall.ci);
  if (!regions.empty()) fj["regions"] = regions;
  return fj;
}

}  // namespace

ConsistencyOutputs consistency_analysis(const AuditCommonSpec& spec, const GeoAuditSpec& geo,
                                        const GeneratedData& gen, const GeneratedSets& sets,
                                        std::vector<std::string>& notes) {
  const GeoAuditSpec::Consistency& c = geo.consistency;
  const ScoredRows scored = score_generations(geo, gen, sets, notes);
  ConsistencyOutputs out;
  ConsistencyTables tables;
  Json forms = Json::array();
  std::vector<GapRow> gaps;
  for (const Form f : kForms) {
    Json fj = form_consistency(spec, geo, f, gen, scored, tables, gaps);
    if (!fj.is_null()) forms.push_back(std::move(fj));
  }
  out.section.json = Json{{"variant", to_string(scored.variant)},
                          {"text", "\"{object}\" (one CLIP text embedding per object)"},
                          {"percentile", c.percentile},
                          {"aggregate", "mean over objects of the per-object percentile"},
                          {"bootstrap", c.bootstrap},
                          {"ci", c.ci},
                          {"resampled", "generated images within each object (and region)"},
                          {"scored", scored.rows.size()},
                          {"forms", forms}};
  out.section.tables.emplace_back("geo_consistency", tables.summary.build());
  out.section.tables.emplace_back("geo_consistency_objects", tables.per_object.build());
  out.section.units = std::move(tables.units);
  const bool any_gap = !gaps.empty();
  out.gaps = gap_section(std::move(gaps), "geo_consistency_gaps");
  out.gaps.pilot.consistency_gaps = any_gap;  // tests power does not support
  out.row_scores.assign(gen.features.rows, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = 0; k < scored.rows.size(); ++k) {
    out.row_scores[scored.rows[k]] = scored.scores.score[k];
  }
  return out;
}

}  // namespace vlbias::audits_internal
