// The social-perception audit's valence-correlation analysis (analyses.valence_correlation;
// paper 001 App. C.1, Table S.4) on the bundled example study, against numpy/scipy
// (tools/make_valence_correlation_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "audit_run.h"
#include "cli_util.h"
#include "test_util.h"

namespace vlbias {
namespace {
namespace in_valence_correlation_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using cli_util::write_temp_file;
using PlainJson = nlohmann::json;

const PlainJson& expected() {
  return testing_util::fixture_json("audits/valence_correlation/expected.json");
}

std::string spec(const std::string& valence) {
  return cli_util::social_perception_example_spec(
      "{groups: [race, gender], ordinal: {age: 1.1, smiling: 1.1}, categorical: [lighting]}",
      "{scweat: false, ranking: false, absdiff: false, markedness: false, trends: false, "
      "ellipses: false, valence_correlation: " +
          valence + "}");
}

PlainJson run_valence(const std::string& valence, const std::string& name) {
  return cli_util::run_audit_analysis(spec(valence), name, "valence_correlation");
}

// The cosines are float (one GEMM), the reference's float64: level means agree to 1e-7, and r
// over 5 or 3 level means inherits that error relative to the means' spread (seen: 2e-6).
TEST(ValenceCorrelation, PearsonROfTheTwoValencesOverEachFactorsLevelsMatchesScipy) {
  const PlainJson v = run_valence("{factors: [age, smiling]}", "named");
  ASSERT_FALSE(v.is_null());
  ASSERT_EQ(v["factors"].size(), 2u);
  for (std::size_t f = 0; f < 2; ++f) {
    const PlainJson& got = v["factors"][f];
    const PlainJson& want = expected()["factors"][f];
    SCOPED_TRACE(want["factor"].get<std::string>());
    EXPECT_EQ(got["factor"], want["factor"]);
    ASSERT_EQ(got["levels"].size(), want["levels"].size());
    EXPECT_NEAR(got["average_r"].get<double>(), want["average_r"].get<double>(), 1e-4);
    ASSERT_EQ(got["pairs"].size(), want["pairs"].size());
    for (const PlainJson& p : got["pairs"]) {
      const std::string dim = p["dimension"];
      SCOPED_TRACE(dim);
      const PlainJson& w = want["pairs"][dim];
      EXPECT_NEAR(p["pearson"]["statistic"].get<double>(), w["r"].get<double>(), 1e-5);
      EXPECT_NEAR(p["pearson"]["p_value"].get<double>(), w["p"].get<double>(), 1e-5);
      if (w["levels"].get<int>() > 3) {
        EXPECT_NEAR(p["pearson"]["ci"]["lower"].get<double>(), w["lower"].get<double>(), 1e-4);
        EXPECT_NEAR(p["pearson"]["ci"]["upper"].get<double>(), w["upper"].get<double>(), 1e-4);
      } else {  // n - 3 <= 0: no Fisher interval, and a note says why
        EXPECT_TRUE(p["pearson"]["ci"]["lower"].is_null());
        EXPECT_TRUE(p["pearson"]["ci"].contains("note"));
      }
    }
  }
  const auto means =
      read_file((temp_dir() / "named" / "tables" / "valence_level_means.csv").string());
  EXPECT_NE(means.find("mean_delta_cos"), std::string::npos);
}

TEST(ValenceCorrelation, WithinGivesOneBlockPerLevelOverThatLevelsImages) {
  const PlainJson v = run_valence("{factors: [age, lighting], within: lighting}", "within");
  ASSERT_FALSE(v.is_null());
  EXPECT_EQ(v["within"], "lighting");
  ASSERT_EQ(v["factors"].size(), 2u);  // age in hard, age in soft; lighting itself skipped
  // The table names the cell's column apart from its own `factor` column (CausalFace's
  // within: factor would collide).
  const std::string table =
      read_file((temp_dir() / "within" / "tables" / "valence_correlations.csv").string());
  EXPECT_EQ(table.rfind("within_lighting,factor,", 0), 0u) << table.substr(0, 80);
  for (const PlainJson& block : v["factors"]) {
    const std::string light = block["within"]["lighting"];
    SCOPED_TRACE(light);
    EXPECT_EQ(block["factor"], "age");
    const PlainJson& want = expected()["age_within_lighting"][light];
    for (const PlainJson& p : block["pairs"]) {
      const std::string dim = p["dimension"];
      SCOPED_TRACE(dim);
      EXPECT_NEAR(p["pearson"]["statistic"].get<double>(), want["pairs"][dim]["r"].get<double>(),
                  1e-5);
    }
  }
}

TEST(ValenceCorrelation, WithoutFactorsItTakesTheOrdinalThenTheCategoricalOnes) {
  const PlainJson v = run_valence("true", "defaults");
  ASSERT_FALSE(v.is_null());
  ASSERT_EQ(v["factors"].size(), 3u);
  EXPECT_EQ(v["factors"][0]["factor"], "age");
  EXPECT_EQ(v["factors"][1]["factor"], "smiling");
  EXPECT_EQ(v["factors"][2]["factor"], "lighting");
  EXPECT_EQ(v["factors"][2]["levels"].size(), 2u);  // two levels: r = +-1 with p = 1
  EXPECT_DOUBLE_EQ(std::abs(v["factors"][2]["pairs"][0]["pearson"]["statistic"].get<double>()),
                   1.0);
}

TEST(ValenceCorrelation, AnUnknownFactorOrATraitPairsAuditIsRefused) {
  const std::string path = write_temp_file("bad.yaml", spec("{factors: [pose]}"));
  const auto r =
      run_cli("--quiet audit " + path + " --out '" + (temp_dir() / "bad").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pose"), std::string::npos) << r.err;
  std::string trait = spec("true");
  trait.replace(trait.find("social-perception"), 17, "trait-pairs");
  const auto t = run_cli("audit --check " + write_temp_file("trait.yaml", trait));
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("analysis 'valence_correlation' is not part of a trait-pairs audit"),
            std::string::npos)
      << t.err;
}

}  // namespace in_valence_correlation_test
}  // namespace
}  // namespace vlbias
