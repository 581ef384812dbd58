// `vlbias audit`: runs the analyses a spec asks for and writes RUN_DIR/results.json
// and RUN_DIR/tables/*.csv.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "run_output.h"
#include "table_builder.h"
#include "vlbias/metrics/absdiff.h"
#include "vlbias/audits/audit.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
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
};

Json spec_json(const AuditSpec& s) {
  Json factors{{"groups", s.group_factors}, {"categorical", s.categorical_factors}};
  Json ordinal = Json::object();
  for (const auto& [c, t] : s.ordinal_factors) ordinal[c] = t;
  factors["ordinal"] = ordinal;
  return Json{{"kind", to_string(s.kind)},
              {"seed", s.seed},
              {"min_group_size", s.min_group_size},
              {"factors", factors}};
}

void require_columns(const Table& images, const std::vector<std::string>& columns,
                     const std::string& role) {
  for (const std::string& c : columns) {
    VLBIAS_CHECK(images.find(c).has_value(), InputError,
                 "the spec names '{}' as a {} factor, but image table {} has no such column", c,
                 role, images.source);
  }
}

// Whether an analysis runs: enabled and applicable. Applicable-by-default analyses
// that cannot run are skipped with a note; explicitly requested ones are an error.
bool decide(const AuditSpec::Toggle& t, bool applicable, const std::string& name,
            const std::string& why, std::vector<std::string>& notes) {
  if (!t.enabled) return false;
  if (applicable) return true;
  VLBIAS_CHECK(!t.explicit_, UsageError, "analysis '{}' was requested but cannot run: {}", name,
               why);
  notes.push_back(fmt::format("{} skipped: {}", name, why));
  return false;
}

AnalysisOutput absdiff_section(const Study& study, const ImageDimensionScores& scores,
                               const AuditSpec& spec) {
  AbsDiffOptions o;
  o.pairs = spec.absdiff.pairs;
  o.seed = derive_seed(spec.seed, kSeedAbsDiff);
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
                              const AuditSpec& spec) {
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
                                const AuditSpec& spec) {
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

}  // namespace

