// Resampling tests: permutation tests (Good 2005, "Permutation, Parametric and
// Bootstrap Tests of Hypotheses", ch. 3) and the sign-flip test (Fisher 1935, "The
// Design of Experiments", s. 21; the randomisation test of a symmetric null). Monte
// Carlo p-values follow Phipson and Smyth 2010 ("Permutation p-values should never be
// zero"): p = (1 + #{T* at least as extreme as T}) / (1 + B). Exact enumeration counts
// the observed relabelling among all of them: p = #{...} / count.
//
// The relabelling scheme (stats.h, permutation_test) is a forward Fisher-Yates
// shuffle (Durstenfeld 1964, Algorithm 235; Knuth TAOCP vol. 2, 3.4.2 Algorithm P run
// from the front) of the item indices, stopped after the steps that decide the labels.
// The generic engine and the mean-difference fast path share partial_fisher_yates(),
// so they consume the same random numbers and draw the same relabellings.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "resampling_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

namespace {

constexpr const char* kMonteCarlo = "monte_carlo";
constexpr const char* kExact = "exact";

// ------------------------------------------------------------------ shuffling

// Runs steps 0..m-1 of a forward Fisher-Yates shuffle of idx[0, n): step i swaps
// idx[i] with idx[i + rng.uniform_index(n - i)] and then calls visit(i, idx[i]) with
// that position's final item. Random numbers are drawn in step order; the draws for
// the next kAhead steps are made early so that idx[j] can be prefetched (the loop is
// bound by these random accesses). Prefetching is only a hint: the result is exactly
// that of the plain loop.
template <typename Visit>
void partial_fisher_yates(std::uint32_t* idx, std::size_t n, std::size_t m, Rng& rng,
                          Visit&& visit) {
  constexpr std::size_t kAhead = 64;  // power of two; 32-128 measured within 10%
  constexpr std::size_t kMask = kAhead - 1;
  std::size_t ring[kAhead];
  const std::size_t primed = std::min(m, kAhead);
  for (std::size_t t = 0; t < primed; ++t) {
    ring[t] = t + rng.uniform_index(n - t);
    __builtin_prefetch(idx + ring[t], 1);
  }
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t j = ring[i & kMask];
    const std::size_t t = i + kAhead;
    if (t < m) {
      const std::size_t jt = t + rng.uniform_index(n - t);
      ring[t & kMask] = jt;
      __builtin_prefetch(idx + jt, 1);
    }
    const std::uint32_t item = idx[j];
    idx[j] = idx[i];
    idx[i] = item;
    visit(i, item);
  }
}

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

// ----------------------------------------------------------------- group sizes

// Groups of a labelling, ordered by ascending size (ties: ascending label); the
// last one is the largest and is never drawn explicitly.
struct GroupLayout {
  std::vector<std::uint32_t> labels;  // distinct labels in draw order
  std::vector<std::size_t> counts;    // their sizes
  std::size_t n = 0;
  std::size_t drawn = 0;  // m = n - largest size: shuffle steps per replicate
};

