// Simultaneous intervals for multinomial shares (include/vlbias/stats/multinomial_intervals.h):
// Sison and Glaz (1995) and Goodman (1965).
#include "vlbias/stats/multinomial_intervals.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/poisson.hpp>

#include "vlbias/core/error.h"

namespace vlbias::stats {

namespace {

// n and the checks every method shares.
double multinomial_total(std::span<const std::uint64_t> counts, double level, const char* what) {
  VLBIAS_CHECK(level > 0.0 && level < 1.0, InputError, "{}: confidence level {} is outside (0, 1)",
               what, level);
  VLBIAS_CHECK(counts.size() >= 2, InputError,
               "{}: {} class{}; simultaneous intervals need at least 2", what, counts.size(),
               counts.size() == 1 ? "" : "es");
  double n = 0;
  for (const std::uint64_t c : counts) n += static_cast<double>(c);
  VLBIAS_CHECK(n > 0, InputError, "{}: every count is 0; the shares need at least one observation",
               what);
  return n;
}

std::vector<Interval> unset_intervals(std::size_t k, double level) {
  Interval blank;
  blank.level = level;
  return std::vector<Interval>(k, blank);
}

// The Poisson(lambda) masses over [lo, hi] (integers, 0 <= lo <= hi), for the sums of one class
// and one c: one accurate mass (Boost's pdf, no promotion to long double) at the mode clamped
// into the window, the rest by the recurrence P(k + 1) = P(k) lambda / (k + 1) outward from it.
// A window is a few standard deviations wide, so the recurrence adds ~1e-14 relative error;
// sums of masses keep the precision a difference of two CDFs near 1 loses, and cost one Boost
// call per window instead of two incomplete gamma functions per sum (the audits compute these
// intervals for every prompt and attribute).
class PoissonWindow {
 public:
  PoissonWindow(double lo, double hi, double lambda) : lo_(lo), mass_(std::size_t(hi - lo + 1)) {
    if (lambda == 0) {
      if (lo == 0) mass_[0] = 1.0;
      return;
    }
    using Policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
    const double anchor = std::clamp(std::floor(lambda), lo, hi);
    const auto at = static_cast<std::size_t>(anchor - lo);
    mass_[at] = boost::math::pdf(boost::math::poisson_distribution<double, Policy>(lambda), anchor);
    for (std::size_t i = at + 1; i < mass_.size(); ++i)
      mass_[i] = mass_[i - 1] * lambda / (lo + static_cast<double>(i));
    for (std::size_t i = at; i > 0; --i)
      mass_[i - 1] = mass_[i] * (lo + static_cast<double>(i)) / lambda;
  }
  // P(b <= Z <= a) for lo - 4 <= b, a <= hi: the part of [b, a] inside the window (the masses
  // below lo are those of negative counts, 0).
  double between(double b, double a) const {
    double sum = 0;
    for (double k = std::max(b, lo_); k <= a; ++k) sum += mass_[static_cast<std::size_t>(k - lo_)];
    return sum;
  }

