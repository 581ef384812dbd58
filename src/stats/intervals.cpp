// Closed-form intervals (include/vlbias/stats/intervals.h): Wilson, Fisher z, Student t, and
// the Boost.Math normal and t quantiles they use (~1 ulp; see intervals.h for scipy's t.ppf).
#include "vlbias/stats/intervals.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "distributions.h"
#include "resampling_util.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

namespace {

void check_level(double level, const char* what) {
  VLBIAS_CHECK(level > 0.0 && level < 1.0, InputError, "{}: confidence level {} is outside (0, 1)",
               what, level);
}

Interval closed_form(double level) {
  Interval out;
  out.level = level;
  return out;
}

}  // namespace

double normal_quantile(double p) {
  VLBIAS_CHECK(p > 0.0 && p < 1.0, InputError, "normal quantile: p = {} is outside (0, 1)", p);
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

double normal_two_sided_p(double z) {
  if (std::isnan(z)) return kNaN;
  return 2.0 * stats_internal::normal_sf(std::fabs(z));
}

double t_quantile(double df, double p) {
  VLBIAS_CHECK(p > 0.0 && p < 1.0, InputError, "t quantile: p = {} is outside (0, 1)", p);
  VLBIAS_CHECK(df > 0.0, InputError, "t quantile: {} degrees of freedom; expected more than 0", df);
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

Interval wilson_interval(std::size_t successes, std::size_t n, double level) {
  check_level(level, "wilson_interval");
  VLBIAS_CHECK(successes <= n, InputError, "wilson_interval: {} successes out of {} trials",
               successes, n);
  Interval out = closed_form(level);
  if (n == 0) {
    out.note = "no observations: a proportion needs at least one";
    return out;
  }
  const double z = normal_quantile(0.5 + level / 2.0);
  const double nd = static_cast<double>(n);
  const double p = static_cast<double>(successes) / nd;
  const double z2 = z * z;
  const double denominator = 1.0 + z2 / nd;
  const double centre = (p + z2 / (2.0 * nd)) / denominator;
  const double half = z / denominator * std::sqrt(p * (1.0 - p) / nd + z2 / (4.0 * nd * nd));
  out.lower = std::max(0.0, centre - half);
  out.upper = std::min(1.0, centre + half);
  return out;
}

Interval fisher_z_interval(double r, double se_z, double level) {
  check_level(level, "fisher_z_interval");
  Interval out = closed_form(level);
  if (std::isnan(r) || std::isnan(se_z)) {
    out.note = "the correlation or its standard error is undefined";
    return out;
  }
  if (std::fabs(r) >= 1.0) {  // atanh(+-1) is infinite: the interval is the point
    out.lower = out.upper = r;
    return out;
  }
  const double z = normal_quantile(0.5 + level / 2.0);
  const double centre = std::atanh(r);
  out.lower = std::tanh(centre - z * se_z);
  out.upper = std::tanh(centre + z * se_z);
  return out;
}

Interval t_mean_interval(std::span<const double> x, double level) {
  check_level(level, "t_mean_interval");
  stats_internal::check_finite(x, "t_mean_interval");
  Interval out = closed_form(level);
  if (x.size() < 2) {
    out.note = fmt::format("{} value(s): a t interval needs at least 2", x.size());
    return out;
  }
  if (std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; })) {
    out.lower = out.upper = x[0];  // sd is exactly 0; summing would add rounding noise
    return out;
  }
  const double n = static_cast<double>(x.size());
  const double m = mean(x);
  const double sem = std::sqrt(variance(x) / n);
  const double q = t_quantile(n - 1.0, 0.5 + level / 2.0);
  out.lower = m - q * sem;
  out.upper = m + q * sem;
  return out;
}

}  // namespace vlbias::stats
