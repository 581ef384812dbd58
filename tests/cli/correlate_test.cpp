// `vlbias correlate` end to end: values against scipy 1.10 (tools/make_correlation_fixtures.py
// writes tests/fixtures/cli/correlate_table.csv and correlate_expected.json), the bootstrap
// intervals' determinism, the CSV output, degenerate cells and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_correlate_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;
using vlbias::cli_util::write_temp_file;

const std::string kTable = "--table tests/fixtures/cli/correlate_table.csv";

const json& expected() {
  return vlbias::testing_util::fixture_json("cli/correlate_expected.json")["correlate"];
}

void expect_rel(const json& actual, const json& want, double tol, const std::string& what) {
  ASSERT_TRUE(actual.is_number()) << what << ": " << actual;
  const double w = want.get<double>();
  EXPECT_NEAR(actual.get<double>(), w, tol * std::max(1e-300, std::fabs(w))) << what;
}

json run_json(const std::string& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

TEST(CliCorrelate, EveryMethodGroupAndPairMatchesScipyWithAdjustedPValues) {
  const json out = run_json("correlate " + kTable +
                            " --x a,b --y c,d --by group --method all --ci 0.9 --bootstrap 200");
  ASSERT_TRUE(out.contains("correlations"));
  const json& cells = out["correlations"];
  std::size_t i = 0;
  for (const char* method : {"pearson", "spearman", "kendall"}) {
    for (const json& want : expected()[method]) {
      SCOPED_TRACE(std::string(method) + " " + want.dump());
      ASSERT_LT(i, cells.size());
      const json& c = cells[i++];
      EXPECT_EQ(c["method"], method);
      EXPECT_EQ(c["x"], want["x"]);
      EXPECT_EQ(c["y"], want["y"]);
      if (want["group"].is_null()) {
        EXPECT_TRUE(c["group"].is_null());
      } else {
        EXPECT_EQ(c["group"]["group"], want["group"]);
      }
      EXPECT_EQ(c["n"], want["n"]);
      EXPECT_EQ(c["dropped"]["missing"].get<int>() + c["dropped"]["non_numeric"].get<int>(),
                want["dropped"].get<int>());
      EXPECT_NEAR(c["statistic"].get<double>(), want["statistic"].get<double>(), 1e-12);
      expect_rel(c["p_value"], want["p_value"], 1e-9, "p");
      expect_rel(c["p_holm"], want["p_holm"], 1e-9, "holm");
      expect_rel(c["p_bh"], want["p_bh"], 1e-9, "bh");
      if (want.contains("ci90")) {
        EXPECT_EQ(c["interval"]["method"], "fisher_z");
        EXPECT_NEAR(c["interval"]["lower"].get<double>(), want["ci90"][0].get<double>(), 1e-12);
        EXPECT_NEAR(c["interval"]["upper"].get<double>(), want["ci90"][1].get<double>(), 1e-12);
      } else {
        EXPECT_EQ(c["interval"]["method"], "percentile_bootstrap");
        EXPECT_LE(c["interval"]["lower"].get<double>(), c["statistic"].get<double>() + 0.3);
        EXPECT_EQ(c["interval"]["resamples"], 200);
      }
    }
  }
  EXPECT_EQ(i, cells.size());
  EXPECT_EQ(out["provenance"]["command"], "correlate");
}

TEST(CliCorrelate, MissingAndNonNumericCellsAreDroppedPerPairAndCounted) {
  const json out = run_json("correlate " + kTable + " --x a --y c,d");
  // a is missing on line 5 (row 3); c holds "n/a" in row 5; d is missing in row 7, "?" in 8.
  EXPECT_EQ(out["correlations"][0]["dropped"], (json{{"missing", 1}, {"non_numeric", 1}}));
  EXPECT_EQ(out["correlations"][1]["dropped"], (json{{"missing", 2}, {"non_numeric", 1}}));
  EXPECT_EQ(out["correlations"][0]["n"], 46);
}

TEST(CliCorrelate, BootstrapIntervalsDependOnlyOnTheSeed) {
  const std::string args =
      "correlate " + kTable + " --x a,b --y c --method spearman,kendall --bootstrap 300";
  const json one = run_json("--threads 1 " + args + " --seed 11");
  const json two = run_json("--threads 3 " + args + " --seed 11");
  const json other = run_json("--threads 3 " + args + " --seed 12");
  ASSERT_EQ(one["correlations"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(one["correlations"][i]["interval"], two["correlations"][i]["interval"]);
    EXPECT_NE(one["correlations"][i]["interval"]["lower"],
              other["correlations"][i]["interval"]["lower"]);
  }
}

TEST(CliCorrelate, OneSidedAlternativeGivesOneSidedPAndInterval) {
  const json two = run_json("correlate " + kTable + " --x a --y c");
  const json greater = run_json("correlate " + kTable + " --x a --y c --alternative greater");
  const json& t = two["correlations"][0];
  const json& g = greater["correlations"][0];
  ASSERT_GT(t["statistic"].get<double>(), 0.0);
  EXPECT_NEAR(g["p_value"].get<double>(), t["p_value"].get<double>() / 2.0, 1e-15);
  EXPECT_EQ(g["interval"]["upper"], 1.0);
  EXPECT_GT(g["interval"]["lower"].get<double>(), t["interval"]["lower"].get<double>());
  EXPECT_EQ(greater["alternative"], "greater");
}

TEST(CliCorrelate, CsvHoldsOneRowPerCell) {
  const std::string csv = (temp_dir() / "cells.csv").string();
  const json out =
      run_json("correlate " + kTable + " --x a,b --y c --by group --csv '" + csv + "'");
  const std::string text = read_file(csv);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "group,x,y,method,n,dropped,statistic,p_value,p_holm,p_bh,ci_lower,ci_upper,note");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 6);
  EXPECT_EQ(out["correlations"].size(), 6u);
}

