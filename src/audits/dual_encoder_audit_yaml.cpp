// The YAML audit spec (include/vlbias/audits/audit.h): parse_audit_spec, load_audit_spec.
//
// Every value is checked by hand against the documented schema rather than with
// yaml-cpp's as<T>() so that each message names the full key path, the line and
// what was expected, and so that "10.5", "-3", "1e400" or a quoted "10" are
// rejected instead of silently converted.
//
// Hostile input. yaml-cpp 0.7 parses recursively but guards its recursion with
// DepthGuard (at most 2000 nested nodes, then YAML::DeepRecursion, which is a
// ParserException and reported like any malformed YAML); its node graph is flat
// (owned by one memory holder), so destroying a deep document does not recurse.
// We also refuse texts over kMaxSpecBytes before parsing: a spec is a few hundred
// bytes, and the cap bounds the parser's time and memory. Aliases share nodes
// rather than copying them, so a small text can name one long list many times
// ("billion laughs"); the walk below counts every value it converts and stops at
// kMaxValues. Our own walk recurses at most four levels (the schema's depth).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "audit_yaml.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"

namespace vlbias {

const char* to_string(AuditKind kind) {
  switch (kind) {
    case AuditKind::SocialPerception:
      return "social-perception";
    case AuditKind::TraitPairs:
      return "trait-pairs";
    case AuditKind::GeoDiversity:
      return "geo-diversity";
    case AuditKind::LvlmCounterfactual:
      return "lvlm-counterfactual";
    case AuditKind::VisualStereotypes:
      return "visual-stereotypes";
  }
  return "unknown";
}

namespace {

using namespace audits_internal;  // NOLINT(build/namespaces): the spec helpers, audit_yaml.h

constexpr std::initializer_list<const char*> kTests = {"anova", "welch", "student", "mannwhitney",
                                                       "kruskal"};

void parse_analyses(Context& ctx, const YAML::Node& node, AuditSpec& spec) {
  const std::string base = "analyses";
  const Entries entries = check_map(ctx, node, base,
                                    {"association", "scweat", "markedness", "ranking", "absdiff",
                                     "trends", "ellipses", "confidence"});
  for (const auto& [name, value] : entries) {
    const std::string path = join_path(base, name);
    if (name == "association") {
      auto& a = spec.association;
      for (const auto& [k, v] : parse_toggle(ctx, value, path, a.toggle, {"bootstrap", "ci"})) {
        const std::string p = join_path(path, k);
        if (k == "bootstrap") a.bootstrap = as_resamples(ctx, v, p, true);
        if (k == "ci") a.ci = as_ci(ctx, v, p);
      }
    } else if (name == "scweat") {
      auto& s = spec.scweat;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, s.toggle, {"p_test", "permutations", "groupings"})) {
        const std::string p = join_path(path, k);
        if (k == "p_test") s.p_test = as_choice(ctx, v, p, {"permutation", "sign-flip"});
        if (k == "permutations") s.permutations = as_resamples(ctx, v, p, false);
        if (k == "groupings") {
          count_value(ctx, v, p);
          if (!v.IsSequence() || v.size() == 0) {
            fail(ctx, v, p,
                 fmt::format("must be a non-empty list whose items are a column or a list of "
                             "columns, got {}",
                             describe(v)));
          }
          for (std::size_t i = 0; i < v.size(); ++i) {
            const YAML::Node item = v[i];
            const std::string ip = fmt::format("{}[{}]", p, i);
            if (item.IsSequence()) {
              s.groupings.push_back(as_string_list(ctx, item, ip));
            } else {
              s.groupings.push_back({as_string(ctx, item, ip)});
            }
          }
        }
      }
    } else if (name == "markedness") {
      auto& m = spec.markedness;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, m.toggle, {"attributes", "bootstrap", "ci"})) {
        const std::string p = join_path(path, k);
        if (k == "attributes") m.attributes = as_string_list(ctx, v, p);
        if (k == "bootstrap") m.bootstrap = as_resamples(ctx, v, p, true);
        if (k == "ci") m.ci = as_ci(ctx, v, p);
      }
    } else if (name == "ranking") {
      auto& r = spec.ranking;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, r.toggle, {"k", "attributes", "desired", "absent"})) {
        const std::string p = join_path(path, k);
        if (k == "k") r.k = as_positive_size(ctx, v, p);
        if (k == "attributes") r.attributes = as_string_list(ctx, v, p);
        if (k == "desired") r.desired = as_choice(ctx, v, p, {"uniform", "base-rate"});
        if (k == "absent") r.absent = as_choice(ctx, v, p, {"-inf", "zero"});
      }
    } else if (name == "absdiff") {
      auto& a = spec.absdiff;
      for (const auto& [k, v] : parse_toggle(ctx, value, path, a.toggle, {"pairs", "factors"})) {
        const std::string p = join_path(path, k);
        if (k == "pairs") a.pairs = as_size_in_range(ctx, v, p, 1, kMaxAbsdiffPairs);
        if (k == "factors") a.factors = as_string_list(ctx, v, p);
      }
    } else if (name == "trends") {
      auto& t = spec.trends;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, t.toggle, {"x", "fit_to", "degree"})) {
        const std::string p = join_path(path, k);
        if (k == "x") t.x = as_string_list(ctx, v, p);
        if (k == "fit_to") t.fit_to = as_choice(ctx, v, p, {"means", "images"});
        if (k == "degree") {
          const std::uint64_t d = as_uint64(ctx, v, p);
          if (d < 1 || d > 5) fail(ctx, v, p, fmt::format("must be 1 to 5, got {}", describe(v)));
          t.degree = static_cast<int>(d);
        }
      }
    } else if (name == "ellipses") {
      auto& e = spec.ellipses;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, e.toggle, {"points_by", "k_sigma"})) {
        const std::string p = join_path(path, k);
        if (k == "points_by") e.points_by = as_string(ctx, v, p);
        if (k == "k_sigma") e.k_sigma = as_finite_positive(ctx, v, p);
      }
    } else if (name == "confidence") {
      auto& c = spec.confidence;
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
        // Any of the five here; run_audit checks the group counts each test needs.
        if (k == "test_across") c.test_across = as_choice(ctx, v, p, kTests);
        if (k == "test_within") c.test_within = as_choice(ctx, v, p, kTests);
      }
    }
  }
}

