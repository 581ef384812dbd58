// End-to-end tests of `vlbias metric skew` and `vlbias metric ndkl` against the
// numpy reference of tools/make_ranking_fixtures.py (paper 001).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_ranking_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const std::string kArgs =
    " --table tests/fixtures/metrics/ranking_table.csv --score score --attribute gender";

const json& reference() {
  return vlbias::testing_util::fixture_json("metrics/ranking.json")["cli"];
}

void expect_value(const json& actual, const json& want, const std::string& what) {
  if (want.is_string()) {
    EXPECT_EQ(actual, want) << what;
    return;
  }
  ASSERT_TRUE(actual.is_number()) << what << ": " << actual;
  const double w = want.get<double>();
  EXPECT_NEAR(actual.get<double>(), w, std::max(1e-14, 1e-12 * std::fabs(w))) << what;
}

TEST(CliMetricRanking, SkewMatchesNumpy) {
  std::size_t neg_inf = 0;
  for (const json& want : reference()["skew"]) {
    const std::string opts = " --k " + std::to_string(want["k"].get<int>()) + " --desired " +
                             want["desired"].get<std::string>() + " --absent " +
                             want["absent"].get<std::string>();
    const CliResult r = run_cli("metric skew" + kArgs + opts);
    ASSERT_EQ(r.exit_code, 0) << opts << ": " << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["k"], want["k"]);
    EXPECT_EQ(out["n"], 10);
    EXPECT_EQ(out["tie_rule"], "stable: input order");
    EXPECT_EQ(out["counts"], want["counts"]) << opts;
    ASSERT_EQ(out["skew"].size(), 3u);
    for (const auto& [cls, v] : want["skew"].items()) {
      expect_value(out["skew"][cls], v, opts + " skew " + cls);
      neg_inf += out["skew"][cls] == "-inf";
      expect_value(out["desired"][cls], want["desired_p"][cls], opts + " desired " + cls);
    }
    expect_value(out["max_skew"], want["max_skew"], opts + " max_skew");
    EXPECT_EQ(out["provenance"]["parameters"]["absent"], want["absent"]);
    EXPECT_EQ(out["provenance"]["parameters"]["desired"], want["desired"]);
    EXPECT_EQ(out["provenance"]["inputs"][0]["sha256"].get<std::string>().size(), 64u);
  }
  EXPECT_GT(neg_inf, 0u);
}

TEST(CliMetricRanking, TiedScoresKeepRowOrder) {
  // Rows 2 and 3 (man, woman) tie at 0.88: the top 2 are woman, man.
  const CliResult r = run_cli("metric skew" + kArgs + " --k 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["counts"], (json{{"man", 1}, {"nonbinary", 0}, {"woman", 1}}));
}

TEST(CliMetricRanking, NdklMatchesNumpyAndWritesOut) {
  for (const auto& [kind, want] : reference()["ndkl"].items()) {
    const std::filesystem::path out_file = temp_dir() / ("ndkl_" + kind + ".json");
    const CliResult r = run_cli("metric ndkl" + kArgs + " --desired " + kind + " --out '" +
                                out_file.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    const json out = json::parse(read_file(out_file));
    expect_value(out["ndkl"], want, "ndkl " + kind);
    EXPECT_EQ(out["n"], 10);
    EXPECT_EQ(out["class_n"], (json{{"man", 4}, {"nonbinary", 2}, {"woman", 4}}));
    EXPECT_EQ(out["tie_rule"], "stable: input order");
    EXPECT_EQ(out["provenance"]["command"], "metric ndkl");
  }
}

void expect_usage_error(const std::string& args, const std::string& fragment) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << args << ": " << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

TEST(CliMetricRanking, ErrorsExitWithCode2AndAClearMessage) {
  const std::string table = " --table tests/fixtures/metrics/ranking_table.csv";
  expect_usage_error("metric skew" + table + " --score scor --attribute gender --k 3",
                     "has no column 'scor'");
  expect_usage_error("metric ndkl" + table + " --score score --attribute sex",
                     "has no column 'sex'");
  expect_usage_error("metric skew" + kArgs + " --k 11", "between 1 and 10");
  expect_usage_error("metric skew" + kArgs + " --k 0", "--k must be at least 1");
  expect_usage_error("metric skew" + table + " --score id --attribute gender --k 2",
                     "is not numeric: line 2 holds \"i1\"");
  expect_usage_error("metric skew" + kArgs + " --k 2 --absent nan", "'-inf' or 'zero'");
  expect_usage_error("metric ndkl" + kArgs + " --desired flat", "'uniform' or 'base-rate'");
}

TEST(CliMetricRanking, MissingClassOrSingleClassIsRefused) {
  const std::filesystem::path dir = temp_dir();
  {
    std::ofstream f(dir / "missing.csv");
    f << "score,gender\n0.9,man\n0.8,\n0.7,woman\n";
  }
  expect_usage_error("metric ndkl --table '" + (dir / "missing.csv").string() +
                         "' --score score --attribute gender",
                     "line 3 has no value in attribute column 'gender'");
  {
    std::ofstream f(dir / "one.csv");
    f << "score,gender\n0.9,man\n0.8,man\n";
  }
  expect_usage_error("metric skew --table '" + (dir / "one.csv").string() +
                         "' --score score --attribute gender --k 1",
                     "has 1 class(es)");
  {
    std::ofstream f(dir / "empty.csv");
    f << "score,gender\n";
  }
  expect_usage_error(
      "metric ndkl --table '" + (dir / "empty.csv").string() + "' --score score --attribute gender",
      "no rows to rank");
}

}  // namespace in_metric_ranking_test
}  // namespace
