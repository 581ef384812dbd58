// The mean-difference fast path of the permutation test (stats.h,
// permutation_mean_difference): the same relabellings as permutation_test
// (partial_fisher_yates), with the smaller group's sum taken from a membership bitmap.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "resampling_internal.h"
#include "resampling_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

using stats_internal::check_common;
using stats_internal::Counters;
using stats_internal::finish_exact;
using stats_internal::finish_monte_carlo;
using stats_internal::GroupLayout;
using stats_internal::partial_fisher_yates;
using stats_internal::relabelling_count;
using stats_internal::start_result;
using stats_internal::use_exact;

namespace {

// ------------------------------------------------------------- lane summation

// The mean-difference path sums a group's values in item order over four lanes
// (item i goes to lane i mod 4), combined as (l0 + l1) + (l2 + l3). Observed,
// Monte Carlo and exact sums all use this one order, so the observed relabelling
// always reproduces T bit for bit, and the lanes let the Monte Carlo sum run as a
// streaming pass over a membership bitmap instead of a random gather.
constexpr std::size_t kLanes = 4;

struct LaneSum {
  double lane[kLanes] = {0.0, 0.0, 0.0, 0.0};
  void add(std::size_t item, double v) { lane[item % kLanes] += v; }
  double value() const { return (lane[0] + lane[1]) + (lane[2] + lane[3]); }
};

// LaneSum of x[i] over the items whose bit is set in `mask` (bit i % 64 of word
// i / 64). Unselected items add +0.0, which leaves a lane unchanged (up to the sign
// of a zero lane), so the result equals LaneSum over the selected items in item order.
double masked_lane_sum(const double* x, const std::uint64_t* mask, std::size_t n) {
  double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
  auto pick = [](double v, std::uint64_t bit) {
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    u &= 0 - bit;  // all ones when selected, zero (-> +0.0) otherwise
    std::memcpy(&v, &u, sizeof v);
    return v;
  };
  const std::size_t full = n / 64;
  for (std::size_t w = 0; w < full; ++w) {
    const std::uint64_t bits = mask[w];
    const double* xb = x + 64 * w;
    for (std::size_t k = 0; k < 64; k += kLanes) {
      a0 += pick(xb[k], (bits >> k) & 1u);
      a1 += pick(xb[k + 1], (bits >> (k + 1)) & 1u);
      a2 += pick(xb[k + 2], (bits >> (k + 2)) & 1u);
      a3 += pick(xb[k + 3], (bits >> (k + 3)) & 1u);
    }
  }
  LaneSum tail;
  tail.lane[0] = a0;
  tail.lane[1] = a1;
  tail.lane[2] = a2;
  tail.lane[3] = a3;
  for (std::size_t i = 64 * full; i < n; ++i) {
    if ((mask[i / 64] >> (i % 64)) & 1u) tail.add(i, x[i]);
  }
  return tail.value();
}

// ------------------------------------------------------- mean-difference helpers

// T = mean(x | 0) - mean(x | 1) from the sum of the smaller group (see stats.h).
struct MeanDifference {
  double total = 0.0;  // S
  double n0 = 0.0;
  double n1 = 0.0;
  bool small_is_zero = true;  // which group's sum is accumulated

