// The keys of a geo-diversity spec (include/vlbias/audits/geo_audit.h).
#include <string>

#include <fmt/format.h>

#include "audit_yaml.h"
#include "geo_audit_internal.h"
#include "scores_by_group.h"
#include "vlbias/core/error.h"

namespace vlbias::audits_internal {

namespace {

// "{object} in {region}" and friends -> the form's name.
std::string as_form(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::string v = as_string(ctx, node, path);
  if (v == "object" || v == "{object}") return "object";
  if (v == "object-region" || v == "{object} in {region}") return "object-region";
  if (v == "object-country" || v == "{object} in {country}") return "object-country";
  fail(ctx, node, path,
       fmt::format("must be object, object-region or object-country (or the templates "
                   "\"{{object}}\", \"{{object}} in {{region}}\", \"{{object}} in {{country}}\"), "
                   "got {}",
                   describe(node)));
}

EmbeddingSource embedding(Context& ctx, const YAML::Node& map, const Entries& e,
                          const std::string& base, const std::string& key,
                          const std::string& tensor_key, bool required) {
  EmbeddingSource out;
  const YAML::Node* node = required ? &require(ctx, map, e, base, key) : find(e, key);
  if (node != nullptr) out.path = as_input_file(ctx, *node, join_path(base, key));
  if (const YAML::Node* t = find(e, tensor_key)) {
    if (node == nullptr) {
      fail(ctx, *t, join_path(base, tensor_key), fmt::format("needs {}", join_path(base, key)));
    }
    out.tensor = as_string(ctx, *t, join_path(base, tensor_key));
  }
  return out;
}

void parse_features_model(Context& ctx, const YAML::Node& node, GeoAuditSpec& g) {
  const std::string base = "features_model";
  const Entries e = check_map(ctx, node, base, {"model", "column", "preprocess", "image_size"});
  auto& m = g.features_model;
  m.model = as_path(ctx, require(ctx, node, e, base, "model"), join_path(base, "model"));
  if (const YAML::Node* v = find(e, "column")) m.column = as_string(ctx, *v, base + ".column");
  if (const YAML::Node* v = find(e, "preprocess")) {
    m.preprocess =
        as_choice(ctx, *v, base + ".preprocess",
                  {"pytorch-fid", "clean-fid", "processor", "dgm-eval", "dgm-eval-clean"});
  }
  if (const YAML::Node* v = find(e, "image_size")) {
    m.image_size = as_positive_size(ctx, *v, base + ".image_size");
  }
}

void parse_real(Context& ctx, const YAML::Node& node, GeoAuditSpec& g) {
  const std::string base = "real";
  const Entries e =
      check_map(ctx, node, base, {"table", "features", "tensor", "region", "object", "duplicates"});
  g.real_table = as_input_file(ctx, require(ctx, node, e, base, "table"), "real.table");
  g.real_features =
      embedding(ctx, node, e, base, "features", "tensor", g.features_model.model.empty());
  if (const YAML::Node* v = find(e, "region"))
    g.real_region_column = as_string(ctx, *v, "real.region");
  if (const YAML::Node* v = find(e, "object"))
    g.real_object_column = as_string(ctx, *v, "real.object");
  if (const YAML::Node* v = find(e, "duplicates")) {
    g.duplicates = as_choice(ctx, *v, "real.duplicates", {"keep", "drop", "keep-one"});
  }
}

GeoSource parse_source(Context& ctx, const YAML::Node& node, const std::string& base,
                       bool features_required) {
  const Entries e = check_map(ctx, node, base,
                              {"table", "features", "tensor", "clip", "clip_tensor", "region",
                               "object", "country", "form_column", "form", "outcomes"});
  GeoSource s;
  s.table = as_input_file(ctx, require(ctx, node, e, base, "table"), join_path(base, "table"));
  s.features = embedding(ctx, node, e, base, "features", "tensor", features_required);
  s.clip = embedding(ctx, node, e, base, "clip", "clip_tensor", false);
  if (const YAML::Node* v = find(e, "region"))
    s.region_column = as_string(ctx, *v, base + ".region");
  if (const YAML::Node* v = find(e, "object"))
    s.object_column = as_string(ctx, *v, base + ".object");
  if (const YAML::Node* v = find(e, "country")) {
    s.country_column = as_string(ctx, *v, base + ".country");
  }
  if (const YAML::Node* v = find(e, "form_column")) {
    s.form_column = as_string(ctx, *v, base + ".form_column");
  }
  if (const YAML::Node* v = find(e, "form")) s.form = as_form(ctx, *v, base + ".form");
  if (const YAML::Node* v = find(e, "outcomes")) {
    s.outcomes = as_input_file(ctx, *v, join_path(base, "outcomes"));
  }
  return s;
}

void parse_objects(Context& ctx, const YAML::Node& node, GeoAuditSpec& g) {
  const std::string base = "objects";
  const Entries e = check_map(ctx, node, base, {"table", "embeddings", "tensor", "object"});
  g.objects_table = as_input_file(ctx, require(ctx, node, e, base, "table"), "objects.table");
  g.objects_embeddings = embedding(ctx, node, e, base, "embeddings", "tensor", true);
  if (const YAML::Node* v = find(e, "object"))
    g.objects_column = as_string(ctx, *v, "objects.object");
}

std::vector<std::pair<std::string, std::string>> parse_alias_map(Context& ctx,
                                                                 const YAML::Node& node,
                                                                 const std::string& path) {
  count_value(ctx, node, path);
  if (!node.IsMap()) {
    fail(ctx, node, path,
         fmt::format("must be a map from generated label to real label, got {}", describe(node)));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : node) {
    const std::string from = as_string(ctx, kv.first, path + " (a key)");
    const std::string p = join_path(path, shown(from));
    for (const auto& [f, t] : out) {
      if (f == from) fail(ctx, kv.first, p, "appears twice");
    }
    out.emplace_back(from, as_string(ctx, kv.second, p));
  }
  return out;
}

void parse_manifold(Context& ctx, const YAML::Node& node, const std::string& path,
                    GeoAuditSpec::Manifold& m) {
  for (const auto& [k, v] :
       parse_toggle(ctx, node, path, m.toggle, {"k", "inclusive", "bootstrap", "ci"})) {
    const std::string p = join_path(path, k);
    if (k == "k") m.k = as_positive_size(ctx, v, p);
    if (k == "inclusive") m.inclusive = as_bool(ctx, v, p);
    if (k == "bootstrap") m.bootstrap = as_resamples(ctx, v, p, true);
    if (k == "ci") m.ci = as_ci(ctx, v, p);
  }
}

void parse_geo_analyses(Context& ctx, const YAML::Node& node, GeoAuditSpec& g) {
  const std::string base = "analyses";
  const Entries entries = check_map(
      ctx, node, base, {"region", "object_region", "consistency", "distribution", "power"});
  for (const auto& [name, value] : entries) {
    const std::string path = join_path(base, name);
    if (name == "power") parse_power(ctx, value, path, g.power);
    if (name == "region") parse_manifold(ctx, value, path, g.region);
    if (name == "object_region") parse_manifold(ctx, value, path, g.object_region);
    if (name == "consistency") {
      auto& c = g.consistency;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, c.toggle, {"variant", "percentile", "bootstrap", "ci"})) {
        const std::string p = join_path(path, k);
        if (k == "variant") c.variant = as_choice(ctx, v, p, {"raw", "hessel", "torchmetrics"});
        if (k == "percentile") {
          c.percentile = as_finite_at_least_zero(ctx, v, p);
          if (c.percentile > 100.0)
            fail(ctx, v, p, fmt::format("must be 0 to 100, got {}", describe(v)));
        }
        if (k == "bootstrap") c.bootstrap = as_resamples(ctx, v, p, true);
        if (k == "ci") c.ci = as_ci(ctx, v, p);
      }
    }
    if (name == "distribution") {
      auto& d = g.distribution;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, d.toggle,
                        {"fid", "vendi", "kid", "kid_subsets", "kid_subset_size", "bootstrap", "ci",
                         "fid_inf", "fid_inf_points", "fid_inf_min"})) {
        const std::string p = join_path(path, k);
        if (k == "fid") d.fid = as_bool(ctx, v, p);
        if (k == "vendi") d.vendi = as_bool(ctx, v, p);
        if (k == "kid") d.kid = as_bool(ctx, v, p);
        if (k == "kid_subsets") d.kid_subsets = as_size_in_range(ctx, v, p, 1, kMaxKidSubsets);
        if (k == "kid_subset_size") {
          d.kid_subset_size = as_size_in_range(ctx, v, p, 2, kMaxKidSubsetSize);
        }
        if (k == "bootstrap") d.bootstrap = as_resamples(ctx, v, p, true);
        if (k == "ci") d.ci = as_ci(ctx, v, p);
        if (k == "fid_inf") d.fid_inf = as_bool(ctx, v, p);
        if (k == "fid_inf_points") d.fid_inf_points = as_size_in_range(ctx, v, p, 2, 1000);
        if (k == "fid_inf_min") d.fid_inf_min = as_size_in_range(ctx, v, p, 2, kMaxFidInfMin);
      }
      // The subsets' row indices are drawn up front: subsets x size of them.
      if (d.kid_subsets * d.kid_subset_size > kMaxKidDraws) {
        fail(ctx, value, path,
             fmt::format("draws kid_subsets x kid_subset_size = {} x {} rows; at most {} in all "
                         "(fewer subsets or smaller ones)",
                         d.kid_subsets, d.kid_subset_size, kMaxKidDraws));
      }
    }
  }
}

}  // namespace

