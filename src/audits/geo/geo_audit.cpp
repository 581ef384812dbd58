// `vlbias audit` for kind: geo-diversity (paper 002, DIG-In): the Region, Object-Region and
// Object-Consistency indicators per prompt form, with bootstrap intervals and region gaps,
// plus FID/KID/Vendi per region. How sets are composed: include/vlbias/audits/geo_audit.h;
// the pieces of the audit: geo_audit_internal.h.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "exemplars.h"
#include "geo_audit_internal.h"
#include "run_output.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

namespace audits_internal {

const char* form_name(Form f) {
  switch (f) {
    case Form::Object:
      return "object";
    case Form::ObjectRegion:
      return "object-region";
    case Form::ObjectCountry:
      return "object-country";
  }
  return "object";
}

const char* form_template(Form f) {
  switch (f) {
    case Form::Object:
      return "{object}";
    case Form::ObjectRegion:
      return "{object} in {region}";
    case Form::ObjectCountry:
      return "{object} in {country}";
  }
  return "{object}";
}

std::string first_few(const std::set<std::string>& s) {
  std::string out;
  std::size_t n = 0;
  for (const std::string& v : s) {
    if (n == 8) {
      out += fmt::format(", ... ({} in all)", s.size());
      break;
    }
    out += (n++ ? ", '" : "'") + v + "'";
  }
  return out;
}

}  // namespace audits_internal

using namespace audits_internal;  // NOLINT(build/namespaces): the pieces, geo_audit_internal.h

