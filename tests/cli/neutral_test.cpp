// The social-perception audit's neutral-prompt analysis (analyses.neutral; paper 001 App. G)
// on the bundled example study, against numpy/scipy (tools/make_neutral_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "audit_run.h"
#include "cli_util.h"
#include "test_util.h"

namespace vlbias {
namespace {
namespace in_neutral_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using cli_util::write_temp_file;
using PlainJson = nlohmann::json;

const PlainJson& expected() {
  return testing_util::fixture_json("audits/neutral/expected.json");
}

std::string spec(const std::string& neutral) {
  return cli_util::social_perception_example_spec(
      "{groups: [race, gender], categorical: [seed]}",
      "{scweat: false, ranking: false, absdiff: false, markedness: false, neutral: " + neutral +
          "}");
}

PlainJson run_neutral(const std::string& neutral, const std::string& name) {
  return cli_util::run_audit_analysis(spec(neutral), name, "neutral");
}

// The cosines are float (one GEMM), the reference's float64: means agree to 1e-7; a t of a
// difference of ~3e-4 between means of ~0.75 inherits that error relative to the difference.
void expect_pairs(const PlainJson& got, const PlainJson& want, bool paired) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const PlainJson& g = got[i];
    const PlainJson& w = want[i];
    SCOPED_TRACE(g["a"].dump() + " vs " + g["b"].dump());
    EXPECT_EQ(g["a"]["race"], w["a"][0]);
    EXPECT_EQ(g["b"]["gender"], w["b"][1]);
    EXPECT_EQ(g["n"], w["n"]);
    EXPECT_NEAR(g["difference"].get<double>(), w["difference"].get<double>(), 1e-7);
    EXPECT_NEAR(g["test"]["statistic"].get<double>(), w["t"].get<double>(),
                2e-3 * std::abs(w["t"].get<double>()) + 1e-4);
    EXPECT_NEAR(g["test"]["p_value"].get<double>(), w["p"].get<double>(), 1e-4);
    EXPECT_EQ(g["test"]["test"], paired ? "paired_t" : "welch");
    if (paired) {
      EXPECT_NEAR(g["pearson"]["statistic"].get<double>(), w["r"].get<double>(), 1e-5);
      EXPECT_NEAR(g["pearson"]["p_value"].get<double>(), w["r_p"].get<double>(), 1e-5);
    }
  }
}

TEST(NeutralPrompt, GroupMeansAnovaAndPairedTestsMatchScipy) {
  const PlainJson n = run_neutral("{pair_key: seed, bootstrap: 200}", "paired");
  ASSERT_FALSE(n.is_null());
  ASSERT_EQ(n["groups"].size(), expected()["groups"].size());
  for (std::size_t i = 0; i < n["groups"].size(); ++i) {
    const PlainJson& g = n["groups"][i];
    const PlainJson& w = expected()["groups"][i];
    SCOPED_TRACE(g["key"].dump());
    EXPECT_EQ(g["key"]["race"], w["race"]);
    EXPECT_EQ(g["n"], w["n"]);
    EXPECT_NEAR(g["mean"].get<double>(), w["mean"].get<double>(), 1e-7);
    EXPECT_NEAR(g["sd"].get<double>(), w["sd"].get<double>(), 1e-7);
    EXPECT_LT(g["mean_ci"]["lower"].get<double>(), g["mean"].get<double>());
    EXPECT_GT(g["mean_ci"]["upper"].get<double>(), g["mean"].get<double>());
  }
  EXPECT_NEAR(n["anova"]["statistic"].get<double>(), expected()["anova"]["F"].get<double>(), 1e-4);
  EXPECT_NEAR(n["anova"]["p_value"].get<double>(), expected()["anova"]["p"].get<double>(), 1e-5);
  EXPECT_EQ(n["pair_key"], "seed");
  expect_pairs(n["pairs"], expected()["paired"], true);
  EXPECT_TRUE(std::filesystem::exists(temp_dir() / "paired" / "tables" / "neutral_images.csv"));
}

TEST(NeutralPrompt, WithoutAPairKeyGroupsAreComparedByWelchsT) {
  const PlainJson n = run_neutral("true", "unpaired");
  ASSERT_FALSE(n.is_null());
  EXPECT_FALSE(n.contains("pair_key"));
  expect_pairs(n["pairs"], expected()["unpaired"], false);
}

TEST(NeutralPrompt, AnUnknownPairKeyOrATraitPairsAuditIsRefused) {
  const std::string path = write_temp_file("bad.yaml", spec("{pair_key: identity}"));
  const auto r =
      run_cli("--quiet audit " + path + " --out '" + (temp_dir() / "bad").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("identity"), std::string::npos) << r.err;
  std::string trait = spec("true");
  trait.replace(trait.find("social-perception"), 17, "trait-pairs");
  const std::string tp = write_temp_file("trait.yaml", trait);
  const auto t = run_cli("audit --check " + tp);
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("analysis 'neutral' is not part of a trait-pairs audit"), std::string::npos)
      << t.err;
}

}  // namespace in_neutral_test
}  // namespace
}  // namespace vlbias
