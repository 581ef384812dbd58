// Goodness-of-fit tests of one multinomial sample against given shares, and their power
// (include/vlbias/stats/goodness_of_fit.h).
#include "vlbias/stats/goodness_of_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/non_central_chi_squared.hpp>

#include "distributions.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

namespace {

// The classes a sample can show under the hypothesis: (count, share) with share > 0, and
// whether an impossible class (share 0, count > 0) was seen.
struct GofClasses {
  std::vector<double> counts, shares;
  double n = 0;
  bool impossible = false;
};

GofClasses gof_classes(std::span<const std::uint64_t> counts, std::span<const double> shares,
                       const char* what) {
  VLBIAS_CHECK(counts.size() >= 2, InputError, "{}: {} class{}; a test needs at least 2", what,
               counts.size(), counts.size() == 1 ? "" : "es");
  VLBIAS_CHECK(shares.size() == counts.size(), InputError, "{}: {} shares for {} classes", what,
               shares.size(), counts.size());
  GofClasses c;
  double total = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    VLBIAS_CHECK(std::isfinite(shares[k]) && shares[k] >= 0 && shares[k] <= 1, InputError,
                 "{}: share {} of class {} is not in [0, 1]", what, shares[k], k);
    total += shares[k];
    c.n += static_cast<double>(counts[k]);
    if (shares[k] > 0) {
      c.counts.push_back(static_cast<double>(counts[k]));
      c.shares.push_back(shares[k]);
    } else if (counts[k] > 0) {
      c.impossible = true;
    }
  }
  VLBIAS_CHECK(std::fabs(total - 1.0) <= 1e-9, InputError, "{}: the shares sum to {}, not 1", what,
               total);
  VLBIAS_CHECK(c.n > 0, InputError, "{}: every count is 0; a test needs at least one observation",
               what);
  return c;
}

// The result for the cases every test shares: an impossible class, or one possible class.
bool gof_degenerate(const GofClasses& c, TestResult& r) {
  if (c.impossible) {
    r.statistic = std::numeric_limits<double>::infinity();
    r.df = {static_cast<double>(c.counts.size()) - 1};
    r.p_value = 0.0;
    r.effect_size = std::numeric_limits<double>::infinity();
    r.note = "a class the hypothesis gives share 0 was observed";
    return true;
  }
  if (c.counts.size() < 2) {
    r.statistic = 0.0;
    r.df = {0};
    r.p_value = 1.0;
    r.effect_size = 0.0;
    r.note = "only one class has a share above 0: every sample fits";
    return true;
  }
  return false;
}

double pearson_x2(const GofClasses& c) {
  double x2 = 0;
  for (std::size_t k = 0; k < c.counts.size(); ++k) {
    const double e = c.n * c.shares[k];
    x2 += (c.counts[k] - e) * (c.counts[k] - e) / e;
  }
  return x2;
}

TestResult gof_result(const char* name) {
  TestResult r;
  r.test = name;
  r.effect_name = "cohens_w";
  return r;
}

// Sum of exp(log P(x)) over the outcomes x with log P(x) <= bound, classes from `k` on
// holding `left` observations; `partial` is log n! + sum over the classes before k.
void sum_outcomes(const std::vector<double>& log_q, std::size_t k, std::uint64_t left,
                  double partial, double bound, double& sum) {
  if (k + 1 == log_q.size()) {
    const double lp =
        partial - std::lgamma(static_cast<double>(left) + 1) + static_cast<double>(left) * log_q[k];
    if (lp <= bound) sum += std::exp(lp);
    return;
  }
  for (std::uint64_t x = 0; x <= left; ++x) {
    const double xd = static_cast<double>(x);
    sum_outcomes(log_q, k + 1, left - x, partial - std::lgamma(xd + 1) + xd * log_q[k], bound, sum);
  }
}

}  // namespace

TestResult chi_square_gof(std::span<const std::uint64_t> counts, std::span<const double> shares) {
  const GofClasses c = gof_classes(counts, shares, "chi-square goodness of fit");
  TestResult r = gof_result("chi_square");
  if (gof_degenerate(c, r)) return r;
  r.statistic = pearson_x2(c);
  const double df = static_cast<double>(c.counts.size()) - 1;
  r.df = {df};
  r.p_value = stats_internal::chi2_sf(df, r.statistic);
  r.effect_size = std::sqrt(r.statistic / c.n);
  return r;
}

