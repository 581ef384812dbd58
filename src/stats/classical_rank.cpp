// Rank tests: Mann-Whitney U and Kruskal-Wallis H, matching scipy 1.10
// (scipy.stats.mannwhitneyu with method="auto", use_continuity=True, any alternative;
// scipy.stats.kruskal) except where stats.h documents a degenerate-case decision.
#include <algorithm>
#include <cmath>
#include <vector>

#include "classical_internal.h"
#include "distributions.h"
#include "vlbias/core/error.h"

namespace vlbias::stats_internal {

// P(U <= k) for the Mann-Whitney U of samples of sizes m and n without ties.
// The number of arrangements with U = j is the coefficient of q^j in the Gaussian
// binomial coefficient [m+n choose m]_q = prod_{i=1..s} (1 - q^(l+i)) / (1 - q^i),
// s = min(m, n), l = max(m, n) (Di Bucchianico 1999, the reference of scipy's
// _mannwhitneyu._MWU, whose recurrence f(m, n, k) = f(m-1, n, k-n) + f(m, n-1, k)
// generates the same counts). Each factor is applied to the coefficients up to
// degree k: dividing by (1 - q^i) is a stride-i running sum, multiplying by
// (1 - q^(l+i)) subtracts the coefficients shifted by l + i. Everything stays in
// double like scipy's counts (exact below 2^53). O(s * k) time, k + 1 doubles.
double mwu_exact_cdf(std::size_t k, std::size_t m, std::size_t n) {
  const std::size_t s = std::min(m, n), l = std::max(m, n);
  if (k >= s * l) return 1.0;
  std::vector<double> c(k + 1, 0.0);
  c[0] = 1.0;
  for (std::size_t i = 1; i <= s; ++i) {
    for (std::size_t j = i; j <= k; ++j) c[j] += c[j - i];
    const std::size_t shift = l + i;
    for (std::size_t j = k + 1; j-- > shift;) c[j] -= c[j - shift];  // descending: old values
  }
  double count = 0.0;
  for (std::size_t j = 0; j <= k; ++j) count += c[j];
  // binom(m + n, s) = prod_{i=1..s} (l + i) / i (scipy: special.binom(m + n, m)).
  double total = 1.0;
  for (std::size_t i = 1; i <= s; ++i)
    total = total * static_cast<double>(l + i) / static_cast<double>(i);
  return count / total;
}

}  // namespace vlbias::stats_internal

namespace vlbias::stats {

TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b,
                          Alternative alternative) {
  TestResult r = stats_internal::new_result("mannwhitney", "rank_biserial");
  stats_internal::require_nonempty(a, "mannwhitney", "sample a");
  stats_internal::require_nonempty(b, "mannwhitney", "sample b");
  const stats_internal::PooledRanks ranks = stats_internal::pooled_ranks({a, b});
  if (!ranks.finite) {
    stats_internal::require_finite(a, "mannwhitney: sample a");
    stats_internal::require_finite(b, "mannwhitney: sample b");
  }
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  // scipy 1.10 mannwhitneyu: R1 = sum of ranks of x, U1 = R1 - n1 (n1 + 1) / 2.
  const double r1 = static_cast<double>(ranks.twice_sum[0]) / 2.0;
  const double u1 = r1 - n1 * (n1 + 1.0) / 2.0;
  const double u2 = n1 * n2 - u1;
  // scipy 1.10: greater takes the SF of U1, less the SF of U2 (by symmetry, not the CDF of
  // U1), two-sided twice the SF of the larger U.
  const double u = alternative == Alternative::Greater ? u1
                   : alternative == Alternative::Less  ? u2
                                                       : std::max(u1, u2);
  const double factor = alternative == Alternative::TwoSided ? 2.0 : 1.0;
  r.statistic = u1;
  r.effect_size = 2.0 * u1 / (n1 * n2) - 1.0;
  // scipy 1.10 _mwu_choose_method: exact when either n <= 8 and there are no ties.
  const bool exact = (a.size() <= 8 || b.size() <= 8) && !ranks.any_ties;
  double p = 0.0;
  if (exact) {
    r.method = std::string("exact");
    // scipy _MWU.sf(U) = cdf(m n - U): by symmetry, P(U' >= U) = P(U' <= m n - U).
    p = factor *
        stats_internal::mwu_exact_cdf(static_cast<std::size_t>(n1 * n2 - u), a.size(), b.size());
  } else {
    r.method = std::string("asymptotic");
    if (ranks.all_tied) {
      // z = -0.5 / 0 = -inf in scipy, so p = clip(2 * sf(-inf)) = 1.
      r.note = "all values are tied: U equals its null mean and p = 1 (as scipy)";
      r.p_value = 1.0;
      return r;
    }
    // scipy 1.10 _mannwhitneyu._get_mwu_z: tie-corrected sd, continuity correction -0.5
    // (the tie term is accumulated in double; scipy's int64 t**3 overflows for runs
    // longer than 2,097,151 tied values).
    const double n = n1 + n2;
    const double mu = n1 * n2 / 2.0;
    const double sd = std::sqrt(n1 * n2 / 12.0 * ((n + 1.0) - ranks.tie_term / (n * (n - 1.0))));
    const double z = (u - mu - 0.5) / sd;
    p = factor * stats_internal::normal_sf(z);
  }
  r.p_value = std::clamp(p, 0.0, 1.0);  // scipy: np.clip(p, 0, 1)
  return r;
}

