// The YAML audit spec (include/vlbias/audit.h): parse_audit_spec, load_audit_spec.
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
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "vlbias/audit.h"
#include "vlbias/error.h"

namespace vlbias {

const char* to_string(AuditKind kind) {
  switch (kind) {
    case AuditKind::SocialPerception:
      return "social-perception";
    case AuditKind::TraitPairs:
      return "trait-pairs";
  }
  return "unknown";
}

namespace {

constexpr std::size_t kMaxSpecBytes = std::size_t{1} << 20;  // 1 MiB
constexpr std::size_t kMaxValues = 1'000'000;                // scalars converted per spec

struct Context {
  std::string source;
  std::filesystem::path base_dir;
  std::size_t values = 0;
};

using Entries = std::vector<std::pair<std::string, YAML::Node>>;

// "spec.yaml line 12" (yaml-cpp's marks are 0-based), or just the source.
std::string where(const Context& ctx, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.line < 0) return ctx.source;
  return fmt::format("{} line {}", ctx.source, mark.line + 1);
}

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// A short, printable rendering of a scalar for messages.
std::string shown(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f) ? c : '?';
  }
  if (text.size() > 40) out += "...";
  return out;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return fmt::format("'{}'", shown(node.Scalar()));
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      break;
  }
  return "an undefined value";
}

[[noreturn]] void fail(const Context& ctx, const YAML::Node& node, const std::string& path,
                       const std::string& what) {
  VLBIAS_FAIL(UsageError, "{}: {} {}.", where(ctx, node), path, what);
}

void count_value(Context& ctx, const YAML::Node& node, const std::string& path) {
  if (++ctx.values > kMaxValues) {
    fail(ctx, node, path,
         fmt::format("pushes the spec past {} values (aliases repeating long lists?)", kMaxValues));
  }
}

// The entries of a map after checking that every key is a unique string allowed here.
Entries check_map(Context& ctx, const YAML::Node& node, const std::string& path,
                  std::initializer_list<const char*> allowed) {
  const std::string allowed_list = fmt::format("{}", fmt::join(allowed, ", "));
  const std::string name = path.empty() ? std::string("the top level") : path;
  if (!node.IsMap()) {
    VLBIAS_FAIL(UsageError, "{}: {} must be a map with keys {}, got {}.", where(ctx, node), name,
                allowed_list, describe(node));
  }
  Entries entries;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    count_value(ctx, kv.first, path);
    if (!kv.first.IsScalar()) {
      VLBIAS_FAIL(UsageError, "{}: {} has a key that is {}, expected one of {}.",
                  where(ctx, kv.first), name, describe(kv.first), allowed_list);
    }
    const std::string key = kv.first.Scalar();
    const std::string key_path = join_path(path, shown(key));
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }) ==
        allowed.end()) {
      VLBIAS_FAIL(UsageError, "{}: unknown key {}; the keys allowed in {} are {}.",
                  where(ctx, kv.first), key_path, name, allowed_list);
    }
    if (!seen.insert(key).second) {
      VLBIAS_FAIL(UsageError, "{}: duplicate key {}; each key may appear once.",
                  where(ctx, kv.first), key_path);
    }
    entries.emplace_back(key, kv.second);
  }
  return entries;
}

