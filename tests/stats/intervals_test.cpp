// Closed-form intervals and quantiles (include/vlbias/stats/intervals.h) against scipy 1.10
// values (printed by /usr/bin/python3 with scipy.stats.norm, and the Wilson and Fisher z
// formulas in numpy), then their degenerate cases. Student t quantiles are mpmath's, solved to
// 40 digits from the incomplete beta (as tools/make_agreement_fixtures.py does): scipy 1.10's
// t.ppf (cephes stdtrit) is off by 1e-11 to 1e-9 relative, e.g. t.ppf(0.975, 10) =
// 2.2281388519649385 against the exact 2.22813885198627422...
#include "vlbias/stats/intervals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "vlbias/core/error.h"

namespace vlbias::stats {
namespace {
namespace in_intervals_test {

TEST(Intervals, QuantilesMatchScipy) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-15);     // norm.ppf(0.975)
  EXPECT_NEAR(normal_quantile(0.995), 2.5758293035489004, 1e-15);    // norm.ppf(0.995)
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-14);    // norm.ppf(1e-10)
  EXPECT_NEAR(t_quantile(10, 0.975), 2.2281388519862742245, 1e-14);  // mpmath
  EXPECT_NEAR(t_quantile(4, 0.95), 2.1318467863266495285, 1e-14);    // mpmath
  EXPECT_NEAR(t_quantile(1, 0.95), 6.3137515146750373979, 1e-13);    // tan(0.45 pi)
  // 2 * norm.sf(2.5), 2 * norm.sf(9): the far tail keeps its relative accuracy.
  EXPECT_NEAR(normal_two_sided_p(-2.5) / 0.012419330651552265, 1.0, 1e-14);
  EXPECT_NEAR(normal_two_sided_p(9.0) / 2.2571768119076647e-19, 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(normal_two_sided_p(std::nan(""))));
  EXPECT_THROW(normal_quantile(0.0), InputError);
  EXPECT_THROW(normal_quantile(1.0), InputError);
  EXPECT_THROW(t_quantile(0.0, 0.5), InputError);
}

TEST(Intervals, WilsonMatchesItsFormulaAndStaysInsideZeroOne) {
  const Interval w = wilson_interval(3, 10, 0.95);
  EXPECT_NEAR(w.lower, 0.10779126740630099, 1e-15);
  EXPECT_NEAR(w.upper, 0.6032218525388546, 1e-15);
  EXPECT_EQ(w.resamples, 0u);
  const Interval none = wilson_interval(0, 7, 0.9);  // numpy: lower -2.8e-17 (rounding)
  EXPECT_EQ(none.lower, 0.0);
  EXPECT_NEAR(none.upper, 0.27876269545254206, 1e-15);
  const Interval all = wilson_interval(7, 7, 0.95);
  EXPECT_NEAR(all.lower, 0.6456695649333126, 1e-15);
  EXPECT_LE(all.upper, 1.0);
  EXPECT_NEAR(all.upper, 1.0, 1e-15);
  const Interval empty = wilson_interval(0, 0, 0.95);
  EXPECT_TRUE(std::isnan(empty.lower));
  EXPECT_FALSE(empty.note.empty());
  EXPECT_THROW(wilson_interval(4, 3, 0.95), InputError);
  EXPECT_THROW(wilson_interval(1, 3, 1.5), InputError);
}

TEST(Intervals, FisherZMatchesScipysPearsonInterval) {
  // r = 0.6, n = 20: tanh(atanh(0.6) -+ norm.ppf(0.975) / sqrt(17)).
  const Interval f = fisher_z_interval(0.6, 1.0 / std::sqrt(17.0), 0.95);
  EXPECT_NEAR(f.lower, 0.21440693172348965, 1e-15);
  EXPECT_NEAR(f.upper, 0.8237933702349465, 1e-15);
  const Interval perfect = fisher_z_interval(-1.0, 0.5, 0.95);
  EXPECT_EQ(perfect.lower, -1.0);
  EXPECT_EQ(perfect.upper, -1.0);
  const Interval undefined = fisher_z_interval(std::nan(""), 0.5, 0.95);
  EXPECT_TRUE(std::isnan(undefined.upper));
  EXPECT_FALSE(undefined.note.empty());
}

TEST(Intervals, StudentTIntervalOfTheMeanMatchesTheExactQuantile) {
  // mean -+ q sem of [1, 2.5, 2, 4, 3.5], q the mpmath t quantile (0.95, df 4); scipy's
  // t.interval(0.9, 4, mean, sem) gives [1.461905254716567, 3.7380947452834326].
  const std::vector<double> x = {1.0, 2.5, 2.0, 4.0, 3.5};
  const Interval t = t_mean_interval(x, 0.9);
  EXPECT_NEAR(t.lower, 1.461905252052444, 1e-14);
  EXPECT_NEAR(t.upper, 3.738094747947556, 1e-14);
  const std::vector<double> same = {0.1, 0.1, 0.1};
  EXPECT_EQ(t_mean_interval(same, 0.95).lower, 0.1);
  EXPECT_EQ(t_mean_interval(same, 0.95).upper, 0.1);
  const std::vector<double> one = {2.0};
  EXPECT_TRUE(std::isnan(t_mean_interval(one, 0.95).lower));
  const std::vector<double> bad = {1.0, INFINITY};
  EXPECT_THROW(t_mean_interval(bad, 0.95), InputError);
}

}  // namespace in_intervals_test
}  // namespace
}  // namespace vlbias::stats
