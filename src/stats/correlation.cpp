// Pearson, Spearman and Kendall (tau-b) correlation with the p-values of scipy 1.10
// (scipy.stats.pearsonr, scipy.stats.spearmanr, scipy.stats.kendalltau) for each alternative.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

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

TestResult pearson(std::span<const double> x, std::span<const double> y, Alternative alternative) {
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
  r.p_value = stats_internal::pearson_p(r.statistic, static_cast<double>(n), alternative);
  return r;
}

// scipy 1.10 spearmanr: rho = Pearson r of the average ranks (np.corrcoef), dof = n - 2,
// t = rho * sqrt(dof / ((rho + 1)(1 - rho))) clipped at 0 inside the root, p from
// _ttest_finish (two-sided 2 stdtr(dof, -|t|)); rho = +-1 gives t = +-inf.
TestResult spearman(std::span<const double> x, std::span<const double> y, Alternative alternative) {
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
  const double t = std::fabs(rho) == 1.0
                       ? rho * std::numeric_limits<double>::infinity()
                       : rho * std::sqrt(std::max(0.0, dof / ((rho + 1.0) * (1.0 - rho))));
  r.p_value = stats_internal::t_p(dof, t, alternative);
  return r;
}

namespace {

// Tie statistics of one variable's runs of equal values (scipy's count_rank_tie): pairs tied
// sum t(t-1)/2, and the variance terms sum t(t-1)(t-2) and sum t(t-1)(2t+5).
struct TieCounts {
  std::uint64_t pairs = 0;
  double v0 = 0.0;
  double v1 = 0.0;
  void add_run(std::uint64_t t) {
    if (t < 2) return;
    const double d = static_cast<double>(t);
    pairs += t * (t - 1) / 2;
    v0 += d * (d - 1.0) * (d - 2.0);
    v1 += d * (d - 1.0) * (2.0 * d + 5.0);
  }
};

TieCounts tie_counts(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  TieCounts c;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= v.size(); ++i) {
    if (i == v.size() || v[i] != v[start]) {
      c.add_run(i - start);
      start = i;
    }
  }
  return c;
}

// Pairs i < j with key[i] > key[j] (strict inversions), by bottom-up merge sort: O(n log n).
std::uint64_t count_inversions(std::vector<double> key) {
  const std::size_t n = key.size();
  std::vector<double> buf(n);
  std::uint64_t inversions = 0;
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (key[j] < key[i]) {
          inversions += mid - i;  // key[j] is below every remaining left value
          buf[k++] = key[j++];
        } else {
          buf[k++] = key[i++];
        }
      }
      while (i < mid) buf[k++] = key[i++];
      while (j < hi) buf[k++] = key[j++];
    }
    key.swap(buf);
  }
  return inversions;
}

// n! as a double (inf past 170!, where scipy's branches give 0 for 2 / n!).
double factorial(std::size_t n) {
  double f = 1.0;
  for (std::size_t i = 2; i <= n; ++i) f *= static_cast<double>(i);
  return f;
}

