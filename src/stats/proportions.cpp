// Pearson's chi-square test of equal rates across groups (stats.h), as
// scipy.stats.chi2_contingency(table, correction=False) on the 2 x k table.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "classical_internal.h"
#include "distributions.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

TestResult chi_square_rates(std::span<const std::size_t> successes,
                            std::span<const std::size_t> totals) {
  VLBIAS_CHECK(successes.size() == totals.size(), InputError,
               "chi-square of rates: {} success counts for {} groups", successes.size(),
               totals.size());
  TestResult r = stats_internal::new_result("chi_square", "cramers_v");
  double n = 0, x = 0;
  std::vector<std::size_t> used;
  for (std::size_t g = 0; g < totals.size(); ++g) {
    VLBIAS_CHECK(successes[g] <= totals[g], InputError,
                 "chi-square of rates: group {} has {} successes of {}", g, successes[g],
                 totals[g]);
    if (totals[g] == 0) continue;
    used.push_back(g);
    n += static_cast<double>(totals[g]);
    x += static_cast<double>(successes[g]);
  }
  if (used.size() < 2) {
    r.note = "fewer than 2 groups with requests";
    return r;
  }
  if (x == 0 || x == n) {
    r.note = "every group has the same rate (0 or 1): no test";
    return r;
  }
  const double rate = x / n;
  double stat = 0, smallest = INFINITY;
  for (const std::size_t g : used) {
    const double ng = static_cast<double>(totals[g]), og = static_cast<double>(successes[g]);
    const double e1 = ng * rate, e0 = ng * (1 - rate);
    stat += (og - e1) * (og - e1) / e1 + (og - e1) * (og - e1) / e0;
    smallest = std::min({smallest, e1, e0});
  }
  const double df = static_cast<double>(used.size() - 1);
  r.statistic = stat;
  r.df = {df};
  r.p_value = stats_internal::chi2_sf(df, stat);
  r.effect_size = std::sqrt(stat / n);
  if (smallest < 5)
    r.note = fmt::format("an expected count is {:.3g} (< 5): the chi-square p is rough", smallest);
  return r;
}

}  // namespace vlbias::stats
