// The dual-encoder audits (kind: social-perception, trait-pairs; include/vlbias/audits/
// dual_encoder_audit.h): load the study, run the analyses the spec asks for, and write
// RUN_DIR/results.json, RUN_DIR/tables/*.csv and RUN_DIR/report.html.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dual_encoder_audit_internal.h"
#include "exemplars.h"
#include "run_output.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/absdiff.h"
#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/trends.h"

namespace vlbias {

namespace {

using audits_internal::TableBuilder;

// Stream numbers for derive_seed(spec.seed, ...): one per analysis, so turning an
// analysis on or off never changes another's results.
enum SeedStream : std::uint64_t {
  kSeedAssociation = 1,
  kSeedScweat = 2,
  kSeedMarkedness = 3,
  kSeedAbsDiff = 4,
  kSeedConfidence = 5,
  kSeedNeutral = 6,
  kSeedPower = 7,  // not kPowerSeedStream (power_pilot.h): results already written use 7
  kSeedExemplars = 8,
  kSeedExplain = 9,
};

Json spec_json(const AuditCommonSpec& spec, const DualEncoderAuditSpec& s) {
  Json factors{{"groups", s.group_factors}, {"categorical", s.categorical_factors}};
  Json ordinal = Json::object();
  for (const auto& [c, t] : s.ordinal_factors) ordinal[c] = t;
  factors["ordinal"] = ordinal;
  Json j{{"kind", to_string(spec.kind)},
         {"seed", spec.seed},
         {"min_group_size", spec.min_group_size},
         {"factors", factors}};
  if (s.explain.toggle.enabled) {
    const DualEncoderAuditSpec::Explain& e = s.explain;
    j["explain"] = Json{{"model", e.model.string()}, {"pair", e.pair},
                        {"method", e.method},        {"top", e.top},
                        {"faces", e.faces.string()}, {"logit_scale", e.logit_scale},
                        {"bootstrap", e.bootstrap},  {"image_column", s.image_path_column}};
  }
  if (spec.report_images.per_cell > 0) {
    j["report"] = audits_internal::report_images_json(spec.report_images);
    j["report"]["image_column"] = s.image_path_column;
  }
  return j;
}

// Whether an analysis runs: enabled and applicable. Applicable-by-default analyses
// that cannot run are skipped with a note; explicitly requested ones are an error.
bool decide(const AnalysisToggle& t, bool applicable, const std::string& name,
            const std::string& why, std::vector<std::string>& notes) {
  if (!t.enabled) return false;
  if (applicable) return true;
  VLBIAS_CHECK(!t.explicit_, UsageError, "analysis '{}' was requested but cannot run: {}", name,
               why);
  notes.push_back(fmt::format("{} skipped: {}", name, why));
  return false;
}

AnalysisOutput absdiff_section(const Study& study, const ImageDimensionScores& scores,
                               const DualEncoderAuditSpec& spec, std::uint64_t seed) {
  AbsDiffOptions o;
  o.pairs = spec.absdiff.pairs;
  o.seed = derive_seed(seed, kSeedAbsDiff);
  std::vector<std::string> names = spec.absdiff.factors;
  if (names.empty()) {
    for (const auto& [c, t] : spec.ordinal_factors) names.push_back(c);
    names.insert(names.end(), spec.categorical_factors.begin(), spec.categorical_factors.end());
    names.insert(names.end(), spec.group_factors.begin(), spec.group_factors.end());
  }
  for (const std::string& name : names) {
    AbsDiffFactor f;
    f.column = name;
    for (const auto& [c, t] : spec.ordinal_factors) {
      if (c == name) {
        f.ordinal = true;
        f.threshold = t;
      }
    }
    o.factors.push_back(f);
  }
  // Pairs vary one listed factor and hold every other listed factor fixed; factors
  // not listed are free to vary (list them all, the default, to hold them fixed).
  const AbsDiffReport r = absdiff_analysis(study.images, scores.delta_cos, scores.dimensions, o);
  AnalysisOutput out;
  TableBuilder cells("absdiff");
  Json jc = Json::array();
  for (const AbsDiffCell& c : r.cells) {
    const std::string dim = c.dimension.empty() ? "pooled" : c.dimension;
    cells.row();
    cells.put("factor", c.factor);
    cells.put("dimension", dim);
    cells.put("n", static_cast<double>(c.n));
    cells.put("valid_pairs", static_cast<double>(c.valid_pairs));
    cells.put("enumerated", c.enumerated ? "true" : "false");
    cells.put("mean", c.mean);
    cells.put("sd", c.sd);
    cells.put("median", c.median);
    cells.put("q25", c.q25);
    cells.put("q75", c.q75);
    cells.put("whisker_low", c.whisker_low);
    cells.put("whisker_high", c.whisker_high);
    jc.push_back(to_json(c));
  }
  TableBuilder tests("absdiff_tests");
  Json jt = Json::array();
  for (const AbsDiffComparison& c : r.comparisons) {
    const std::string dim = c.dimension.empty() ? "pooled" : c.dimension;
    tests.row();
    tests.put("dimension", dim);
    tests.put("factor_a", c.factor_a);
    tests.put("factor_b", c.factor_b);
    tests.put("statistic", c.result.statistic);
    tests.put("p_value", c.result.p_value);
    tests.put("p_holm", c.p_holm);
    tests.put("p_bh", c.p_bh);
    tests.put("effect_size", c.result.effect_size);
    jt.push_back(to_json(c));
  }
  out.json["pairs"] = o.pairs;
  out.json["sampling"] =
      "uniform over valid pairs (equal on every other factor, different on this one; ordinal "
      "factors differ by more than the threshold), with replacement; every pair once when there "
      "are at most `pairs`";
  out.json["pooled"] = "a cell or test with dimension \"\" pools every dimension's values";
  out.json["cells"] = jc;
  out.json["tests"] = jt;
  if (r.rows_missing > 0) out.json["rows_missing"] = r.rows_missing;
  out.notes = r.notes;
  out.tables.emplace_back("absdiff", cells.build());
  out.tables.emplace_back("absdiff_tests", tests.build());
  return out;
}

AnalysisOutput trends_section(const Study& study, const ImageDimensionScores& scores,
                              const DualEncoderAuditSpec& spec) {
  AnalysisOutput out;
  std::vector<std::string> xs = spec.trends.x;
  if (xs.empty()) {
    for (const auto& [c, t] : spec.ordinal_factors) xs.push_back(c);
  }
  TableBuilder table("trends");
  Json fits = Json::array();
  for (const std::string& x : xs) {
    TrendOptions o;
    o.x = x;
    o.by = spec.group_factors;
    o.degree = spec.trends.degree;
    o.fit_to_means = spec.trends.fit_to == "means";
    for (const TrendFit& f : trend_fits(study.images, scores.delta_cos, scores.dimensions, o)) {
      table.row();
      for (std::size_t c = 0; c < o.by.size(); ++c) table.put(o.by[c], f.key[c]);
      table.put("x", x);
      table.put("dimension", f.dimension);
      table.put("levels", static_cast<double>(f.levels.size()));
      table.put("n", static_cast<double>(f.fit.n));
      for (int k = 0; k <= o.degree; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        table.put(fmt::format("b{}", k),
                  kk < f.fit.coefficients.size() ? f.fit.coefficients[kk] : stats::kNaN);
        table.put(fmt::format("se_b{}", k),
                  kk < f.fit.standard_errors.size() ? f.fit.standard_errors[kk] : stats::kNaN);
      }
      table.put("r_squared", f.fit.r_squared);
      Json e = to_json(f, o.by);
      e["x"] = x;
      fits.push_back(std::move(e));
    }
  }
  out.json["model"] = fmt::format("Delta cos = b0 + b1 x + ... + b{} x^{}, least squares",
                                  spec.trends.degree, spec.trends.degree);
  out.json["fit_to"] = spec.trends.fit_to;
  out.json["fits"] = fits;
  out.tables.emplace_back("trends", table.build());
  return out;
}

AnalysisOutput ellipses_section(const Study& study, const ImageDimensionScores& scores,
                                const DualEncoderAuditSpec& spec) {
  AnalysisOutput out;
  EllipseOptions o;
  o.by = spec.group_factors;
  o.points_by = spec.ellipses.points_by;
  if (o.points_by.empty() && !spec.ordinal_factors.empty()) {
    o.points_by = spec.ordinal_factors.front().first;
  }
  o.k_sigma = spec.ellipses.k_sigma;
  TableBuilder table("ellipses");
  Json rows = Json::array();
  for (const GroupEllipse& g :
       group_ellipses(study.images, scores.delta_cos, scores.dimensions, o)) {
    const CovarianceEllipse& e = g.ellipse;
    table.row();
    for (std::size_t c = 0; c < o.by.size(); ++c) table.put(o.by[c], g.key[c]);
    table.put("x_dimension", g.x_dimension);
    table.put("y_dimension", g.y_dimension);
    table.put("n", static_cast<double>(e.n));
    table.put("center_x", e.center_x);
    table.put("center_y", e.center_y);
    table.put("semi_major", e.semi_major);
    table.put("semi_minor", e.semi_minor);
    table.put("angle_radians", e.angle);
    rows.push_back(to_json(g, o.by));
  }
  out.json["points"] = o.points_by.empty() ? "images" : "means per level of " + o.points_by;
  out.json["k_sigma"] = o.k_sigma;
  out.json["ellipses"] = rows;
  out.tables.emplace_back("ellipses", table.build());
  return out;
}

// Analyses that belong to the other dual-encoder kind may not be requested; checked before any
// input is read.
}  // namespace

namespace audits_internal {

void require_columns(const Table& images, const std::vector<std::string>& columns,
                     const std::string& role) {
  for (const std::string& c : columns) {
    VLBIAS_CHECK(images.find(c).has_value(), InputError,
                 "the spec names '{}' as a {} factor, but image table {} has no such column", c,
                 role, images.source);
  }
}

void refuse_other_kind_analyses(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d) {
  const auto refuse = [&](const AnalysisToggle& t, const char* name) {
    VLBIAS_CHECK(!(t.enabled && t.explicit_), UsageError,
                 "analysis '{}' is not part of a {} audit; remove it from the spec", name,
                 to_string(spec.kind));
  };
  if (spec.kind == AuditKind::TraitPairs) {
    refuse(d.markedness.toggle, "markedness");
    refuse(d.ranking.toggle, "ranking");
    refuse(d.absdiff.toggle, "absdiff");
    refuse(d.trends.toggle, "trends");
    refuse(d.ellipses.toggle, "ellipses");
    refuse(d.neutral.toggle, "neutral");
    refuse(d.prompt_geometry.toggle, "prompt_geometry");
    refuse(d.valence_correlation.toggle, "valence_correlation");
  } else {
    refuse(d.confidence.toggle, kConfidenceSection);
  }
  check_explain_spec(spec, d);
}

StudyFiles study_files(const DualEncoderAuditSpec& d) {
  StudyFiles files;
  files.image_table = d.image_table;
  files.image_embeddings = d.image_embeddings.path;
  files.image_tensor = d.image_embeddings.tensor;
  files.image_id_column = d.image_id_column;
  files.image_index = d.image_index;
  files.prompt_manifest = d.prompt_manifest;
  files.prompt_embeddings = d.prompt_embeddings.path;
  files.prompt_tensor = d.prompt_embeddings.tensor;
  return files;
}

// The spec file, then the study's files, as results.json's provenance lists them.
std::vector<std::string> provenance_inputs(const AuditCommonSpec& spec, const StudyFiles& files) {
  std::vector<std::string> inputs;
  if (!spec.spec_path.empty()) inputs.push_back(spec.spec_path.string());
  for (const auto& p : {files.image_embeddings, files.image_table, files.image_index,
                        files.prompt_manifest, files.prompt_embeddings}) {
    if (!p.empty()) inputs.push_back(p.string());
  }
  return inputs;
}

void check_factor_columns(const Study& study, const DualEncoderAuditSpec& d) {
  std::vector<std::string> ordinal_names;
  for (const auto& [c, t] : d.ordinal_factors) ordinal_names.push_back(c);
  require_columns(study.images, d.group_factors, "group");
  require_columns(study.images, ordinal_names, "ordinal");
  require_columns(study.images, d.categorical_factors, "categorical");
}

}  // namespace audits_internal

namespace {

using namespace audits_internal;

// The sections run so far and the notes, with one bar over the analyses (SC-WEAT also draws
// its own over its tests); analyses skipped by default leave the bar short, finish() closes it.
struct Sections {
  explicit Sections(const AuditCommonSpec& spec, const DualEncoderAuditSpec& dual_encoder)
      : progress(std::string(to_string(spec.kind)) + " analyses",
                 spec.kind == AuditKind::TraitPairs ? 3 + dual_encoder.explain.toggle.enabled : 7) {
  }
  void add(const char* name, AnalysisOutput output) {
    list.emplace_back(name, std::move(output));
    progress.advance();
  }
  std::vector<std::pair<std::string, AnalysisOutput>> list;
  std::vector<std::string> notes;
  Progress progress;
};

GroupingOptions association_grouping(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d) {
  GroupingOptions grouping;
  grouping.by = d.group_factors;
  grouping.bootstrap = d.association.bootstrap;
  grouping.ci = d.association.ci;
  grouping.seed = derive_seed(spec.seed, kSeedAssociation);
  grouping.min_group_size = spec.min_group_size;
  return grouping;
}

AnalysisOutput confidence_section(const Study& study, const AuditCommonSpec& spec,
                                  const DualEncoderAuditSpec& d, const GroupingOptions& grouping) {
  ConfidenceAnalysisOptions o;
  o.scale = parse_confidence_scale(d.confidence.scale);
  o.logit_scale = d.confidence.logit_scale;
  o.grouping = grouping;
  o.grouping.bootstrap = d.confidence.bootstrap;
  o.grouping.ci = d.confidence.ci;
  o.grouping.seed = derive_seed(spec.seed, kSeedConfidence);
  // Defaults: across the first group factor, within the next one (paper 004: across
  // races within each gender, and across genders within each race).
  o.across = d.confidence.across.empty() ? d.group_factors[0] : d.confidence.across;
  o.within = d.confidence.within;
  for (std::size_t g = 0; o.within.empty() && g < d.group_factors.size(); ++g) {
    if (d.group_factors[g] != o.across) o.within = d.group_factors[g];
  }
  VLBIAS_CHECK(o.within != o.across, UsageError,
               "analyses.confidence: across and within are both '{}'", o.across);
  require_columns(study.images, {o.across}, "confidence.across");
  if (!o.within.empty()) require_columns(study.images, {o.within}, "confidence.within");
  o.test_across = d.confidence.test_across;
  o.test_within = d.confidence.test_within;
  return confidence_analysis(study, o);
}

AnalysisOutput scweat_section(const Study& study, const AuditCommonSpec& spec,
                              const DualEncoderAuditSpec& d) {
  ScweatAnalysisOptions o;
  o.groupings = d.scweat.groupings;
  if (o.groupings.empty()) {
    for (const std::string& g : d.group_factors) o.groupings.push_back({g});
  }
  o.p_test = d.scweat.p_test;
  o.permutations = d.scweat.permutations;
  o.seed = derive_seed(spec.seed, kSeedScweat);
  o.min_group_size = spec.min_group_size;
  return scweat_analysis(study, o);
}

// The analyses of a social-perception audit beyond association and SC-WEAT.
void add_social_perception_sections(const Study& study, const ImageDimensionScores& scores,
                                    const AuditCommonSpec& spec, const DualEncoderAuditSpec& d,
                                    Sections& sections) {
  std::vector<std::string>& notes = sections.notes;
  if (decide(d.markedness.toggle, !study.manifest.group_prompts.empty(), "markedness",
             "the prompt manifest has no group-naming prompts", notes)) {
    MarkednessOptions o;
    o.attributes = d.markedness.attributes.empty() ? d.group_factors : d.markedness.attributes;
    o.bootstrap = d.markedness.bootstrap;
    o.ci_level = d.markedness.ci;
    o.seed = derive_seed(spec.seed, kSeedMarkedness);
    o.min_group_size = spec.min_group_size;
    sections.add("markedness", markedness_analysis(study, o));
  }
  if (decide(d.ranking.toggle, true, "ranking", "", notes)) {
    RankingAnalysisOptions o;
    o.k = d.ranking.k;
    o.attributes = d.ranking.attributes.empty() ? d.group_factors : d.ranking.attributes;
    o.desired = d.ranking.desired;
    o.absent = d.ranking.absent;
    sections.add("ranking", ranking_analysis(study, scores, o));
  }
  const bool has_delta = scores.has_delta;
  const bool has_factors =
      !d.ordinal_factors.empty() || !d.categorical_factors.empty() || !d.absdiff.factors.empty();
  if (decide(d.absdiff.toggle, has_factors && has_delta, "absdiff",
             has_delta ? "the spec lists no ordinal or categorical factors"
                       : "Delta cos needs a neutral prompt for every template",
             notes)) {
    sections.add("absdiff", absdiff_section(study, scores, d, spec.seed));
  }
  const bool has_ordinal = !d.ordinal_factors.empty() || !d.trends.x.empty();
  if (decide(d.trends.toggle, has_ordinal && has_delta, "trends",
             has_delta ? "the spec lists no ordinal factor"
                       : "Delta cos needs a neutral prompt for every template",
             notes)) {
    sections.add("trends", trends_section(study, scores, d));
  }
  if (decide(d.ellipses.toggle, has_delta, "ellipses",
             "Delta cos needs a neutral prompt for every template", notes)) {
    sections.add("ellipses", ellipses_section(study, scores, d));
  }
  if (d.neutral.toggle.enabled) {
    NeutralOptions o;
    o.grouping.by = d.group_factors;
    o.grouping.bootstrap = d.neutral.bootstrap;
    o.grouping.ci = d.neutral.ci;
    o.grouping.min_group_size = spec.min_group_size;
    o.pair_key = d.neutral.pair_key;
    o.seed = derive_seed(spec.seed, kSeedNeutral);
    sections.add("neutral", neutral_analysis(study, o));
  }
  if (d.prompt_geometry.toggle.enabled) {
    sections.add("prompt_geometry", prompt_geometry_analysis(study, d.prompt_geometry.components));
  }
  if (decide(d.valence_correlation.toggle, has_delta, "valence_correlation",
             "Delta cos needs a neutral prompt for every template", notes)) {
    std::vector<std::string> factors = d.valence_correlation.factors;
    if (factors.empty()) {
      for (const auto& ordinal : d.ordinal_factors) factors.push_back(ordinal.first);
      factors.insert(factors.end(), d.categorical_factors.begin(), d.categorical_factors.end());
    }
    sections.add("valence_correlation", valence_correlation_analysis(study, scores, factors,
                                                                     d.valence_correlation.within));
  }
}

Json results_json(const AuditCommonSpec& spec, const DualEncoderAuditSpec& dual_encoder,
                  const Study& study, Json analyses, Json tables,
                  const std::vector<std::string>& notes) {
  Json dims = Json::array();
  for (const auto& dim : study.manifest.dimensions) {
    dims.push_back(Json{{"dimension", dim.label}, {"prompts", dim.rows.size()}});
  }
  return Json{{"kind", to_string(spec.kind)},          {"images", study.images.rows},
              {"embedding_dim", study.embedding_dim},  {"prompts", study.manifest.rows},
              {"templates", study.manifest.templates}, {"dimensions", dims},
              {"spec", spec_json(spec, dual_encoder)}, {"analyses", std::move(analyses)},
              {"tables", std::move(tables)},           {"notes", notes}};
}

// analyses.power: the minimum detectable effect of every null test the pilot reader supports,
// from this study as its own pilot (seeded from the audit's seed).
void add_power(Json& results, const PilotSections& sections, const AuditCommonSpec& spec,
               const DualEncoderAuditSpec& dual_encoder) {
  const DualEncoderAuditSpec::Power& w = dual_encoder.power;
  if (!sections.confidence && !sections.association) {
    results["notes"].push_back(
        "power: skipped; it needs the confidence tests or the association contrasts");
    return;
  }
  add_power_section(results, sections, w, derive_seed(spec.seed, kSeedPower));
}

// report.images: one grid per group (factors.groups, in key order) of the image table's images
// in the column images.image, a seeded sample (no per-image score). Null, with a note, when the
// table has no such column.
Json dual_encoder_exemplars(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d,
                            const Study& study, std::vector<std::string>& notes) {
  const Table& t = study.images;
  const std::optional<audits_internal::ExemplarImages> images = audits_internal::table_images(
      t, d.image_path_column, d.image_table, spec.report_images, "images.image", notes);
  if (!images) return Json();
  const Grouping g = group_by(t, d.group_factors);
  std::vector<audits_internal::ExemplarCell> cells(g.size());
  for (std::size_t k = 0; k < g.size(); ++k) {
    for (std::size_t c = 0; c < g.columns.size(); ++c) {
      cells[k].labels.emplace_back(g.columns[c], g.keys[k][c]);
    }
  }
  for (std::size_t r = 0; r < t.rows; ++r) {
    if (g.group_of_row[r] != Grouping::kNoGroup) {
      cells[g.group_of_row[r]].rows.push_back(static_cast<std::uint32_t>(r));
    }
  }
  return audits_internal::exemplars_json(cells, *images, spec.report_images,
                                         derive_seed(spec.seed, kSeedExemplars), nullptr, notes);
}

}  // namespace

void run_dual_encoder_audit(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d,
                            const std::filesystem::path& run_dir) {
  refuse_other_kind_analyses(spec, d);
  audits_internal::RunOutput output(run_dir);  // locks the folder before any input is read
  const StudyFiles files = study_files(d);
  Provenance provenance;
  provenance.command = "audit";
  provenance.inputs = provenance_inputs(spec, files);
  // The stimuli (the same images and prompts whatever the encoder), for compare-runs.
  if (!files.image_table.empty())
    provenance.roles.emplace_back("images.table", files.image_table.string());
  provenance.roles.emplace_back("prompts.manifest", files.prompt_manifest.string());
  start_hashing_inputs(provenance);
  const Study study = load_study(files);
  check_factor_columns(study, d);
  check_explain_inputs(d, study);  // before the first analysis runs

  Sections sections(spec, d);
  const GroupingOptions grouping = association_grouping(spec, d);
  // Association runs whenever a later analysis needs its per-image scores.
  ImageDimensionScores scores;
  AnalysisOutput association = association_analysis(study, grouping, scores);
  if (d.association.toggle.enabled) sections.add(kAssociationSection, std::move(association));
  if (spec.kind == AuditKind::TraitPairs &&
      decide(d.confidence.toggle, true, kConfidenceSection, "", sections.notes)) {
    sections.add(kConfidenceSection, confidence_section(study, spec, d, grouping));
  }
  if (decide(d.scweat.toggle, true, "scweat", "", sections.notes)) {
    sections.add("scweat", scweat_section(study, spec, d));
  }
  if (spec.kind == AuditKind::SocialPerception) {
    add_social_perception_sections(study, scores, spec, d, sections);
  }
  if (d.explain.toggle.enabled) {
    sections.add("explain", explain_analysis(spec, d, output.stage_folder("explain"),
                                             derive_seed(spec.seed, kSeedExplain)));
  }
  sections.progress.finish();
  Json exemplars;
  if (spec.report_images.per_cell > 0) {
    exemplars = dual_encoder_exemplars(spec, d, study, sections.notes);
  }

  Json tables;
  Json analyses = output.add_sections(sections.list, tables, sections.notes);
  Json results =
      results_json(spec, d, study, std::move(analyses), std::move(tables), sections.notes);
  if (d.power.toggle.enabled) {
    add_power(results, pilot_sections_of(sections.list, to_string(spec.kind)), spec, d);
  }
  // Last: the thumbnails are the bulk of the file.
  if (!exemplars.is_null()) results["exemplars"] = std::move(exemplars);
  output.write(results, provenance, spec_json(spec, d), spec);
}

}  // namespace vlbias