TEST(CliCorrelate, DegenerateCellsSayWhyInsteadOfASilentNull) {
  const std::string table = write_temp_file(
      "small.csv", "g,x,y,k\nA,1,2,5\nA,2,3,5\nB,1,1,5\nB,2,3,5\nB,3,2,5\nB,4,4,5\n");
  const json out =
      run_json("correlate --table " + table + " --x x,k --y y --by g --method pearson,kendall");
  for (const json& c : out["correlations"]) {
    SCOPED_TRACE(c.dump());
    if (!c["group"].is_null() && c["group"]["g"] == "A") {
      EXPECT_TRUE(c["statistic"].is_null());
      EXPECT_NE(c.value("note", "").find("fewer than 3 complete pairs (n = 2)"), std::string::npos);
    } else if (c["x"] == "k") {
      EXPECT_TRUE(c["statistic"].is_null());
      EXPECT_NE(c.value("note", "").find("constant"), std::string::npos);
    } else {
      EXPECT_TRUE(c["statistic"].is_number());
    }
    if (c["statistic"].is_null()) {
      EXPECT_TRUE(c["p_value"].is_null());
    }
  }
}

TEST(CliCorrelate, BadInputIsRefusedWithAClearMessage) {
  const std::string empty = write_temp_file("empty.csv", "x,y\n");
  const std::string text = write_temp_file("text.csv", "x,y\nred,1\nblue,2\ngreen,3\n");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"correlate " + kTable + " --x nope --y c", "nope"},
      {"correlate " + kTable + " --x a --y group", "column 'group' has no numeric cell"},
      {"correlate --table " + text + " --x x --y y", "column 'x' has no numeric cell"},
      {"correlate " + kTable + " --x a --y a", "no pair of two different columns"},
      {"correlate " + kTable + " --x a --y c --method tau", "unknown correlation method 'tau'"},
      {"correlate " + kTable + " --x a --y c --alternative bigger", "unknown alternative"},
      {"correlate " + kTable + " --x a --y c --ci 1.5", "--ci"},
      {"correlate " + kTable + " --x a --y c --alternative less --ci 0.4", "above 0.5"},
      {"correlate " + kTable + " --x a --y c --bootstrap 100000000000", "not in range"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
  // An empty table is no error: every cell says n = 0.
  const json out = run_json("correlate --table " + empty + " --x x --y y");
  EXPECT_EQ(out["correlations"][0]["n"], 0);
  EXPECT_NE(out["correlations"][0]["note"].get<std::string>().find("n = 0"), std::string::npos);
}

}  // namespace in_correlate_test
}  // namespace
