// The YAML audit spec (include/vlbias/audits/audit.h): parse_audit_spec, load_audit_spec, the
// keys every kind shares and the dispatch on kind (the table of kinds, audit_kind.h); each
// kind's keys are parsed in its folder's S_audit_yaml.cpp (audit_yaml.h).
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
#include "audit_yaml.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "audit_kind.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/edit_distance.h"
#include "vlbias/core/error.h"

namespace vlbias {

namespace audits_internal {

std::size_t as_resamples(Context& ctx, const YAML::Node& node, const std::string& path,
                         bool allow_zero) {
  return as_size_in_range(ctx, node, path, allow_zero ? 0 : 1, kMaxResamples,
                          allow_zero ? " (0: no intervals)" : "");
}

Entries parse_toggle(Context& ctx, const YAML::Node& node, const std::string& path,
                     AnalysisToggle& toggle, std::initializer_list<const char*> allowed) {
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

void read_string_keys(Context& ctx, const Entries& e, const std::string& section,
                      std::initializer_list<std::pair<const char*, std::string*>> keys) {
  for (const auto& [key, out] : keys) {
    if (const YAML::Node* v = find(e, key)) {
      *out = v->IsNull() ? std::string() : as_string(ctx, *v, join_path(section, key));
    }
  }
}

void parse_power(Context& ctx, const YAML::Node& value, const std::string& path, PowerSpec& w) {
  for (const auto& [k, v] :
       parse_toggle(ctx, value, path, w.toggle, {"power", "alpha", "replicates"})) {
    const std::string p = join_path(path, k);
    if (k == "power") w.power = as_ci(ctx, v, p);
    if (k == "alpha") w.alpha = as_ci(ctx, v, p);
    if (k == "replicates") w.replicates = as_resamples(ctx, v, p, false);
  }
}

void parse_report_keys(Context& ctx, const Entries& entries, AuditCommonSpec& spec) {
  if (const YAML::Node* v = find(entries, "title")) spec.title = as_string(ctx, *v, "title");
  if (const YAML::Node* v = find(entries, "about")) spec.about = as_string(ctx, *v, "about");
}

void check_version(Context& ctx, const YAML::Node& node) {
  if (!node.IsDefined()) return;
  if (as_uint64(ctx, node, "version") != 1) {
    fail(ctx, node, "version", fmt::format("must be 1 (the only version), got {}", describe(node)));
  }
}

void parse_seed_keys(Context& ctx, const Entries& entries, AuditCommonSpec& spec) {
  if (const YAML::Node* v = find(entries, "seed")) spec.seed = as_uint64(ctx, *v, "seed");
  if (const YAML::Node* v = find(entries, "min_group_size")) {
    spec.min_group_size = as_size(ctx, *v, "min_group_size");
  }
}

void parse_report_images(Context& ctx, const YAML::Node& node, AuditCommonSpec& spec) {
  ReportImagesSpec& r = spec.report_images;
  const Entries e = check_map(ctx, node, "report", {"images", "image_budget", "image_root"});
  if (const YAML::Node* v = find(e, "images")) {
    const bool off = v->IsScalar() &&
                     (v->Scalar() == "false" || v->Scalar() == "False" || v->Scalar() == "FALSE");
    r.per_cell = off ? 0
                     : as_size_in_range(ctx, *v, "report.images", 1, 1000,
                                        " (thumbnails per cell), or false");
  }
  if (const YAML::Node* v = find(e, "image_budget")) {
    r.budget = as_positive_size(ctx, *v, "report.image_budget");
  }
  if (const YAML::Node* v = find(e, "image_root")) r.root = as_path(ctx, *v, "report.image_root");
}

}  // namespace audits_internal

namespace {

using namespace audits_internal;  // NOLINT(build/namespaces): the spec helpers, audit_yaml.h

// " (did you mean 'geo-diversity'?)" when `given` is a near miss or a prefix of one kind.
std::string kind_suggestion(const std::string& given) {
  const char* best = nullptr;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 4) + 1;
  for (const AuditKindOps* k : audit_kinds()) {
    const std::string_view kind(k->name);
    std::size_t d = edit_distance(given, kind);
    if (given.size() >= 3 && kind.substr(0, given.size()) == given) d = 0;
    if (d < best_distance) {
      best = k->name;
      best_distance = d;
    }
  }
  return best ? fmt::format(" (did you mean '{}'?)", best) : "";
}

// The kind decides which keys are allowed, so it is read and checked first: a misspelled kind
// would otherwise be reported as some key that the kind it fell back to does not allow.
AuditKind read_kind(Context& ctx, const YAML::Node& root) {
  std::vector<const char*> names;
  for (const AuditKindOps* k : audit_kinds()) names.push_back(k->name);
  const std::string kinds = fmt::format("{}", fmt::join(names, ", "));
  if (!root.IsMap()) check_map(ctx, root, "", {"kind"});  // "must be a map" with its line
  const YAML::Node kind = root["kind"];
  if (!kind.IsDefined()) {
    VLBIAS_FAIL(UsageError, "{}: missing required key kind (the kind of audit: one of {}).",
                where(ctx, root), kinds);
  }
  const std::string value = as_string(ctx, kind, "kind");
  for (const AuditKindOps* k : audit_kinds()) {
    if (value == k->name) return k->kind;
  }
  VLBIAS_FAIL(UsageError, "{}: kind must be one of {}, got '{}', which is not a kind of audit{}.",
              where(ctx, kind), kinds, shown(value), kind_suggestion(value));
}

void parse_root(Context& ctx, const YAML::Node& root, AuditSpec& spec) {
  spec.kind = read_kind(ctx, root);
  audit_kind(spec.kind).parse_root(ctx, root, spec);
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
