// Friedman test (stats.h) against scipy.stats.friedmanchisquare values computed by
// scipy 1.10 (friedmanchisquare([1,4,9,0],[2,5,7,1],[3,5,8,2]) = 2.8, p = 0.24659696394160646)
// and its degenerate cases.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_friedman_test {

TEST(Friedman, HandWorkedWithTies) {
  // Blocks (rows) x 3 treatments. Ranks: [1,2,3], [1,2.5,2.5], [3,1,2], [1,2,3].
  // R = [6, 7.5, 10.5]; n = 4, k = 3; sum (R - 8)^2 = 4 + 0.25 + 6.25 = 10.5;
  // chi2 = 12 / (4 * 3 * 4) * 10.5 / C, C = 1 - (8 - 2) / (4 * 3 * 8) = 0.9375 -> 2.8.
  // p = exp(-2.8 / 2) (chi2 with 2 df).
  const std::vector<double> v = {1, 2, 3, 4, 5, 5, 9, 7, 8, 0, 1, 2};
  const TestResult r = friedman(v, 3);
  EXPECT_NEAR(r.statistic, 2.8, 1e-12);
  EXPECT_NEAR(r.p_value, std::exp(-1.4), 1e-12);
  EXPECT_EQ(r.df, std::vector<double>{2});
  EXPECT_NEAR(r.effect_size, 2.8 / 8.0, 1e-12);
}

TEST(Friedman, DegenerateCasesGiveNotes) {
  const std::vector<double> two = {1, 2, 3, 4};
  EXPECT_TRUE(std::isnan(friedman(two, 2).statistic));
  EXPECT_FALSE(friedman(two, 2).note.empty());
  const std::vector<double> tied = {1, 1, 1, 2, 2, 2};
  EXPECT_TRUE(std::isnan(friedman(tied, 3).statistic));
  EXPECT_NE(friedman(tied, 3).note.find("tied"), std::string::npos);
  EXPECT_FALSE(friedman({}, 3).note.empty());
  const std::vector<double> nan = {1, 2, std::nan("")};
  EXPECT_FALSE(testing_util::error_of<InputError>([&] { (void)friedman(nan, 3); }).empty());
  EXPECT_FALSE(testing_util::error_of<InputError>([&] { (void)friedman(two, 3); }).empty());
}

}  // namespace in_friedman_test
}  // namespace
}  // namespace vlbias::stats
