// Friedman test for blocked data (scipy.stats.friedmanchisquare, scipy 1.10).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "classical_internal.h"
#include "distributions.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

// chi2 = 12 / (n k (k + 1)) * sum_j (R_j - n (k + 1) / 2)^2 / C, the centred form of
// scipy's 12 / (n k (k + 1)) * sum_j R_j^2 - 3 n (k + 1), divided by the tie
// correction C = 1 - sum_blocks sum_ties (t^3 - t) / (n k (k^2 - 1)); ranks are the
// average ranks within each block. p = chi2.sf(chi2, k - 1). Kendall's W =
// chi2 / (n (k - 1)) is the effect size.
TestResult friedman(std::span<const double> values, std::size_t k) {
  TestResult r = stats_internal::new_result("friedman", "kendalls_w");
  VLBIAS_CHECK(k >= 1 && values.size() % k == 0, InputError,
               "friedman: {} values do not form blocks of {} treatments", values.size(), k);
  stats_internal::require_finite(values, "friedman: values");
  const std::size_t n = values.size() / k;
  r.df = {static_cast<double>(k) - 1.0};
  if (k < 3) {
    r.note = "fewer than 3 treatments: the Friedman test needs at least 3 (as scipy)";
    return r;
  }
  if (n == 0) {
    r.note = "no complete block";
    return r;
  }
  std::vector<double> twice_rank_sum(k, 0.0);
  std::vector<std::uint32_t> order(k);
  double tie_term = 0.0;
  for (std::size_t b = 0; b < n; ++b) {
    const double* row = values.data() + b * k;
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t x, std::uint32_t y) { return row[x] < row[y]; });
    for (std::size_t i = 0; i < k;) {
      std::size_t j = i + 1;
      while (j < k && row[order[j]] == row[order[i]]) ++j;
      // Ranks i+1 .. j average to (i + 1 + j) / 2; twice that is an integer.
      for (std::size_t t = i; t < j; ++t)
        twice_rank_sum[order[t]] += static_cast<double>(i + 1 + j);
      const double t = static_cast<double>(j - i);
      tie_term += t * t * t - t;
      i = j;
    }
  }
  const double nd = static_cast<double>(n), kd = static_cast<double>(k);
  const double correction = 1.0 - tie_term / (nd * kd * (kd * kd - 1.0));
  if (!(correction > 0.0)) {
    r.note = "every block is tied throughout: the statistic is undefined (0/0)";
    return r;
  }
  double ss = 0.0;
  for (std::size_t j = 0; j < k; ++j) {
    const double c = (twice_rank_sum[j] - nd * (kd + 1.0)) / 2.0;
    ss += c * c;
  }
  r.statistic = 12.0 / (nd * kd * (kd + 1.0)) * ss / correction;
  r.p_value = stats_internal::chi2_sf(kd - 1.0, r.statistic);
  r.effect_size = r.statistic / (nd * (kd - 1.0));
  return r;
}

}  // namespace vlbias::stats