void parse_geo_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec, GeoAuditSpec& g) {
  check_version(ctx, root["version"]);  // before the keys, unlike the dual-encoder kinds
  const Entries entries = check_map(
      ctx, root, "",
      {"version", "kind", "title", "about", "seed", "min_group_size", "features_model", "real",
       "generated", "objects", "aliases", "sampling", "analyses", "report", "scores"});
  parse_report_keys(ctx, entries, spec);
  parse_seed_keys(ctx, entries, spec);
  if (const YAML::Node* v = find(entries, "features_model")) parse_features_model(ctx, *v, g);
  const bool features_required = g.features_model.model.empty();
  parse_real(ctx, require(ctx, root, entries, "", "real"), g);
  const YAML::Node& generated = require(ctx, root, entries, "", "generated");
  count_value(ctx, generated, "generated");
  if (generated.IsSequence()) {
    if (generated.size() == 0) fail(ctx, generated, "generated", "must list at least one source");
    for (std::size_t i = 0; i < generated.size(); ++i) {
      g.generated.push_back(
          parse_source(ctx, generated[i], fmt::format("generated[{}]", i), features_required));
    }
  } else {
    g.generated.push_back(parse_source(ctx, generated, "generated", features_required));
  }
  if (const YAML::Node* v = find(entries, "objects")) parse_objects(ctx, *v, g);
  if (const YAML::Node* v = find(entries, "aliases")) {
    const Entries e = check_map(ctx, *v, "aliases", {"region", "object"});
    if (const YAML::Node* r = find(e, "region")) {
      g.region_aliases = parse_alias_map(ctx, *r, "aliases.region");
    }
    if (const YAML::Node* o = find(e, "object")) {
      g.object_aliases = parse_alias_map(ctx, *o, "aliases.object");
    }
  }
  if (const YAML::Node* v = find(entries, "sampling")) {
    const Entries e = check_map(ctx, *v, "sampling", {"real_per_cell", "generated_per_cell"});
    if (const YAML::Node* r = find(e, "real_per_cell")) {
      g.real_per_cell = as_positive_size(ctx, *r, "sampling.real_per_cell");
    }
    if (const YAML::Node* r = find(e, "generated_per_cell")) {
      g.generated_per_cell = as_positive_size(ctx, *r, "sampling.generated_per_cell");
    }
  }
  if (const YAML::Node* v = find(entries, "analyses")) parse_geo_analyses(ctx, *v, g);
  if (const YAML::Node* v = find(entries, "report")) parse_report_images(ctx, *v, spec);
  if (const YAML::Node* v = find(entries, "scores")) parse_scores_spec(ctx, *v, g.scores);
}

}  // namespace vlbias::audits_internal
