// `vlbias power --pilot` and analyses.power on the LVLM counterfactual and geo-diversity audits
// (issue 24 item 7): the LVLM Friedman group tests as set-blocked designs with the variance
// components the audit records, the geo-diversity filtered-rate chi-square, against numpy and
// scipy (tools/make_power_pilot_fixtures.py -> tests/fixtures/power/pilots.json); the tests
// power cannot simulate are named with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "report_checks.h"
#include "test_util.h"
#include "vlbias/core/build_type.h"

namespace vlbias {
namespace {
namespace in_power_pilots_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using cli_util::write_temp_file;
using PlainJson = nlohmann::json;

const PlainJson& expected() {
  return testing_util::fixture_json("power/pilots.json");
}

// Monte Carlo replicates: all of them in the Release suite, a fifth in the sanitised one (the
// same code; the tolerances are the estimates' own standard errors, which widen with fewer).
std::string replicates(int n) {
  return std::to_string(vlbias::release_build() ? n : n / 5);
}

PlainJson run_power(const std::string& pilot, const std::string& options) {
  const auto r = run_cli("power --pilot '" + pilot + "' " + options);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? PlainJson::parse(r.out) : PlainJson();
}

// The audit of the clustered LVLM fixture (8 image sets x 3 seeds x 3 races x 2 mitigations)
// with its group tests, flat or clustered by image set, and analyses.power; the run folder.
std::string lvlm_run(bool clustered) {
  const std::string spec = write_temp_file(
      "spec.yaml",
      std::string("version: 1\nkind: lvlm-counterfactual\nseed: 3\ngenerations: ") +
          VLBIAS_SOURCE_DIR +
          "/tests/fixtures/lvlm/cluster/generations.jsonl\n"
          "columns: {set_key: [filename, rank, seed], group: race, by: mitigation, "
          "scores: [toxicity]}\n"
          "analyses: {maxgap: false, power: {replicates: 100}, group_tests: {permutations: 200" +
          (clustered ? ", cluster: [filename, rank]" : "") + "}}\n");
  const std::string out = (temp_dir() / (clustered ? "clustered" : "flat")).string();
  const auto r = run_cli("--quiet audit " + spec + " --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

TEST(PowerPilots, LvlmGroupTestsRecordTheVarianceComponentsNumpyFinds) {
  for (const bool clustered : {false, true}) {
    SCOPED_TRACE(clustered ? "clustered" : "flat");
    const std::string out = lvlm_run(clustered);
    const PlainJson res = PlainJson::parse(read_file(out + "/results.json"));
    for (const PlainJson& x : res["analyses"]["group_tests"]["results"]) {
      const std::string level = x["by"]["mitigation"];
      SCOPED_TRACE(level);
      const PlainJson& want = expected()["lvlm"][level][clustered ? "clustered" : "flat"];
      const PlainJson& pv = x["pilot_variance"];
      EXPECT_EQ(x["complete_sets"], want["complete_sets"]);
      EXPECT_NEAR(pv["residual_sd"].get<double>(), want["residual_sd"].get<double>(), 1e-12);
      EXPECT_NEAR(pv["set_sd"].get<double>(), want["set_sd"].get<double>(), 1e-12);
      EXPECT_EQ(pv.contains("cluster_sd"), clustered);
      if (clustered) {
        EXPECT_NEAR(pv["cluster_sd"].get<double>(), want["cluster_sd"].get<double>(), 1e-12);
      }
    }
  }
}

TEST(PowerPilots, LvlmFriedmanPowerMatchesAnIndependentNumpyMonteCarlo) {
  for (const bool clustered : {false, true}) {
    SCOPED_TRACE(clustered ? "clustered" : "flat");
    const PlainJson out =
        run_power(lvlm_run(clustered), "--effect 0.15 --replicates " + replicates(10000) +
                                           " --seed 5 --analysis group_tests");
    ASSERT_EQ(out["tests"].size(), 2u);
    for (const PlainJson& t : out["tests"]) {
      SCOPED_TRACE(t["label"].get<std::string>());
      const std::string level = t["label"].get<std::string>().ends_with("M1") ? "M1" : "none";
      const PlainJson& want = expected()["lvlm"][level][clustered ? "clustered" : "flat"];
      EXPECT_EQ(t["test"], "friedman");
      EXPECT_EQ(t["family"], 2);
      ASSERT_EQ(t["groups"].size(), 3u);
      EXPECT_EQ(t["groups"][1]["n"], clustered ? 8 : 24);
      EXPECT_EQ(t["sets_per_cluster"], clustered ? 3 : 1);
      EXPECT_EQ(t["blocks"], clustered ? "clusters" : "sets");
      const PlainJson& at = t["at_effect"];
      const double se = std::hypot(at["se"].get<double>(), want["monte_carlo_se"].get<double>());
      EXPECT_NEAR(at["power"].get<double>(), want["monte_carlo"].get<double>(), 4 * se);
      EXPECT_NEAR(at["analytic_power"].get<double>(), want["analytic"].get<double>(), 1e-7);
      // The MDE's power reaches the target; the n found gives it too.
      EXPECT_GE(t["mde"]["power"].get<double>(), 0.8);
      EXPECT_GE(t["sample_size"]["power"].get<double>(), 0.8);
    }
    bool named = false;
    for (const PlainJson& u : out["not_supported"]) {
      named = named || u["tests"] == "/analyses/group_tests/results/*/groups/*/p";
    }
    EXPECT_TRUE(named) << out["not_supported"].dump();
  }
}

TEST(PowerPilots, WithoutAnEffectOnlyTheMinimumDetectableEffectIsGiven) {
  const PlainJson out = run_power(lvlm_run(false), "--replicates 200");
  ASSERT_FALSE(out["tests"].empty());
  EXPECT_TRUE(out["effect"].is_null());
  EXPECT_FALSE(out["tests"][0].contains("at_effect"));
  EXPECT_GT(out["tests"][0]["mde"]["effect"].get<double>(), 0);
}

TEST(PowerPilots, TheLvlmReportGivesEachNullFriedmanTestItsMinimumDetectableEffect) {
  const std::string out = lvlm_run(true);
  report_checks::check_report(out);  // the statements show results.json's numbers
  const PlainJson res = PlainJson::parse(read_file(out + "/results.json"));
  std::size_t nulls = 0;
  for (const PlainJson& x : res["analyses"]["group_tests"]["results"]) {
    SCOPED_TRACE(x.dump());
    const bool null = x["friedman"]["p_holm"].get<double>() > 0.05;
    ASSERT_EQ(x.contains("power"), null);
    nulls += null;
    if (null) {
      EXPECT_EQ(x["power"]["test"], "friedman");
    }
  }
  ASSERT_GT(nulls, 0u);
  EXPECT_EQ(res["analyses"]["power"]["null_tests"], nulls);
  const std::string html = read_file(out + "/report.html");
  EXPECT_NE(html.find("No significant gap in toxicity across the 3 groups"), std::string::npos);
  EXPECT_NE(html.find("Tests without a power statement"), std::string::npos);
}

// A geo-diversity run over the example's features whose outcomes refuse 20 of Africa's 200
// requests and 18 of WestAsia's 150 (a null chi-square), with analyses.power.
std::string geo_run() {
  const std::string ex = std::string(VLBIAS_SOURCE_DIR) + "/examples/geo_diversity";
  std::string csv = "region,status\n";
  for (int i = 0; i < 200; ++i) csv += i < 20 ? "Africa,refused\n" : "Africa,ok\n";
  for (int i = 0; i < 150; ++i) csv += i < 18 ? "West Asia,refused\n" : "West Asia,ok\n";
  write_temp_file("outcomes.csv", csv);
  const std::string outcomes = (temp_dir() / "outcomes.csv").string();
  const std::string spec = write_temp_file(
      "geo.yaml", "version: 1\nkind: geo-diversity\nseed: 1\nreal: {table: \"" + ex +
                      "/real.csv\", features: \"" + ex + "/real.npy\"}\ngenerated:\n  - table: \"" +
                      ex + "/generated.csv\"\n    features: \"" + ex +
                      "/generated.npy\"\n    outcomes: \"" + outcomes +
                      "\"\naliases:\n  region: {\"West Asia\": WestAsia}\n"
                      "analyses:\n  region: {k: 3, bootstrap: 50}\n  object_region: false\n"
                      "  consistency: false\n  distribution: false\n  power: {replicates: 100}\n");
  const std::string out = (temp_dir() / "geo").string();
  const auto r = run_cli("--quiet audit " + spec + " --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

TEST(PowerPilots, GeoFilteredRatePowerMatchesScipyAndNumpy) {
  const std::string run = geo_run();
  const PlainJson out =
      run_power(run, "--effect 0.1 --replicates " + replicates(20000) + " --seed 2");
  ASSERT_EQ(out["tests"].size(), 1u);
  const PlainJson& t = out["tests"][0];
  const PlainJson& want = expected()["geo"];
  EXPECT_EQ(t["test"], "chi_square");
  EXPECT_EQ(t["family"], 1);
  EXPECT_EQ(t["target"], 1);  // WestAsia: the fewest requests
  EXPECT_EQ(t["groups"][0]["n"], 200);
  EXPECT_EQ(t["groups"][1]["n"], 150);
  EXPECT_NEAR(t["base_rate"].get<double>(), 38.0 / 350.0, 1e-12);
  const PlainJson& at = t["at_effect"];
  EXPECT_NEAR(at["analytic_power"].get<double>(), want["analytic"].get<double>(), 1e-7);
  const double se = std::hypot(at["se"].get<double>(), want["monte_carlo_se"].get<double>());
  EXPECT_NEAR(at["power"].get<double>(), want["monte_carlo"].get<double>(), 4 * se);
  bool gaps = false;  // the bootstrap region gaps are named, not simulated
  for (const PlainJson& u : out["not_supported"])
    gaps = gaps || u["tests"] == "/analyses/region_gaps";
  EXPECT_TRUE(gaps) << out["not_supported"].dump();
  // The audit's own power key: the null rate test's statement in the report.
  report_checks::check_report(run);
  const PlainJson res = PlainJson::parse(read_file(run + "/results.json"));
  ASSERT_TRUE(res["analyses"]["filtered"]["test"].contains("power"));
  EXPECT_EQ(res["analyses"]["power"]["null_tests"], 1);
  const std::string html = read_file(run + "/report.html");
  EXPECT_NE(html.find("No significant gap in the refused-or-filtered rate across 2 regions"),
            std::string::npos);
}

TEST(PowerPilots, AnLvlmPilotWrittenBeforeThePilotVarianceIsAnErrorSayingToRerun) {
  PlainJson pilot{
      {"kind", "lvlm-counterfactual"},
      {"analyses",
       {{"group_tests",
         {{"results", PlainJson::array({PlainJson{
                          {"measure", "toxicity"},
                          {"complete_sets", 20},
                          {"friedman", {{"p_value", 0.4}, {"p_holm", 0.4}}},
                          {"groups", PlainJson::array({PlainJson::object(), PlainJson::object(),
                                                       PlainJson::object()})}}})}}}}}};
  auto r = run_cli("power --pilot " + write_temp_file("old.json", pilot.dump()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("has no pilot_variance"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rerun the audit"), std::string::npos) << r.err;
  // An entry without a Friedman result (no complete set) is skipped, not read.
  pilot["analyses"]["group_tests"]["results"][0].erase("friedman");
  r = run_cli("power --pilot " + write_temp_file("none.json", pilot.dump()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no test that power supports"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("within-set permutation test"), std::string::npos) << r.err;
}

TEST(PowerPilots, AVisualStereotypesPilotIsAnErrorThatSaysWhyItsTestsAreNotSimulated) {
  const PlainJson pilot{
      {"kind", "visual-stereotypes"},
      {"analyses", {{"pull", {{"per_identity", PlainJson::array({PlainJson::object()})}}}}}};
  const auto r = run_cli("power --pilot " + write_temp_file("visual.json", pilot.dump()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("a visual-stereotypes audit with no test that power supports"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("difference of mean pairwise cosines"), std::string::npos) << r.err;
}

}  // namespace in_power_pilots_test
}  // namespace
}  // namespace vlbias
