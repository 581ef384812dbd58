// End-to-end tests of `vlbias metric agreement` (issue 21): the JSON against the
// numpy/scipy/sklearn reference of tools/make_agreement_fixtures.py, seeds, and every usage
// and input error a user can meet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_agreement_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;
using vlbias::cli_util::write_temp_file;

const json& fixture() {
  return vlbias::testing_util::fixture_json("metrics/agreement.json");
}

void expect_close(const json& got, const json& want, double rel, const std::string& what) {
  ASSERT_TRUE(got.is_number()) << what << ": " << got;
  const double w = want.get<double>();
  EXPECT_NEAR(got.get<double>(), w, rel * std::max(std::fabs(w), 1e-300)) << what;
}

void expect_ci(const json& got, const json& want, double abs, const std::string& what) {
  EXPECT_NEAR(got["lower"].get<double>(), want[0].get<double>(), abs) << what;
  EXPECT_NEAR(got["upper"].get<double>(), want[1].get<double>(), abs) << what;
}

void expect_kappa(const json& got, const json& want, const std::string& what) {
  expect_close(got["kappa"], want["kappa"], 1e-12, what + " kappa");
  expect_close(got["se"], want["se"], 1e-12, what + " se");
  expect_close(got["p_value"], want["p_value"], 1e-9, what + " p");
  expect_ci(got["ci"], want["ci"], 1e-13, what + " ci");
  EXPECT_EQ(got["table"]["both_negative"], want["cells"][0]) << what;
  EXPECT_EQ(got["table"]["a_negative_b_positive"], want["cells"][1]) << what;
  EXPECT_EQ(got["table"]["a_positive_b_negative"], want["cells"][2]) << what;
  EXPECT_EQ(got["table"]["both_positive"], want["cells"][3]) << what;
}

