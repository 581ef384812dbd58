// Association metrics over a prompt manifest, against tools/make_association_fixtures.py
// (numpy, float64 cosines of the same float32 data).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/association.h"
#include "vlbias/metrics/social_perception.h"

namespace vlbias {
namespace {
namespace in_social_perception_test {

const std::string kDir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/metrics/";

struct Loaded {
  Matrix prompts = read_npy_matrix(kDir + "association_prompts.npy");
  Matrix images = read_npy_matrix(kDir + "association_images.npy");
  Table manifest_table = read_table(kDir + "association_manifest.csv");
  Table images_table = read_table(kDir + "association_images.csv");
  PromptManifest manifest = parse_prompt_manifest(manifest_table);
  Matrix cos = prompt_image_cosines(prompts, images, manifest, "prompts", "images");
};

const Loaded& data() {
  static const Loaded loaded;
  return loaded;
}

const nlohmann::json& ref() {
  return testing_util::fixture_json("metrics/association.json");
}

// Cosines are float32 in vlbias and float64 in the reference.
constexpr double kTol = 2e-6;

TEST(PromptManifest, ParsesRolesTemplatesAndDimensionLabels) {
  const PromptManifest& m = data().manifest;
  ASSERT_EQ(m.templates.size(), 2u);
  EXPECT_EQ(m.templates[0], "A photo of a {} person.");
  EXPECT_EQ(m.neutral_of_template[0], 0u);
  EXPECT_EQ(m.neutral_of_template[1], 1u);
  ASSERT_EQ(m.dimensions.size(), 3u);
  // One valence keeps the name; two valences give one dimension per pole.
  EXPECT_EQ(m.dimensions[0].label, "warmth");
  EXPECT_EQ(m.dimensions[1].label, "agency+");
  EXPECT_EQ(m.dimensions[2].label, "agency-");
  EXPECT_EQ(m.dimensions[2].rows.size(), 4u);  // 2 words x 2 templates
  EXPECT_EQ(m.group_prompts.size(), 7u);
  EXPECT_EQ(m.dimension_index("agency-"), 2u);
  EXPECT_THROW(m.dimension_index("competence"), InputError);
}

TEST(Associate, CosAndDeltaCosMatchNumpy) {
  const ImageDimensionScores s = associate(data().cos, data().manifest);
  ASSERT_TRUE(s.has_delta);
  ASSERT_EQ(s.images, 30u);
  ASSERT_EQ(s.dims(), 3u);
  for (std::size_t d = 0; d < 3; ++d) EXPECT_EQ(s.dimensions[d], ref()["dimensions"][d]);
  for (std::size_t i = 0; i < s.images; ++i) {
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_NEAR(s.cos[i * 3 + d], ref()["cos"][i][d].get<double>(), kTol) << i << "," << d;
      EXPECT_NEAR(s.delta_cos[i * 3 + d], ref()["delta_cos"][i][d].get<double>(), kTol);
    }
  }
}

TEST(Associate, MissingNeutralIsAnErrorOrNoDelta) {
  // The second template has no neutral prompt.
  Table copy = parse_csv(
      "text,word,dimension,valence,template\n"
      "A photo of a person.,,,,A photo of a {} person.\n"
      "A photo of a warm person.,warm,warmth,+,A photo of a {} person.\n"
      "A warm person.,warm,warmth,+,A {} person.\n",
      "m.csv");
  const PromptManifest m = parse_prompt_manifest(copy);
  Matrix cos(3, 2);
  try {
    associate(cos, m);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'A {} person.'"), std::string::npos) << e.what();
  }
  const ImageDimensionScores s = associate(cos, m, /*require_delta=*/false);
  EXPECT_FALSE(s.has_delta);
  EXPECT_TRUE(s.delta_cos.empty());
  EXPECT_EQ(s.cos.size(), 2u);
}

TEST(Markedness, MatchesNumpyIncludingLevelsWithoutPrompts) {
  MarkednessOptions o;
  o.attributes = {"race", "gender"};
  o.bootstrap = 200;
  o.seed = 3;
  const MarkednessReport r = markedness(data().cos, data().manifest, data().images_table, o);
  const auto& expected = ref()["markedness"];
  ASSERT_EQ(r.groups.size(), expected.size());
  EXPECT_EQ(r.rows_missing_key, 6u);  // the empty race cells
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const MarkednessGroup& got = r.groups[g];
    const auto& e = expected[g];
    SCOPED_TRACE(got.attribute + "=" + got.level);
    EXPECT_EQ(got.attribute, e["attribute"]);
    EXPECT_EQ(got.level, e["level"]);
    EXPECT_EQ(got.word, e["word"]);
    EXPECT_EQ(got.n, e["n"].get<std::size_t>());
    EXPECT_EQ(got.marked, e["marked"].get<std::size_t>());
    if (e["percent"].is_null()) {
      EXPECT_TRUE(std::isnan(got.percent));
      EXPECT_FALSE(got.note.empty());
    } else {
      EXPECT_DOUBLE_EQ(got.percent, e["percent"].get<double>());
      EXPECT_LE(got.ci.lower, got.percent);
      EXPECT_GE(got.ci.upper, got.percent);
    }
    for (std::size_t t = 0; t < 2; ++t) {
      if (e["percent_by_template"][t].is_null()) {
        EXPECT_TRUE(std::isnan(got.percent_by_template[t]));
      } else {
        EXPECT_DOUBLE_EQ(got.percent_by_template[t], e["percent_by_template"][t].get<double>());
      }
    }
  }
}

TEST(Markedness, NeedsGroupPromptsAndAttributes) {
  const Table m = parse_csv(
      "text,word,dimension,valence,template\n"
      "A photo of a person.,,,,A photo of a {} person.\n"
      "A photo of a warm person.,warm,warmth,+,A photo of a {} person.\n",
      "m.csv");
  const PromptManifest pm = parse_prompt_manifest(m);
  Matrix cos(2, data().images_table.rows);
  MarkednessOptions o;
  o.attributes = {"race"};
  EXPECT_THROW(markedness(cos, pm, data().images_table, o), InputError);
  o.attributes = {};
  EXPECT_THROW(markedness(data().cos, data().manifest, data().images_table, o), UsageError);
  o.attributes = {"ethnicity"};
  EXPECT_THROW(markedness(data().cos, data().manifest, data().images_table, o), InputError);
}

TEST(TraitConfidence, RawAndLogitMatchNumpy) {
  for (ConfidenceScale scale : {ConfidenceScale::Raw, ConfidenceScale::Logit}) {
    const TraitConfidence c = trait_confidence(data().cos, data().manifest, scale);
    ASSERT_EQ(c.pairs.size(), 1u);
    EXPECT_EQ(c.pairs[0], "agency");
    EXPECT_EQ(c.first[0], "powerful");
    EXPECT_EQ(c.second[0], "powerless|meek");
    const auto& e = ref()[scale == ConfidenceScale::Raw ? "confidence_raw" : "confidence_logit"];
    // The logit scale multiplies the cosine error by 100 before the logistic (slope <= 1/4).
    const double tol = scale == ConfidenceScale::Raw ? kTol : 100 * kTol;
    for (std::size_t i = 0; i < c.images; ++i) {
      EXPECT_NEAR(c.confidence[i], e[i].get<double>(), tol) << i;
    }
  }
  EXPECT_EQ(parse_confidence_scale("logit"), ConfidenceScale::Logit);
  EXPECT_THROW(parse_confidence_scale("softmax"), UsageError);
  EXPECT_THROW(trait_confidence(data().cos, data().manifest, ConfidenceScale::Logit, 0.0),
               UsageError);
  EXPECT_THROW(trait_confidence(data().cos, data().manifest, ConfidenceScale::Logit, NAN),
               UsageError);
}

TEST(TraitConfidence, ExtremeScoresSaturateWithoutNaN) {
  const Table m = parse_csv(
      "text,word,dimension,valence,template\n"
      "a smart person,smart,smart/dumb,+,a {} person\n"
      "a dumb person,dumb,smart/dumb,-,a {} person\n",
      "m.csv");
  const PromptManifest pm = parse_prompt_manifest(m);
  Matrix cos(2, 2);
  cos.at(0, 0) = 1.0f;
  cos.at(1, 0) = -1.0f;
  cos.at(0, 1) = -1.0f;
  cos.at(1, 1) = 1.0f;
  const TraitConfidence c = trait_confidence(cos, pm, ConfidenceScale::Logit, 1e6);
  EXPECT_EQ(c.confidence[0], 1.0);
  EXPECT_EQ(c.confidence[1], 0.0);
}

TEST(TraitConfidence, NeedsAPair) {
  const Table m = parse_csv(
      "text,word,dimension,valence,template\n"
      "a warm person,warm,warmth,+,a {} person\n",
      "m.csv");
  Matrix cos(1, 1);
  EXPECT_THROW(trait_confidence(cos, parse_prompt_manifest(m), ConfidenceScale::Raw), InputError);
}

TEST(PromptManifest, BadManifestsNameTheProblem) {
  const auto expect_error = [](const std::string& csv, const std::string& fragment) {
    try {
      parse_prompt_manifest(parse_csv(csv, "bad.csv"));
      ADD_FAILURE() << "expected InputError for " << csv;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error("text,word,dimension,template\nA,a,b,c {}\n", "no column 'valence'");
  expect_error("text,word,dimension,valence,template\n", "no rows");
  expect_error("text,word,dimension,valence,template\nx,w,,+,a {}\n", "empty dimension");
  expect_error("text,word,dimension,valence,template\nx,w,warmth,++,a {}\n", "valence '++'");
  expect_error("text,word,dimension,valence,template\nA.,,,,A {}.\nA .,,,,A {}.\n",
               "second neutral prompt");
  expect_error("text,word,dimension,valence,template,role\nx,w,d,+,a {},target\n", "role 'target'");
  expect_error("text,word,dimension,valence,template,role\nx,,race,,a {},group\n", "empty word");
  expect_error("text,word,dimension,valence,template\n,w,d,+,a {}\n", "text is empty");
}

TEST(PromptImageCosines, ChecksShapesAndZeroRows) {
  const Loaded& d = data();
  Matrix short_prompts(d.prompts.rows - 1, d.prompts.cols);
  EXPECT_THROW(prompt_image_cosines(short_prompts, d.images, d.manifest, "p", "i"), InputError);
  Matrix other_dim(d.images.rows, d.images.cols + 1);
  for (float& v : other_dim.data) v = 1.0f;
  EXPECT_THROW(prompt_image_cosines(d.prompts, other_dim, d.manifest, "p", "i"), InputError);
  Matrix zero_image = d.images;
  for (std::size_t j = 0; j < zero_image.cols; ++j) zero_image.at(4, j) = 0.0f;
  try {
    prompt_image_cosines(d.prompts, zero_image, d.manifest, "p.npy", "i.npy");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 4 of i.npy"), std::string::npos) << e.what();
  }
}

TEST(ScweatFromCosines, EqualsScweatOnEmbeddings) {
  const Loaded& d = data();
  // Targets: the warmth prompts; A = images 0..11, B = images 12..29.
  const auto& rows = d.manifest.dimensions[0].rows;
  Matrix targets(rows.size(), d.prompts.cols);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t j = 0; j < d.prompts.cols; ++j) targets.at(r, j) = d.prompts.at(rows[r], j);
  }
  const MatrixView a(d.images.row(0), 12, d.images.cols);
  const MatrixView b(d.images.row(12), 18, d.images.cols);
  ScweatOptions o;
  o.permutations = 500;
  o.seed = 9;
  const ScweatResult direct = sc_weat(targets, a, b, o);
  Matrix block(rows.size(), 30);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t i = 0; i < 30; ++i) block.at(r, i) = d.cos.at(rows[r], i);
  }
  const ScweatResult gathered = sc_weat_from_cosines(block, 12, o);
  EXPECT_NEAR(direct.effect_size, gathered.effect_size, 1e-6);
  EXPECT_NEAR(direct.mean_difference, gathered.mean_difference, 1e-7);
  EXPECT_EQ(direct.test.exceed, gathered.test.exceed);
  EXPECT_THROW(sc_weat_from_cosines(block, 0, o), InputError);
  EXPECT_THROW(sc_weat_from_cosines(block, 30, o), InputError);
}

}  // namespace in_social_perception_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_social_perception_test {

