// End-to-end tests of the `vlbias` executable: exit codes, messages and JSON
// values against scipy references (tools/make_compare_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_cli_test {

namespace fs = std::filesystem;
using nlohmann::json;

using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const json& expected() {
  return vlbias::testing_util::fixture_json("cli/compare_expected.json");
}

const std::string kTable = "--table tests/fixtures/cli/confidence.csv";

void expect_rel(double actual, double want, double tol, const std::string& what) {
  EXPECT_NEAR(actual, want, tol * std::max(1e-300, std::fabs(want))) << what;
}

TEST(CliCompare, AnovaByRaceWithinGenderMatchesScipy) {
  const CliResult r =
      run_cli("compare " + kTable + " --value confidence --by race --within gender --test anova");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const json want = expected()["anova_race_within_gender"];
  ASSERT_EQ(out["comparisons"].size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& c = out["comparisons"][i];
    const json& w = want[i];
    EXPECT_EQ(c["within"]["gender"], w["within"]);
    EXPECT_EQ(c["test"], "anova");
    expect_rel(c["statistic"], w["statistic"], 1e-9, "F");
    expect_rel(c["p_value"], w["p_value"], 1e-6, "p");
    expect_rel(c["effect_size"], w["eta_squared"], 1e-9, "eta^2");
    EXPECT_EQ(c["df"][0].get<double>(), w["df"][0].get<double>());
    EXPECT_EQ(c["df"][1].get<double>(), w["df"][1].get<double>());
    expect_rel(c["p_holm"], w["p_holm"], 1e-6, "holm");
    expect_rel(c["p_bh"], w["p_bh"], 1e-6, "bh");
    ASSERT_EQ(c["groups"].size(), w["groups"].size());
    for (std::size_t g = 0; g < w["groups"].size(); ++g) {
      EXPECT_EQ(c["groups"][g]["key"]["race"], w["groups"][g]);
      EXPECT_EQ(c["groups"][g]["n"], w["n"][g]);
      expect_rel(c["groups"][g]["mean"], w["means"][g], 1e-12, "mean");
      expect_rel(c["groups"][g]["sd"], w["sds"][g], 1e-10, "sd");
    }
  }
  // Indian men do not exist: reported as an absent group of the Male cell.
  const json& male = out["comparisons"][1];
  ASSERT_TRUE(male.contains("absent_groups"));
  EXPECT_EQ(male["absent_groups"][0]["race"], "Indian");
  EXPECT_EQ(out["rows"]["missing_value"], 1);
  EXPECT_EQ(out["rows"]["missing_key"], 1);
  EXPECT_EQ(out["provenance"]["command"], "compare");
  EXPECT_EQ(out["provenance"]["inputs"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST(CliCompare, WelchByGenderWithinRaceNotesTheOneGenderCell) {
  const CliResult r =
      run_cli("compare " + kTable + " --value confidence --by gender --within race --test welch");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const json want = expected()["welch_gender_within_race"];
  ASSERT_EQ(out["comparisons"].size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& c = out["comparisons"][i];
    EXPECT_EQ(c["within"]["race"], want[i]["within"]);
    if (want[i]["p_value"].is_null()) {
      EXPECT_TRUE(c["statistic"].is_null());
      EXPECT_TRUE(c["p_value"].is_null());
      EXPECT_TRUE(c["p_holm"].is_null());
      EXPECT_NE(c["note"].get<std::string>().find("fewer than two groups"), std::string::npos);
      continue;
    }
    expect_rel(c["statistic"], want[i]["statistic"], 1e-9, "t");
    expect_rel(c["p_value"], want[i]["p_value"], 1e-6, "p");
    expect_rel(c["p_holm"], want[i]["p_holm"], 1e-6, "holm");
    expect_rel(c["p_bh"], want[i]["p_bh"], 1e-6, "bh");
  }
}

TEST(CliCompare, PairwiseMannWhitneyAdjustedTogether) {
  const CliResult r =
      run_cli("compare " + kTable + " --value confidence --by race --test mannwhitney --pairwise");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const json want = expected()["mannwhitney_pairwise_race"];
  ASSERT_EQ(out["comparisons"].size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& c = out["comparisons"][i];
    EXPECT_EQ(c["groups"][0]["key"]["race"], want[i]["groups"][0]);
    EXPECT_EQ(c["groups"][1]["key"]["race"], want[i]["groups"][1]);
    expect_rel(c["statistic"], want[i]["statistic"], 1e-9, "U");
    expect_rel(c["p_value"], want[i]["p_value"], 1e-6, "p");
    expect_rel(c["p_holm"], want[i]["p_holm"], 1e-6, "holm");
    expect_rel(c["p_bh"], want[i]["p_bh"], 1e-6, "bh");
  }
}

TEST(CliDescribe, MatchesNumpyAndIsDeterministicAcrossThreads) {
  const std::string args =
      "describe " + kTable + " --value confidence --by race --bootstrap 500 --seed 7";
  const CliResult a = run_cli("--threads 1 " + args);
  const CliResult b = run_cli("--threads 3 " + args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  json ja = json::parse(a.out), jb = json::parse(b.out);
  ja["provenance"].erase("created_utc");
  jb["provenance"].erase("created_utc");
  EXPECT_EQ(ja.dump(), jb.dump());
  const json want = expected()["describe_race"];
  ASSERT_EQ(ja["groups"].size(), want.size());
  const char* pct[] = {"p5", "p25", "p50", "p75", "p95"};
  for (std::size_t g = 0; g < want.size(); ++g) {
    const json& d = ja["groups"][g];
    EXPECT_EQ(d["key"]["race"], want[g]["race"]);
    EXPECT_EQ(d["n"], want[g]["n"]);
    expect_rel(d["mean"], want[g]["mean"], 1e-12, "mean");
    expect_rel(d["sd"], want[g]["sd"], 1e-10, "sd");
    for (int q = 0; q < 5; ++q)
      expect_rel(d["percentiles"][pct[q]], want[g]["percentiles"][q], 1e-12, pct[q]);
    const double lo = d["mean_ci"]["lower"], hi = d["mean_ci"]["upper"], m = d["mean"];
    EXPECT_LT(lo, m);
    EXPECT_GT(hi, m);
    EXPECT_EQ(d["mean_ci"]["resamples"], 500);
  }
  // A different seed moves the interval.
  const CliResult c =
      run_cli("describe " + kTable + " --value confidence --by race --bootstrap 500 --seed 8");
  ASSERT_EQ(c.exit_code, 0);
  EXPECT_NE(json::parse(c.out)["groups"][0]["mean_ci"]["lower"],
            ja["groups"][0]["mean_ci"]["lower"]);
}

TEST(CliDescribe, ReportsEmptyIntersectionalCells) {
  const CliResult r = run_cli("describe " + kTable + " --value confidence --by race,gender");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["empty_cells"].size(), 1u);
  EXPECT_EQ(out["empty_cells"][0]["race"], "Indian");
  EXPECT_EQ(out["empty_cells"][0]["gender"], "Male");
  EXPECT_EQ(out["groups"].size(), 9u);
}

TEST(CliOutput, OutFileIsWrittenWhole) {
  const fs::path dir = temp_dir();
  const fs::path out = dir / "r.json";
  const CliResult r =
      run_cli("compare " + kTable + " --value confidence --by gender --test welch --out '" +
              out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(fs::exists(out));
  EXPECT_TRUE(vlbias::testing_util::leftover_temporaries(dir).empty());
  EXPECT_EQ(json::parse(read_file(out))["comparisons"].size(), 1u);
}

struct ErrorCase {
  std::string args;
  int code;
  std::string message;
};

TEST(CliErrors, ClearMessageAndExitCode) {
  const ErrorCase cases[] = {
      {"compare " + kTable + " --value nope --by race", 2, "nope"},
      {"compare " + kTable + " --value confidence --by nope", 2, "nope"},
      {"compare " + kTable + " --value race --by gender", 2, "not numeric"},
      {"compare --table /nonexistent.csv --value x --by y", 2, "/nonexistent.csv"},
      {"compare --table tests/fixtures/cli/compare_expected.json --value x --by y", 2, ".json"},
      {"compare " + kTable + " --value confidence --by race --test welch", 2, "--pairwise"},
      {"compare " + kTable + " --value confidence --by race --test ttest", 2,
       "unknown test 'ttest'"},
      {"compare " + kTable + " --value confidence --by race --within race", 2,
       "both in --by and in --within"},
      {"compare " + kTable + " --value confidence --by race,", 2, "empty item"},
      {"describe " + kTable + " --value confidence --ci 1.5 --bootstrap 10", 2, "--ci"},
      {"describe " + kTable + " --value confidence --percentiles 5,abc", 2, "abc"},
      {"compare " + kTable + " --value confidence", 2, "--by"},
      // issue 19: these ran out of memory ("out of memory", exit 1) after reading the inputs.
      {"describe " + kTable + " --value confidence --by race --bootstrap 100000000000", 2,
       "--bootstrap: Value 100000000000 not in range 0 to 1000000"},
      {"metric maxgap --table tests/fixtures/lvlm/generations.jsonl --set-key filename,rank,seed "
       "--group race,gender --score toxicity --bootstrap 100000000000",
       2, "not in range 0 to 1000000"},
      {"frobnicate", 2, "frobnicate"},
      {"help frobnicate", 2, "no command named 'frobnicate'"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find("vlbias: error:"), std::string::npos) << c.args << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
}

TEST(CliHelp, GitStyleHelp) {
  const CliResult top = run_cli("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("compare"), std::string::npos);
  EXPECT_NE(top.out.find("describe"), std::string::npos);
  const CliResult sub = run_cli("help compare");
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("--within"), std::string::npos);
  EXPECT_NE(sub.out.find("--pairwise"), std::string::npos);
  const CliResult sub2 = run_cli("describe --help");
  EXPECT_EQ(sub2.exit_code, 0);
  EXPECT_NE(sub2.out.find("--bootstrap"), std::string::npos);
  const CliResult version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("0."), std::string::npos);
}

}  // namespace in_cli_test
}  // namespace