  double operator()(double small_sum) const {
    if (small_is_zero) return small_sum / n0 - (total - small_sum) / n1;
    return (total - small_sum) / n0 - small_sum / n1;
  }
};

// Every m-subset of positions for the smaller group, in lexicographic order; each subset's
// LaneSum in item order, as for the observed labels. Returns how many are extreme.
std::size_t exact_exceed(std::span<const double> values, std::size_t m, const MeanDifference& stat,
                         const stats_internal::Extremeness& extreme) {
  const std::size_t n = values.size();
  std::vector<std::size_t> pick(m);
  std::iota(pick.begin(), pick.end(), std::size_t{0});
  std::size_t exceed = 0;
  for (;;) {
    LaneSum small;
    for (const std::size_t p : pick) small.add(p, values[p]);
    if (extreme(stat(small.value()))) ++exceed;
    // Next combination (Knuth TAOCP 7.2.1.3, lexicographic order).
    std::size_t k = m;
    while (k > 0 && pick[k - 1] == n - m + (k - 1)) --k;
    if (k == 0) break;
    ++pick[k - 1];
    for (std::size_t q = k; q < m; ++q) pick[q] = pick[q - 1] + 1;
  }
  return exceed;
}

// Monte Carlo: per worker one index buffer (n uint32) and one membership bitmap (n bits); the
// shuffle marks the smaller group's items, then one streaming pass sums them. Returns how
// many replicates are extreme.
std::size_t monte_carlo_exceed(std::span<const double> values, std::size_t m,
                               const MeanDifference& stat,
                               const stats_internal::Extremeness& extreme, std::size_t resamples,
                               std::uint64_t seed) {
  const std::size_t n = values.size();
  Counters counters;
  const std::size_t words = (n + 63) / 64;
  stats_internal::BufferPool<std::uint32_t> index_buffers(n);
  stats_internal::BufferPool<std::uint64_t> mask_buffers(words);
  const auto progress = stats_internal::maybe_progress("permutation test", resamples, m);
  const double* x = values.data();
  parallel_chunks(resamples, stats_internal::replicates_per_chunk(n),
                  [&](std::size_t, std::size_t begin, std::size_t end) {
                    auto index_lease = index_buffers.acquire();
                    auto mask_lease = mask_buffers.acquire();
                    std::uint32_t* idx = index_lease.span().data();
                    std::uint64_t* mask = mask_lease.span().data();
                    std::size_t exceed = 0;
                    for (std::size_t b = begin; b < end; ++b) {
                      std::iota(idx, idx + n, std::uint32_t{0});
                      std::fill(mask, mask + words, std::uint64_t{0});
                      Rng rng(seed, b);
                      partial_fisher_yates(idx, n, m, rng, [&](std::size_t, std::uint32_t item) {
                        mask[item / 64] |= std::uint64_t{1} << (item % 64);
                      });
                      if (extreme(stat(masked_lane_sum(x, mask, n)))) ++exceed;
                    }
                    counters.exceed += exceed;
                    if (progress) progress->advance(end - begin);
                  });
  if (progress) progress->finish();
  return counters.exceed.load();
}

// The joint Monte Carlo pass over kj columns (`packed` item-major, n x kj). Per replicate: one
// partial shuffle marks the smaller group (m items) in a bitmap; its items are visited in item
// order and each column is summed in kLanes lanes by item index, which is exactly LaneSum
// (and masked_lane_sum) of the single-column path. Returns the extreme count per column.
std::vector<std::size_t> joint_monte_carlo_exceed(
    const std::vector<double>& packed, std::size_t kj, std::size_t m,
    const std::vector<MeanDifference>& stat,
    const std::vector<stats_internal::Extremeness>& extreme, std::size_t resamples,
    std::uint64_t seed) {
  const std::size_t n = packed.size() / kj;
  std::vector<std::atomic<std::size_t>> exceed(kj);
  const std::size_t words = (n + 63) / 64;
  stats_internal::BufferPool<std::uint32_t> index_buffers(n);
  stats_internal::BufferPool<std::uint64_t> mask_buffers(words);
  const auto progress = stats_internal::maybe_progress("permutation test", resamples, m * kj);
  parallel_chunks(
      resamples, stats_internal::replicates_per_chunk(n),
      [&](std::size_t, std::size_t begin, std::size_t end) {
        auto index_lease = index_buffers.acquire();
        auto mask_lease = mask_buffers.acquire();
        std::uint32_t* idx = index_lease.span().data();
        std::uint64_t* mask = mask_lease.span().data();
        std::vector<double> lanes(kLanes * kj);
        std::vector<std::size_t> local(kj, 0);
        for (std::size_t b = begin; b < end; ++b) {
          std::iota(idx, idx + n, std::uint32_t{0});
          std::fill(mask, mask + words, std::uint64_t{0});
          Rng rng(seed, b);
          partial_fisher_yates(idx, n, m, rng, [&](std::size_t, std::uint32_t item) {
            mask[item / 64] |= std::uint64_t{1} << (item % 64);
          });
          std::fill(lanes.begin(), lanes.end(), 0.0);
          for (std::size_t w = 0; w < words; ++w) {
            for (std::uint64_t bits = mask[w]; bits != 0; bits &= bits - 1) {
              const std::size_t item = 64 * w + static_cast<std::size_t>(__builtin_ctzll(bits));
              double* lane = lanes.data() + (item % kLanes) * kj;
              const double* x = packed.data() + item * kj;
              for (std::size_t j = 0; j < kj; ++j) lane[j] += x[j];
            }
          }
          for (std::size_t j = 0; j < kj; ++j) {
            const double sum = (lanes[j] + lanes[kj + j]) + (lanes[2 * kj + j] + lanes[3 * kj + j]);
            if (extreme[j](stat[j](sum))) ++local[j];
          }
        }
        for (std::size_t j = 0; j < kj; ++j) exceed[j] += local[j];
        if (progress) progress->advance(end - begin);
      });
  if (progress) progress->finish();
  std::vector<std::size_t> out(kj);
  for (std::size_t j = 0; j < kj; ++j) out[j] = exceed[j].load();
  return out;
}

}  // namespace