void run_audit(const AuditSpec& spec, const std::filesystem::path& run_dir) {
  if (spec.kind == AuditKind::LvlmCounterfactual) {
    run_lvlm_audit(spec, run_dir);
    return;
  }
  if (spec.kind == AuditKind::VisualStereotypes) {
    run_visual_stereotypes_audit(spec, run_dir);
    return;
  }
  if (spec.kind == AuditKind::GeoDiversity) {
    run_geo_diversity_audit(spec, run_dir);
    return;
  }
  // Analyses that belong to the other kind of audit may not be requested.
  const auto refuse = [&](const AuditSpec::Toggle& t, const char* name) {
    VLBIAS_CHECK(!(t.enabled && t.explicit_), UsageError,
                 "analysis '{}' is not part of a {} audit; remove it from the spec", name,
                 to_string(spec.kind));
  };
  if (spec.kind == AuditKind::TraitPairs) {
    refuse(spec.markedness.toggle, "markedness");
    refuse(spec.ranking.toggle, "ranking");
    refuse(spec.absdiff.toggle, "absdiff");
    refuse(spec.trends.toggle, "trends");
    refuse(spec.ellipses.toggle, "ellipses");
  } else {
    refuse(spec.confidence.toggle, "confidence");
  }

  audits_internal::RunOutput output(run_dir);  // locks the folder before any input is read
  Provenance provenance;
  provenance.command = "audit";
  StudyFiles files;
  files.image_table = spec.image_table;
  files.image_embeddings = spec.image_embeddings.path;
  files.image_tensor = spec.image_embeddings.tensor;
  files.image_id_column = spec.image_id_column;
  files.image_index = spec.image_index;
  files.prompt_manifest = spec.prompt_manifest;
  files.prompt_embeddings = spec.prompt_embeddings.path;
  files.prompt_tensor = spec.prompt_embeddings.tensor;
  if (!spec.spec_path.empty()) provenance.inputs.push_back(spec.spec_path.string());
  for (const auto& p : {files.image_embeddings, files.image_table, files.image_index,
                        files.prompt_manifest, files.prompt_embeddings}) {
    if (!p.empty()) provenance.inputs.push_back(p.string());
  }
  start_hashing_inputs(provenance);
  const Study study = load_study(files);

  std::vector<std::string> ordinal_names;
  for (const auto& [c, t] : spec.ordinal_factors) ordinal_names.push_back(c);
  require_columns(study.images, spec.group_factors, "group");
  require_columns(study.images, ordinal_names, "ordinal");
  require_columns(study.images, spec.categorical_factors, "categorical");

  std::vector<std::string> notes;
  std::vector<std::pair<std::string, AnalysisOutput>> sections;
  // One bar over the analyses (SC-WEAT also draws its own over its tests); analyses
  // skipped by default leave the bar short, finish() closes it.
  Progress progress(std::string(to_string(spec.kind)) + " analyses",
                    spec.kind == AuditKind::TraitPairs ? 3 : 7);
  const auto add = [&](const char* name, AnalysisOutput output) {
    sections.emplace_back(name, std::move(output));
    progress.advance();
  };
  GroupingOptions grouping;
  grouping.by = spec.group_factors;
  grouping.bootstrap = spec.association.bootstrap;
  grouping.ci = spec.association.ci;
  grouping.seed = derive_seed(spec.seed, kSeedAssociation);
  grouping.min_group_size = spec.min_group_size;

  // Association runs whenever a later analysis needs its per-image scores.
  ImageDimensionScores scores;
  AnalysisOutput association = association_analysis(study, grouping, scores);
  if (spec.association.toggle.enabled) add("association", std::move(association));

  if (spec.kind == AuditKind::TraitPairs &&
      decide(spec.confidence.toggle, true, "confidence", "", notes)) {
    ConfidenceAnalysisOptions o;
    o.scale = parse_confidence_scale(spec.confidence.scale);
    o.logit_scale = spec.confidence.logit_scale;
    o.grouping = grouping;
    o.grouping.bootstrap = spec.confidence.bootstrap;
    o.grouping.ci = spec.confidence.ci;
    o.grouping.seed = derive_seed(spec.seed, kSeedConfidence);
    // Defaults: across the first group factor, within the next one (paper 004: across
    // races within each gender, and across genders within each race).
    o.across = spec.confidence.across.empty() ? spec.group_factors[0] : spec.confidence.across;
    o.within = spec.confidence.within;
    for (std::size_t g = 0; o.within.empty() && g < spec.group_factors.size(); ++g) {
      if (spec.group_factors[g] != o.across) o.within = spec.group_factors[g];
    }
    VLBIAS_CHECK(o.within != o.across, UsageError,
                 "analyses.confidence: across and within are both '{}'", o.across);
    require_columns(study.images, {o.across}, "confidence.across");
    if (!o.within.empty()) require_columns(study.images, {o.within}, "confidence.within");
    o.test_across = spec.confidence.test_across;
    o.test_within = spec.confidence.test_within;
    add("confidence", confidence_analysis(study, o));
  }

  if (decide(spec.scweat.toggle, true, "scweat", "", notes)) {
    ScweatAnalysisOptions o;
    o.groupings = spec.scweat.groupings;
    if (o.groupings.empty()) {
      for (const std::string& g : spec.group_factors) o.groupings.push_back({g});
    }
    o.p_test = spec.scweat.p_test;
    o.permutations = spec.scweat.permutations;
    o.seed = derive_seed(spec.seed, kSeedScweat);
    o.min_group_size = spec.min_group_size;
    add("scweat", scweat_analysis(study, o));
  }

  if (spec.kind == AuditKind::SocialPerception) {
    if (decide(spec.markedness.toggle, !study.manifest.group_prompts.empty(), "markedness",
               "the prompt manifest has no group-naming prompts", notes)) {
      MarkednessOptions o;
      o.attributes =
          spec.markedness.attributes.empty() ? spec.group_factors : spec.markedness.attributes;
      o.bootstrap = spec.markedness.bootstrap;
      o.ci_level = spec.markedness.ci;
      o.seed = derive_seed(spec.seed, kSeedMarkedness);
      o.min_group_size = spec.min_group_size;
      add("markedness", markedness_analysis(study, o));
    }
    if (decide(spec.ranking.toggle, true, "ranking", "", notes)) {
      RankingAnalysisOptions o;
      o.k = spec.ranking.k;
      o.attributes = spec.ranking.attributes.empty() ? spec.group_factors : spec.ranking.attributes;
      o.desired = spec.ranking.desired;
      o.absent = spec.ranking.absent;
      add("ranking", ranking_analysis(study, scores, o));
    }
    const bool has_delta = scores.has_delta;
    const bool has_factors = !spec.ordinal_factors.empty() || !spec.categorical_factors.empty() ||
                             !spec.absdiff.factors.empty();
    if (decide(spec.absdiff.toggle, has_factors && has_delta, "absdiff",
               has_delta ? "the spec lists no ordinal or categorical factors"
                         : "Delta cos needs a neutral prompt for every template",
               notes)) {
      add("absdiff", absdiff_section(study, scores, spec));
    }
    const bool has_ordinal = !spec.ordinal_factors.empty() || !spec.trends.x.empty();
    if (decide(spec.trends.toggle, has_ordinal && has_delta, "trends",
               has_delta ? "the spec lists no ordinal factor"
                         : "Delta cos needs a neutral prompt for every template",
               notes)) {
      add("trends", trends_section(study, scores, spec));
    }
    if (decide(spec.ellipses.toggle, has_delta, "ellipses",
               "Delta cos needs a neutral prompt for every template", notes)) {
      add("ellipses", ellipses_section(study, scores, spec));
    }
  }
  progress.finish();

  Json tables;
  Json analyses = output.add_sections(sections, tables, notes);
  Json dims = Json::array();
  for (const auto& d : study.manifest.dimensions) {
    dims.push_back(Json{{"dimension", d.label}, {"prompts", d.rows.size()}});
  }
  Json results{{"kind", to_string(spec.kind)},
               {"images", study.images.rows},
               {"embedding_dim", study.embedding_dim},
               {"prompts", study.manifest.rows},
               {"templates", study.manifest.templates},
               {"dimensions", dims},
               {"spec", spec_json(spec)},
               {"analyses", analyses},
               {"tables", tables},
               {"notes", notes}};
  output.write(std::move(results), provenance, spec_json(spec), spec);
}

}  // namespace vlbias