const YAML::Node* find(const Entries& entries, const std::string& key) {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

const YAML::Node& require(const Context& ctx, const YAML::Node& map, const Entries& entries,
                          const std::string& path, const std::string& key) {
  const YAML::Node* node = find(entries, key);
  if (node == nullptr) {
    VLBIAS_FAIL(UsageError, "{}: missing required key {}.", where(ctx, map), join_path(path, key));
  }
  return *node;
}

// A plain (unquoted, untagged) scalar or one tagged !!int / !!float: the only
// forms a number may take.
bool is_plain_number_scalar(const YAML::Node& node) {
  if (!node.IsScalar()) return false;
  const std::string& tag = node.Tag();
  return tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float";
}

std::string as_string(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (!node.IsScalar())
    fail(ctx, node, path, fmt::format("must be a string, got {}", describe(node)));
  if (node.Scalar().empty()) fail(ctx, node, path, "must be a non-empty string");
  return node.Scalar();
}

std::uint64_t as_uint64(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (!is_plain_number_scalar(node)) {
    fail(ctx, node, path,
         fmt::format("must be a non-negative integer (unquoted), got {}", describe(node)));
  }
  std::string_view text = node.Scalar();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (!text.empty() && text.front() == '-' && text.size() > 1 &&
      std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail(ctx, node, path, fmt::format("must be non-negative, got {}", describe(node)));
  }
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail(ctx, node, path, fmt::format("must be a non-negative integer, got {}", describe(node)));
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    fail(ctx, node, path,
         fmt::format("is out of range (at most {}), got {}",
                     std::numeric_limits<std::uint64_t>::max(), describe(node)));
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(ctx, node, path, fmt::format("must be a non-negative integer, got {}", describe(node)));
  }
  return value;
}

std::size_t as_size(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::uint64_t v = as_uint64(ctx, node, path);
  if (v > std::numeric_limits<std::size_t>::max()) {
    fail(ctx, node, path, fmt::format("is out of range, got {}", describe(node)));
  }
  return static_cast<std::size_t>(v);
}

std::size_t as_positive_size(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::size_t v = as_size(ctx, node, path);
  if (v == 0) fail(ctx, node, path, "must be a positive integer, got 0");
  return v;
}

// A YAML 1.2 core-schema float: decimal or exponent notation, or .inf / .nan.
double as_double(Context& ctx, const YAML::Node& node, const std::string& path) {
  count_value(ctx, node, path);
  if (!is_plain_number_scalar(node)) {
    fail(ctx, node, path, fmt::format("must be a number (unquoted), got {}", describe(node)));
  }
  std::string_view text = node.Scalar();
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  double value = 0;
  if (text == ".inf" || text == ".Inf" || text == ".INF") {
    value = std::numeric_limits<double>::infinity();
  } else if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    // from_chars alone would also take "inf", "nan" and hex-less oddities; allow
    // only digits, one '.', and an exponent.
    const bool charset_ok = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    });
    const auto [end, ec] = charset_ok
                               ? std::from_chars(text.data(), text.data() + text.size(), value)
                               : std::from_chars_result{text.data(), std::errc::invalid_argument};
    if (ec == std::errc::result_out_of_range) {
      fail(ctx, node, path, fmt::format("must be a finite number, got {}", describe(node)));
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      fail(ctx, node, path, fmt::format("must be a number, got {}", describe(node)));
    }
  }
  return negative ? -value : value;
}

double as_finite_at_least_zero(Context& ctx, const YAML::Node& node, const std::string& path) {
  const double v = as_double(ctx, node, path);
  if (!std::isfinite(v) || v < 0) {
    fail(ctx, node, path, fmt::format("must be a finite number >= 0, got {}", describe(node)));
  }
  return v;
}

double as_finite_positive(Context& ctx, const YAML::Node& node, const std::string& path) {
  const double v = as_double(ctx, node, path);
  if (!std::isfinite(v) || v <= 0) {
    fail(ctx, node, path, fmt::format("must be a finite number > 0, got {}", describe(node)));
  }
  return v;
}

double as_ci(Context& ctx, const YAML::Node& node, const std::string& path) {
  const double v = as_double(ctx, node, path);
  if (!(v > 0 && v < 1)) {
    fail(ctx, node, path, fmt::format("must be a level in (0, 1), got {}", describe(node)));
  }
  return v;
}

// One of `allowed`, exactly.
std::string as_choice(Context& ctx, const YAML::Node& node, const std::string& path,
                      std::initializer_list<const char*> allowed) {
  const std::string v = as_string(ctx, node, path);
  for (const char* a : allowed) {
    if (v == a) return v;
  }
  fail(ctx, node, path,
       fmt::format("must be one of {}, got {}", fmt::join(allowed, ", "), describe(node)));
}

