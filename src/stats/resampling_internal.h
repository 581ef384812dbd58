#pragma once
// Internal to the resampling tests (resampling.cpp, resampling_mean_difference.cpp,
// resampling_sign_flip.cpp): the shuffle they share, group layouts and relabelling counts,
// and the rows of their results.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats_internal {

using stats::Alternative;
using stats::ResamplingMethod;
using stats::ResamplingResult;

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

// ----------------------------------------------------------------- group sizes

// Groups of a labelling, ordered by ascending size (ties: ascending label); the
// last one is the largest and is never drawn explicitly.
struct GroupLayout {
  std::vector<std::uint32_t> labels;  // distinct labels in draw order
  std::vector<std::size_t> counts;    // their sizes
  std::size_t n = 0;
  std::size_t drawn = 0;  // m = n - largest size: shuffle steps per replicate
};

GroupLayout layout_of(std::span<const std::uint32_t> labels);

// Number of distinct relabellings n! / (n1! ... nk!), or a value above cap when it exceeds cap.
std::uint64_t relabelling_count(const GroupLayout& g, std::uint64_t cap);

// ------------------------------------------------------------------ result rows

// A Monte Carlo row with the observed statistic and the draw's settings.
ResamplingResult start_result(double observed, std::size_t resamples, std::uint64_t seed,
                              Alternative alternative);
void append_note(ResamplingResult& r, const std::string& note);
// p = (1 + exceed) / (1 + defined replicates) (Phipson and Smyth 2010).
void finish_monte_carlo(ResamplingResult& r, std::size_t exceed, std::size_t undefined);
// p = exceed / defined relabellings, over all `count` of them.
void finish_exact(ResamplingResult& r, std::size_t count, std::size_t exceed,
                  std::size_t undefined);
// InputError unless resamples > 0 and the items fit 32-bit indices.
void check_common(std::size_t n, std::size_t resamples, const char* what);
// Whether to enumerate: `count` distinct outcomes (cap + 1 meaning "more than B").
bool use_exact(ResamplingMethod method, std::uint64_t count, std::size_t resamples);

// Exceed / undefined counters shared by the pool tasks (integer sums: the order in
// which tasks add to them does not matter).
struct Counters {
  std::atomic<std::size_t> exceed{0};
  std::atomic<std::size_t> undefined{0};
};

}  // namespace vlbias::stats_internal
