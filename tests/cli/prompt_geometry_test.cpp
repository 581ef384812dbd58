// The social-perception audit's prompt geometry (analyses.prompt_geometry; paper 001 App. D,
// Table S.5, Fig. S.6A) on the bundled example study, against scipy and scikit-learn
// (tools/make_prompt_geometry_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "report_checks.h"
#include "test_util.h"

namespace vlbias {
namespace {
namespace in_prompt_geometry_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using cli_util::write_temp_file;
using PlainJson = nlohmann::json;

std::string spec(const std::string& geometry) {
  return cli_util::social_perception_example_spec(
      "{groups: [race, gender]}",
      "{scweat: false, ranking: false, markedness: false, prompt_geometry: " + geometry + "}");
}

TEST(PromptGeometry, ValenceCosinesTheirOneSidedTestsAndThePcaMatchScipyAndSklearn) {
  const PlainJson& want = testing_util::fixture_json("audits/prompt_geometry/expected.json");
  const std::string path = write_temp_file("spec.yaml", spec("true"));
  const std::string out = (temp_dir() / "run").string();
  const auto r = run_cli("--quiet audit " + path + " --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report_checks::check_report(temp_dir() / "run");
  const PlainJson g =
      PlainJson::parse(read_file(out + "/results.json"))["analyses"]["prompt_geometry"];
  ASSERT_EQ(g["dimensions"].size(), want["dimensions"].size());
  for (std::size_t i = 0; i < g["dimensions"].size(); ++i) {
    const PlainJson& d = g["dimensions"][i];
    const PlainJson& w = want["dimensions"][i];
    SCOPED_TRACE(d["dimension"].get<std::string>());
    EXPECT_EQ(d["dimension"], w["dimension"]);
    EXPECT_EQ(d["within_positive"]["pairs"], w["pairs"][0]);
    EXPECT_EQ(d["cross"]["pairs"], w["pairs"][2]);
    EXPECT_NEAR(d["within_positive"]["mean"].get<double>(), w["means"][0].get<double>(), 1e-12);
    EXPECT_NEAR(d["within_negative"]["mean"].get<double>(), w["means"][1].get<double>(), 1e-12);
    EXPECT_NEAR(d["cross"]["mean"].get<double>(), w["means"][2].get<double>(), 1e-12);
    EXPECT_NEAR(d["positive_vs_cross"]["statistic"].get<double>(), w["t_pos"].get<double>(), 1e-9);
    EXPECT_NEAR(d["positive_vs_cross"]["p_value"].get<double>(), w["p_pos"].get<double>(), 1e-9);
    EXPECT_NEAR(d["negative_vs_cross"]["p_value"].get<double>(), w["p_neg"].get<double>(), 1e-9);
    EXPECT_EQ(d["negative_vs_cross"]["alternative"], "greater");
  }
  ASSERT_EQ(g["pca"]["prompts"], want["pca"]["prompts"]);
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(g["pca"]["explained_variance_ratio"][c].get<double>(),
                want["pca"]["explained_variance_ratio"][c].get<double>(), 1e-12);
  }
  // The first rows' coordinates, signs included (sklearn's svd_flip).
  std::ifstream csv(out + "/tables/prompt_pca.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "text,dimension,word,template,pc1,pc2,pc3");
  for (std::size_t i = 0; i < 5 && std::getline(csv, line); ++i) {
    SCOPED_TRACE(line);
    std::vector<double> pcs;
    std::size_t at = line.size();
    for (int c = 0; c < 3; ++c) {
      const std::size_t comma = line.rfind(',', at - 1);
      pcs.insert(pcs.begin(), std::stod(line.substr(comma + 1, at - comma - 1)));
      at = comma;
    }
    for (std::size_t c = 0; c < 3; ++c) {
      EXPECT_NEAR(pcs[c], want["pca"]["scores_first_rows"][i][c].get<double>(), 1e-9);
    }
  }
}

TEST(PromptGeometry, ComponentsBeyondThePromptsAreClampedAndZeroIsRefused) {
  const std::string path = write_temp_file("zero.yaml", spec("{components: 0}"));
  const auto r = run_cli("audit --check " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("analyses.prompt_geometry.components"), std::string::npos) << r.err;
  const std::string many = write_temp_file("many.yaml", spec("{components: 100000}"));
  const std::string out = (temp_dir() / "many").string();
  const auto m = run_cli("--quiet audit " + many + " --out '" + out + "'");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const PlainJson g =
      PlainJson::parse(read_file(out + "/results.json"))["analyses"]["prompt_geometry"];
  EXPECT_EQ(g["pca"]["components"], 64);  // the example's embedding width
}

}  // namespace in_prompt_geometry_test
}  // namespace
}  // namespace vlbias
