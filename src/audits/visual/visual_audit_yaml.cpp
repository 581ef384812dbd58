// The keys of a visual-stereotypes spec (include/vlbias/audits/visual_audit.h).
#include <string>

#include <fmt/format.h>

#include "audit_yaml.h"
#include "visual_audit_internal.h"
#include "vlbias/core/error.h"

namespace vlbias::audits_internal {

namespace {

void parse_stereotypes(Context& ctx, const YAML::Node& node, VisualAuditSpec& v) {
  const Entries e =
      check_map(ctx, node, "stereotypes", {"votes", "min_votes", "rule", "min_per_identity"});
  if (const YAML::Node* x = find(e, "votes")) {
    v.vote_columns = x->IsScalar()
                         ? std::vector<std::string>{as_string(ctx, *x, "stereotypes.votes")}
                         : as_string_list(ctx, *x, "stereotypes.votes", true);
  }
  if (const YAML::Node* x = find(e, "min_votes")) {
    v.min_votes = as_finite_at_least_zero(ctx, *x, "stereotypes.min_votes");
  }
  if (const YAML::Node* x = find(e, "rule")) {
    v.vote_rule = as_choice(ctx, *x, "stereotypes.rule", {"all", "any"});
  }
  if (const YAML::Node* x = find(e, "min_per_identity")) {
    v.min_stereotypes = as_size(ctx, *x, "stereotypes.min_per_identity");
  }
}

void parse_annotations(Context& ctx, const YAML::Node& node, VisualAuditSpec& v) {
  const std::string p = "annotations";
  const Entries e = check_map(ctx, node, p,
                              {"table", "image", "attribute", "present", "task", "identity",
                               "coords", "none_option", "aggregate", "none_as_random"});
  v.annotations = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  read_string_keys(ctx, e, p,
                   {{"image", &v.image_column},
                    {"attribute", &v.attribute_column},
                    {"present", &v.present_column},
                    {"task", &v.task_column},
                    {"identity", &v.identity_column},
                    {"coords", &v.coords_column},
                    {"none_option", &v.none_option}});
  if (const YAML::Node* x = find(e, "aggregate")) {
    v.aggregation = as_choice(ctx, *x, p + ".aggregate", {"annotation", "majority"});
  }
  if (const YAML::Node* x = find(e, "none_as_random")) {
    v.none_as_random = as_bool(ctx, *x, p + ".none_as_random");
  }
}

void parse_captions(Context& ctx, const YAML::Node& node, VisualAuditSpec& v) {
  const std::string p = "captions";
  const Entries e = check_map(ctx, node, p, {"table", "image", "caption", "identity"});
  v.captions = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  read_string_keys(ctx, e, p,
                   {{"image", &v.caption_image_column},
                    {"caption", &v.caption_column},
                    {"identity", &v.caption_identity_column}});
}

void parse_pull(Context& ctx, const YAML::Node& node, VisualAuditSpec& v) {
  const std::string p = "pull";
  const Entries e =
      check_map(ctx, node, p, {"table", "embeddings", "tensor", "identity", "set", "image"});
  v.pull_table = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  v.pull_embeddings.path =
      as_input_file(ctx, require(ctx, node, e, p, "embeddings"), p + ".embeddings");
  read_string_keys(ctx, e, p,
                   {{"tensor", &v.pull_embeddings.tensor},
                    {"identity", &v.pull_identity_column},
                    {"set", &v.pull_set_column},
                    {"image", &v.pull_image_column}});
}

void parse_visual_analyses(Context& ctx, const YAML::Node& node, VisualAuditSpec& v) {
  const Entries e =
      check_map(ctx, node, "analyses",
                {kVisualLikelihoodSection, kVisualSalienceSection, kVisualPullSection});
  if (const YAML::Node* x = find(e, kVisualLikelihoodSection)) {
    const std::string p = std::string("analyses.") + kVisualLikelihoodSection;
    const Entries o = parse_toggle(ctx, *x, p, v.likelihood.toggle, {"bootstrap", "ci"});
    if (const YAML::Node* y = find(o, "bootstrap"))
      v.likelihood.bootstrap = as_resamples(ctx, *y, p + ".bootstrap", true);
    if (const YAML::Node* y = find(o, "ci")) v.likelihood.ci = as_ci(ctx, *y, p + ".ci");
  }
  if (const YAML::Node* x = find(e, kVisualSalienceSection)) {
    const std::string p = std::string("analyses.") + kVisualSalienceSection;
    const Entries o = parse_toggle(ctx, *x, p, v.salience.toggle, {"smoothing", "top"});
    if (const YAML::Node* y = find(o, "smoothing"))
      v.salience.smoothing = as_finite_at_least_zero(ctx, *y, p + ".smoothing");
    if (const YAML::Node* y = find(o, "top")) v.salience.top = as_size(ctx, *y, p + ".top");
  }
  if (const YAML::Node* x = find(e, kVisualPullSection)) {
    const std::string p = std::string("analyses.") + kVisualPullSection;
    const Entries o = parse_toggle(ctx, *x, p, v.pull.toggle, {"permutations", "alternative"});
    if (const YAML::Node* y = find(o, "permutations"))
      v.pull.permutations = as_resamples(ctx, *y, p + ".permutations", false);
    if (const YAML::Node* y = find(o, "alternative")) {
      v.pull.alternative = as_choice(ctx, *y, p + ".alternative", {"greater", "less", "two-sided"});
    }
  }
}

}  // namespace

void parse_visual_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                       VisualAuditSpec& v) {
  check_version(ctx, root["version"]);  // before the keys, unlike the dual-encoder kinds
  const Entries entries = check_map(ctx, root, "",
                                    {"version", "kind", "title", "about", "seed", "min_group_size",
                                     "seegull", "visual_attributes", "regions", "stereotypes",
                                     "annotations", "captions", "pull", "analyses", "report"});
  parse_report_keys(ctx, entries, spec);
  parse_seed_keys(ctx, entries, spec);
  v.seegull = as_input_file(ctx, require(ctx, root, entries, "", "seegull"), "seegull");
  v.visual_attributes =
      as_input_file(ctx, require(ctx, root, entries, "", "visual_attributes"), "visual_attributes");
  if (const YAML::Node* x = find(entries, "regions")) v.regions = as_input_file(ctx, *x, "regions");
  if (const YAML::Node* x = find(entries, "stereotypes")) parse_stereotypes(ctx, *x, v);
  if (const YAML::Node* x = find(entries, "annotations")) parse_annotations(ctx, *x, v);
  if (const YAML::Node* x = find(entries, "captions")) parse_captions(ctx, *x, v);
  if (const YAML::Node* x = find(entries, "pull")) parse_pull(ctx, *x, v);
  // Each analysis defaults to on when its input is given.
  v.likelihood.toggle.enabled = !v.annotations.empty();
  v.salience.toggle.enabled = !v.captions.empty();
  v.pull.toggle.enabled = !v.pull_table.empty();
  if (const YAML::Node* x = find(entries, "analyses")) parse_visual_analyses(ctx, *x, v);
  if (const YAML::Node* x = find(entries, "report")) parse_report_images(ctx, *x, spec);
  VLBIAS_CHECK(spec.report_images.per_cell == 0 || v.pull.toggle.enabled, UsageError,
               "{}: report.images shows the pull table's images (pull.image): give a `pull` "
               "section with analyses.pull on, or report: {{images: false}}",
               ctx.source);
  const auto needs = [&](const AnalysisToggle& t, bool ok, const char* what, const char* need) {
    if (t.enabled && !ok) {
      VLBIAS_FAIL(UsageError, "{}: analyses.{} needs the `{}` section", ctx.source, what, need);
    }
  };
  needs(v.likelihood.toggle, !v.annotations.empty(), kVisualLikelihoodSection, "annotations");
  needs(v.salience.toggle, !v.captions.empty(), kVisualSalienceSection, "captions");
  needs(v.pull.toggle, !v.pull_table.empty(), kVisualPullSection, "pull");
  VLBIAS_CHECK(v.likelihood.toggle.enabled || v.salience.toggle.enabled || v.pull.toggle.enabled,
               UsageError,
               "{}: nothing to do: give annotations (likelihood), captions (salience) or pull "
               "(stereotypical pull)",
               ctx.source);
}

}  // namespace vlbias::audits_internal
