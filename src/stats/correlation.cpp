// Pearson and Spearman correlation with the two-sided p-values of scipy 1.10
// (scipy.stats.pearsonr, scipy.stats.spearmanr).
#include <algorithm>
#include <cmath>

#include "classical_internal.h"
#include "distributions.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

namespace {

void check_pairs(std::span<const double> x, std::span<const double> y, const char* test) {
  VLBIAS_CHECK(x.size() == y.size(), InputError,
               "{}: x has {} values and y {}; expected equal lengths", test, x.size(), y.size());
  VLBIAS_CHECK(!x.empty(), InputError, "{}: x and y are empty; expected at least one pair", test);
  stats_internal::require_finite(x, fmt::format("{}: x", test));
  stats_internal::require_finite(y, fmt::format("{}: y", test));
}

// Exponent e such that every |v| * 2^-e <= 1 (scaling by a power of two is exact).
int scale_exponent(std::span<const double> v) {
  double mx = 0.0;
  for (const double a : v) mx = std::max(mx, std::fabs(a));
  int e = 0;
  std::frexp(mx, &e);
  return e;
}

bool well_scaled(const stats_internal::CoMoments& c) {
  return std::isnormal(c.x.m2) && std::isnormal(c.y.m2) && std::isnormal(c.x.m2 * c.y.m2) &&
         std::isfinite(c.cxy);
}

// r = cxy / sqrt(sxx syy), clipped to [-1, 1] like scipy (pearsonr: r = max(min(r, 1), -1);
// np.corrcoef clips the same way). The root of the product is exact for perfectly
// correlated data (sqrt(fl(v * v)) = v). Inputs whose sums of squares overflow or
// underflow are first rescaled by powers of two, which is exact (scipy's
// linalg.norm is overflow-safe too).
double correlation(std::span<const double> x, std::span<const double> y) {
  stats_internal::CoMoments c = stats_internal::co_moments(x, y);
  if (!well_scaled(c)) {
    const int ex = scale_exponent(x), ey = scale_exponent(y);
    std::vector<double> xs(x.size()), ys(y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      xs[i] = std::ldexp(x[i], -ex);
      ys[i] = std::ldexp(y[i], -ey);
    }
    c = stats_internal::co_moments(xs, ys);
  }
  const double r = c.cxy / std::sqrt(c.x.m2 * c.y.m2);
  return std::clamp(r, -1.0, 1.0);
}

// Checks shared by both coefficients; returns true when the result is already final.
bool degenerate(std::span<const double> x, std::span<const double> y, TestResult& r) {
  const std::size_t n = x.size();
  r.df = {static_cast<double>(n) - 2.0};
  if (n < 2) {
    r.df = {kNaN};
    r.note = "a single pair: the correlation is undefined";
    return true;
  }
  const bool x_const = std::all_of(x.begin(), x.end(), [&](double v) { return v == x[0]; });
  const bool y_const = std::all_of(y.begin(), y.end(), [&](double v) { return v == y[0]; });
  if (x_const || y_const) {
    r.note = fmt::format("{} is constant: the correlation is undefined",
                         x_const && y_const ? "each input" : (x_const ? "x" : "y"));
    return true;
  }
  return false;
}

}  // namespace

TestResult pearson(std::span<const double> x, std::span<const double> y) {
  TestResult r = stats_internal::new_result("pearson", "r");
  check_pairs(x, y, "pearson");
  if (degenerate(x, y, r)) return r;
  const std::size_t n = x.size();
  if (n == 2) {
    // scipy 1.10 pearsonr: r = sign(x1 - x0) * sign(y1 - y0), p = 1.
    const double sx = x[1] > x[0] ? 1.0 : -1.0, sy = y[1] > y[0] ? 1.0 : -1.0;
    r.statistic = r.effect_size = sx * sy;
    r.p_value = 1.0;
    return r;
  }
  r.statistic = r.effect_size = correlation(x, y);
  r.p_value = stats_internal::pearson_two_sided_p(r.statistic, static_cast<double>(n));
  return r;
}

// scipy 1.10 spearmanr: rho = Pearson r of the average ranks (np.corrcoef), dof = n - 2,
// t = rho * sqrt(dof / ((rho + 1)(1 - rho))) clipped at 0 inside the root, p = 2 stdtr(dof, -|t|).
TestResult spearman(std::span<const double> x, std::span<const double> y) {
  TestResult r = stats_internal::new_result("spearman", "rho");
  check_pairs(x, y, "spearman");
  if (degenerate(x, y, r)) return r;
  const std::vector<double> rx = rank_average(x), ry = rank_average(y);
  const double rho = correlation(rx, ry);
  r.statistic = r.effect_size = rho;
  const double dof = static_cast<double>(x.size()) - 2.0;
  if (dof == 0.0) {
    // scipy: t = rho * sqrt(0 / 0) = NaN, so p is NaN.
    r.note = "two pairs: the t distribution of rho has 0 degrees of freedom, p is undefined";
    return r;
  }
  const double t = rho * std::sqrt(std::max(0.0, dof / ((rho + 1.0) * (1.0 - rho))));
  r.p_value = std::fabs(rho) == 1.0 ? 0.0 : stats_internal::t_two_sided_p(dof, t);
  return r;
}

}  // namespace vlbias::stats