void parse_factors(Context& ctx, const YAML::Node& node, AuditSpec& spec) {
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

constexpr std::initializer_list<const char*> kKinds = {"social-perception", "trait-pairs",
                                                       "geo-diversity", "lvlm-counterfactual",
                                                       "visual-stereotypes"};

// Levenshtein distance, for suggesting a kind (a few short words: no need to be clever).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'geo-diversity'?)" when `given` is a near miss or a prefix of one kind.
std::string kind_suggestion(const std::string& given) {
  const char* best = nullptr;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 4) + 1;
  for (const char* k : kKinds) {
    const std::string_view kind(k);
    std::size_t d = edit_distance(given, kind);
    if (given.size() >= 3 && kind.substr(0, given.size()) == given) d = 0;
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best ? fmt::format(" (did you mean '{}'?)", best) : "";
}

// The kind decides which keys are allowed, so it is read and checked first: a misspelled kind
// would otherwise be reported as some key that the kind it fell back to does not allow.
std::string read_kind(Context& ctx, const YAML::Node& root) {
  const std::string kinds = fmt::format("{}", fmt::join(kKinds, ", "));
  if (!root.IsMap()) check_map(ctx, root, "", {"kind"});  // "must be a map" with its line
  const YAML::Node kind = root["kind"];
  if (!kind.IsDefined()) {
    VLBIAS_FAIL(UsageError, "{}: missing required key kind (the kind of audit: one of {}).",
                where(ctx, root), kinds);
  }
  const std::string value = as_string(ctx, kind, "kind");
  for (const char* k : kKinds) {
    if (value == k) return value;
  }
  VLBIAS_FAIL(UsageError, "{}: kind must be one of {}, got '{}', which is not a kind of audit{}.",
              where(ctx, kind), kinds, shown(value), kind_suggestion(value));
}

void parse_root(Context& ctx, const YAML::Node& root, AuditSpec& spec) {
  const std::string kind = read_kind(ctx, root);
  const bool geo = kind == "geo-diversity";
  const bool lvlm = kind == "lvlm-counterfactual";
  const bool visual = kind == "visual-stereotypes";
  if (geo || lvlm || visual) {
    if (const YAML::Node version = root["version"]; version.IsDefined()) {
      if (as_uint64(ctx, version, "version") != 1) {
        fail(ctx, version, "version",
             fmt::format("must be 1 (the only version), got {}", describe(version)));
      }
    }
    if (geo) {
      parse_geo_root(ctx, root, spec);
    } else if (visual) {
      parse_visual_root(ctx, root, spec);
    } else {
      parse_lvlm_root(ctx, root, spec);
    }
    return;
  }
  const Entries entries = check_map(ctx, root, "",
                                    {"version", "kind", "title", "about", "seed", "min_group_size",
                                     "images", "prompts", "factors", "analyses"});
  parse_report_keys(ctx, entries, spec);
  if (const YAML::Node* v = find(entries, "version")) {
    if (as_uint64(ctx, *v, "version") != 1) {
      fail(ctx, *v, "version", fmt::format("must be 1 (the only version), got {}", describe(*v)));
    }
  }
  spec.kind = kind == "trait-pairs" ? AuditKind::TraitPairs : AuditKind::SocialPerception;
  if (const YAML::Node* v = find(entries, "seed")) spec.seed = as_uint64(ctx, *v, "seed");
  if (const YAML::Node* v = find(entries, "min_group_size")) {
    spec.min_group_size = as_size(ctx, *v, "min_group_size");
  }

  {
    const YAML::Node& images = require(ctx, root, entries, "", "images");
    const Entries e =
        check_map(ctx, images, "images", {"table", "embeddings", "tensor", "id_column", "index"});
    spec.image_table =
        as_input_file(ctx, require(ctx, images, e, "images", "table"), "images.table");
    spec.image_embeddings.path =
        as_input_file(ctx, require(ctx, images, e, "images", "embeddings"), "images.embeddings");
    if (const YAML::Node* v = find(e, "tensor")) {
      spec.image_embeddings.tensor = as_string(ctx, *v, "images.tensor");
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
  {
    const YAML::Node& prompts = require(ctx, root, entries, "", "prompts");
    const Entries e = check_map(ctx, prompts, "prompts", {"manifest", "embeddings", "tensor"});
    spec.prompt_manifest =
        as_input_file(ctx, require(ctx, prompts, e, "prompts", "manifest"), "prompts.manifest");
    spec.prompt_embeddings.path =
        as_input_file(ctx, require(ctx, prompts, e, "prompts", "embeddings"), "prompts.embeddings");
    if (const YAML::Node* v = find(e, "tensor")) {
      spec.prompt_embeddings.tensor = as_string(ctx, *v, "prompts.tensor");
    }
  }
  parse_factors(ctx, require(ctx, root, entries, "", "factors"), spec);
  if (const YAML::Node* v = find(entries, "analyses")) parse_analyses(ctx, *v, spec);

  // AbsDiff needs each factor's role (threshold for ordinal, exact match otherwise).
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

AuditSpec parse_audit_spec(const std::string& yaml_text, const std::filesystem::path& base_dir,
                           const std::string& source) {
  VLBIAS_CHECK(yaml_text.size() <= kMaxSpecBytes, UsageError,
               "{}: the spec is {} bytes; a spec may be at most {} bytes.", source,
               yaml_text.size(), kMaxSpecBytes);
  Context ctx{source, base_dir, 0};
  const YAML::Node root =
      load_document(yaml_text, source, "a map with kind, images, prompts and factors");
  AuditSpec spec;
  try {
    parse_root(ctx, root, spec);
  } catch (const YAML::Exception& e) {
    // Not expected: the walk only iterates nodes it has type-checked.
    VLBIAS_FAIL(UsageError, "{}: could not read the spec: {}.", source, e.msg);
  }
  return spec;
}

AuditSpec load_audit_spec(const std::filesystem::path& path) {
  const std::string text = read_spec_file(path, "audit spec");
  AuditSpec spec = parse_audit_spec(text, path.parent_path(), path.string());
  spec.spec_path = path;
  return spec;
}

}  // namespace vlbias