// scipy 1.10 _mstats_basic._kendall_p_exact: p of c concordant pairs among n untied pairs from
// the distribution of the number of inversions of a random permutation (Kendall 1970). Counts
// are kept as probabilities (divided by j at step j, scipy's n >= 171 branch) for every n.
double kendall_exact_p(std::size_t n, std::uint64_t c, Alternative alternative) {
  const std::uint64_t total = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  const bool in_right_tail = c >= total - c;
  c = std::min(c, total - c);
  double prob = 0.0, mass = 0.0;  // P(C <= c) twice, and P(C = c), in the left tail
  if (n <= 2) {
    prob = 1.0;
    mass = n == 1 ? 1.0 : 0.5;
  } else if (c == 0) {
    prob = 2.0 / factorial(n);
    mass = prob / 2.0;
  } else if (c == 1) {
    prob = 2.0 / factorial(n - 1);
    mass = static_cast<double>(n - 1) / factorial(n);
  } else if (4 * c == static_cast<std::uint64_t>(n) * (n - 1) &&
             alternative == Alternative::TwoSided) {
    return 1.0;
  } else {
    std::vector<double> p(c + 1, 0.0), cum(c + 1);
    p[0] = p[1] = 0.5;  // n = 2: no inversion or one
    for (std::size_t j = 3; j <= n; ++j) {
      std::partial_sum(p.begin(), p.end(), cum.begin());
      // P_j(k) = (C(k) - C(k - j)) / j with C the cumulative P_{j-1}.
      for (std::size_t k = 0; k <= c; ++k) p[k] = (cum[k] - (k >= j ? cum[k - j] : 0.0)) / j;
    }
    prob = 2.0 * std::accumulate(p.begin(), p.end(), 0.0);
    mass = p[c];
  }
  if (alternative != Alternative::TwoSided) {
    // Half the two-sided p when c lies on the alternative's side, else its complement.
    const bool agrees = in_right_tail == (alternative == Alternative::Greater);
    prob = agrees ? prob / 2.0 : 1.0 - prob / 2.0 + mass;
  }
  return std::clamp(prob, 0.0, 1.0);
}

}  // namespace

// scipy 1.10 kendalltau (variant "b", method "auto"). Pairs sorted by (x, y): a strict inversion
// of y in that order is a discordant pair (pairs tied in x have y ascending, so none of them
// counts); joint ties are the runs of equal (x, y).
TestResult kendall_tau(std::span<const double> x, std::span<const double> y,
                       Alternative alternative) {
  TestResult r = stats_internal::new_result("kendall", "tau_b");
  check_pairs(x, y, "kendall");
  if (degenerate(x, y, r)) return r;
  const std::size_t n = x.size();
  r.df = {};
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]);
  });
  std::vector<double> y_sorted(n);
  for (std::size_t i = 0; i < n; ++i) y_sorted[i] = y[order[i]];
  TieCounts joint;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    if (i == n || x[order[i]] != x[order[start]] || y_sorted[i] != y_sorted[start]) {
      joint.add_run(i - start);
      start = i;
    }
  }
  const std::uint64_t dis = count_inversions(y_sorted);
  const TieCounts tx = tie_counts(std::vector<double>(x.begin(), x.end()));
  const TieCounts ty = tie_counts(std::vector<double>(y.begin(), y.end()));
  const std::uint64_t tot = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  // C - D = tot - xtie - ytie + ntie - 2 D (signed: D can exceed the rest).
  const double con_minus_dis =
      static_cast<double>(tot - tx.pairs - ty.pairs + joint.pairs) - 2.0 * static_cast<double>(dis);
  const double tau = con_minus_dis / std::sqrt(static_cast<double>(tot - tx.pairs)) /
                     std::sqrt(static_cast<double>(tot - ty.pairs));
  r.statistic = r.effect_size = std::clamp(tau, -1.0, 1.0);
  const bool ties = tx.pairs != 0 || ty.pairs != 0;
  if (!ties && (n <= 33 || std::min(dis, tot - dis) <= 1)) {
    r.method = "exact";
    r.p_value = kendall_exact_p(n, tot - dis, alternative);
    return r;
  }
  r.method = "asymptotic";
  const double nd = static_cast<double>(n), m = nd * (nd - 1.0);
  const double xt = static_cast<double>(tx.pairs), yt = static_cast<double>(ty.pairs);
  const double var = (m * (2.0 * nd + 5.0) - tx.v1 - ty.v1) / 18.0 + 2.0 * xt * yt / m +
                     tx.v0 * ty.v0 / (9.0 * m * (nd - 2.0));
  r.p_value = stats_internal::normal_p(con_minus_dis / std::sqrt(var), alternative);
  return r;
}

}  // namespace vlbias::stats