GroupLayout layout_of(std::span<const std::uint32_t> labels) {
  GroupLayout g;
  g.n = labels.size();
  if (labels.empty()) return g;
  const std::uint32_t max_label = *std::max_element(labels.begin(), labels.end());
  std::vector<std::pair<std::uint32_t, std::size_t>> groups;
  if (max_label <= std::max<std::size_t>(labels.size(), 1u << 16)) {
    std::vector<std::size_t> counts(std::size_t{max_label} + 1, 0);
    for (const auto l : labels) ++counts[l];
    for (std::size_t l = 0; l < counts.size(); ++l) {
      if (counts[l] > 0) groups.emplace_back(static_cast<std::uint32_t>(l), counts[l]);
    }
  } else {
    std::vector<std::uint32_t> sorted(labels.begin(), labels.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size();) {
      std::size_t j = i;
      while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
      groups.emplace_back(sorted[i], j - i);
      i = j;
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const auto& [label, count] : groups) {
    g.labels.push_back(label);
    g.counts.push_back(count);
  }
  g.drawn = g.n - g.counts.back();
  return g;
}

// Binomial coefficient C(n, k), or cap + 1 when it exceeds cap.
std::uint64_t binomial_capped(std::uint64_t n, std::uint64_t k, std::uint64_t cap) {
  k = std::min(k, n - k);
  unsigned __int128 r = 1;
  for (std::uint64_t i = 0; i < k; ++i) {
    // C(n, i+1) = C(n, i) (n - i) / (i + 1), exact in integers; C(n, i) grows with i
    // for i <= n/2, so once past the cap it stays past it.
    r = r * (n - i) / (i + 1);
    if (r > cap) return cap + 1;
  }
  return static_cast<std::uint64_t>(r);
}

// Number of distinct relabellings n! / (n1! ... nk!) = prod_j C(n - sum_{i<j} n_i, n_j),
// or a value above cap when it exceeds cap (cap is clamped to 2^62, far beyond any
// enumerable count, so cap + 1 cannot overflow).
std::uint64_t relabelling_count(const GroupLayout& g, std::uint64_t cap) {
  cap = std::min<std::uint64_t>(cap, std::uint64_t{1} << 62);
  unsigned __int128 total = 1;
  std::uint64_t remaining = g.n;
  for (const std::size_t c : g.counts) {
    const std::uint64_t b = binomial_capped(remaining, c, cap);
    if (b > cap) return cap + 1;
    total *= b;
    if (total > cap) return cap + 1;
    remaining -= c;
  }
  return static_cast<std::uint64_t>(total);
}

// ------------------------------------------------------------------ result rows

ResamplingResult start_result(double observed, std::size_t resamples, std::uint64_t seed,
                              Alternative alternative) {
  ResamplingResult r;
  r.observed = observed;
  r.resamples = resamples;
  r.seed = seed;
  r.alternative = alternative;
  r.method = kMonteCarlo;
  return r;
}

void append_note(ResamplingResult& r, const std::string& note) {
  if (!r.note.empty()) r.note += "; ";
  r.note += note;
}

void finish_monte_carlo(ResamplingResult& r, std::size_t exceed, std::size_t undefined) {
  r.method = kMonteCarlo;
  r.exceed = exceed;
  r.undefined = undefined;
  const std::size_t defined = r.resamples - undefined;
  if (defined == 0) {
    append_note(r,
                fmt::format("the statistic was undefined (NaN) in all {} replicates", r.resamples));
    return;
  }
  r.p_value = (1.0 + static_cast<double>(exceed)) / (1.0 + static_cast<double>(defined));
  if (undefined > 0) {
    append_note(r, fmt::format("the statistic was undefined (NaN) in {} of {} replicates, dropped",
                               undefined, r.resamples));
  }
}

void finish_exact(ResamplingResult& r, std::size_t count, std::size_t exceed,
                  std::size_t undefined) {
  r.method = kExact;
  r.resamples = count;
  r.exceed = exceed;
  r.undefined = undefined;
  // The observed relabelling is one of those enumerated and is defined, so the
  // denominator is at least 1.
  r.p_value = static_cast<double>(exceed) / static_cast<double>(count - undefined);
  if (undefined > 0) {
    append_note(r,
                fmt::format("the statistic was undefined (NaN) in {} of {} relabellings, dropped",
                            undefined, count));
  }
}

void check_common(std::size_t n, std::size_t resamples, const char* what) {
  VLBIAS_CHECK(resamples > 0, InputError, "{}: the number of resamples B must be positive", what);
  VLBIAS_CHECK(n <= std::numeric_limits<std::uint32_t>::max(), InputError,
               "{}: {} items exceed the supported maximum of 2^32 - 1", what, n);
}

// Whether to enumerate: `count` distinct outcomes (cap + 1 meaning "more than B").
bool use_exact(ResamplingMethod method, std::uint64_t count, std::size_t resamples) {
  return method == ResamplingMethod::Auto && count <= resamples;
}

// Exceed / undefined counters shared by the pool tasks (integer sums: the order in
// which tasks add to them does not matter).
struct Counters {
  std::atomic<std::size_t> exceed{0};
  std::atomic<std::size_t> undefined{0};
};

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

}  // namespace

const char* to_string(Alternative a) {
  switch (a) {
    case Alternative::TwoSided:
      return "two-sided";
    case Alternative::Greater:
      return "greater";
    case Alternative::Less:
      return "less";
  }
  return "unknown";
}

const char* to_string(ResamplingMethod m) {
  switch (m) {
    case ResamplingMethod::Auto:
      return "auto";
    case ResamplingMethod::MonteCarlo:
      return "monte_carlo";
  }
  return "unknown";
}

// ------------------------------------------------------------ permutation_test

ResamplingResult permutation_test(
    std::span<const std::uint32_t> labels,
    const std::function<double(std::span<const std::uint32_t>)>& statistic, std::size_t resamples,
    std::uint64_t seed, Alternative alternative) {
  return permutation_test(labels, statistic, resamples, seed, alternative, ResamplingMethod::Auto);
}

