// End-to-end tests of `vlbias metric scweat` against the numpy references of
// tools/make_scweat_fixtures.py: JSON values, exit codes and messages.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_scweat_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const std::string kDir = "tests/fixtures/metrics/scweat_";

std::string inputs(const std::string& name) {
  return "--targets " + kDir + name + "_targets.npy --a " + kDir + name + "_a.npy --b " + kDir +
         name + "_b.npy";
}

const json& expected(const std::string& name) {
  return vlbias::testing_util::fixture_json("metrics/scweat.json")[name];
}

void expect_close(double actual, double want, const std::string& what) {
  EXPECT_NEAR(actual, want, 1e-6 * std::fabs(want) + 1e-7) << what;
}

TEST(CliScweat, PermutationExactMatchesNumpy) {
  const CliResult r = run_cli("metric scweat " + inputs("small") + " --permutations 1000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const json& want = expected("small");
  expect_close(out["effect_size"].get<double>(), want["mean_effect_size"].get<double>(), "es");
  expect_close(out["mean_difference"].get<double>(), want["mean_difference"].get<double>(), "s");
  ASSERT_EQ(out["per_target"].size(), 3u);
  for (std::size_t t = 0; t < 3; ++t) {
    expect_close(out["per_target"][t]["difference"].get<double>(),
                 want["difference"][t].get<double>(), "difference");
    expect_close(out["per_target"][t]["effect_size"].get<double>(),
                 want["effect_size"][t].get<double>(), "effect size");
  }
  EXPECT_DOUBLE_EQ(out["p_value"].get<double>(), want["permutation_p"].get<double>());
  EXPECT_EQ(out["p_test"], "permutation");
  EXPECT_EQ(out["permutations"], 126);
  EXPECT_EQ(out["method"], "exact");
  const json& prov = out["provenance"];
  EXPECT_EQ(prov["command"], "metric scweat");
  ASSERT_EQ(prov["inputs"].size(), 3u);
  EXPECT_EQ(prov["inputs"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(prov["parameters"]["p_test"], "permutation");
  EXPECT_EQ(prov["parameters"]["permutations"], 1000);
}

TEST(CliScweat, SignFlipExactMatchesNumpyAndWritesOut) {
  const fs::path out_file = temp_dir() / "scweat.json";
  const CliResult r =
      run_cli("metric scweat " + inputs("small") +
              " --p-test sign-flip --permutations 100 --out '" + out_file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const json out = json::parse(read_file(out_file));
  EXPECT_DOUBLE_EQ(out["p_value"].get<double>(), expected("small")["sign_flip_p"].get<double>());
  EXPECT_EQ(out["p_test"], "sign-flip");
  EXPECT_EQ(out["permutations"], 8);
  EXPECT_EQ(out["method"], "exact");
}

TEST(CliScweat, MonteCarloReportsSeedAndIsReproducible) {
  const std::string args = "metric scweat " + inputs("large") + " --permutations 5000 --seed 11";
  const CliResult r1 = run_cli(args);
  const CliResult r2 = run_cli(args);
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  const json o1 = json::parse(r1.out), o2 = json::parse(r2.out);
  EXPECT_EQ(o1["method"], "monte_carlo");
  EXPECT_EQ(o1["permutations"], 5000);
  EXPECT_EQ(o1["seed"], 11);
  EXPECT_EQ(o1["provenance"]["seed"], 11);
  EXPECT_EQ(o1["p_value"], o2["p_value"]);
  const double ref = expected("large")["permutation_p_mc"].get<double>();
  EXPECT_NEAR(o1["p_value"].get<double>(), ref, 4.0 * std::sqrt(ref * (1 - ref) / 5000) + 2e-4);
}

TEST(CliScweat, DimensionMismatchIsExit2NamingBothFiles) {
  const CliResult r = run_cli("metric scweat --targets " + kDir + "small_targets.npy --a " + kDir +
                              "large_a.npy --b " + kDir + "small_b.npy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("small_targets.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("large_a.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(3, 8)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(30, 16)"), std::string::npos) << r.err;
}

TEST(CliScweat, EmptySetIsExit2) {
  const CliResult r = run_cli("metric scweat --targets " + kDir + "small_targets.npy --a " + kDir +
                              "empty.npy --b " + kDir + "small_b.npy");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(0, 8)"), std::string::npos) << r.err;
}

TEST(CliScweat, MissingFileIsExit2) {
  const CliResult r = run_cli("metric scweat --targets " + kDir +
                              "small_targets.npy --a tests/fixtures/metrics/no_such.npy --b " +
                              kDir + "small_b.npy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no_such.npy"), std::string::npos) << r.err;
}

TEST(CliScweat, BadPTestIsExit2) {
  const CliResult r = run_cli("metric scweat " + inputs("small") + " --p-test bootstrap");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--p-test"), std::string::npos) << r.err;
}

}  // namespace in_metric_scweat_test
}  // namespace
