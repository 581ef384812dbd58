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
//
// This file: what the tests share (resampling_internal.h) and the generic permutation_test;
// the mean-difference fast path is in resampling_mean_difference.cpp, the sign-flip test in
// resampling_sign_flip.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "resampling_internal.h"
#include "resampling_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats_internal {

namespace {

constexpr const char* kMonteCarlo = "monte_carlo";
constexpr const char* kExact = "exact";

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

}  // namespace

// ----------------------------------------------------------------- group sizes

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

bool use_exact(ResamplingMethod method, std::uint64_t count, std::size_t resamples) {
  return method == ResamplingMethod::Auto && count <= resamples;
}

}  // namespace vlbias::stats_internal

namespace vlbias::stats {

using stats_internal::append_note;
using stats_internal::check_common;
using stats_internal::Counters;
using stats_internal::finish_exact;
using stats_internal::finish_monte_carlo;
using stats_internal::GroupLayout;
using stats_internal::layout_of;
using stats_internal::partial_fisher_yates;
using stats_internal::relabelling_count;
using stats_internal::start_result;
using stats_internal::use_exact;

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

}  // namespace vlbias::stats