// A list of distinct non-empty strings; `allow_empty` false rejects [].
std::vector<std::string> as_string_list(Context& ctx, const YAML::Node& node,
                                        const std::string& path, bool allow_empty = false) {
  count_value(ctx, node, path);
  if (!node.IsSequence()) {
    fail(ctx, node, path, fmt::format("must be a list of strings, got {}", describe(node)));
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string item_path = fmt::format("{}[{}]", path, i);
    std::string v = as_string(ctx, item, item_path);
    if (!seen.insert(v).second) {
      fail(ctx, item, item_path, fmt::format("repeats '{}'; each entry may appear once", shown(v)));
    }
    out.push_back(std::move(v));
  }
  if (out.empty() && !allow_empty) fail(ctx, node, path, "must be a non-empty list of strings");
  return out;
}

std::filesystem::path as_path(Context& ctx, const YAML::Node& node, const std::string& path) {
  const std::filesystem::path p(as_string(ctx, node, path));
  if (p.is_absolute()) return p.lexically_normal();
  return (ctx.base_dir / p).lexically_normal();
}

// An analysis entry: a map of options (enabled, explicit), `true` (defaults,
// explicit) or `false` (off). Returns the option entries (empty unless a map).
Entries parse_toggle(Context& ctx, const YAML::Node& node, const std::string& path,
                     AuditSpec::Toggle& toggle, std::initializer_list<const char*> allowed) {
  count_value(ctx, node, path);
  toggle.explicit_ = true;
  if (node.IsMap()) {
    toggle.enabled = true;
    return check_map(ctx, node, path, allowed);
  }
  if (node.IsScalar() && node.Tag() == "?") {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      toggle.enabled = true;
      return {};
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      toggle.enabled = false;
      return {};
    }
  }
  fail(ctx, node, path,
       fmt::format("must be true, false or a map of options ({}), got {}", fmt::join(allowed, ", "),
                   describe(node)));
}

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
        if (k == "bootstrap") a.bootstrap = as_size(ctx, v, p);
        if (k == "ci") a.ci = as_ci(ctx, v, p);
      }
    } else if (name == "scweat") {
      auto& s = spec.scweat;
      for (const auto& [k, v] :
           parse_toggle(ctx, value, path, s.toggle, {"p_test", "permutations", "groupings"})) {
        const std::string p = join_path(path, k);
        if (k == "p_test") s.p_test = as_choice(ctx, v, p, {"permutation", "sign-flip"});
        if (k == "permutations") s.permutations = as_positive_size(ctx, v, p);
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
        if (k == "bootstrap") m.bootstrap = as_size(ctx, v, p);
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
        if (k == "pairs") a.pairs = as_positive_size(ctx, v, p);
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
        if (k == "bootstrap") c.bootstrap = as_size(ctx, v, p);
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

void parse_root(Context& ctx, const YAML::Node& root, AuditSpec& spec) {
  const Entries entries = check_map(
      ctx, root, "",
      {"version", "kind", "seed", "min_group_size", "images", "prompts", "factors", "analyses"});
  if (const YAML::Node* v = find(entries, "version")) {
    if (as_uint64(ctx, *v, "version") != 1) {
      fail(ctx, *v, "version", fmt::format("must be 1 (the only version), got {}", describe(*v)));
    }
  }
  const std::string kind = as_choice(ctx, require(ctx, root, entries, "", "kind"), "kind",
                                     {"social-perception", "trait-pairs"});
  spec.kind = kind == "trait-pairs" ? AuditKind::TraitPairs : AuditKind::SocialPerception;
  if (const YAML::Node* v = find(entries, "seed")) spec.seed = as_uint64(ctx, *v, "seed");
  if (const YAML::Node* v = find(entries, "min_group_size")) {
    spec.min_group_size = as_size(ctx, *v, "min_group_size");
  }

  {
    const YAML::Node& images = require(ctx, root, entries, "", "images");
    const Entries e =
        check_map(ctx, images, "images", {"table", "embeddings", "tensor", "id_column", "index"});
    spec.image_table = as_path(ctx, require(ctx, images, e, "images", "table"), "images.table");
    spec.image_embeddings.path =
        as_path(ctx, require(ctx, images, e, "images", "embeddings"), "images.embeddings");
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
      spec.image_index = as_path(ctx, *index, "images.index");
    }
  }
  {
    const YAML::Node& prompts = require(ctx, root, entries, "", "prompts");
    const Entries e = check_map(ctx, prompts, "prompts", {"manifest", "embeddings", "tensor"});
    spec.prompt_manifest =
        as_path(ctx, require(ctx, prompts, e, "prompts", "manifest"), "prompts.manifest");
    spec.prompt_embeddings.path =
        as_path(ctx, require(ctx, prompts, e, "prompts", "embeddings"), "prompts.embeddings");
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

// Ignores every event: used only to count documents.
class NullEvents : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// 0, 1 or 2 (= more than one). Not YAML::LoadAll: on some malformed text (",'")
// yaml-cpp 0.7 reports an endless run of empty documents without consuming input,
// so LoadAll never returns; asking for at most two documents always ends.
int count_documents(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  NullEvents events;
  int n = 0;
  while (n < 2 && parser.HandleNextDocument(events)) ++n;
  return n;
}

}  // namespace

AuditSpec parse_audit_spec(const std::string& yaml_text, const std::filesystem::path& base_dir,
                           const std::string& source) {
  VLBIAS_CHECK(yaml_text.size() <= kMaxSpecBytes, UsageError,
               "{}: the spec is {} bytes; a spec may be at most {} bytes.", source,
               yaml_text.size(), kMaxSpecBytes);
  Context ctx{source, base_dir, 0};
  YAML::Node root;
  int documents = 0;
  try {
    root = YAML::Load(yaml_text);
    documents = count_documents(yaml_text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's DepthGuard (see the top of this file); its own message is "bad file".
    VLBIAS_FAIL(UsageError,
                "{} line {} column {}: malformed YAML: nested too deeply (a spec needs five "
                "levels).",
                source, e.mark.line + 1, e.mark.column + 1);
  } catch (const YAML::Exception& e) {
    // e.msg is the bare message; e.mark the 0-based position.
    if (e.mark.is_null()) {
      VLBIAS_FAIL(UsageError, "{}: malformed YAML: {}.", source, e.msg);
    }
    VLBIAS_FAIL(UsageError, "{} line {} column {}: malformed YAML: {}.", source, e.mark.line + 1,
                e.mark.column + 1, e.msg);
  }
  VLBIAS_CHECK(documents == 1, UsageError,
               "{}: expected one YAML document (a map with kind, images, prompts and factors), "
               "found {}.",
               source,
               documents == 0 ? "none" : "more than one (or unreadable text after the first)");
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
  std::error_code ec;
  VLBIAS_CHECK(std::filesystem::is_regular_file(path, ec), InputError,
               "{}: cannot read the audit spec (not a readable file).", path.string());
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  VLBIAS_CHECK(!ec, InputError, "{}: cannot read the audit spec ({}).", path.string(),
               ec.message());
  VLBIAS_CHECK(size <= kMaxSpecBytes, InputError,
               "{}: the spec is {} bytes; a spec may be at most {} bytes.", path.string(), size,
               kMaxSpecBytes);
  std::ifstream in(path, std::ios::binary);
  VLBIAS_CHECK(in.good(), InputError, "{}: cannot open the audit spec.", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  VLBIAS_CHECK(!in.bad(), InputError, "{}: cannot read the audit spec.", path.string());
  const std::string text = ss.str();
  VLBIAS_CHECK(text.find_first_not_of(" \t\r\n") != std::string::npos, InputError,
               "{}: the audit spec is empty.", path.string());
  AuditSpec spec = parse_audit_spec(text, path.parent_path(), path.string());
  spec.spec_path = path;
  return spec;
}

}  // namespace vlbias
