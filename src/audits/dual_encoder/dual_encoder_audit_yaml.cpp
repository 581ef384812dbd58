// The keys of a social-perception or trait-pairs spec (include/vlbias/audits/
// dual_encoder_audit.h): images, prompts, factors and the analyses.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "audit_yaml.h"
#include "dual_encoder_audit_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/report/dual_encoder_results.h"

namespace vlbias::audits_internal {

namespace {

using Spec = DualEncoderAuditSpec;

constexpr std::initializer_list<const char*> kTests = {"anova", "welch", "student", "mannwhitney",
                                                       "kruskal"};

void parse_association(Context& ctx, const YAML::Node& value, const std::string& path,
                       Spec::Association& a) {
  for (const auto& [k, v] : parse_toggle(ctx, value, path, a.toggle, {"bootstrap", "ci"})) {
    const std::string p = join_path(path, k);
    if (k == "bootstrap") a.bootstrap = as_resamples(ctx, v, p, true);
    if (k == "ci") a.ci = as_ci(ctx, v, p);
  }
}

// Each item: a column, or a list of columns (an intersectional grouping).
std::vector<std::vector<std::string>> as_groupings(Context& ctx, const YAML::Node& v,
                                                   const std::string& p) {
  count_value(ctx, v, p);
  if (!v.IsSequence() || v.size() == 0) {
    fail(ctx, v, p,
         fmt::format("must be a non-empty list whose items are a column or a list of "
                     "columns, got {}",
                     describe(v)));
  }
  std::vector<std::vector<std::string>> groupings;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const YAML::Node item = v[i];
    const std::string ip = fmt::format("{}[{}]", p, i);
    if (item.IsSequence()) {
      groupings.push_back(as_string_list(ctx, item, ip));
    } else {
      groupings.push_back({as_string(ctx, item, ip)});
    }
  }
  return groupings;
}

void parse_scweat(Context& ctx, const YAML::Node& value, const std::string& path, Spec::Scweat& s) {
  for (const auto& [k, v] :
       parse_toggle(ctx, value, path, s.toggle, {"p_test", "permutations", "groupings"})) {
    const std::string p = join_path(path, k);
    if (k == "p_test") s.p_test = as_choice(ctx, v, p, {"permutation", "sign-flip"});
    if (k == "permutations") s.permutations = as_resamples(ctx, v, p, false);
    if (k == "groupings") s.groupings = as_groupings(ctx, v, p);
  }
}

void parse_markedness(Context& ctx, const YAML::Node& value, const std::string& path,
                      Spec::Markedness& m) {
  for (const auto& [k, v] :
       parse_toggle(ctx, value, path, m.toggle, {"attributes", "bootstrap", "ci"})) {
    const std::string p = join_path(path, k);
    if (k == "attributes") m.attributes = as_string_list(ctx, v, p);
    if (k == "bootstrap") m.bootstrap = as_resamples(ctx, v, p, true);
    if (k == "ci") m.ci = as_ci(ctx, v, p);
  }
}

void parse_neutral(Context& ctx, const YAML::Node& value, const std::string& path,
                   Spec::Neutral& n) {
  for (const auto& [k, v] :
       parse_toggle(ctx, value, path, n.toggle, {"pair_key", "bootstrap", "ci"})) {
    const std::string p = join_path(path, k);
    if (k == "pair_key") n.pair_key = as_string(ctx, v, p);
    if (k == "bootstrap") n.bootstrap = as_resamples(ctx, v, p, true);
    if (k == "ci") n.ci = as_ci(ctx, v, p);
  }
}

void parse_prompt_geometry(Context& ctx, const YAML::Node& value, const std::string& path,
                           Spec::PromptGeometry& g) {
  for (const auto& [k, v] : parse_toggle(ctx, value, path, g.toggle, {"components"})) {
    if (k == "components") g.components = as_positive_size(ctx, v, join_path(path, k));
  }
}

void parse_valence_correlation(Context& ctx, const YAML::Node& value, const std::string& path,
                               Spec::ValenceCorrelation& v) {
  for (const auto& [k, x] : parse_toggle(ctx, value, path, v.toggle, {"factors", "within"})) {
    if (k == "factors") v.factors = as_string_list(ctx, x, join_path(path, k));
    if (k == "within") v.within = as_string(ctx, x, join_path(path, k));
  }
}

void parse_ranking(Context& ctx, const YAML::Node& value, const std::string& path,
                   Spec::Ranking& r) {
  for (const auto& [k, v] :
       parse_toggle(ctx, value, path, r.toggle, {"k", "attributes", "desired", "absent"})) {
    const std::string p = join_path(path, k);
    if (k == "k") r.k = as_positive_size(ctx, v, p);
    if (k == "attributes") r.attributes = as_string_list(ctx, v, p);
    if (k == "desired") r.desired = as_choice(ctx, v, p, {"uniform", "base-rate"});
    if (k == "absent") r.absent = as_choice(ctx, v, p, {"-inf", "zero"});
  }
}

void parse_absdiff(Context& ctx, const YAML::Node& value, const std::string& path,
                   Spec::AbsDiff& a) {
  for (const auto& [k, v] : parse_toggle(ctx, value, path, a.toggle, {"pairs", "factors"})) {
    const std::string p = join_path(path, k);
    if (k == "pairs") a.pairs = as_size_in_range(ctx, v, p, 1, kMaxAbsdiffPairs);
    if (k == "factors") a.factors = as_string_list(ctx, v, p);
  }
}

void parse_trends(Context& ctx, const YAML::Node& value, const std::string& path, Spec::Trends& t) {
  for (const auto& [k, v] : parse_toggle(ctx, value, path, t.toggle, {"x", "fit_to", "degree"})) {
    const std::string p = join_path(path, k);
    if (k == "x") t.x = as_string_list(ctx, v, p);
    if (k == "fit_to") t.fit_to = as_choice(ctx, v, p, {"means", "images"});
    if (k == "degree") {
      const std::uint64_t d = as_uint64(ctx, v, p);
      if (d < 1 || d > 5) fail(ctx, v, p, fmt::format("must be 1 to 5, got {}", describe(v)));
      t.degree = static_cast<int>(d);
    }
  }
}

void parse_ellipses(Context& ctx, const YAML::Node& value, const std::string& path,
                    Spec::Ellipses& e) {
  for (const auto& [k, v] : parse_toggle(ctx, value, path, e.toggle, {"points_by", "k_sigma"})) {
    const std::string p = join_path(path, k);
    if (k == "points_by") e.points_by = as_string(ctx, v, p);
    if (k == "k_sigma") e.k_sigma = as_finite_positive(ctx, v, p);
  }
}

void parse_confidence(Context& ctx, const YAML::Node& value, const std::string& path,
                      Spec::Confidence& c) {
  for (const auto& [k, v] : parse_toggle(ctx, value, path, c.toggle,
                                         {"scale", "logit_scale", "bootstrap", "ci", "across",
                                          "within", "test_across", "test_within"})) {
    const std::string p = join_path(path, k);
    if (k == "scale") c.scale = as_choice(ctx, v, p, {"raw", "logit"});
    if (k == "logit_scale") c.logit_scale = as_finite_positive(ctx, v, p);
    if (k == "bootstrap") c.bootstrap = as_resamples(ctx, v, p, true);
    if (k == "ci") c.ci = as_ci(ctx, v, p);
    if (k == "across") c.across = as_string(ctx, v, p);
    if (k == "within") c.within = as_string(ctx, v, p);
    // Any of the five here; the runner checks the group counts each test needs.
    if (k == "test_across") c.test_across = as_choice(ctx, v, p, kTests);
    if (k == "test_within") c.test_within = as_choice(ctx, v, p, kTests);
  }
}

void parse_explain(Context& ctx, const YAML::Node& value, const std::string& path,
                   Spec::Explain& e) {
  const Entries entries =
      parse_toggle(ctx, value, path, e.toggle,
                   {"model", "pair", "method", "top", "faces", "logit_scale", "bootstrap"});
  for (const auto& [k, v] : entries) {
    const std::string p = join_path(path, k);
    if (k == "model") e.model = as_path(ctx, v, p);
    if (k == "pair") e.pair = as_string(ctx, v, p);
    if (k == "method") e.method = as_choice(ctx, v, p, {"gradcam", "gradcam++", "occlusion"});
    if (k == "top") e.top = as_positive_size(ctx, v, p);
    if (k == "faces") e.faces = as_path(ctx, v, p);
    if (k == "logit_scale") e.logit_scale = as_finite_positive(ctx, v, p);
    if (k == "bootstrap") e.bootstrap = as_resamples(ctx, v, p, true);
  }
  if (!e.toggle.enabled) return;
  for (const char* key : {"model", "pair"}) {
    if (find(entries, key) == nullptr) {
      fail(ctx, value, path,
           fmt::format("needs {} (explain: {{model: CLIP_DIR, pair: smart/dumb}})", key));
    }
  }
}

void parse_analyses(Context& ctx, const YAML::Node& node, Spec& spec) {
  const std::string base = "analyses";
  const Entries entries = check_map(ctx, node, base,
                                    {kAssociationSection, "scweat", "markedness", "ranking",
                                     "absdiff", "trends", "ellipses", kConfidenceSection, "neutral",
                                     "prompt_geometry", "valence_correlation", "power", "explain"});
  for (const auto& [name, value] : entries) {
    const std::string path = join_path(base, name);
    if (name == kAssociationSection) parse_association(ctx, value, path, spec.association);
    if (name == "scweat") parse_scweat(ctx, value, path, spec.scweat);
    if (name == "markedness") parse_markedness(ctx, value, path, spec.markedness);
    if (name == "ranking") parse_ranking(ctx, value, path, spec.ranking);
    if (name == "absdiff") parse_absdiff(ctx, value, path, spec.absdiff);
    if (name == "trends") parse_trends(ctx, value, path, spec.trends);
    if (name == "ellipses") parse_ellipses(ctx, value, path, spec.ellipses);
    if (name == kConfidenceSection) parse_confidence(ctx, value, path, spec.confidence);
    if (name == "neutral") parse_neutral(ctx, value, path, spec.neutral);
    if (name == "prompt_geometry") parse_prompt_geometry(ctx, value, path, spec.prompt_geometry);
    if (name == "valence_correlation") {
      parse_valence_correlation(ctx, value, path, spec.valence_correlation);
    }
    if (name == "power") parse_power(ctx, value, path, spec.power);
    if (name == "explain") parse_explain(ctx, value, path, spec.explain);
  }
}

void parse_factors(Context& ctx, const YAML::Node& node, Spec& spec) {
  const std::string base = "factors";
  const Entries entries = check_map(ctx, node, base, {"groups", "ordinal", "categorical"});
  // Which key path first named each column, to report a column in two roles.
  std::vector<std::pair<std::string, std::string>> roles;
  const auto claim = [&](const YAML::Node& at, const std::string& path, const std::string& col) {
    for (const auto& [c, p] : roles) {
      if (c == col) {
        fail(ctx, at, path,
             fmt::format("lists column '{}', which {} already lists; a column has one role",
                         shown(col), p));
      }
    }
    roles.emplace_back(col, path);
  };
  const YAML::Node& groups = require(ctx, node, entries, base, "groups");
  spec.group_factors = as_string_list(ctx, groups, "factors.groups");
  for (const auto& g : spec.group_factors) claim(groups, "factors.groups", g);
  if (const YAML::Node* ordinal = find(entries, "ordinal")) {
    const std::string path = "factors.ordinal";
    count_value(ctx, *ordinal, path);
    if (!ordinal->IsMap()) {
      fail(ctx, *ordinal, path,
           fmt::format("must be a map from column to AbsDiff threshold, got {}",
                       describe(*ordinal)));
    }
    std::set<std::string> seen;
    for (const auto& kv : *ordinal) {
      const std::string column = as_string(ctx, kv.first, path + " (a key)");
      const std::string p = join_path(path, shown(column));
      if (!seen.insert(column).second) fail(ctx, kv.first, p, "appears twice");
      spec.ordinal_factors.emplace_back(column, as_finite_at_least_zero(ctx, kv.second, p));
      claim(kv.first, path, column);
    }
  }
  if (const YAML::Node* categorical = find(entries, "categorical")) {
    spec.categorical_factors =
        as_string_list(ctx, *categorical, "factors.categorical", /*allow_empty=*/true);
    for (const auto& c : spec.categorical_factors) claim(*categorical, "factors.categorical", c);
  }
}

void parse_images(Context& ctx, const YAML::Node& images, Spec& spec) {
  const Entries e = check_map(ctx, images, "images",
                              {"table", "embeddings", "tensor", "id_column", "index", "image"});
  spec.image_table = as_input_file(ctx, require(ctx, images, e, "images", "table"), "images.table");
  spec.image_embeddings.path =
      as_input_file(ctx, require(ctx, images, e, "images", "embeddings"), "images.embeddings");
  if (const YAML::Node* v = find(e, "tensor")) {
    spec.image_embeddings.tensor = as_string(ctx, *v, "images.tensor");
  }
  if (const YAML::Node* v = find(e, "image")) {
    spec.image_path_column = as_string(ctx, *v, "images.image");
  }
  const YAML::Node* id_column = find(e, "id_column");
  const YAML::Node* index = find(e, "index");
  // Joining by id needs both: the id column of the table and the index table
  // giving each embedding row's id.
  if (index != nullptr && id_column == nullptr) {
    fail(ctx, *index, "images.index", "needs images.id_column (the id column to join on)");
  }
  if (id_column != nullptr && index == nullptr) {
    fail(ctx, *id_column, "images.id_column",
         "needs images.index (the table whose row i names embedding row i)");
  }
  if (id_column != nullptr) {
    spec.image_id_column = as_string(ctx, *id_column, "images.id_column");
    spec.image_index = as_input_file(ctx, *index, "images.index");
  }
}

void parse_prompts(Context& ctx, const YAML::Node& prompts, Spec& spec) {
  const Entries e = check_map(ctx, prompts, "prompts", {"manifest", "embeddings", "tensor"});
  spec.prompt_manifest =
      as_input_file(ctx, require(ctx, prompts, e, "prompts", "manifest"), "prompts.manifest");
  spec.prompt_embeddings.path =
      as_input_file(ctx, require(ctx, prompts, e, "prompts", "embeddings"), "prompts.embeddings");
  if (const YAML::Node* v = find(e, "tensor")) {
    spec.prompt_embeddings.tensor = as_string(ctx, *v, "prompts.tensor");
  }
}

// AbsDiff needs each factor's role (threshold for ordinal, exact match otherwise).
void check_absdiff_factors(const Context& ctx, const Spec& spec) {
  for (std::size_t i = 0; i < spec.absdiff.factors.size(); ++i) {
    const std::string& f = spec.absdiff.factors[i];
    const bool known = std::find(spec.group_factors.begin(), spec.group_factors.end(), f) !=
                           spec.group_factors.end() ||
                       std::find(spec.categorical_factors.begin(), spec.categorical_factors.end(),
                                 f) != spec.categorical_factors.end() ||
                       std::any_of(spec.ordinal_factors.begin(), spec.ordinal_factors.end(),
                                   [&](const auto& o) { return o.first == f; });
    if (!known) {
      VLBIAS_FAIL(UsageError,
                  "{}: analyses.absdiff.factors[{}] is '{}', which is not listed under factors "
                  "(groups, ordinal or categorical).",
                  ctx.source, i, shown(f));
    }
  }
}

}  // namespace

void parse_dual_encoder_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                             DualEncoderAuditSpec& d) {
  const Entries entries = check_map(ctx, root, "",
                                    {"version", "kind", "title", "about", "seed", "min_group_size",
                                     "images", "prompts", "factors", "analyses", "report"});
  parse_report_keys(ctx, entries, spec);
  if (const YAML::Node* v = find(entries, "version")) check_version(ctx, *v);
  parse_seed_keys(ctx, entries, spec);
  parse_images(ctx, require(ctx, root, entries, "", "images"), d);
  parse_prompts(ctx, require(ctx, root, entries, "", "prompts"), d);
  parse_factors(ctx, require(ctx, root, entries, "", "factors"), d);
  if (const YAML::Node* v = find(entries, "analyses")) parse_analyses(ctx, *v, d);
  if (const YAML::Node* v = find(entries, "report")) parse_report_images(ctx, *v, spec);
  check_absdiff_factors(ctx, d);
}

}  // namespace vlbias::audits_internal
