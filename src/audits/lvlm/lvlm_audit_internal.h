#pragma once
// What the sections of the LVLM counterfactual analysis (include/vlbias/audits/lvlm_audit.h)
// share:
//   lvlm_audit_sections.cpp     these helpers, responses, ratings, and the section registry
//   lvlm_audit_maxgap.cpp       MaxGap per counterfactual set
//   lvlm_audit_words.cpp        PMI words and lexicon rates per group
//   lvlm_audit_comparisons.cpp  set-blocked group tests, paired comparisons of MaxGap
//   lvlm_audit_exemplars.cpp    the report's exemplar image grids per group
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "audit_yaml.h"
#include "table_builder.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A by- or group-level key as {column: value} ({} without columns).
Json level_json(const std::vector<std::string>& columns, const std::string& key);

// A level object as summary.json names it (src/report/summary_kinds.cpp): "prompt=Hiring,
// mitigation=M1" (column=value joined by ", "), "all" for {} or null.
std::string level_text(const Json& level);

// Writes a level key's values into the current row, one column each.
void put_level(TableBuilder& t, const std::vector<std::string>& columns, const std::string& key);

// Groups present in each by-level (sorted ids).
std::vector<std::vector<std::uint32_t>> groups_by_level(const LvlmState& s);

// Counterfactual sets of each by-level (canonical: sets are sorted by by-level, then key).
std::vector<std::vector<std::uint32_t>> sets_by_level(const LvlmState& s);

// The cluster of each of `sets` under o.cluster (ids 0..C-1 in first-appearance order), or
// empty when o.cluster is (every set its own unit). UsageError when a cluster column is not a
// set-key column.
std::vector<std::uint32_t> set_clusters(const LvlmState& s, const LvlmConfig& config,
                                        const LvlmReportOptions& o,
                                        std::span<const std::uint32_t> sets);

// What one bootstrap draw resamples, for results.json's "unit".
std::string bootstrap_unit(const LvlmReportOptions& o, const std::string& set_unit);

// Percentile bootstrap over units i (replicate b draws from Rng(seed, b)) of the mean and
// the p90 of x[i]; paired with `base` (same length), of the differences mean(x) - mean(base)
// and p90(x) - p90(base) over the same resampled units. With `cluster` (one id per unit,
// 0..C-1) a replicate draws C clusters with replacement and, within each, as many of its
// units as it holds, with replacement (the two-stage bootstrap of Davison and Hinkley 1997,
// Sec. 3.8, strategy 2); the replicate's statistic is over every unit drawn.
std::pair<stats::Interval, stats::Interval> bootstrap_mean_p90(
    std::span<const double> x, std::span<const double> base, std::span<const std::uint32_t> cluster,
    const LvlmReportOptions& o, std::uint64_t seed);

// An interval with the number of resamples behind it.
Json interval_json(const stats::Interval& i, std::size_t resamples);

// Mean, sd, median and n of a histogram value -> count, summed in key order.
struct HistStats {
  std::uint64_t n = 0;
  double mean = kNaN, sd = kNaN, median = kNaN;
};

template <typename Map, typename ValueOf>
HistStats hist_stats(const Map& hist, ValueOf value_of) {
  HistStats h;
  for (const auto& [k, c] : hist) h.n += c;
  if (h.n == 0) return h;
  double sum = 0;
  for (const auto& [k, c] : hist) sum += value_of(k) * static_cast<double>(c);
  h.mean = sum / static_cast<double>(h.n);
  if (h.n >= 2) {
    double ss = 0;
    for (const auto& [k, c] : hist) {
      const double d = value_of(k) - h.mean;
      ss += d * d * static_cast<double>(c);
    }
    h.sd = std::sqrt(ss / static_cast<double>(h.n - 1));
  }
  // Median: type-7 position (n - 1) / 2 between order statistics.
  const std::uint64_t lo = (h.n - 1) / 2, hi = h.n / 2;
  double vlo = kNaN, vhi = kNaN;
  std::uint64_t seen = 0;
  for (const auto& [k, c] : hist) {
    if (std::isnan(vlo) && lo < seen + c) vlo = value_of(k);
    if (std::isnan(vhi) && hi < seen + c) vhi = value_of(k);
    seen += c;
  }
  h.median = (vlo + vhi) / 2.0;
  return h;
}

// report.images (lvlm_audit_exemplars.cpp): results.json's "exemplars" block, one grid per
// group (its columns' values, in sorted order) of the distinct images that `inputs` (the
// generations) name in columns.image, each image in a group once, in first-seen order; drawn
// with derive_seed(seed, kLvlmSeedExemplars). With columns.scores, each grid also shows the
// images whose answers scored highest on the first score (an image's score: the highest over
// its answers). Rows without a group value or an image path are left out (a note counts them).
// Memory: one entry per distinct (group, image).
inline constexpr std::uint64_t kLvlmSeedExemplars = 0x6578656d706c6172;  // "exemplar"
Json lvlm_exemplars(const AuditCommonSpec& spec, const LvlmAuditSpec& l,
                    const std::vector<std::filesystem::path>& inputs,
                    std::vector<std::string>& notes);

// The root keys of a lvlm-counterfactual spec (lvlm_audit_yaml.cpp): the common keys into `spec`
// (audit_yaml.h), the kind's own into `l`, and the keys the kind allows at the root.
void parse_lvlm_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec, LvlmAuditSpec& l);

}  // namespace vlbias::audits_internal