TestResult g_test_gof(std::span<const std::uint64_t> counts, std::span<const double> shares) {
  const GofClasses c = gof_classes(counts, shares, "G-test of goodness of fit");
  TestResult r = gof_result("g_test");
  if (gof_degenerate(c, r)) return r;
  double g = 0;
  for (std::size_t k = 0; k < c.counts.size(); ++k) {
    if (c.counts[k] > 0) g += c.counts[k] * std::log(c.counts[k] / (c.n * c.shares[k]));
  }
  // Rounding can leave -1e-16 for a perfect fit.
  r.statistic = std::max(0.0, 2 * g);
  const double df = static_cast<double>(c.counts.size()) - 1;
  r.df = {df};
  r.p_value = stats_internal::chi2_sf(df, r.statistic);
  r.effect_size = std::sqrt(pearson_x2(c) / c.n);
  return r;
}

std::size_t multinomial_outcomes(std::uint64_t n, std::size_t k) {
  // C(n + k - 1, k - 1) built up as a product of exact binomials C(n + j, j), j = 1..k-1.
  const std::size_t cap = std::numeric_limits<std::size_t>::max();
  unsigned __int128 v = 1;
  for (std::size_t j = 1; j < k; ++j) {
    v = v * (static_cast<unsigned __int128>(n) + j) / j;
    if (v > cap) return cap;
  }
  return static_cast<std::size_t>(v);
}

TestResult exact_multinomial_gof(std::span<const std::uint64_t> counts,
                                 std::span<const double> shares, std::size_t max_outcomes) {
  const GofClasses c = gof_classes(counts, shares, "exact multinomial test");
  TestResult r = gof_result("exact_multinomial");
  r.method = "exact";
  if (gof_degenerate(c, r)) return r;
  r.statistic = pearson_x2(c);
  r.df = {static_cast<double>(c.counts.size()) - 1};
  r.effect_size = std::sqrt(r.statistic / c.n);
  const auto n = static_cast<std::uint64_t>(c.n);
  const std::size_t outcomes = multinomial_outcomes(n, c.counts.size());
  if (outcomes > max_outcomes) {
    r.note =
        fmt::format("{} outcomes to enumerate, more than the limit of {}", outcomes, max_outcomes);
    return r;
  }
  std::vector<double> log_q;
  double observed = std::lgamma(c.n + 1);
  for (std::size_t k = 0; k < c.counts.size(); ++k) {
    log_q.push_back(std::log(c.shares[k]));
    observed += c.counts[k] * log_q[k] - std::lgamma(c.counts[k] + 1);
  }
  double sum = 0;
  sum_outcomes(log_q, 0, n, std::lgamma(c.n + 1), observed + std::log1p(1e-7), sum);
  r.p_value = std::min(1.0, sum);
  return r;
}

double gof_power(double n, double df, double w, double alpha) {
  VLBIAS_CHECK(n >= 1 && df >= 1 && std::isfinite(w) && w >= 0 && alpha > 0 && alpha < 1,
               InputError, "goodness-of-fit power: n {}, df {}, w {}, alpha {} out of range", n, df,
               w, alpha);
  namespace bm = boost::math;
  const double crit = bm::quantile(bm::complement(bm::chi_squared_distribution<>(df), alpha));
  const double lambda = n * w * w;
  if (lambda == 0) return alpha;
  return bm::cdf(bm::complement(bm::non_central_chi_squared_distribution<>(df, lambda), crit));
}

double gof_minimum_detectable_w(double n, double df, double alpha, double power) {
  VLBIAS_CHECK(power > alpha && power < 1, InputError,
               "goodness-of-fit power: power {} must be in (alpha = {}, 1)", power, alpha);
  // Power rises with w; bisect on w in [0, hi] with hi doubled until it is enough.
  double lo = 0, hi = 1;
  while (gof_power(n, df, hi, alpha) < power) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (gof_power(n, df, mid, alpha) < power ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace vlbias::stats
