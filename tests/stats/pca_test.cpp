// stats::pca (include/vlbias/stats/pca.h): a hand-worked example and the refused inputs. The
// sklearn parity on real embeddings is tests/cli/prompt_geometry_test.cpp.
#include "vlbias/stats/pca.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {
namespace {
namespace in_pca_test {

using testing_util::error_of;

// Points on the line y = 2x, centred at (2, 4): all variance on one axis. Worked by hand: the
// centred points are t * (1, 2) for t = -1, -0.5, 0, 1.5; the variance along (1, 2)/sqrt(5) is
// 5 * (1 + 0.25 + 0 + 2.25) / 3 = 17.5/3; the scores are t * sqrt(5), signed so that the largest
// |U| entry (the last point's) is positive. sklearn's PCA gives the same.
TEST(Pca, PointsOnALineHaveOneComponentWithAllTheVarianceAndSklearnsSign) {
  const std::vector<double> x = {1, 2, 1.5, 3, 2, 4, 3.5, 7};
  const PcaResult p = pca(x, 4, 2, 1);
  ASSERT_EQ(p.scores.size(), 4u);
  EXPECT_NEAR(p.explained_variance[0], 17.5 / 3.0, 1e-12);
  EXPECT_NEAR(p.explained_variance_ratio[0], 1.0, 1e-12);
  const double t[] = {-1, -0.5, 0, 1.5};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(p.scores[i], t[i] * std::sqrt(5.0), 1e-12) << i;
}

TEST(Pca, TooFewRowsTooManyComponentsNaNsAndNoVarianceAreRefused) {
  const std::vector<double> one = {1, 2};
  EXPECT_NE(error_of<InputError>([&] { pca(one, 1, 2, 1); }).find("at least 2 rows"),
            std::string::npos);
  const std::vector<double> x = {0, 1, 2, 3};
  EXPECT_NE(error_of<InputError>([&] { pca(x, 2, 2, 3); }).find("1 to 2 components"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { pca(x, 2, 2, 0); }).find("asked for 0"), std::string::npos);
  const std::vector<double> nan = {0, std::numeric_limits<double>::quiet_NaN(), 2, 3};
  EXPECT_NE(error_of<InputError>([&] { pca(nan, 2, 2, 1); }).find("NaN"), std::string::npos);
  const std::vector<double> same = {1, 2, 1, 2, 1, 2};
  EXPECT_NE(error_of<InputError>([&] { pca(same, 3, 2, 1); }).find("no variance"),
            std::string::npos);
}

}  // namespace in_pca_test
}  // namespace
}  // namespace vlbias::stats
