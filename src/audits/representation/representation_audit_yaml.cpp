// The keys of a representation spec (include/vlbias/audits/representation_audit.h).
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "audit_yaml.h"
#include "representation_audit_internal.h"
#include "scores_by_group.h"
#include "vlbias/core/error.h"
#include "vlbias/report/representation_results.h"

namespace vlbias::audits_internal {

namespace {

// A map of unique string keys, each to what `value` reads.
template <typename T, typename F>
std::vector<std::pair<std::string, T>> representation_map(Context& ctx, const YAML::Node& node,
                                                          const std::string& path, F value) {
  count_value(ctx, node, path);
  if (!node.IsMap() || node.size() == 0) {
    fail(ctx, node, path, fmt::format("must be a non-empty map, got {}", describe(node)));
  }
  std::vector<std::pair<std::string, T>> out;
  for (const auto& kv : node) {
    const std::string key = as_string(ctx, kv.first, path + " (a key)");
    const std::string p = join_path(path, shown(key));
    for (const auto& [k, v] : out) {
      if (k == key) fail(ctx, kv.first, p, "appears twice");
    }
    out.emplace_back(key, value(kv.second, p));
  }
  return out;
}

void parse_labels(Context& ctx, const YAML::Node& node, RepresentationAuditSpec& r) {
  const std::string p = "labels";
  const Entries e = check_map(ctx, node, p,
                              {"table", "image", "face", "attribute", "label", "labeller", "use",
                               "attributes", "classes", "columns"});
  r.labels = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  read_string_keys(ctx, e, p,
                   {{"image", &r.image_column},
                    {"face", &r.face_column},
                    {"attribute", &r.attribute_column},
                    {"label", &r.label_column},
                    {"labeller", &r.labeller_column},
                    {"use", &r.labeller}});
  if (const YAML::Node* x = find(e, "attributes")) {
    r.attributes = x->IsScalar() ? std::vector<std::string>{as_string(ctx, *x, p + ".attributes")}
                                 : as_string_list(ctx, *x, p + ".attributes", true);
  }
  if (const YAML::Node* x = find(e, "columns")) {
    r.label_columns = x->IsScalar() ? std::vector<std::string>{as_string(ctx, *x, p + ".columns")}
                                    : as_string_list(ctx, *x, p + ".columns", true);
    VLBIAS_CHECK(r.labeller.empty(), UsageError,
                 "{}: labels.use picks a labeller of a long labels table; a wide table "
                 "(labels.columns) has none",
                 ctx.source);
  }
  if (const YAML::Node* x = find(e, "classes")) {
    r.classes = representation_map<std::vector<std::string>>(
        ctx, *x, p + ".classes", [&](const YAML::Node& v, const std::string& at) {
          std::vector<std::string> c = as_string_list(ctx, v, at, true);
          if (c.size() < 2) fail(ctx, v, at, "must list at least two classes");
          return c;
        });
  }
}

void parse_manifest(Context& ctx, const YAML::Node& node, RepresentationAuditSpec& r) {
  const std::string p = "manifest";
  const Entries e = check_map(ctx, node, p, {"table", "image", "prompt", "group", "key"});
  r.manifest = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  read_string_keys(ctx, e, p,
                   {{"image", &r.manifest_image_column},
                    {"prompt", &r.prompt_column},
                    {"group", &r.group_column},
                    {"key", &r.key_column}});
}

void parse_targets(Context& ctx, const YAML::Node& node, RepresentationAuditSpec& r) {
  const std::string p = "targets";
  const Entries e = check_map(ctx, node, p, {"table", "key", "attribute", "columns", "scale"});
  r.targets = as_input_file(ctx, require(ctx, node, e, p, "table"), p + ".table");
  read_string_keys(ctx, e, p, {{"key", &r.target_key_column}, {"attribute", &r.target_attribute}});
  r.target_columns = representation_map<std::string>(
      ctx, require(ctx, node, e, p, "columns"), p + ".columns",
      [&](const YAML::Node& v, const std::string& at) { return as_string(ctx, v, at); });
  if (const YAML::Node* x = find(e, "scale")) {
    r.target_scale = as_choice(ctx, *x, p + ".scale", {"percent", "share"});
  }
}

void parse_representation_analyses(Context& ctx, const YAML::Node& node,
                                   RepresentationAuditSpec& r) {
  const Entries e =
      check_map(ctx, node, "analyses",
                {kDistributionSection, "measures", "tests", "amplification", "agreement", "power"});
  if (const YAML::Node* x = find(e, kDistributionSection)) {
    const std::string p = "analyses.distribution";
    const Entries o = parse_toggle(ctx, *x, p, r.distribution.toggle, {"interval", "ci"});
    if (const YAML::Node* y = find(o, "interval"))
      r.distribution.interval = as_choice(ctx, *y, p + ".interval", {"sison-glaz", "goodman"});
    if (const YAML::Node* y = find(o, "ci")) r.distribution.ci = as_ci(ctx, *y, p + ".ci");
  }
  if (const YAML::Node* x = find(e, "measures")) {
    const std::string p = "analyses.measures";
    const Entries o = parse_toggle(ctx, *x, p, r.measures.toggle, {"bootstrap", "ci"});
    if (const YAML::Node* y = find(o, "bootstrap"))
      r.measures.bootstrap = as_resamples(ctx, *y, p + ".bootstrap", true);
    if (const YAML::Node* y = find(o, "ci")) r.measures.ci = as_ci(ctx, *y, p + ".ci");
  }
  if (const YAML::Node* x = find(e, "tests")) {
    const std::string p = "analyses.tests";
    const Entries o =
        parse_toggle(ctx, *x, p, r.tests.toggle, {"test", "exact_below", "correction"});
    if (const YAML::Node* y = find(o, "test"))
      r.tests.test = as_choice(ctx, *y, p + ".test", {"auto", "chi-square", "g", "exact"});
    if (const YAML::Node* y = find(o, "exact_below"))
      r.tests.exact_below = as_size(ctx, *y, p + ".exact_below");
    if (const YAML::Node* y = find(o, "correction"))
      r.tests.correction = as_choice(ctx, *y, p + ".correction", {"holm", "bh"});
  }
  if (const YAML::Node* x = find(e, "amplification")) {
    const std::string p = "analyses.amplification";
    const Entries o = parse_toggle(ctx, *x, p, r.amplification.toggle, {"bootstrap", "ci"});
    if (const YAML::Node* y = find(o, "bootstrap"))
      r.amplification.bootstrap = as_resamples(ctx, *y, p + ".bootstrap", true);
    if (const YAML::Node* y = find(o, "ci")) r.amplification.ci = as_ci(ctx, *y, p + ".ci");
  }
  if (const YAML::Node* x = find(e, "agreement")) {
    parse_toggle(ctx, *x, "analyses.agreement", r.agreement, {});
  }
  if (const YAML::Node* x = find(e, "power")) {
    // Analytic (noncentral chi-square): no replicates, unlike the kinds' simulated power.
    const std::string p = "analyses.power";
    const Entries o = parse_toggle(ctx, *x, p, r.power.toggle, {"power", "alpha", "replicates"});
    if (const YAML::Node* y = find(o, "power")) r.power.power = as_ci(ctx, *y, p + ".power");
    if (const YAML::Node* y = find(o, "alpha")) r.power.alpha = as_ci(ctx, *y, p + ".alpha");
    // The scores' tests (scores:) are simulated (power_pilot.h) with this many replicates.
    if (const YAML::Node* y = find(o, "replicates"))
      r.power.replicates = as_resamples(ctx, *y, p + ".replicates", false);
    VLBIAS_CHECK(r.power.power > r.power.alpha, UsageError,
                 "{}: analyses.power.power ({}) must exceed analyses.power.alpha ({})", ctx.source,
                 r.power.power, r.power.alpha);
  }
}

}  // namespace

void parse_representation_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                               RepresentationAuditSpec& r) {
  check_version(ctx, root["version"]);
  const Entries entries =
      check_map(ctx, root, "",
                {"version", "kind", "title", "about", "seed", "min_group_size", "labels",
                 "manifest", "targets", "analyses", "report", "scores"});
  parse_report_keys(ctx, entries, spec);
  parse_seed_keys(ctx, entries, spec);
  parse_labels(ctx, require(ctx, root, entries, "", "labels"), r);
  parse_manifest(ctx, require(ctx, root, entries, "", "manifest"), r);
  if (const YAML::Node* x = find(entries, "targets")) parse_targets(ctx, *x, r);
  r.amplification.toggle.enabled = !r.targets.empty();
  if (const YAML::Node* x = find(entries, "analyses")) parse_representation_analyses(ctx, *x, r);
  if (const YAML::Node* x = find(entries, "report")) parse_report_images(ctx, *x, spec);
  if (const YAML::Node* x = find(entries, "scores")) parse_scores_spec(ctx, *x, r.scores);
  VLBIAS_CHECK(!r.amplification.toggle.enabled || !r.targets.empty(), UsageError,
               "{}: analyses.amplification compares with real-world shares: give a `targets` "
               "section, or amplification: false",
               ctx.source);
}

}  // namespace vlbias::audits_internal