namespace {

Json geo_spec_json(const AuditCommonSpec& s, const GeoAuditSpec& g) {
  Json aliases{{"region", Json::object()}, {"object", Json::object()}};
  for (const auto& [a, b] : g.region_aliases) aliases["region"][a] = b;
  for (const auto& [a, b] : g.object_aliases) aliases["object"][a] = b;
  const auto manifold = [](const GeoAuditSpec::Manifold& m) {
    return Json{{"enabled", m.toggle.enabled},
                {"k", m.k},
                {"inclusive", m.inclusive},
                {"bootstrap", m.bootstrap},
                {"ci", m.ci}};
  };
  Json j{{"kind", to_string(s.kind)},
         {"seed", s.seed},
         {"min_group_size", s.min_group_size},
         {"report_images", s.report_images.per_cell},
         {"report_image_budget", s.report_images.budget},
         {"duplicates", g.duplicates},
         {"real_per_cell", g.real_per_cell},
         {"generated_per_cell", g.generated_per_cell},
         {"aliases", aliases},
         {"region", manifold(g.region)},
         {"object_region", manifold(g.object_region)},
         {"consistency", Json{{"enabled", g.consistency.toggle.enabled},
                              {"variant", g.consistency.variant},
                              {"percentile", g.consistency.percentile},
                              {"bootstrap", g.consistency.bootstrap},
                              {"ci", g.consistency.ci}}},
         {"distribution", Json{{"enabled", g.distribution.toggle.enabled},
                               {"fid", g.distribution.fid},
                               {"vendi", g.distribution.vendi},
                               {"kid", g.distribution.kid}}}};
  if (!g.scores.empty()) j["scores"] = scores_spec_json(g.scores);
  return j;
}

// The inputs the audit reads, for the provenance block; checks first that an explicitly
// requested consistency indicator has both of its inputs.
Provenance geo_provenance(const AuditCommonSpec& spec, const GeoAuditSpec& g, bool can_score) {
  Provenance provenance;
  provenance.command = "audit";
  if (!spec.spec_path.empty()) provenance.inputs.push_back(spec.spec_path.string());
  provenance.inputs.push_back(g.real_table.string());
  if (!g.real_features.path.empty()) provenance.inputs.push_back(g.real_features.path.string());
  // The stimuli every generator is measured against, for compare-runs.
  provenance.roles.emplace_back("real.table", g.real_table.string());
  if (!g.real_features.path.empty())
    provenance.roles.emplace_back("real.features", g.real_features.path.string());
  for (const GeoSource& s : g.generated) {
    provenance.inputs.push_back(s.table.string());
    if (!s.features.path.empty()) provenance.inputs.push_back(s.features.path.string());
    if (!s.clip.path.empty()) provenance.inputs.push_back(s.clip.path.string());
    if (!s.outcomes.empty()) provenance.inputs.push_back(s.outcomes.string());
  }
  for (const ScoreTableSpec& s : g.scores) provenance.inputs.push_back(s.table.string());
  // An explicitly requested consistency indicator needs both inputs; checked before reading.
  VLBIAS_CHECK(!(g.consistency.toggle.explicit_ && g.consistency.toggle.enabled && !can_score),
               UsageError,
               "analysis 'consistency' was requested but cannot run: it needs generated.clip "
               "(CLIP image embeddings) and objects (the object text embeddings)");
  if (can_score) {
    provenance.inputs.push_back(g.objects_table.string());
    provenance.inputs.push_back(g.objects_embeddings.path.string());
    provenance.roles.emplace_back("objects.table", g.objects_table.string());
  }
  return provenance;
}

// Every enabled indicator's sections, in results.json's order; `clip_scores` receives the
// consistency indicator's CLIPScore per generated row when it ran.
std::vector<std::pair<std::string, AnalysisOutput>> geo_sections(
    const AuditCommonSpec& spec, const GeoAuditSpec& g, const RealData& real,
    const GeneratedData& gen, const GeneratedSets& sets, bool can_score,
    std::vector<std::string>& notes, std::vector<double>& clip_scores) {
  std::vector<std::pair<std::string, AnalysisOutput>> sections;
  if (g.region.toggle.enabled) {
    RegionOutputs r = region_analysis(spec, g, real, gen, sets, notes);
    sections.emplace_back("region", std::move(r.section));
    sections.emplace_back("region_gaps", std::move(r.gaps));
  }
  if (g.object_region.toggle.enabled) {
    sections.emplace_back("object_region", object_region_analysis(spec, g, real, gen, sets, notes));
  }
  if (g.consistency.toggle.enabled) {
    if (can_score) {
      ConsistencyOutputs c = consistency_analysis(spec, g, gen, sets, notes);
      clip_scores = std::move(c.row_scores);
      sections.emplace_back("consistency", std::move(c.section));
      sections.emplace_back("consistency_gaps", std::move(c.gaps));
    } else {
      notes.push_back(
          "consistency skipped: it needs generated.clip (CLIP image embeddings) and objects "
          "(the object text embeddings)");
    }
  }
  if (g.distribution.toggle.enabled &&
      (g.distribution.fid || g.distribution.kid || g.distribution.vendi)) {
    sections.emplace_back("distribution", distribution_analysis(spec, g, real, gen, sets));
  }
  if (std::any_of(g.generated.begin(), g.generated.end(),
                  [](const GeoSource& s) { return !s.outcomes.empty(); })) {
    sections.emplace_back(kGeoFilteredSection, filtered_analysis(g));
  }
  if (!g.scores.empty()) {
    const GeoScores scores = read_geo_scores(g, gen);
    // 95% intervals, as the filtered section's; no units table (regions are not paired).
    sections.emplace_back("scores", scores_analysis(scores.data, scores.groupings, 0.95, ""));
  }
  return sections;
}

// What was read and matched: results.json's "real" and "generated" objects.
Json real_json(const GeoAuditSpec& geo, const RealData& real) {
  Json j{{"images", real.features.rows},
         {"rows_read", real.rows_read},
         {"dim", real.features.cols},
         {"regions", real.regions->names},
         {"objects", real.objects->names.size()},
         {"duplicate_groups", real.duplicate_groups},
         {"duplicates_removed", real.duplicates_removed}};
  if (geo.real_per_cell > 0) j["left_out_by_balancing"] = real.balanced_out;
  return j;
}

Json generated_json(const GeneratedData& gen, const Json& matching) {
  Json forms = Json::object();
  for (const Form f : kForms) forms[form_name(f)] = gen.per_form[static_cast<int>(f)];
  return Json{{"images", gen.features.rows},
              {"rows_read", gen.rows_read},
              {"by_form", forms},
              {"clip_dim", gen.clip.cols},
              {"matching", matching}};
}

// report.images: one grid per (region, object) cell of the generated images with a region, in
// (region, object) order, drawn with derive_seed(seed, kSeedExemplars); with CLIPScores (the
// consistency indicator ran), each cell's lowest-scored images too.
Json geo_exemplars(const AuditCommonSpec& spec, const GeneratedData& gen,
                   const std::vector<double>& clip_scores, std::vector<std::string>& notes) {
  std::map<std::pair<std::string, std::string>, std::vector<std::uint32_t>> members;
  for (std::size_t i = 0; i < gen.region.size(); ++i) {
    if (!gen.region[i].empty()) {
      members[{gen.region[i], gen.object[i]}].push_back(static_cast<std::uint32_t>(i));
    }
  }
  std::vector<ExemplarCell> cells;
  for (auto& [key, rows] : members) {
    cells.push_back({{{"region", key.first}, {"object", key.second}}, std::move(rows)});
  }
  ExemplarImages images{gen.image_path, gen.image_file, clip_scores};
  if (!spec.report_images.root.empty()) {
    for (std::size_t i = 0; i < images.path.size(); ++i) {
      images.file[i] = exemplar_file(spec.report_images, {}, images.path[i]);
    }
  }
  const ExemplarScore clip{"clipscore", "CLIPScore",
                           "the consistency indicator's CLIPScore of the image with its object",
                           false};
  return exemplars_json(cells, images, spec.report_images, derive_seed(spec.seed, kSeedExemplars),
                        clip_scores.empty() ? nullptr : &clip, notes);
}

}  // namespace