TEST(ScweatTargetSets, EachSetEqualsItsOwnTest) {
  const Loaded& d = data();
  const PromptManifest& m = d.manifest;
  std::vector<std::vector<std::size_t>> sets;
  for (const auto& dim : m.dimensions) sets.push_back(dim.rows);
  sets.push_back({0, 1, 2, 3, 4, 5, 6});
  for (const ScweatPTest p_test : {ScweatPTest::Permutation, ScweatPTest::SignFlip}) {
    ScweatOptions o;
    o.p_test = p_test;
    o.permutations = 700;
    o.seed = 12;
    const auto joint = sc_weat_target_sets(d.cos, 11, sets, o);
    ASSERT_EQ(joint.size(), sets.size());
    for (std::size_t k = 0; k < sets.size(); ++k) {
      Matrix block(sets[k].size(), d.cos.cols);
      for (std::size_t r = 0; r < sets[k].size(); ++r) {
        for (std::size_t i = 0; i < d.cos.cols; ++i) block.at(r, i) = d.cos.at(sets[k][r], i);
      }
      const ScweatResult single = sc_weat_from_cosines(block, 11, o);
      EXPECT_EQ(joint[k].effect_size, single.effect_size);
      EXPECT_EQ(joint[k].mean_difference, single.mean_difference);
      EXPECT_EQ(joint[k].test.exceed, single.test.exceed) << k;
      EXPECT_EQ(joint[k].test.p_value, single.test.p_value) << k;
      EXPECT_EQ(joint[k].per_target.size(), sets[k].size());
    }
  }
  EXPECT_THROW(sc_weat_target_sets(d.cos, 11, {{}}, {}), InputError);
}

}  // namespace in_social_perception_test
}  // namespace
}  // namespace vlbias
