// Power by simulation (include/vlbias/stats/power.h) against scipy's noncentral t, F and
// chi-square and an independent numpy Monte Carlo with R = 200,000 (tools/make_power_fixtures.py),
// the hand-worked limits (no effect: power = alpha; a huge effect: power 1) and the degenerate
// designs.
#include "vlbias/stats/power.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias::stats {
namespace {
namespace in_power_test {

using json = nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("stats/power.json");
}

PowerTest parse_test(const std::string& name) {
  if (name == "anova") return PowerTest::Anova;
  if (name == "welch") return PowerTest::Welch;
  if (name == "student") return PowerTest::Student;
  if (name == "contrast") return PowerTest::Contrast;
  if (name == "friedman") return PowerTest::Friedman;
  return PowerTest::ChiSquare;
}

PowerDesign to_design(const json& c) {
  PowerDesign d;
  d.test = parse_test(c["test"]);
  for (std::size_t g = 0; g < c["n"].size(); ++g) {
    d.groups.push_back(
        {c["n"][g].get<std::size_t>(), c.contains("sd") ? c["sd"][g].get<double>() : 0.0});
  }
  d.target = c["target"];
  d.family = c["family"];
  d.base_rate = c["base_rate"];
  d.alpha = c["alpha"];
  d.sets_per_cluster = c.value("sets_per_cluster", std::size_t{0});
  d.set_sd = c.value("set_sd", 0.0);
  d.cluster_sd = c.value("cluster_sd", 0.0);
  return d;
}

// Friedman over 12 sets of 4 groups (power.h's set-blocked design).
PowerDesign friedman_design() {
  PowerDesign d;
  d.test = PowerTest::Friedman;
  d.groups.assign(4, {12, 1.0});
  d.set_sd = 2.0;
  return d;
}

PowerDesign welch_design() {
  PowerDesign d;
  d.test = PowerTest::Welch;
  d.groups = {{20, 1.0}, {30, 2.0}};
  return d;
}

TEST(Power, SimulatedPowerMatchesAnIndependentMonteCarloWithinItsError) {
  for (const json& c : fixture()["cases"]) {
    SCOPED_TRACE(c.dump());
    const PowerEstimate e = simulate_power(to_design(c), c["effect"], 20000, 7);
    EXPECT_EQ(e.replicates, 20000u);
    EXPECT_NEAR(e.se, std::sqrt(e.power * (1 - e.power) / 20000), 1e-15);
    const double ref_se = c["monte_carlo_se"];
    EXPECT_NEAR(e.power, c["monte_carlo"].get<double>(),
                4 * std::sqrt(e.se * e.se + ref_se * ref_se));
  }
}

TEST(Power, AnalyticPowerMatchesScipyNoncentralDistributions) {
  for (const json& c : fixture()["cases"]) {
    SCOPED_TRACE(c.dump());
    EXPECT_NEAR(analytic_power(to_design(c), c["effect"]), c["analytic"].get<double>(), 1e-7);
  }
}

TEST(Power, SimulationAgreesWithTheExactNoncentralTForEqualVariances) {
  PowerDesign d;
  d.test = PowerTest::Student;
  d.groups = {{15, 1.0}, {15, 1.0}};
  const PowerEstimate e = simulate_power(d, 1.0, 20000, 3);
  EXPECT_NEAR(e.power, analytic_power(d, 1.0), 4 * e.se);
}

TEST(Power, NoEffectRejectsAtAboutAlphaAndAHugeEffectAlways) {
  PowerDesign d = welch_design();
  const PowerEstimate null = simulate_power(d, 0.0, 20000, 11);
  EXPECT_NEAR(null.power, 0.05, 4 * std::sqrt(0.05 * 0.95 / 20000));
  EXPECT_EQ(simulate_power(d, 100.0, 2000, 11).power, 1.0);
  d.test = PowerTest::ChiSquare;
  d.base_rate = 0.3;
  EXPECT_NEAR(simulate_power(d, 0.0, 20000, 11).power, 0.05, 0.01);
  EXPECT_EQ(simulate_power(d, 0.7, 2000, 11).power, 1.0);
  EXPECT_DOUBLE_EQ(analytic_power(d, 0.0), 0.05);
}

TEST(Power, FriedmanIgnoresTheSetEffectAndRejectsAtAboutAlphaWithoutAnEffect) {
  PowerDesign d = friedman_design();
  const PowerEstimate null = simulate_power(d, 0.0, 20000, 4);
  // Friedman's chi-square is conservative with 12 blocks: at most alpha, not far below.
  EXPECT_LE(null.power, 0.05 + 4 * null.se);
  EXPECT_GE(null.power, 0.03);
  // Ranks within a set do not see its effect: the same rejections with or without it.
  const std::size_t with = simulate_power(d, 0.8, 2000, 4).rejections;
  d.set_sd = 0;
  EXPECT_EQ(simulate_power(d, 0.8, 2000, 4).rejections, with);
}

TEST(Power, ClusteredFriedmanLosesPowerToTheGroupByClusterVariance) {
  PowerDesign d = friedman_design();
  d.sets_per_cluster = 3;  // 12 clusters of 3 sets: the block sd falls to 1 / sqrt(3)
  const double averaged = simulate_power(d, 0.6, 4000, 8).power;
  d.cluster_sd = 0.8;
  const double interacting = simulate_power(d, 0.6, 4000, 8).power;
  EXPECT_GT(averaged, simulate_power(friedman_design(), 0.6, 4000, 8).power + 0.1);
  EXPECT_LT(interacting, averaged - 0.1);
  // Only the interaction varies: sd 0 with cluster_sd > 0 is still a design.
  d.groups.assign(4, {12, 0.0});
  EXPECT_GT(simulate_power(d, 2.0, 500, 8).power, 0.5);
}

TEST(Power, HolmOverALargerFamilyLowersPower) {
  PowerDesign d = welch_design();
  const double alone = simulate_power(d, 1.0, 4000, 5).power;
  d.family = 20;
  const double holm = simulate_power(d, 1.0, 4000, 5).power;
  d.correction = Correction::BenjaminiHochberg;
  const double bh = simulate_power(d, 1.0, 4000, 5).power;
  EXPECT_LT(holm, alone - 0.1);
  EXPECT_GE(bh, holm);
}

TEST(Power, ResultsDoNotDependOnTheThreadCount) {
  const PowerDesign d = welch_design();
  set_thread_count(1);
  const PowerEstimate one = simulate_power(d, 0.7, 3000, 9);
  set_thread_count(2);
  const PowerEstimate two = simulate_power(d, 0.7, 3000, 9);
  set_thread_count(0);
  EXPECT_EQ(one.rejections, two.rejections);
}

TEST(Power, SampleSizeFindsTheNoncentralTAnswerWithinOneUnit) {
  const json& s = fixture()["student_sample_size"];
  const SampleSizeResult r = sample_size(to_design(s["design"]), s["effect"], s["power"], 20000, 1);
  const auto want = s["n_per_group"].get<std::size_t>();
  EXPECT_GE(r.n_per_group + 1, want);
  EXPECT_LE(r.n_per_group, want + 1);
  EXPECT_GE(r.at.power, 0.8);
  EXPECT_TRUE(r.note.empty());
}

TEST(Power, MinimumDetectableEffectMatchesTheNoncentralTWithinMonteCarloError) {
  const json& s = fixture()["student_mde"];
  const PowerDesign d = to_design(s["design"]);
  const MdeResult r = minimum_detectable_effect(d, s["power"], 20000, 2);
  // Power near 0.8 rises about 1.2 per unit effect here, so 4 se of 0.0028 is ~0.01 in effect.
  EXPECT_NEAR(r.effect, s["effect"].get<double>(), 0.02);
  EXPECT_GE(r.at.power, 0.8);
  EXPECT_NEAR(analytic_power(d, r.effect), 0.8, 0.02);
}

TEST(Power, AnUnreachableSampleSizeOrEffectIsReportedNotInvented) {
  PowerDesign d;
  d.test = PowerTest::ChiSquare;
  d.groups = {{3, 0}, {3, 0}};
  d.base_rate = 0.5;
  d.family = 1000;  // alpha / 1000 with 3 + 3 draws: no rate gap reaches 80%
  const MdeResult r = minimum_detectable_effect(d, 0.8, 200, 1);
  EXPECT_TRUE(std::isnan(r.effect));
  EXPECT_NE(r.note.find("no effect up to"), std::string::npos) << r.note;
}

TEST(Power, DegenerateDesignsAreUsageErrors) {
  const auto expect_error = [](PowerDesign d, const std::string& words) {
    SCOPED_TRACE(words);
    try {
      simulate_power(d, 0.5, 100, 1);
      ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  PowerDesign d = welch_design();
  d.groups = {{20, 1.0}};
  expect_error(d, "compares 2 groups");
  d.test = PowerTest::Anova;
  expect_error(d, "pilot with one group");
  d = welch_design();
  d.groups = {{20, 0.0}, {30, 0.0}};
  expect_error(d, "zero variance");
  d = welch_design();
  d.alpha = 1.5;
  expect_error(d, "alpha must lie in (0, 1)");
  d = welch_design();
  d.groups[0].n = 1;
  expect_error(d, "needs at least 2 per group");
  d = welch_design();
  d.test = PowerTest::Contrast;
  expect_error(d, "smaller than the 2 p-values");
  d.test = PowerTest::ChiSquare;
  d.base_rate = 0;
  expect_error(d, "base rate must lie in (0, 1)");
  d = friedman_design();
  d.groups.pop_back();
  d.groups.pop_back();
  expect_error(d, "friedman test needs at least 3 groups");
  d = friedman_design();
  d.groups[2].n = 11;
  expect_error(d, "the same blocks and residual sd");
  d = friedman_design();
  d.cluster_sd = -1;
  expect_error(d, "set and cluster sds must be finite");
  d = friedman_design();
  d.groups.assign(4, {12, 0.0});
  expect_error(d, "zero variance");
  d = welch_design();
  d.groups[1].n = kMaxPowerSampleSize + 1;  // each replicate would draw every unit
  expect_error(d, "at most 10000000 (each simulated study draws every unit)");
  d = welch_design();
  d.groups[0].sd = 1e300;  // its square overflows
  expect_error(d, "has sd 1e+300; expected a finite number from 0 to");
  EXPECT_THROW(simulate_power(welch_design(), 1e308, 100, 1), UsageError);
  EXPECT_THROW(simulate_power(welch_design(), -0.1, 100, 1), UsageError);
  EXPECT_THROW(sample_size(welch_design(), 0.0, 0.8, 100, 1), UsageError);
  EXPECT_THROW(minimum_detectable_effect(welch_design(), 1.0, 100, 1), UsageError);
  EXPECT_THROW(simulate_power(welch_design(), 0.5, 0, 1), UsageError);
}

}  // namespace in_power_test
}  // namespace
}  // namespace vlbias::stats
