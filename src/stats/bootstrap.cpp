// Percentile bootstrap confidence intervals (Efron and Tibshirani 1993, "An
// Introduction to the Bootstrap", ch. 13.3): the interval is the (1-level)/2 and
// (1+level)/2 percentiles of the statistic over B resamples drawn with replacement.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "resampling_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

namespace {

void check_parameters(std::size_t n_units, std::size_t resamples, double level) {
  VLBIAS_CHECK(resamples > 0, InputError, "bootstrap: the number of resamples B must be positive");
  check_resamples(resamples, "bootstrap");
  VLBIAS_CHECK(level > 0.0 && level < 1.0, InputError,
               "bootstrap: confidence level {} is outside (0, 1)", level);
  VLBIAS_CHECK(n_units <= std::numeric_limits<std::uint32_t>::max(), InputError,
               "bootstrap: {} units exceed the supported maximum of 2^32 - 1", n_units);
}

// Fills the interval from the replicate values (NaN = undefined replicate).
void finish_interval(std::vector<double>& replicates, Interval& out) {
  const auto defined_end =
      std::remove_if(replicates.begin(), replicates.end(), [](double v) { return std::isnan(v); });
  out.undefined = static_cast<std::size_t>(replicates.end() - defined_end);
  replicates.erase(defined_end, replicates.end());
  if (replicates.empty()) {
    out.note = fmt::format("the statistic was undefined (NaN) in all {} resamples", out.resamples);
    return;
  }
  std::sort(replicates.begin(), replicates.end());
  out.lower = percentile_sorted(replicates, 100.0 * (1.0 - out.level) / 2.0);
  out.upper = percentile_sorted(replicates, 100.0 * (1.0 + out.level) / 2.0);
  if (out.undefined > 0) {
    out.note = fmt::format("the statistic was undefined (NaN) in {} of {} resamples, dropped",
                           out.undefined, out.resamples);
  }
}

Interval make_interval(std::size_t resamples, double level, std::uint64_t seed) {
  Interval out;
  out.level = level;
  out.resamples = resamples;
  out.seed = seed;
  return out;
}

}  // namespace

void check_resamples(std::size_t count, std::string_view what) {
  VLBIAS_CHECK(count <= kMaxResamples, UsageError, "{}: {} resamples requested; expected 0 to {}",
               what, count, kMaxResamples);
}

Interval bootstrap_ci(std::size_t n_units,
                      const std::function<double(std::span<const std::uint32_t>)>& statistic,
                      std::size_t resamples, double level, std::uint64_t seed) {
  check_parameters(n_units, resamples, level);
  VLBIAS_CHECK(static_cast<bool>(statistic), InputError, "bootstrap: no statistic was given");
  Interval out = make_interval(resamples, level, seed);
  if (n_units < 2) {
    out.note =
        fmt::format("{} unit(s): a bootstrap interval needs at least 2 independent units", n_units);
    return out;
  }
  std::vector<double> replicates(resamples, kNaN);
  stats_internal::BufferPool<std::uint32_t> buffers(n_units);
  const auto progress = stats_internal::maybe_progress("bootstrap", resamples, n_units);
  parallel_chunks(resamples, stats_internal::replicates_per_chunk(n_units),
                  [&](std::size_t, std::size_t begin, std::size_t end) {
                    auto lease = buffers.acquire();
                    const std::span<std::uint32_t> idx = lease.span();
                    for (std::size_t b = begin; b < end; ++b) {
                      Rng rng(seed, b);
                      for (auto& i : idx)
                        i = static_cast<std::uint32_t>(rng.uniform_index(n_units));
                      replicates[b] = statistic(idx);
                    }
                    if (progress) progress->advance(end - begin);
                  });
  if (progress) progress->finish();
  finish_interval(replicates, out);
  return out;
}

Interval percentile_interval(std::vector<double> replicates, double level, std::uint64_t seed) {
  VLBIAS_CHECK(level > 0.0 && level < 1.0, InputError,
               "bootstrap: confidence level {} is outside (0, 1)", level);
  Interval out = make_interval(replicates.size(), level, seed);
  if (replicates.empty()) {
    out.note = "no resamples";
    return out;
  }
  finish_interval(replicates, out);
  return out;
}

Interval bootstrap_mean_ci(std::span<const double> x, std::size_t resamples, double level,
                           std::uint64_t seed) {
  check_parameters(x.size(), resamples, level);
  stats_internal::check_finite(x, "bootstrap_mean_ci");
  Interval out = make_interval(resamples, level, seed);
  const std::size_t n = x.size();
  if (n < 2) {
    out.note =
        fmt::format("{} value(s): a bootstrap interval needs at least 2 independent units", n);
    return out;
  }
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; })) {
    // Every resample holds the same values: the bootstrap distribution is the point x0.
    out.lower = out.upper = x[0];
    return out;
  }
  // Same draws as bootstrap_ci (idx[i] = uniform_index(n) in order), summed on the fly
  // so no index buffer is needed.
  std::vector<double> replicates(resamples, kNaN);
  const auto progress = stats_internal::maybe_progress("bootstrap", resamples, n);
  const double n_double = static_cast<double>(n);
  parallel_chunks(resamples, stats_internal::replicates_per_chunk(n),
                  [&](std::size_t, std::size_t begin, std::size_t end) {
                    for (std::size_t b = begin; b < end; ++b) {
                      Rng rng(seed, b);
                      double sum = 0.0;
                      for (std::size_t i = 0; i < n; ++i) sum += x[rng.uniform_index(n)];
                      replicates[b] = sum / n_double;
                    }
                    if (progress) progress->advance(end - begin);
                  });
  if (progress) progress->finish();
  finish_interval(replicates, out);
  return out;
}

}  // namespace vlbias::stats
