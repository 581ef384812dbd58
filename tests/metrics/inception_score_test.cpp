// The Inception Score (src/metrics/inception_score.cpp) against scipy's softmax and KL entropy
// over np.array_split parts (tests/fixtures/metrics/inception_score, written by
// tools/make_inception_score_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/distribution_metrics.h"

namespace vlbias {
namespace {
namespace in_inception_score_test {

using testing_util::fixture_json;

const std::string kDir =
    std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/metrics/inception_score/";

TEST(InceptionScore, MatchesScipyOnUnevenSplitsPeakedUnderflowingAndIdenticalLogits) {
  for (const auto& [name, want] : fixture_json("metrics/inception_score/expected.json").items()) {
    SCOPED_TRACE(name);
    const Matrix logits = read_npy_matrix(kDir + name + ".npy");
    const InceptionScoreResult r = inception_score(logits, want["splits"]);
    EXPECT_NEAR(r.mean, want["mean"].get<double>(), 1e-12 * want["mean"].get<double>());
    EXPECT_NEAR(r.sd, want["sd"].get<double>(), 1e-9 * want["mean"].get<double>());
    ASSERT_EQ(r.splits.size(), want["scores"].size());
    for (std::size_t s = 0; s < r.splits.size(); ++s) {
      EXPECT_NEAR(r.splits[s], want["scores"][s].get<double>(), 1e-12 * r.splits[s]) << s;
    }
    EXPECT_EQ(r.n, logits.rows);
    EXPECT_EQ(r.classes, logits.cols);
  }
}

TEST(InceptionScore, IdenticalImagesScoreExactlyOne) {
  const Matrix logits = read_npy_matrix(kDir + "identical.npy");
  EXPECT_DOUBLE_EQ(inception_score(logits, 3).mean, 1.0);
}

TEST(InceptionScore, TooFewImagesNonFiniteLogitsAndZeroSplitsAreRefused) {
  Matrix logits(3, 4);
  EXPECT_THROW((void)inception_score(logits, 4), InputError);
  EXPECT_THROW((void)inception_score(logits, 0), UsageError);
  logits.at(1, 2) = NAN;
  const std::string msg =
      testing_util::error_of<InputError>([&] { (void)inception_score(logits, 1); });
  EXPECT_NE(msg.find("logit 2 of image 1 is nan"), std::string::npos) << msg;
}

}  // namespace in_inception_score_test
}  // namespace
}  // namespace vlbias
