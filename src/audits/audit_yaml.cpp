// YAML helpers of the audit spec parsers (audit_yaml.h).
#include "audit_yaml.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vlbias::audits_internal {

std::size_t as_resamples(Context& ctx, const YAML::Node& node, const std::string& path,
                         bool allow_zero) {
  return as_size_in_range(ctx, node, path, allow_zero ? 0 : 1, kMaxResamples,
                          allow_zero ? " (0: no intervals)" : "");
}

// A YAML 1.2 core-schema float: decimal or exponent notation, or .inf / .nan.
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

void parse_report_keys(Context& ctx, const Entries& entries, AuditSpec& spec) {
  if (const YAML::Node* v = find(entries, "title")) spec.title = as_string(ctx, *v, "title");
  if (const YAML::Node* v = find(entries, "about")) spec.about = as_string(ctx, *v, "about");
}

}  // namespace vlbias::audits_internal
