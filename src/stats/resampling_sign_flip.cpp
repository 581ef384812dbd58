// The sign-flip test (stats.h, sign_flip_test; Fisher 1935): every value's sign flipped at
// random (Monte Carlo) or in every combination (exact, for n < 64 when 2^n <= B).
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

namespace vlbias::stats {

using stats_internal::check_common;
using stats_internal::Counters;
using stats_internal::finish_exact;
using stats_internal::finish_monte_carlo;
using stats_internal::start_result;

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
