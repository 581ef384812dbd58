// Descriptive statistics: percentiles (numpy's default "linear" method, Hyndman and
// Fan 1996 type 7), mean, sample variance, describe().
#include <algorithm>
#include <cmath>
#include <vector>

#include "resampling_util.h"
#include "vlbias/core/error.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

namespace {

// Mean of finite values with Neumaier-compensated summation. n > 0.
double mean_of_finite(std::span<const double> x) {
  stats_internal::NeumaierSum sum;
  for (const double v : x) sum.add(v);
  return sum.value() / static_cast<double>(x.size());
}

// Sample variance (n-1) of finite values, n >= 2, by the corrected two-pass algorithm
// (Chan, Golub and LeVeque 1983, "Algorithms for computing the sample variance",
// eq. 1.7): sum (x - m)^2 - (sum (x - m))^2 / n, which removes the first-order error
// of the computed mean m.
double variance_of_finite(std::span<const double> x) {
  const double m = mean_of_finite(x);
  stats_internal::NeumaierSum squares;
  stats_internal::NeumaierSum deviations;
  for (const double v : x) {
    const double d = v - m;
    squares.add(d * d);
    deviations.add(d);
  }
  const double n = static_cast<double>(x.size());
  const double dev = deviations.value();
  const double ss = squares.value() - dev * dev / n;
  return std::max(0.0, ss) / (n - 1.0);
}

void check_quantile(double q) {
  VLBIAS_CHECK(q >= 0.0 && q <= 100.0, InputError, "percentile {} is outside [0, 100] (or is NaN)",
               q);
}

}  // namespace

double percentile_sorted(std::span<const double> sorted, double q) {
  VLBIAS_CHECK(!sorted.empty(), InputError, "a percentile of an empty sample is undefined");
  check_quantile(q);
  // numpy 1.24 lib/function_base.py: _quantile with method "linear"
  // (virtual index (n - 1) * q / 100, gamma = index - floor(index)) and _lerp, which
  // interpolates from the nearer end: a + (b - a) g when g < 0.5, b - (b - a)(1 - g)
  // otherwise. Reproduced operation for operation so results agree bit for bit.
  const std::size_t n = sorted.size();
  const double quantile = q / 100.0;
  const double virtual_index = static_cast<double>(n - 1) * quantile;
  if (virtual_index >= static_cast<double>(n - 1)) return sorted[n - 1];
  const double previous = std::floor(virtual_index);
  const auto lo = static_cast<std::size_t>(previous);
  const double a = sorted[lo];
  const double b = sorted[lo + 1];
  const double gamma = virtual_index - previous;
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

double percentile_select(std::span<double> values, double q) {
  VLBIAS_CHECK(!values.empty(), InputError, "a percentile of an empty sample is undefined");
  check_quantile(q);
  // The two order statistics percentile_sorted reads, found by selection.
  const std::size_t n = values.size();
  const double quantile = q / 100.0;
  const double virtual_index = static_cast<double>(n - 1) * quantile;
  if (virtual_index >= static_cast<double>(n - 1)) {
    return *std::max_element(values.begin(), values.end());
  }
  const auto lo = static_cast<std::size_t>(std::floor(virtual_index));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double b =
      *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  // percentile_sorted's interpolation, operation for operation.
  const double a = values[lo];
  const double gamma = virtual_index - std::floor(virtual_index);
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

std::vector<double> percentiles(std::span<const double> x, std::span<const double> qs) {
  for (const double q : qs) check_quantile(q);
  stats_internal::check_finite(x, "percentiles");
  std::vector<double> out(qs.size(), kNaN);
  if (x.empty()) return out;
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < qs.size(); ++i) out[i] = percentile_sorted(sorted, qs[i]);
  return out;
}

Summary describe(std::span<const double> x) {
  stats_internal::check_finite(x, "describe");
  Summary s;
  s.n = x.size();
  if (x.empty()) {
    s.note = "no observations: every statistic is undefined";
    return s;
  }
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.p25 = percentile_sorted(sorted, 25.0);
  s.median = percentile_sorted(sorted, 50.0);
  s.p75 = percentile_sorted(sorted, 75.0);
  if (s.min == s.max) {
    // Every value equal: the mean is that value and the spread exactly zero (summing
    // would only add rounding noise).
    s.mean = s.min;
    if (s.n >= 2) s.sd = 0.0;
  } else {
    s.mean = mean_of_finite(x);
    s.sd = std::sqrt(variance_of_finite(x));
  }
  if (s.n < 2) s.note = "1 observation: the standard deviation needs at least 2";
  return s;
}

double mean(std::span<const double> x) {
  stats_internal::check_finite(x, "mean");
  if (x.empty()) return kNaN;
  return mean_of_finite(x);
}

double variance(std::span<const double> x) {
  stats_internal::check_finite(x, "variance");
  if (x.size() < 2) return kNaN;
  return variance_of_finite(x);
}

}  // namespace vlbias::stats
