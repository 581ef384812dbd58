// `vlbias power` (issue 24 item 7) on hand-made pilots whose answers scipy and an independent
// numpy Monte Carlo give (tests/fixtures/stats/power.json, tools/make_power_fixtures.py), its
// errors, and an audit's analyses.power: the report says, for each null result, the smallest
// gap the study could have found.
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
namespace in_power_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using cli_util::write_temp_file;
using PlainJson = nlohmann::json;

// A trait-pairs results.json holding one Welch confidence test of two groups with these
// sizes and sds, and `extra` Mann-Whitney tests (not simulated) that enlarge its Holm family.
std::string welch_pilot(double n0, double sd0, double n1, double sd1, int extra = 0) {
  PlainJson tests = PlainJson::array();
  for (int i = 0; i <= extra; ++i) {
    std::string level = "r";  // built in steps: GCC 12 -Wrestrict misfires on "r" + s
    level += std::to_string(i);
    tests.push_back(
        PlainJson{{"pair", "smart/dumb"},
                  {"factor", "gender"},
                  {"within", "race"},
                  {"within_level", level},
                  {"result", {{"test", i == 0 ? "welch" : "mannwhitney"}, {"p_value", 0.5}}},
                  {"p_holm", 1.0},
                  {"groups",
                   {{{"level", "female"}, {"n", n0}, {"mean", 0.5}, {"sd", sd0}},
                    {{"level", "male"}, {"n", n1}, {"mean", 0.5}, {"sd", sd1}}}}});
  }
  return PlainJson{{"kind", "trait-pairs"}, {"analyses", {{"confidence", {{"tests", tests}}}}}}
      .dump();
}

// Monte Carlo replicates: all of them in the Release suite, a fifth in the sanitised one (the
// same code; the tolerances are the estimates' own standard errors, which widen with fewer).
std::string replicates(int n) {
  return std::to_string(vlbias::release_build() ? n : n / 5);
}

PlainJson run_power(const std::string& pilot, const std::string& options) {
  const auto r = run_cli("power --pilot " + pilot + " " + options);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? PlainJson::parse(r.out) : PlainJson();
}

TEST(PowerCommand, PowerAtTheEffectMatchesScipyAndAnIndependentMonteCarlo) {
  const PlainJson& ref =
      testing_util::fixture_json("stats/power.json")["cases"][0];  // welch, m = 1
  ASSERT_EQ(ref["test"], "welch");
  const std::string pilot = write_temp_file("results.json", welch_pilot(20, 1.0, 30, 2.0));
  const PlainJson out =
      run_power(pilot, "--effect 0.8 --replicates " + replicates(20000) + " --seed 3");
  ASSERT_EQ(out["tests"].size(), 1u);
  const PlainJson& t = out["tests"][0];
  EXPECT_EQ(t["test"], "welch");
  EXPECT_EQ(t["family"], 1);
  const PlainJson& at = t["at_effect"];
  const double se = at["se"], ref_se = ref["monte_carlo_se"];
  EXPECT_NEAR(at["power"].get<double>(), ref["monte_carlo"].get<double>(),
              4 * std::sqrt(se * se + ref_se * ref_se));
  EXPECT_NEAR(at["analytic_power"].get<double>(), ref["analytic"].get<double>(), 1e-7);
  // The n per group and the MDE reach the target power, and theory agrees near the MDE.
  EXPECT_GE(t["sample_size"]["power"].get<double>(), 0.8);
  EXPECT_GT(t["sample_size"]["n_per_group"].get<int>(), 30);
  EXPECT_GE(t["mde"]["power"].get<double>(), 0.8);
  EXPECT_GT(t["mde"]["effect"].get<double>(), 0.8);
  EXPECT_NEAR(t["mde"]["analytic_power"].get<double>(), 0.8, 0.02);
  EXPECT_EQ(out["provenance"]["command"], "power");
}

TEST(PowerCommand, TheHolmFamilyOfThePilotsTableRaisesTheMinimumDetectableEffect) {
  const PlainJson one = run_power(write_temp_file("one.json", welch_pilot(20, 1.0, 30, 2.0)),
                                  "--effect 1 --replicates 2000");
  const PlainJson many = run_power(write_temp_file("many.json", welch_pilot(20, 1.0, 30, 2.0, 19)),
                                   "--effect 1 --replicates 2000");
  ASSERT_EQ(many["tests"].size(), 1u);
  EXPECT_EQ(many["tests"][0]["family"], 20);
  EXPECT_GT(many["tests"][0]["mde"]["effect"].get<double>(),
            1.2 * one["tests"][0]["mde"]["effect"].get<double>());
  EXPECT_GT(many["tests"][0]["sample_size"]["n_per_group"].get<int>(),
            one["tests"][0]["sample_size"]["n_per_group"].get<int>());
}

