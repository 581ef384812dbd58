// The visual-stereotypes audit (paper 000, ViSAGe; audit.h, visual_stereotypes.h): visual
// stereotypes from SeeGULL and ViSAGe's ratings, then each analysis whose input is given:
// likelihood / theta / offensiveness from annotations, salience from captions, stereotypical
// pull from image embeddings, each also summarised by region (the sections:
// visual_audit_sections.cpp).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exemplars.h"
#include "run_output.h"
#include "visual_audit_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/metrics/visual_stereotypes.h"

namespace vlbias {

namespace {

stats::Alternative parse_alternative(const std::string& a) {
  if (a == "less") return stats::Alternative::Less;
  if (a == "two-sided") return stats::Alternative::TwoSided;
  return stats::Alternative::Greater;
}

Json visual_spec_json(const AuditCommonSpec& spec, const VisualAuditSpec& v) {
  Json analyses = Json::object();
  if (v.likelihood.toggle.enabled) {
    analyses[kVisualLikelihoodSection] = {{"bootstrap", v.likelihood.bootstrap},
                                          {"ci", v.likelihood.ci}};
  }
  if (v.salience.toggle.enabled) {
    analyses[kVisualSalienceSection] = {{"smoothing", v.salience.smoothing},
                                        {"top", v.salience.top}};
  }
  if (v.pull.toggle.enabled) {
    analyses[kVisualPullSection] = {{"permutations", v.pull.permutations},
                                    {"alternative", v.pull.alternative}};
  }
  Json j{{"kind", "visual-stereotypes"},
         {"seed", spec.seed},
         {"seegull", v.seegull.string()},
         {"visual_attributes", v.visual_attributes.string()},
         {"regions", v.regions.empty() ? std::string("built-in") : v.regions.string()},
         {"stereotypes",
          {{"votes", v.vote_columns},
           {"min_votes", v.min_votes},
           {"rule", v.vote_rule},
           {"min_per_identity", v.min_stereotypes}}}};
  if (!v.annotations.empty()) {
    j["annotations"] = {{"table", v.annotations.string()}, {"image", v.image_column},
                        {"attribute", v.attribute_column}, {"present", v.present_column},
                        {"task", v.task_column},           {"identity", v.identity_column},
                        {"coords", v.coords_column},       {"none_option", v.none_option},
                        {"aggregate", v.aggregation},      {"none_as_random", v.none_as_random}};
  }
  if (!v.captions.empty()) {
    j["captions"] = {{"table", v.captions.string()},
                     {"image", v.caption_image_column},
                     {"caption", v.caption_column},
                     {"identity", v.caption_identity_column}};
  }
  if (!v.pull_table.empty()) {
    j["pull"] = {{"table", v.pull_table.string()},
                 {"embeddings", v.pull_embeddings.path.string()},
                 {"tensor", v.pull_embeddings.tensor},
                 {"identity", v.pull_identity_column},
                 {"set", v.pull_set_column}};
    if (spec.report_images.per_cell > 0) j["pull"]["image"] = v.pull_image_column;
  }
  j["analyses"] = analyses;
  if (spec.report_images.per_cell > 0) {
    j["report"] = audits_internal::report_images_json(spec.report_images);
  }
  return j;
}

// The inputs the audit reads, for the provenance block.
Provenance visual_provenance(const AuditCommonSpec& spec, const VisualAuditSpec& v) {
  Provenance provenance;
  provenance.command = "audit";
  if (!spec.spec_path.empty()) provenance.inputs.push_back(spec.spec_path.string());
  for (const auto* p : {&v.seegull, &v.visual_attributes, &v.regions, &v.annotations, &v.captions,
                        &v.pull_table, &v.pull_embeddings.path}) {
    if (!p->empty()) provenance.inputs.push_back(p->string());
  }
  return provenance;
}

}  // namespace

namespace audits_internal {

AnnotationOptions annotation_options(const VisualAuditSpec& v) {
  AnnotationOptions ao;
  ao.image_column = v.image_column;
  ao.attribute_column = v.attribute_column;
  ao.present_column = v.present_column;
  ao.task_column = v.task_column;
  ao.identity_column = v.identity_column;
  ao.coords_column = v.coords_column;
  ao.none_option = v.none_option;
  ao.aggregation = v.aggregation == "majority" ? Aggregation::Majority : Aggregation::PerAnnotation;
  return ao;
}

Json visual_exemplars(const AuditCommonSpec& spec, const VisualAuditSpec& v, const Table& t,
                      const PullReport& rep, std::vector<std::string>& notes) {
  std::optional<ExemplarImages> found =
      table_images(t, v.pull_image_column, v.pull_table, spec.report_images, "pull.image", notes);
  if (!found) return Json();
  ExemplarImages& images = *found;
  images.score.assign(t.rows, std::numeric_limits<double>::quiet_NaN());
  static constexpr const char* kSets[] = {"default", "stereotypical", "non-stereotypical"};
  std::vector<ExemplarCell> cells;
  for (const IdentityPull& x : rep.identities) {
    for (std::size_t j = 0; j < x.default_pull.size(); ++j) {
      images.score[x.set_rows[0][j]] = x.default_pull[j];
    }
    for (std::size_t k = 0; k < 3; ++k) {
      if (x.set_rows[k].empty()) continue;
      cells.push_back({{{"identity", x.identity}, {"set", kSets[k]}},
                       std::vector<std::uint32_t>(x.set_rows[k].begin(), x.set_rows[k].end())});
    }
  }
  const ExemplarScore pull{"pull", "pull",
                           "a default image's own pull: its cosine to the identity's mean "
                           "stereotypical image minus that to its mean non-stereotypical image",
                           true};
  return exemplars_json(cells, images, spec.report_images,
                        derive_seed(spec.seed, kVisualSeedExemplars), &pull, notes);
}

}  // namespace audits_internal

void run_visual_audit(const AuditCommonSpec& spec, const VisualAuditSpec& v,
                      const std::filesystem::path& run_dir) {
  using namespace audits_internal;  // NOLINT(build/namespaces): visual_audit_internal.h
  RunOutput output(run_dir);        // locks the folder before any input is read
  Provenance provenance = visual_provenance(spec, v);
  start_hashing_inputs(provenance);

  Progress progress("visual stereotypes", 1 + (v.likelihood.toggle.enabled ? 1 : 0) +
                                              (v.salience.toggle.enabled ? 1 : 0) +
                                              (v.pull.toggle.enabled ? 1 : 0));
  const VisualAttributes visual = read_visual_attributes(v.visual_attributes.string());
  StereotypeOptions so;
  so.vote_columns = v.vote_columns;
  so.min_votes = v.min_votes;
  so.rule = v.vote_rule == "any" ? VoteRule::Any : VoteRule::All;
  const VisualStereotypes stereotypes =
      build_visual_stereotypes(read_table(v.seegull.string()), visual, so);
  const std::map<std::string, std::string> regions = read_regions(v.regions.string());
  std::vector<std::pair<std::string, AnalysisOutput>> sections;
  Json exemplars;  // report.images, from the pull table
  std::vector<std::string> exemplar_notes;
  sections.emplace_back(kVisualStereotypesSection,
                        stereotypes_section(visual, stereotypes, regions, v.min_stereotypes));
  progress.advance(1);

  Annotations annotations;
  bool have_annotations = false;
  if (!v.annotations.empty()) {
    annotations = read_annotations(v.annotations.string(), annotation_options(v));
    have_annotations = true;
  }
  // One likelihood computation serves both the likelihood section and salience's L column
  // (without intervals when the likelihood section is off).
  LikelihoodOptions lo;
  lo.min_stereotypes = v.min_stereotypes;
  lo.none_as_random = v.none_as_random;
  lo.bootstrap = v.likelihood.toggle.enabled ? v.likelihood.bootstrap : 0;
  lo.ci = v.likelihood.ci;
  lo.seed = spec.seed;
  LikelihoodReport likelihood;
  if (have_annotations) likelihood = visual_likelihood(annotations, stereotypes, lo);
  if (v.likelihood.toggle.enabled) {
    sections.emplace_back(kVisualLikelihoodSection,
                          likelihood_section(annotations, likelihood, regions, lo));
    progress.advance(1);
  }
  if (v.salience.toggle.enabled) {
    CaptionOptions co;
    co.image_column = v.caption_image_column;
    co.caption_column = v.caption_column;
    co.identity_column = v.caption_identity_column;
    co.smoothing = v.salience.smoothing;
    co.top = v.salience.top;
    sections.emplace_back(kVisualSalienceSection,
                          salience_section(read_table(v.captions.string()), visual, stereotypes,
                                           have_annotations ? &annotations : nullptr,
                                           have_annotations ? &likelihood : nullptr, regions, co));
    progress.advance(1);
  }
  if (v.pull.toggle.enabled) {
    PullOptions po;
    po.identity_column = v.pull_identity_column;
    po.set_column = v.pull_set_column;
    po.permutations = v.pull.permutations;
    po.alternative = parse_alternative(v.pull.alternative);
    po.seed = spec.seed;
    const Matrix embeddings = read_embeddings(v.pull_embeddings.path, v.pull_embeddings.tensor);
    const Table pull_table = read_table(v.pull_table.string());
    const PullReport pull = stereotypical_pull(pull_table, MatrixView(embeddings), po);
    sections.emplace_back(kVisualPullSection, pull_section(pull, regions, po));
    if (spec.report_images.per_cell > 0) {
      exemplars = visual_exemplars(spec, v, pull_table, pull, exemplar_notes);
    }
    progress.advance(1);
  }
  progress.finish();

  std::vector<std::string> notes = std::move(exemplar_notes);
  Json tables;
  Json analyses = output.add_sections(sections, tables, notes);
  if (!visual.rating_columns.empty()) {
    // Fidelity: the paper's count cannot be reproduced from its own release by its stated rule.
    notes.push_back(fmt::format(
        "visual attributes: {} of {} distinct attributes have every rater ({}) at Agree or "
        "Strongly Agree, ViSAGe's stated rule (its Sec. 3.1). The paper reports 385 of 1,994; its "
        "released all_visual_attr.csv gives 518 by that rule, and vlbias applies the rule "
        "(docs/methods.md#visual-attributes).",
        visual.attributes.size(), visual.distinct, fmt::join(visual.rating_columns, ", ")));
  }
  const Json spec_json = visual_spec_json(spec, v);
  Json results{{"kind", to_string(spec.kind)},
               {"spec", spec_json},
               {"analyses", analyses},
               {"tables", tables},
               {"notes", notes}};
  // Last: the thumbnails are the bulk of the file.
  if (!exemplars.is_null()) results["exemplars"] = std::move(exemplars);
  output.write(std::move(results), provenance, spec_json, spec);
}

}  // namespace vlbias