// ------------------------------------------------- permutation_mean_difference

ResamplingResult permutation_mean_difference(std::span<const double> values,
                                             std::span<const std::uint32_t> labels,
                                             std::size_t resamples, std::uint64_t seed,
                                             Alternative alternative) {
  return permutation_mean_difference(values, labels, resamples, seed, alternative,
                                     ResamplingMethod::Auto);
}

ResamplingResult permutation_mean_difference(std::span<const double> values,
                                             std::span<const std::uint32_t> labels,
                                             std::size_t resamples, std::uint64_t seed,
                                             Alternative alternative, ResamplingMethod method) {
  const std::size_t n = values.size();
  VLBIAS_CHECK(labels.size() == n, InputError,
               "permutation mean difference: {} values but {} labels", n, labels.size());
  check_common(n, resamples, "permutation mean difference");
  stats_internal::check_finite(values, "permutation mean difference");
  std::size_t count1 = 0;
  stats_internal::NeumaierSum total;
  for (std::size_t i = 0; i < n; ++i) {
    VLBIAS_CHECK(labels[i] <= 1, InputError,
                 "permutation mean difference: label {} at position {} is not 0 or 1", labels[i],
                 i);
    count1 += labels[i];
    total.add(values[i]);
  }
  const std::size_t count0 = n - count1;
  if (count0 == 0 || count1 == 0) {
    ResamplingResult r = start_result(kNaN, resamples, seed, alternative);
    r.note = fmt::format("group {} has no observations: the mean difference is undefined",
                         count0 == 0 ? 0 : 1);
    return r;
  }

  // Same group order as layout_of(): smaller group drawn first, ties -> label 0.
  MeanDifference stat;
  stat.total = total.value();
  stat.n0 = static_cast<double>(count0);
  stat.n1 = static_cast<double>(count1);
  stat.small_is_zero = count0 <= count1;
  const std::uint32_t small_label = stat.small_is_zero ? 0 : 1;
  const std::size_t m = stat.small_is_zero ? count0 : count1;

  LaneSum observed_small;
  for (std::size_t i = 0; i < n; ++i) {
    if (labels[i] == small_label) observed_small.add(i, values[i]);
  }
  const bool constant =
      std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; });
  const double observed = constant ? 0.0 : stat(observed_small.value());
  ResamplingResult r = start_result(observed, resamples, seed, alternative);
  const stats_internal::Extremeness extreme(alternative, observed);

  GroupLayout g;
  g.n = n;
  g.counts = {m, n - m};
  const std::uint64_t count = relabelling_count(g, resamples);
  const bool exact = use_exact(method, count, resamples);

  if (constant) {
    // Every relabelling gives exactly T = 0 (summing would only add rounding noise).
    r.note = "all values are equal: every relabelling gives the same mean difference";
    if (exact) {
      finish_exact(r, count, count, 0);
    } else {
      finish_monte_carlo(r, resamples, 0);
    }
    return r;
  }

  if (exact) {
    finish_exact(r, count, exact_exceed(values, m, stat, extreme), 0);
    return r;
  }
  finish_monte_carlo(r, monte_carlo_exceed(values, m, stat, extreme, resamples, seed), 0);
  return r;
}

