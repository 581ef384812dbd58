// `vlbias metric associate|markedness|trait-confidence` through the binary, against
// tools/make_association_fixtures.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_metric_association_test {

using cli_util::run_cli;

const std::string kFix = "tests/fixtures/metrics/";
const std::string kStudy = " --images " + kFix + "association_images.npy --prompts " + kFix +
                           "association_prompts.npy --manifest " + kFix +
                           "association_manifest.csv";
const std::string kTable = " --table " + kFix + "association_images.csv";

const nlohmann::json& ref() {
  return testing_util::fixture_json("metrics/association.json");
}

double column_mean(const nlohmann::json& rows, std::size_t d) {
  double s = 0;
  for (const auto& r : rows) s += r[d].get<double>();
  return s / static_cast<double>(rows.size());
}

TEST(CliAssociate, OverallAndGroupMeansMatchNumpy) {
  const auto dir = cli_util::temp_dir();
  const auto r = run_cli("metric associate" + kStudy + kTable +
                         " --by gender --bootstrap 200 --seed 4 --per-image '" +
                         (dir / "per_image.csv").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["dimensions"].size(), 3u);
  EXPECT_TRUE(j["has_delta"].get<bool>());
  for (std::size_t d = 0; d < 3; ++d) {
    const auto& dim = j["dimensions"][d];
    EXPECT_EQ(dim["dimension"], ref()["dimensions"][d]);
    EXPECT_NEAR(dim["cos_mean"].get<double>(), column_mean(ref()["cos"], d), 2e-6);
    EXPECT_NEAR(dim["delta_cos_mean"].get<double>(), column_mean(ref()["delta_cos"], d), 2e-6);
    ASSERT_EQ(dim["groups"].size(), 2u);  // female, male
    EXPECT_EQ(dim["groups"][0]["key"]["gender"], "female");
    EXPECT_EQ(dim["groups"][0]["n"], 10);
    EXPECT_EQ(dim["groups"][1]["n"], 20);
    // The female mean from the reference's per-image values (rows 0, 3, 6, ...).
    double s = 0;
    for (std::size_t i = 0; i < 30; i += 3) s += ref()["delta_cos"][i][d].get<double>();
    EXPECT_NEAR(dim["groups"][0]["delta_cos_mean"].get<double>(), s / 10, 2e-6);
    EXPECT_EQ(dim["groups"][0]["ci"]["resamples"], 200);
  }
  EXPECT_TRUE(j["provenance"]["inputs"].is_array());
  const Table per_image = read_table((dir / "per_image.csv").string());
  EXPECT_EQ(per_image.rows, 30u);
  EXPECT_NEAR(per_image.numeric("delta_cos_agency-")[7], ref()["delta_cos"][7][2].get<double>(),
              2e-6);
}

TEST(CliAssociate, WithoutTableScoresEveryImage) {
  const auto r = run_cli("metric associate" + kStudy + " --bootstrap 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dimensions"][0]["groups"][0]["n"], 30);
}

TEST(CliMarkedness, PercentPerLevelMatchesNumpy) {
  const auto r = run_cli("metric markedness" + kStudy + kTable + " --attributes race,gender");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& groups = j["groups"];
  ASSERT_EQ(groups.size(), ref()["markedness"].size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& e = ref()["markedness"][g];
    EXPECT_EQ(groups[g]["level"], e["level"]);
    EXPECT_EQ(groups[g]["marked"], e["marked"]);
    if (e["percent"].is_null()) {
      EXPECT_TRUE(groups[g]["percent"].is_null());
      EXPECT_TRUE(groups[g].contains("note"));
    } else {
      EXPECT_DOUBLE_EQ(groups[g]["percent"].get<double>(), e["percent"].get<double>());
    }
  }
  EXPECT_TRUE(j.contains("notes"));  // the level "Other" has no group prompt
}

TEST(CliTraitConfidence, MeanConfidenceMatchesNumpy) {
  for (const std::string scale : {"raw", "logit"}) {
    const auto r = run_cli("metric trait-confidence" + kStudy + kTable +
                           " --by race --across race --bootstrap 100 --scale " + scale);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["pairs"].size(), 1u);
    const auto& e = ref()[scale == "raw" ? "confidence_raw" : "confidence_logit"];
    double s = 0;
    for (const auto& v : e) s += v.get<double>();
    EXPECT_NEAR(j["pairs"][0]["mean"].get<double>(), s / 30, scale == "raw" ? 2e-6 : 2e-4);
    ASSERT_EQ(j["tests"].size(), 1u);  // ANOVA across the four races
    EXPECT_EQ(j["tests"][0]["result"]["test"], "anova");
    EXPECT_EQ(j["tests"][0]["groups"].size(), 4u);
  }
}

TEST(CliAssociation, BadInputIsExit2WithOneSentence) {
  // Prompt embeddings that do not match the manifest's rows.
  auto r = run_cli("metric associate --images " + kFix + "association_images.npy --prompts " +
                   kFix + "association_images.npy --manifest " + kFix + "association_manifest.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("manifest has"), std::string::npos) << r.err;
  r = run_cli("metric associate --images " + kFix + "scweat_small_a.npy --prompts " + kFix +
              "association_prompts.npy --manifest " + kFix + "association_manifest.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dimension mismatch"), std::string::npos) << r.err;
  r = run_cli("metric markedness" + kStudy + " --attributes race");
  EXPECT_EQ(r.exit_code, 2);  // --table is required
  r = run_cli("metric trait-confidence" + kStudy + kTable + " --scale softmax");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("softmax"), std::string::npos) << r.err;
  r = run_cli("metric markedness" + kStudy + kTable + " --attributes ethnicity");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ethnicity"), std::string::npos) << r.err;
}

}  // namespace in_metric_association_test
}  // namespace
}  // namespace vlbias