void run_geo_audit(const AuditCommonSpec& spec, const GeoAuditSpec& g,
                   const std::filesystem::path& run_dir) {
  RunOutput output(run_dir);  // locks the folder before any input is read
  const bool any_clip = std::any_of(g.generated.begin(), g.generated.end(),
                                    [](const GeoSource& s) { return !s.clip.path.empty(); });
  const bool can_score = any_clip && !g.objects_table.empty();
  Provenance provenance = geo_provenance(spec, g, can_score);
  start_hashing_inputs(provenance);

  std::vector<std::string> notes;
  const RealData real = load_real(spec, g, notes);
  const GeneratedData gen = load_generated(g, real.features.cols, notes);
  Json matching;
  const GeneratedSets sets = compose_sets(spec, g, real, gen, notes, matching);
  std::vector<double> clip_scores;  // per generated row, when consistency ran
  std::vector<std::pair<std::string, AnalysisOutput>> sections =
      geo_sections(spec, g, real, gen, sets, can_score, notes, clip_scores);

  Json exemplars;
  if (spec.report_images.per_cell > 0) exemplars = geo_exemplars(spec, gen, clip_scores, notes);
  Json tables;
  Json analyses = output.add_sections(sections, tables, notes);
  Json results{{"kind", to_string(spec.kind)},
               {"real", real_json(g, real)},
               {"generated", generated_json(gen, matching)},
               {"spec", geo_spec_json(spec, g)},
               {"analyses", analyses},
               {"tables", tables},
               {"notes", notes}};
  // analyses.power, from this study as its own pilot (its own seed stream).
  if (g.power.toggle.enabled) {
    add_power_section(results, pilot_sections_of(sections, to_string(spec.kind)), g.power,
                      derive_seed(spec.seed, kPowerSeedStream));
  }
  // Last: the thumbnails are the bulk of the file.
  if (!exemplars.is_null()) results["exemplars"] = std::move(exemplars);
  output.write(std::move(results), provenance, geo_spec_json(spec, g), spec);
}

}  // namespace vlbias