TEST(PowerCommand, DegeneratePilotsAndOptionsAreClearErrors) {
  const std::string ok = write_temp_file("ok.json", welch_pilot(20, 1.0, 30, 2.0));
  const auto expect_error = [](const std::string& args, const std::string& words) {
    SCOPED_TRACE(args);
    const auto r = run_cli("power " + args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  };
  expect_error("--pilot " + ok + " --effect 0", "--effect must be a gap greater than 0");
  expect_error("--pilot " + ok + " --effect -1", "--effect must be a gap greater than 0");
  expect_error("--pilot " + ok + " --effect 1 --alpha 1.5", "--alpha must lie in (0, 1)");
  expect_error("--pilot " + ok + " --effect 1 --power 1", "--power must lie in (0, 1)");
  expect_error("--pilot " + write_temp_file("zero.json", welch_pilot(20, 0, 30, 0)) + " --effect 1",
               "zero variance");
  PlainJson one_group = PlainJson::parse(welch_pilot(20, 1, 30, 1));
  one_group["analyses"]["confidence"]["tests"][0]["result"]["test"] = "anova";
  one_group["analyses"]["confidence"]["tests"][0]["groups"].erase(1);
  expect_error("--pilot " + write_temp_file("one.json", one_group.dump()) + " --effect 1",
               "pilot with one group");
  PlainJson no_sd = PlainJson::parse(welch_pilot(20, 1, 30, 1));
  no_sd["analyses"]["confidence"]["tests"][0]["groups"][1].erase("sd");
  expect_error("--pilot " + write_temp_file("no_sd.json", no_sd.dump()) + " --effect 1",
               "rerun the audit");
  expect_error("--pilot " +
                   write_temp_file("geo.json", R"({"kind": "geo-diversity", "analyses": {}})") +
                   " --effect 1",
               "a geo-diversity audit with no test that power supports");
  expect_error("--pilot " + ok + " --effect 1 --tests null --analysis association",
               "no null test of analysis 'association'");
}

TEST(PowerCommand, AbsurdPilotSizesAndEffectsAreRefusedNamingTheFieldAndItsRange) {
  // A pilot n of 10^12 or 2^63 used to size the simulated groups (out of memory, or
  // "vector::_M_default_append"); an effect of 1e308 overflowed the tests into NaN.
  const auto expect_error = [](const std::string& args, const std::string& words) {
    SCOPED_TRACE(args);
    const auto r = run_cli("power " + args, "", 120);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  };
  for (const double n : {1e12, 9223372036854775808.0, 2.5}) {
    const std::string pilot = write_temp_file("n.json", welch_pilot(20, 1.0, n, 2.0));
    expect_error("--pilot " + pilot + " --effect 1", "/analyses/confidence/tests/0/groups/1/n is ");
    expect_error("--pilot " + pilot + " --effect 1", "expected a whole number from 0 to 10000000");
  }
  const std::string ok = write_temp_file("ok.json", welch_pilot(20, 1.0, 30, 2.0));
  expect_error("--pilot " + ok + " --effect 1e308",
               "--effect must be a gap greater than 0 and at "
               "most 1000000000000 in the test's units, got");
  const std::string wide = write_temp_file("sd.json", welch_pilot(20, 1e300, 30, 2.0));
  expect_error("--pilot " + wide + " --effect 1", "/groups/0/sd is 1e+300");
}

TEST(PowerCommand, AnAuditsPowerKeyGivesEveryNullResultTheGapItCouldHaveFound) {
  const std::string spec = cli_util::social_perception_example_spec(
      "{groups: [race, gender]}",
      "{scweat: false, ranking: false, absdiff: false, markedness: false, trends: false, "
      "ellipses: false, power: {power: 0.8, replicates: 50}}");
  const std::string out = (temp_dir() / "run").string();
  const auto r =
      run_cli("--quiet audit " + write_temp_file("spec.yaml", spec) + " --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report_checks::check_report(out);  // the statements show results.json's numbers
  const PlainJson results = PlainJson::parse(read_file(out + "/results.json"));
  const PlainJson& contrasts = results["analyses"]["association"]["contrasts"]["results"];
  std::size_t nulls = 0;
  for (const PlainJson& c : contrasts) {
    SCOPED_TRACE(c.dump());
    const bool null = c["p_holm"].get<double>() > 0.05;
    ASSERT_EQ(c.contains("power"), null);
    if (!null) continue;
    ++nulls;
    EXPECT_EQ(c["power"]["test"], "contrast");
    EXPECT_EQ(c["power"]["family"], contrasts.size());
    EXPECT_GT(c["power"]["mde"]["effect"].get<double>(), 0);
    EXPECT_GE(c["power"]["mde"]["power"].get<double>(), 0.8);
  }
  EXPECT_GT(nulls, 0u);
  EXPECT_EQ(results["analyses"]["power"]["null_tests"], nulls);
  const std::string html = read_file(out + "/report.html");
  EXPECT_NE(html.find("What the null results could have found"), std::string::npos);
  EXPECT_NE(html.find("No significant gap in Delta cos on"), std::string::npos);
  EXPECT_NE(html.find("with these sample sizes the study would detect a gap of"),
            std::string::npos);
}

TEST(PowerCommand, AnAuditWithoutThePowerKeyWritesNoPowerStatements) {
  const std::string spec = cli_util::social_perception_example_spec(
      "{groups: [race, gender]}",
      "{scweat: false, ranking: false, absdiff: false, markedness: false, trends: false, "
      "ellipses: false}");
  const std::string out = (temp_dir() / "run").string();
  const auto r =
      run_cli("--quiet audit " + write_temp_file("spec.yaml", spec) + " --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const PlainJson results = PlainJson::parse(read_file(out + "/results.json"));
  EXPECT_FALSE(results["analyses"].contains("power"));
  EXPECT_EQ(read_file(out + "/report.html").find("No significant gap"), std::string::npos);
}

}  // namespace in_power_test
}  // namespace
}  // namespace vlbias
