// Boost.Math wrappers for the p-values of the classical tests (see distributions.h).
#include "distributions.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/complement.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "vlbias/core/error.h"

namespace vlbias::stats_internal {

namespace {

// Runs a Boost evaluation, turning its exceptions (domain, overflow, evaluation
// errors) into InternalError with the distribution named.
template <class F>
double guarded(const char* what, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    VLBIAS_FAIL(InternalError, "could not evaluate the {} distribution: {}", what, e.what());
  }
}

}  // namespace

double f_sf(double d1, double d2, double x) {
  VLBIAS_CHECK(d1 > 0 && d2 > 0 && x >= 0, InternalError,
               "F survival function called with d1={}, d2={}, x={}", d1, d2, x);
  if (std::isinf(x)) return 0.0;
  return guarded("F", [&] {
    const boost::math::fisher_f_distribution<double> dist(d1, d2);
    return boost::math::cdf(boost::math::complement(dist, x));
  });
}

double t_two_sided_p(double df, double t) {
  VLBIAS_CHECK(df > 0 && !std::isnan(t), InternalError, "t distribution called with df={}, t={}",
               df, t);
  if (std::isinf(t)) return 0.0;
  return guarded("Student t", [&] {
    const boost::math::students_t_distribution<double> dist(df);
    // Lower tail at -|t|: accurate for tiny p, and symmetric like scipy's stdtr.
    return std::min(1.0, 2.0 * boost::math::cdf(dist, -std::fabs(t)));
  });
}

double normal_sf(double z) {
  VLBIAS_CHECK(!std::isnan(z), InternalError, "normal survival function called with NaN");
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return guarded("normal", [&] {
    const boost::math::normal_distribution<double> dist(0.0, 1.0);
    return boost::math::cdf(boost::math::complement(dist, z));
  });
}

double chi2_sf(double df, double x) {
  VLBIAS_CHECK(df > 0 && x >= 0, InternalError,
               "chi-squared survival function called with df={}, x={}", df, x);
  if (std::isinf(x)) return 0.0;
  return guarded("chi-squared", [&] {
    const boost::math::chi_squared_distribution<double> dist(df);
    return boost::math::cdf(boost::math::complement(dist, x));
  });
}

double pearson_two_sided_p(double r, double n) {
  VLBIAS_CHECK(n >= 3 && std::fabs(r) <= 1.0, InternalError,
               "Pearson p-value called with r={}, n={}", r, n);
  const double ab = n / 2.0 - 1.0;
  // scipy: dist = stats.beta(ab, ab, loc=-1, scale=2); prob = 2 * dist.sf(abs(r)),
  // where sf standardises x = (|r| - loc) / scale.
  const double x = (std::fabs(r) + 1.0) / 2.0;
  if (x >= 1.0) return 0.0;
  return guarded("beta", [&] {
    const boost::math::beta_distribution<double> dist(ab, ab);
    return std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(dist, x)));
  });
}

double t_p(double df, double t, Alternative alternative) {
  if (alternative == Alternative::TwoSided) return t_two_sided_p(df, t);
  VLBIAS_CHECK(df > 0 && !std::isnan(t), InternalError, "t distribution called with df={}, t={}",
               df, t);
  const double x = alternative == Alternative::Less ? t : -t;  // P(T <= x)
  if (std::isinf(x)) return x > 0 ? 1.0 : 0.0;
  return guarded("Student t", [&] {
    const boost::math::students_t_distribution<double> dist(df);
    return boost::math::cdf(dist, x);
  });
}

double normal_p(double z, Alternative alternative) {
  switch (alternative) {
    case Alternative::Greater:
      return normal_sf(z);
    case Alternative::Less:
      return normal_sf(-z);  // cdf(z) = sf(-z): the normal is symmetric
    default:
      return std::min(1.0, 2.0 * normal_sf(std::fabs(z)));
  }
}

double pearson_p(double r, double n, Alternative alternative) {
  if (alternative == Alternative::TwoSided) return pearson_two_sided_p(r, n);
  VLBIAS_CHECK(n >= 3 && std::fabs(r) <= 1.0, InternalError,
               "Pearson p-value called with r={}, n={}", r, n);
  const double ab = n / 2.0 - 1.0;
  // P(R <= r) for less, P(R >= r) for greater, at the standardised x = (r + 1) / 2.
  const double x = (r + 1.0) / 2.0;
  const bool less = alternative == Alternative::Less;
  if (x <= 0.0) return less ? 0.0 : 1.0;
  if (x >= 1.0) return less ? 1.0 : 0.0;
  return guarded("beta", [&] {
    const boost::math::beta_distribution<double> dist(ab, ab);
    return less ? boost::math::cdf(dist, x) : boost::math::cdf(boost::math::complement(dist, x));
  });
}

}  // namespace vlbias::stats_internal