 private:
  double lo_;
  std::vector<double> mass_;
};

// The r-th factorial moment of Poisson(lambda) truncated to [b, a] (Sison and Glaz, section 2).
double truncated_factorial_moment(const PoissonWindow& w, double b, double a, int r,
                                  double lambda) {
  const double inside = w.between(b, a);
  const double lost = w.between(a - r + 1, a) - w.between(b - r, b - 1);
  return std::pow(lambda, r) * (1.0 - lost / inside);
}

// nu(c): the approximate probability that every count is within c of its observed value
// (Sison and Glaz eq. 1 with the bounds of their eq. 7): the product of the truncated Poisson
// probabilities, times the Edgeworth density of their sum at n, over the Poisson(n) mass at n.
double sison_glaz_coverage(std::span<const std::uint64_t> counts, double n, double c) {
  double log_inside = 0, mean = 0, var = 0, third = 0, fourth = 0, var_sq = 0;
  for (const std::uint64_t count : counts) {
    const double x = static_cast<double>(count);
    const double b = std::max(x - c, 0.0), a = std::min(x + c, n);
    const PoissonWindow w(std::max(b - 4, 0.0), a, x);
    log_inside += std::log(w.between(b, a));
    if (x == 0) continue;  // the point mass at 0: every moment 0
    const double f1 = truncated_factorial_moment(w, b, a, 1, x);
    const double f2 = truncated_factorial_moment(w, b, a, 2, x);
    const double f3 = truncated_factorial_moment(w, b, a, 3, x);
    const double f4 = truncated_factorial_moment(w, b, a, 4, x);
    // Central moments from the factorial ones.
    const double m = f1;
    const double m2 = f2 + m - m * m;
    const double m3 = f3 + f2 * (3 - 3 * m) + m - 3 * m * m + 2 * m * m * m;
    const double m4 = f4 + f3 * (6 - 4 * m) + f2 * (7 - 12 * m + 6 * m * m) + m - 4 * m * m +
                      6 * m * m * m - 3 * m * m * m * m;
    mean += m;
    var += m2;
    third += m3;
    fourth += m4;
    var_sq += m2 * m2;
  }
  const double g1 = third / std::pow(var, 1.5);
  const double g2 = (fourth - 3 * var_sq) / (var * var);
  const double z = (n - mean) / std::sqrt(var);
  const double phi = std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi);
  const double h3 = z * z * z - 3 * z;
  const double h4 = z * z * z * z - 6 * z * z + 3;
  const double h6 = std::pow(z, 6) - 15 * std::pow(z, 4) + 45 * z * z - 15;
  const double edgeworth =
      phi * (1 + g1 * h3 / 6 + g2 * h4 / 24 + g1 * g1 * h6 / 72) / std::sqrt(var);
  const double log_mass_at_n = std::log(PoissonWindow(n, n, n).between(n, n));
  return std::exp(log_inside + std::log(edgeworth) - log_mass_at_n);
}

}  // namespace

std::vector<Interval> sison_glaz_intervals(std::span<const std::uint64_t> counts, double level) {
  const double n = multinomial_total(counts, level, "sison_glaz_intervals");
  std::vector<Interval> out = unset_intervals(counts.size(), level);
  // The smallest c with nu(c) <= level < nu(c + 1), searched upward from 1 as the authors do
  // (nu grows with c; a NaN coverage, where the expansion turns negative, never qualifies).
  double c = 1, nu_c = sison_glaz_coverage(counts, n, c);
  double nu_next = sison_glaz_coverage(counts, n, c + 1);
  while (!(nu_c <= level && level < nu_next)) {
    if (c > n) {
      for (Interval& i : out) {
        i.note =
            "Sison-Glaz: no c with nu(c) <= level < nu(c + 1) (too few observations for "
            "this level); the Goodman intervals apply";
      }
      return out;
    }
    c += 1;
    nu_c = nu_next;
    nu_next = sison_glaz_coverage(counts, n, c + 1);
  }
  const double gamma = (level - nu_c) / (nu_next - nu_c);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double p = static_cast<double>(counts[i]) / n;
    out[i].lower = std::max(p - c / n, 0.0);
    out[i].upper = std::min(p + (c + 2 * gamma) / n, 1.0);
  }
  return out;
}

std::vector<Interval> goodman_intervals(std::span<const std::uint64_t> counts, double level) {
  const double n = multinomial_total(counts, level, "goodman_intervals");
  const double k = static_cast<double>(counts.size());
  const double chi2 = boost::math::quantile(boost::math::chi_squared_distribution<double>(1.0),
                                            1.0 - (1.0 - level) / k);
  std::vector<Interval> out = unset_intervals(counts.size(), level);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double p = static_cast<double>(counts[i]) / n;
    const double root = std::sqrt(chi2 * chi2 + 4 * n * p * chi2 * (1 - p));
    out[i].lower = std::max((2 * n * p + chi2 - root) / (2 * (chi2 + n)), 0.0);
    out[i].upper = std::min((2 * n * p + chi2 + root) / (2 * (chi2 + n)), 1.0);
  }
  return out;
}

}  // namespace vlbias::stats