std::vector<ResamplingResult> permutation_mean_difference_columns(
    std::span<const double> values, std::size_t k, std::span<const std::uint32_t> labels,
    std::size_t resamples, std::uint64_t seed, Alternative alternative, ResamplingMethod method) {
  const std::size_t n = labels.size();
  VLBIAS_CHECK(k > 0 && values.size() == n * k, InputError,
               "permutation mean difference: {} values for {} labels x {} columns", values.size(),
               n, k);
  // Columns as contiguous arrays, for the observed statistics and the fallbacks.
  std::vector<std::vector<double>> column(k, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < k; ++c) column[c][i] = values[i * k + c];
  }
  std::vector<ResamplingResult> results(k);
  check_common(n, resamples, "permutation mean difference");
  std::size_t count1 = 0;
  for (std::size_t i = 0; i < n; ++i) count1 += labels[i] == 1 ? 1 : 0;
  const std::size_t count0 = n - count1;
  GroupLayout g;
  g.n = n;
  g.counts = {std::min(count0, count1), n - std::min(count0, count1)};
  const bool exact =
      count0 > 0 && count1 > 0 && use_exact(method, relabelling_count(g, resamples), resamples);
  // The single-column path handles validation, empty groups, exact enumeration and
  // constant columns; only non-constant Monte Carlo columns are run together below.
  std::vector<std::size_t> joint;
  for (std::size_t c = 0; c < k; ++c) {
    const auto& x = column[c];
    const bool constant = std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; });
    if (exact || constant || count0 == 0 || count1 == 0) {
      results[c] = permutation_mean_difference(x, labels, resamples, seed, alternative, method);
    } else {
      joint.push_back(c);
    }
  }
  if (joint.empty()) return results;
  for (std::size_t c : joint)
    stats_internal::check_finite(column[c], "permutation mean difference");
  for (std::size_t i = 0; i < n; ++i) {
    VLBIAS_CHECK(labels[i] <= 1, InputError,
                 "permutation mean difference: label {} at position {} is not 0 or 1", labels[i],
                 i);
  }

  // As permutation_mean_difference: the smaller group (ties: label 0) is drawn.
  const std::size_t kj = joint.size();
  std::vector<MeanDifference> stat(kj);
  std::vector<stats_internal::Extremeness> extreme;
  const bool small_is_zero = count0 <= count1;
  const std::uint32_t small_label = small_is_zero ? 0 : 1;
  const std::size_t m = small_is_zero ? count0 : count1;
  std::vector<double> packed(n * kj);  // item-major values of the joint columns
  for (std::size_t j = 0; j < kj; ++j) {
    const auto& x = column[joint[j]];
    stats_internal::NeumaierSum total;
    LaneSum observed_small;
    for (std::size_t i = 0; i < n; ++i) {
      total.add(x[i]);
      if (labels[i] == small_label) observed_small.add(i, x[i]);
      packed[i * kj + j] = x[i];
    }
    stat[j] = {total.value(), static_cast<double>(count0), static_cast<double>(count1),
               small_is_zero};
    const double observed = stat[j](observed_small.value());
    results[joint[j]] = start_result(observed, resamples, seed, alternative);
    extreme.emplace_back(alternative, observed);
  }

  const std::vector<std::size_t> exceed =
      joint_monte_carlo_exceed(packed, kj, m, stat, extreme, resamples, seed);
  for (std::size_t j = 0; j < kj; ++j) finish_monte_carlo(results[joint[j]], exceed[j], 0);
  return results;
}

}  // namespace vlbias::stats
