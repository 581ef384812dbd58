#pragma once
// The audit spec parsers (audit_yaml.cpp: the common keys and the dispatch on kind; each kind's
// keys in S_audit_yaml.cpp), on top of the generic spec reading of vlbias/io/spec_yaml.h:
// resample counts, analysis toggles, the common root keys, and the per-kind root parsers.
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>

#include "vlbias/audits/audit_types.h"
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
// FID_inf's smallest subset size (a cell larger than this is needed for it to apply).
constexpr std::size_t kMaxFidInfMin = 100'000'000;
// A bootstrap or permutation count: 0 (when allowed: no intervals) or 1 to kMaxResamples.
std::size_t as_resamples(Context& ctx, const YAML::Node& node, const std::string& path,
                         bool allow_zero);
// An analysis entry: a map of options, `true` (defaults) or `false` (off); sets the toggle
// (explicit) and returns the option entries (empty unless a map).
Entries parse_toggle(Context& ctx, const YAML::Node& node, const std::string& path,
                     AnalysisToggle& toggle, std::initializer_list<const char*> allowed);

// `key: value` string options of the map `section` (a null value: ""), each into its string.
void read_string_keys(Context& ctx, const Entries& e, const std::string& section,
                      std::initializer_list<std::pair<const char*, std::string*>> keys);

// analyses.power (audit_types.h's PowerSpec): true, false or {power, alpha, replicates}.
void parse_power(Context& ctx, const YAML::Node& value, const std::string& path, PowerSpec& w);

// The root keys every kind accepts besides kind (audit.h), for each kind's root parser: the
// report keys title and about (report.h); the version (a node that is not defined is fine;
// checked before the kind's map of keys, except by the dual-encoder kinds, which check it after
// title and about); seed and min_group_size.
void parse_report_keys(Context& ctx, const Entries& entries, AuditCommonSpec& spec);
void check_version(Context& ctx, const YAML::Node& node);
void parse_seed_keys(Context& ctx, const Entries& entries, AuditCommonSpec& spec);
// report: {images: false|N, image_budget: BYTES, image_root: DIR} (audit_types.h's
// ReportImagesSpec) into spec.report_images, for the kinds with exemplar grids. `images: true` is
// refused: how many per cell is the reader's choice.
void parse_report_images(Context& ctx, const YAML::Node& node, AuditCommonSpec& spec);

// Each kind's root keys (the common keys above, its own, and the keys it allows at the root) are
// parsed by its folder's parse_<kind>_root (declared in its <kind>_audit_internal.h), which its
// row of the table of kinds (audit_kind.h) calls with spec.kind set.

}  // namespace vlbias::audits_internal