namespace {

// scipy 1.10 kruskal: H = 12 / (N (N + 1)) * sum_g R_g^2 / n_g - 3 (N + 1), divided
// by the tie correction 1 - sum(t^3 - t) / (N^3 - N) (scipy.stats.tiecorrect);
// p = chi2.sf(H, k - 1). The sum is computed in the algebraically equal centred form
// sum_g (R_g - n_g (N + 1) / 2)^2 / n_g, whose terms are exact integers / 4, which
// avoids the cancellation of the textbook form at large N.
TestResult kruskal_from_ranks(const stats_internal::PooledRanks& ranks) {
  TestResult r = stats_internal::new_result("kruskal", "epsilon_squared");
  const std::size_t k = ranks.n.size();
  std::size_t n_total = 0;
  for (std::size_t g = 0; g < k; ++g) n_total += ranks.n[g];
  const double n = static_cast<double>(n_total);
  r.df = {static_cast<double>(k - 1)};
  if (ranks.all_tied) {
    // scipy raises "All numbers are identical in kruskal".
    r.note = "all values are identical: H is undefined (0/0)";
    return r;
  }
  double ss = 0.0;
  for (std::size_t g = 0; g < k; ++g) {
    // 2 R_g - n_g (N + 1), exact in 64-bit integers.
    const auto ng = static_cast<std::int64_t>(ranks.n[g]);
    const std::int64_t centred2 =
        static_cast<std::int64_t>(ranks.twice_sum[g]) - ng * static_cast<std::int64_t>(n_total + 1);
    const double c = static_cast<double>(centred2) / 2.0;
    ss += c * c / static_cast<double>(ng);
  }
  const double ties = 1.0 - ranks.tie_term / (n * n * n - n);
  const double h = 12.0 / (n * (n + 1.0)) * ss / ties;
  r.statistic = h;
  r.p_value = stats_internal::chi2_sf(static_cast<double>(k - 1), h);
  r.effect_size = h / (n - 1.0);
  return r;
}

}  // namespace

TestResult kruskal_wallis(const GroupedValues& data) {
  const std::vector<std::size_t> sizes = stats_internal::check_grouped(data, "kruskal");
  const stats_internal::PooledRanks ranks = stats_internal::pooled_ranks(data, sizes);
  if (!ranks.finite) stats_internal::require_finite(data.values, "kruskal: values");
  return kruskal_from_ranks(ranks);
}

TestResult kruskal_wallis(const std::vector<std::span<const double>>& groups) {
  stats_internal::check_groups(groups, "kruskal");
  const stats_internal::PooledRanks ranks = stats_internal::pooled_ranks(groups);
  if (!ranks.finite) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      stats_internal::require_finite(groups[g], fmt::format("kruskal: group {}", g));
    }
  }
  return kruskal_from_ranks(ranks);
}

}  // namespace vlbias::stats
