// CLIPScore against the numpy reference of tools/make_clipscore_fixtures.py.
#include "vlbias/metrics/clipscore.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_clipscore_test {

const std::string kDir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/metrics/";

const nlohmann::json& expected() {
  return testing_util::fixture_json("metrics/clipscore.json");
}

void expect_scores(const ClipScores& got, const nlohmann::json& want) {
  ASSERT_EQ(got.cosine.size(), want["cosine"].size());
  for (std::size_t i = 0; i < got.cosine.size(); ++i) {
    EXPECT_NEAR(got.cosine[i], want["cosine"][i].get<double>(), 1e-12) << "row " << i;
    EXPECT_NEAR(got.score[i], want["score"][i].get<double>(), 1e-10) << "row " << i;
  }
  const ClipScoreSummary s = summarize_clipscores(got.score, {10, 50, 90});
  const nlohmann::json& ws = want["summary"];
  EXPECT_NEAR(s.summary.mean, ws["mean"].get<double>(), 1e-10);
  EXPECT_NEAR(s.summary.sd, ws["sd"].get<double>(), 1e-10);
  EXPECT_NEAR(s.summary.min, ws["min"].get<double>(), 1e-10);
  EXPECT_NEAR(s.summary.max, ws["max"].get<double>(), 1e-10);
  for (std::size_t q = 0; q < 3; ++q) {
    EXPECT_NEAR(s.percentile_values[q], ws["percentiles"][q].get<double>(), 1e-10);
  }
}

TEST(ClipScore, VariantsMatchNumpyForEveryPairing) {
  const Matrix images = read_npy_matrix(kDir + "clipscore_images.npy");
  const Matrix texts = read_npy_matrix(kDir + "clipscore_texts.npy");
  const Matrix objects = read_npy_matrix(kDir + "clipscore_objects.npy");
  Matrix first(1, objects.cols);
  for (std::size_t k = 0; k < objects.cols; ++k) first.at(0, k) = objects.at(0, k);
  for (const char* name : {"raw", "hessel", "torchmetrics"}) {
    SCOPED_TRACE(name);
    const ClipScoreVariant v = parse_clipscore_variant(name);
    EXPECT_EQ(to_string(v), name);
    expect_scores(clipscores(images, texts, {}, v), expected()[name]["paired"]);
    expect_scores(clipscores(images, first, {}, v), expected()[name]["broadcast"]);
  }
}

TEST(ClipScore, ClampsAtZero) {
  EXPECT_EQ(clipscore_from_cosine(-0.3, ClipScoreVariant::Raw), -0.3);
  EXPECT_EQ(clipscore_from_cosine(-0.3, ClipScoreVariant::Hessel), 0.0);
  EXPECT_EQ(clipscore_from_cosine(-0.3, ClipScoreVariant::Torchmetrics), 0.0);
  EXPECT_DOUBLE_EQ(clipscore_from_cosine(0.3, ClipScoreVariant::Hessel), 0.75);
  EXPECT_DOUBLE_EQ(clipscore_from_cosine(0.3, ClipScoreVariant::Torchmetrics), 30.0);
}

TEST(ClipScore, BadInputIsAnInputError) {
  Matrix images(2, 3), texts(3, 3), wide(2, 4), empty(0, 3);
  images.at(0, 0) = images.at(1, 1) = 1.0f;
  texts.at(0, 0) = texts.at(1, 1) = texts.at(2, 2) = 1.0f;
  EXPECT_THROW(clipscores(images, texts, {}, ClipScoreVariant::Raw), InputError);  // 2 vs 3 rows
  EXPECT_THROW(clipscores(images, wide, {}, ClipScoreVariant::Raw), InputError);
  EXPECT_THROW(clipscores(empty, texts, {}, ClipScoreVariant::Raw), InputError);
  EXPECT_THROW(clipscores(images, texts, {0, 3}, ClipScoreVariant::Raw), InputError);
  EXPECT_THROW(clipscores(images, texts, {0}, ClipScoreVariant::Raw), InputError);
  Matrix zero_text(3, 3);
  EXPECT_THROW(clipscores(images, zero_text, {0, 1}, ClipScoreVariant::Raw), InputError);
  Matrix zero_image(2, 3);
  EXPECT_THROW(clipscores(zero_image, texts, {0, 1}, ClipScoreVariant::Raw), InputError);
  EXPECT_THROW(parse_clipscore_variant("clip-s"), UsageError);
  EXPECT_NO_THROW(clipscores(images, texts, {2, 1}, ClipScoreVariant::Raw));
}

}  // namespace in_clipscore_test
}  // namespace
}  // namespace vlbias