json run_json(const std::string& args) {
  const CliResult r = run_cli("metric agreement " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

// The first line of stderr for a run expected to fail with exit code 2.
std::string usage_error(const std::string& args) {
  const CliResult r = run_cli("metric agreement " + args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
  return r.err;
}

TEST(CliMetricAgreement, MatchesTheReferenceOverallAndPerGroup) {
  const json& c = fixture()["cases"][0];
  const std::string table = write_temp_file("scored.csv", fixture()["csv"].get<std::string>());
  const std::filesystem::path out_file = temp_dir() / "agreement.json";
  const CliResult r =
      run_cli("metric agreement --table " + table +
              " --scores clf,persp --group dialect --seed 11 --out '" + out_file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(read_file(out_file));
  const json& w = c["summary"];
  EXPECT_EQ(out["scores"], json({{"a", "clf"}, {"b", "persp"}}));
  EXPECT_EQ(out["rows"], c["rows"]);
  EXPECT_EQ(out["n"], w["n"]);
  EXPECT_EQ(out["n_excluded"], c["excluded"]);
  expect_close(out["pearson"]["r"], w["pearson"]["r"], 1e-13, "r");
  expect_close(out["pearson"]["p_value"], w["pearson"]["p_value"], 1e-9, "r p");
  expect_ci(out["pearson"]["ci"], w["pearson"]["ci"], 1e-13, "r ci");
  EXPECT_EQ(out["pearson"]["ci"]["method"], "fisher_z");
  expect_close(out["spearman"]["rho"], w["spearman"]["rho"], 1e-13, "rho");
  expect_ci(out["spearman"]["ci"], w["spearman"]["ci"], 1e-13, "rho ci");
  expect_kappa(out["kappa"], w["kappa"], "overall");
  expect_ci(out["kappa"]["bootstrap_ci"], w["kappa"]["bootstrap_ci"], 1e-13, "bootstrap");
  EXPECT_EQ(out["kappa"]["bootstrap_ci"]["resamples"], 2000);
  EXPECT_EQ(out["kappa"]["bootstrap_ci"]["seed"], 11);
  expect_close(out["percent_agreement"], w["percent_agreement"], 1e-15, "po");
  expect_close(out["positive_rate"]["a"], w["positive_rate_a"], 1e-15, "rate a");
  expect_close(out["positive_rate"]["b"], w["positive_rate_b"], 1e-15, "rate b");
  expect_close(out["mean_difference"]["estimate"], w["difference"]["estimate"], 1e-13, "diff");
  expect_ci(out["mean_difference"]["ci"], w["difference"]["ci"], 1e-13, "diff ci");
  EXPECT_EQ(out["rows_without_group"], c["rows_without_group"]);
  ASSERT_EQ(out["groups"].size(), c["groups"].size());
  for (std::size_t g = 0; g < c["groups"].size(); ++g) {
    const json& got = out["groups"][g];
    const json& want = c["groups"][g];
    SCOPED_TRACE(want["key"].get<std::string>());
    EXPECT_EQ(got["key"], json({{"dialect", want["key"]}}));
    EXPECT_EQ(got["n"], want["n"]);
    expect_close(got["mean"]["a"], want["difference"]["mean_a"], 1e-13, "mean a");
    expect_close(got["mean"]["b"], want["difference"]["mean_b"], 1e-13, "mean b");
    expect_ci(got["mean_difference"]["ci"], want["difference"]["ci"], 1e-13, "diff ci");
    EXPECT_EQ(got["disagreements"], want["disagreements"]);
    expect_ci(got["disagreement_ci"], want["disagreement_ci"], 1e-14, "wilson");
    EXPECT_EQ(got["disagreement_ci"]["method"], "wilson");
    expect_kappa(got["kappa"], want["kappa"], "group");
    EXPECT_FALSE(got["kappa"].contains("bootstrap_ci"));
  }
  EXPECT_EQ(out["group_test"]["test"], "kruskal");
  expect_close(out["group_test"]["statistic"], c["group_test"]["statistic"], 1e-12, "H");
  expect_close(out["group_test"]["p_value"], c["group_test"]["p_value"], 1e-9, "H p");
  ASSERT_EQ(out["notes"].size(), 2u);
  EXPECT_EQ(out["notes"][0], "6 of 300 rows excluded: 'clf' or 'persp' is missing");
  const json& prov = out["provenance"];
  EXPECT_EQ(prov["command"], "metric agreement");
  EXPECT_EQ(prov["seed"], 11);
  EXPECT_EQ(prov["parameters"]["scores"], json({"clf", "persp"}));
  EXPECT_EQ(prov["inputs"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST(CliMetricAgreement, ASecondThresholdServesAScorerOnAnotherScale) {
  const json& c = fixture()["cases"][1];
  const std::string table = write_temp_file("scored.csv", fixture()["csv"].get<std::string>());
  const json out = run_json("--table " + table +
                            " --scores clf,judge --threshold 0.4 --threshold-b 5.5 --seed 11");
  EXPECT_EQ(out["thresholds"], json({{"a", 0.4}, {"b", 5.5}}));
  EXPECT_EQ(out["n_excluded"], c["excluded"]);
  expect_kappa(out["kappa"], c["summary"]["kappa"], "judge");
  expect_ci(out["kappa"]["bootstrap_ci"], c["summary"]["kappa"]["bootstrap_ci"], 1e-13, "boot");
  expect_close(out["mean_difference"]["estimate"], c["summary"]["difference"]["estimate"], 1e-13,
               "diff");
  EXPECT_FALSE(out.contains("groups"));
}

TEST(CliMetricAgreement, TheBootstrapFollowsItsSeedAndCanBeTurnedOff) {
  const std::string table = write_temp_file("scored.csv", fixture()["csv"].get<std::string>());
  const std::string base = "--table " + table + " --scores clf,persp --bootstrap 300";
  const json first = run_json(base + " --seed 4");
  const json again = run_json(base + " --seed 4");
  const json other = run_json(base + " --seed 5");
  EXPECT_EQ(first["kappa"]["bootstrap_ci"], again["kappa"]["bootstrap_ci"]);
  EXPECT_NE(first["kappa"]["bootstrap_ci"]["lower"], other["kappa"]["bootstrap_ci"]["lower"]);
  const json none = run_json("--table " + table + " --scores clf,persp --bootstrap 0");
  EXPECT_TRUE(none["kappa"]["bootstrap_ci"]["lower"].is_null());
  EXPECT_EQ(none["kappa"]["bootstrap_ci"]["note"], "no bootstrap requested");
  EXPECT_EQ(none["kappa"]["kappa"], first["kappa"]["kappa"]);
}

TEST(CliMetricAgreement, SingleRowGroupsAndASingleGroupAreReportedWithNotes) {
  const std::string table = write_temp_file(
      "t.csv", "a,b,g\n0.1,0.2,x\n0.7,0.6,x\n0.4,0.5,x\n0.9,0.8,x\n0.2,0.6,y\n0.6,,y\n");
  const json out = run_json("--table " + table + " --scores a,b --group g --bootstrap 50");
  ASSERT_EQ(out["groups"].size(), 2u);
  const json& y = out["groups"][1];
  EXPECT_EQ(y["n"], 1);
  EXPECT_TRUE(y["disagreement_ci"]["lower"].is_null());
  EXPECT_TRUE(y["mean_difference"]["ci"]["upper"].is_null());
  EXPECT_TRUE(y["kappa"]["ci"]["lower"].is_null());
  EXPECT_EQ(y["note"], "1 row: no interval");
  EXPECT_EQ(out["n_excluded"], 1);

  const std::string one = write_temp_file("one.csv", "a,b,g\n0.1,0.2,x\n0.7,0.6,x\n0.4,0.5,x\n");
  const json single = run_json("--table " + one + " --scores a,b --group g --bootstrap 50");
  EXPECT_EQ(single["groups"].size(), 1u);
  EXPECT_TRUE(single["group_test"]["statistic"].is_null());
  EXPECT_EQ(single["group_test"]["note"],
            "1 group(s): comparing b - a across groups needs at least 2");
}

TEST(CliMetricAgreement, AThresholdBeyondEveryScoreIsNotedAndLeavesKappaUndefined) {
  const std::string table = write_temp_file("t.csv", "a,b\n0.1,0.2\n0.7,0.6\n0.4,0.5\n0.9,0.8\n");
  const json out = run_json("--table " + table + " --scores a,b --threshold 5");
  EXPECT_TRUE(out["kappa"]["kappa"].is_null());
  EXPECT_NE(out["kappa"]["note"].get<std::string>().find("undefined"), std::string::npos);
  ASSERT_EQ(out["notes"].size(), 2u);
  EXPECT_EQ(out["notes"][0],
            "every score of 'a' is below its threshold 5 (all negative): kappa compares one "
            "label with the other scorer's");
  EXPECT_EQ(out["percent_agreement"], 1.0);
}

TEST(CliMetricAgreement, RefusesBadScoresOptionsAndColumnsWithOneSentence) {
  const std::string table =
      write_temp_file("t.csv", "tox,persp,g\n0.1,0.2,x\n0.7,0.6,y\n0.4,0.5,x\n");
  const std::string t = "--table " + table;
  EXPECT_NE(usage_error(t + " --scores tox,presp")
                .find("--scores names column 'presp' (did you mean 'persp'?), which"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,qqqqqqqqqq").find("(its columns: tox, persp, g)"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,persp --group dialect").find("--group names column"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox").find("--scores expects two column names A,B"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,persp,g").find("got 3 in 'tox,persp,g'"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,tox").find("--scores names column 'tox' twice"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,persp --threshold inf").find("--threshold must be"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,persp --threshold-b nan").find("--threshold-b must"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,persp --level 1.5").find("between 0 and 1"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores tox,persp --bootstrap 2000000").find("1000000"),
            std::string::npos);
  // The grouping column is text: as a score it is refused, naming the row.
  EXPECT_NE(usage_error(t + " --scores tox,g").find("column 'g' in"), std::string::npos);
}

TEST(CliMetricAgreement, RefusesNonNumericNaNEmptyAndFullyExcludedTables) {
  const std::string text = write_temp_file("text.csv", "a,b\n0.1,0.2\n0.5,high\n0.3,0.4\n");
  EXPECT_NE(usage_error("--table " + text + " --scores a,b").find("line 3 holds \"high\""),
            std::string::npos);
  const std::string nan = write_temp_file("nan.csv", "a,b\n0.1,0.2\n0.5,NaN\n0.3,0.4\n");
  EXPECT_NE(usage_error("--table " + nan + " --scores a,b")
                .find("column 'b' in '" + (temp_dir() / "nan.csv").string() +
                      "' is not numeric: line 3 holds \"NaN\""),
            std::string::npos);
  const std::string jsonl_nan = write_temp_file("nan.jsonl", "{\"a\": 0.1, \"b\": NaN}\n");
  EXPECT_NE(usage_error("--table " + jsonl_nan + " --scores a,b").find("line 1 is not valid JSON"),
            std::string::npos);
  const std::string empty = write_temp_file("empty.csv", "a,b\n");
  EXPECT_NE(usage_error("--table " + empty + " --scores a,b").find("has 0 row(s) with both"),
            std::string::npos);
  const std::string excluded =
      write_temp_file("excluded.jsonl", "{\"a\": 0.1}\n{\"b\": 0.2}\n{\"a\": null, \"b\": 0.3}\n");
  EXPECT_NE(usage_error("--table " + excluded + " --scores a,b")
                .find("0 row(s) with both 'a' and 'b' present (3 of 3 excluded"),
            std::string::npos);
}

}  // namespace in_metric_agreement_test
}  // namespace