ResamplingResult permutation_test(
    std::span<const std::uint32_t> labels,
    const std::function<double(std::span<const std::uint32_t>)>& statistic, std::size_t resamples,
    std::uint64_t seed, Alternative alternative, ResamplingMethod method) {
  const std::size_t n = labels.size();
  check_common(n, resamples, "permutation test");
  VLBIAS_CHECK(static_cast<bool>(statistic), InputError,
               "permutation test: no statistic was given");
  if (n == 0) {
    ResamplingResult r = start_result(kNaN, resamples, seed, alternative);
    r.note = "no items: the permutation test is undefined";
    return r;
  }
  const double observed = statistic(labels);
  ResamplingResult r = start_result(observed, resamples, seed, alternative);
  if (std::isnan(observed)) {
    r.note = "the statistic is undefined (NaN) for the observed labels";
    return r;
  }
  const GroupLayout g = layout_of(labels);
  if (g.counts.size() == 1) {
    append_note(r, "a single group: every relabelling equals the observed one");
  }
  const stats_internal::Extremeness extreme(alternative, observed);
  Counters counters;
  const std::uint64_t count = relabelling_count(g, resamples);

  if (use_exact(method, count, resamples)) {
    // Every distinct relabelling once: std::next_permutation over the sorted labels
    // visits each multiset permutation exactly once (Knuth TAOCP 7.2.1.2, Algorithm L).
    std::vector<std::uint32_t> current(labels.begin(), labels.end());
    std::sort(current.begin(), current.end());
    const std::size_t block = std::max<std::size_t>(1, (std::size_t{1} << 20) / n);
    std::vector<std::uint32_t> buffer(block * n);
    bool more = true;
    while (more) {
      std::size_t filled = 0;
      while (more && filled < block) {
        std::copy(current.begin(), current.end(), buffer.begin() + filled * n);
        ++filled;
        more = std::next_permutation(current.begin(), current.end());
      }
      parallel_for(filled, [&](std::size_t k) {
        const double t = statistic(std::span<const std::uint32_t>(buffer.data() + k * n, n));
        if (std::isnan(t)) {
          counters.undefined.fetch_add(1, std::memory_order_relaxed);
        } else if (extreme(t)) {
          counters.exceed.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    finish_exact(r, count, counters.exceed.load(), counters.undefined.load());
    return r;
  }

  // Monte Carlo: L = labels in draw order; positions >= m get the largest group.
  std::vector<std::uint32_t> draw_order;
  draw_order.reserve(g.drawn);
  for (std::size_t k = 0; k + 1 < g.labels.size(); ++k) {
    draw_order.insert(draw_order.end(), g.counts[k], g.labels[k]);
  }
  const std::uint32_t largest = g.labels.back();
  stats_internal::BufferPool<std::uint32_t> buffers(2 * n);  // idx and permuted labels
  const auto progress = stats_internal::maybe_progress("permutation test", resamples, n);
  parallel_chunks(resamples, stats_internal::replicates_per_chunk(n),
                  [&](std::size_t, std::size_t begin, std::size_t end) {
                    auto lease = buffers.acquire();
                    std::uint32_t* idx = lease.span().data();
                    std::uint32_t* permuted = idx + n;
                    std::size_t exceed = 0;
                    std::size_t undefined = 0;
                    for (std::size_t b = begin; b < end; ++b) {
                      std::iota(idx, idx + n, std::uint32_t{0});
                      std::fill(permuted, permuted + n, largest);
                      Rng rng(seed, b);
                      partial_fisher_yates(idx, n, g.drawn, rng,
                                           [&](std::size_t i, std::uint32_t item) {
                                             permuted[item] = draw_order[i];
                                           });
                      const double t = statistic(std::span<const std::uint32_t>(permuted, n));
                      if (std::isnan(t)) {
                        ++undefined;
                      } else if (extreme(t)) {
                        ++exceed;
                      }
                    }
                    counters.exceed += exceed;
                    counters.undefined += undefined;
                    if (progress) progress->advance(end - begin);
                  });
  if (progress) progress->finish();
  finish_monte_carlo(r, counters.exceed.load(), counters.undefined.load());
  return r;
}

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
    // Every m-subset of positions for the smaller group, in lexicographic order; each
    // subset's LaneSum in item order, as for the observed labels.
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
    finish_exact(r, count, exceed, 0);
    return r;
  }

  // Monte Carlo: per worker one index buffer (n uint32) and one membership bitmap
  // (n bits); the shuffle marks the smaller group's items, then one streaming pass
  // sums them.
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
  finish_monte_carlo(r, counters.exceed.load(), 0);
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
  for (std::size_t c : joint) stats_internal::check_finite(column[c], "permutation mean difference");
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

  // Per replicate: one partial shuffle marks the smaller group in a bitmap; its items
  // are visited in item order and each column is summed in kLanes lanes by item
  // index, which is exactly LaneSum (and masked_lane_sum) of the single-column path.
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
  for (std::size_t j = 0; j < kj; ++j) finish_monte_carlo(results[joint[j]], exceed[j].load(), 0);
  return results;
}

// ------------------------------------------------------------------ sign flip

ResamplingResult sign_flip_test(std::span<const double> values,
                                const std::function<double(std::span<const double>)>& statistic,
                                std::size_t resamples, std::uint64_t seed,
                                Alternative alternative) {
  return sign_flip_test(values, statistic, resamples, seed, alternative, ResamplingMethod::Auto);
}

ResamplingResult sign_flip_test(std::span<const double> values,
                                const std::function<double(std::span<const double>)>& statistic,
                                std::size_t resamples, std::uint64_t seed, Alternative alternative,
                                ResamplingMethod method) {
  const std::size_t n = values.size();
  check_common(n, resamples, "sign-flip test");
  stats_internal::check_finite(values, "sign-flip test");
  if (n == 0) {
    ResamplingResult r = start_result(kNaN, resamples, seed, alternative);
    r.note = "no values: the sign-flip test is undefined";
    return r;
  }
  const bool custom = static_cast<bool>(statistic);
  const double n_double = static_cast<double>(n);
  // Default statistic: mean summed left to right. `flip(i)` says whether value i is
  // negated; the flipped buffer is only built for a custom statistic.
  auto evaluate = [&](auto&& flip, std::span<double> buffer) {
    if (custom) {
      for (std::size_t i = 0; i < n; ++i) buffer[i] = flip(i) ? -values[i] : values[i];
      return statistic(std::span<const double>(buffer.data(), n));
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += flip(i) ? -values[i] : values[i];
    return sum / n_double;
  };
  std::vector<double> observed_buffer(custom ? n : 0);
  const double observed = evaluate([](std::size_t) { return false; }, observed_buffer);
  ResamplingResult r = start_result(observed, resamples, seed, alternative);
  if (std::isnan(observed)) {
    r.note = "the statistic is undefined (NaN) for the observed values";
    return r;
  }
  const stats_internal::Extremeness extreme(alternative, observed);
  Counters counters;
  stats_internal::BufferPool<double> buffers(custom ? n : 0);
  auto tally = [&](double t, std::size_t& exceed, std::size_t& undefined) {
    if (std::isnan(t)) {
      ++undefined;
    } else if (extreme(t)) {
      ++exceed;
    }
  };

  const bool exact = method == ResamplingMethod::Auto && n < 64 &&
                     (std::uint64_t{1} << n) <= static_cast<std::uint64_t>(resamples);
  if (exact) {
    const std::uint64_t count = std::uint64_t{1} << n;
    parallel_chunks(count, stats_internal::replicates_per_chunk(n),
                    [&](std::size_t, std::size_t begin, std::size_t end) {
                      auto lease = buffers.acquire();
                      std::size_t exceed = 0;
                      std::size_t undefined = 0;
                      for (std::uint64_t v = begin; v < end; ++v) {
                        const double t = evaluate(
                            [v](std::size_t i) { return ((v >> i) & 1u) != 0; }, lease.span());
                        tally(t, exceed, undefined);
                      }
                      counters.exceed += exceed;
                      counters.undefined += undefined;
                    });
    finish_exact(r, count, counters.exceed.load(), counters.undefined.load());
    return r;
  }

  const std::size_t words = (n + 63) / 64;
  const auto progress = stats_internal::maybe_progress("sign-flip test", resamples, n);
  parallel_chunks(resamples, stats_internal::replicates_per_chunk(n),
                  [&](std::size_t, std::size_t begin, std::size_t end) {
                    auto lease = buffers.acquire();
                    std::vector<std::uint64_t> bits(words);
                    std::size_t exceed = 0;
                    std::size_t undefined = 0;
                    for (std::size_t b = begin; b < end; ++b) {
                      Rng rng(seed, b);
                      for (auto& w : bits) w = rng.next_u64();
                      const double t = evaluate(
                          [&bits](std::size_t i) { return ((bits[i >> 6] >> (i & 63)) & 1u) != 0; },
                          lease.span());
                      tally(t, exceed, undefined);
                    }
                    counters.exceed += exceed;
                    counters.undefined += undefined;
                    if (progress) progress->advance(end - begin);
                  });
  if (progress) progress->finish();
  finish_monte_carlo(r, counters.exceed.load(), counters.undefined.load());
  return r;
}

}  // namespace vlbias::stats
