#pragma once
// YAML helpers of the audit spec parsers (audit_spec*.cpp), on top of the generic spec
// reading of vlbias/io/spec_yaml.h: resample counts, analysis toggles, the report keys, and
// the per-kind root parsers.
#include <cstddef>
#include <initializer_list>
#include <string>

#include "vlbias/audits/audit.h"
#include "vlbias/io/spec_yaml.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

using namespace vlbias::yaml;  // NOLINT(build/namespaces): the spec vocabulary of every parser

// Bootstrap resamples and permutations: the library's one limit (stats.h), so a spec and the
// command line accept the same counts.
constexpr std::size_t kMaxResamples = stats::kMaxResamples;
// AbsDiff's sampled image pairs (two indices each).
constexpr std::size_t kMaxAbsdiffPairs = 10'000'000;
// KID's subsets: their count, their size, and the row indices drawn for all of them.
constexpr std::size_t kMaxKidSubsets = 100'000;
constexpr std::size_t kMaxKidSubsetSize = 10'000'000;
constexpr std::size_t kMaxKidDraws = 100'000'000;
// A bootstrap or permutation count: 0 (when allowed: no intervals) or 1 to kMaxResamples.
std::size_t as_resamples(Context& ctx, const YAML::Node& node, const std::string& path,
                         bool allow_zero);
// The report keys every kind accepts at the root: title and about (report.h).
void parse_report_keys(Context& ctx, const Entries& entries, AuditSpec& spec);
// An analysis entry: a map of options, `true` (defaults) or `false` (off); sets the toggle
// (explicit) and returns the option entries (empty unless a map).
Entries parse_toggle(Context& ctx, const YAML::Node& node, const std::string& path,
                     AuditSpec::Toggle& toggle, std::initializer_list<const char*> allowed);

// The keys of a kind: geo-diversity spec (audit_spec_geo.cpp): fills spec.geo, seed and
// min_group_size; version and kind are checked by the caller.
void parse_geo_root(Context& ctx, const YAML::Node& root, AuditSpec& spec);
// The keys of a kind: lvlm-counterfactual spec (audit_spec_lvlm.cpp).
void parse_lvlm_root(Context& ctx, const YAML::Node& root, AuditSpec& spec);
// The keys of a kind: visual-stereotypes spec (audit_spec_visual.cpp).
void parse_visual_root(Context& ctx, const YAML::Node& root, AuditSpec& spec);

}  // namespace vlbias::audits_internal
