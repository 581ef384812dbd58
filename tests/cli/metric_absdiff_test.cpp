// End-to-end tests of `vlbias metric absdiff` (paper 001): the JSON against the
// scipy reference of tools/make_absdiff_fixtures.py, and usage errors.
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
namespace in_metric_absdiff_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;
using vlbias::cli_util::write_temp_file;

const json& fixture() {
  return vlbias::testing_util::fixture_json("metrics/absdiff.json");
}

void expect_close(const json& actual, const json& want, double rel, const std::string& what) {
  if (want.is_null()) {
    EXPECT_TRUE(actual.is_null()) << what << ": " << actual;
    return;
  }
  ASSERT_TRUE(actual.is_number()) << what << ": " << actual;
  const double w = want.get<double>();
  EXPECT_NEAR(actual.get<double>(), w, std::max(1e-300, rel * std::fabs(w))) << what;
}

TEST(CliMetricAbsDiff, MatchesScipyReference) {
  const json& fx = fixture();
  const std::string table = write_temp_file("absdiff.csv", fx["csv"].get<std::string>());
  std::string args = "metric absdiff --table " + table + " --values warmth,competence,agency";
  for (const json& spec : fx["factor_specs"]) args += " --factor " + spec.get<std::string>();
  args += " --pairs " + std::to_string(fx["pairs"].get<int>()) + " --seed 5";
  const std::filesystem::path out_file = temp_dir() / "out.json";
  const CliResult r = run_cli(args + " --out '" + out_file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(read_file(out_file));
  EXPECT_EQ(out["rows_missing"], fx["rows_missing"]);
  EXPECT_EQ(out["sampling"],
            "uniform over valid pairs, with replacement; all pairs once when there are at most "
            "`pairs`");
  ASSERT_TRUE(out["notes"].is_array());
  bool camera_note = false;
  for (const json& n : out["notes"]) {
    camera_note |= n.get<std::string>().find("'camera'") != std::string::npos;
  }
  EXPECT_TRUE(camera_note) << out["notes"];
  ASSERT_EQ(out["cells"].size(), fx["cells"].size());
  for (std::size_t i = 0; i < out["cells"].size(); ++i) {
    const json& c = out["cells"][i];
    const json& w = fx["cells"][i];
    const std::string what =
        w["factor"].get<std::string>() + "/" + w["dimension"].get<std::string>();
    for (const char* key : {"factor", "dimension", "n", "valid_pairs", "enumerated"}) {
      EXPECT_EQ(c[key], w[key]) << what << " " << key;
    }
    for (const char* key : {"mean", "sd", "median", "q25", "q75"}) {
      expect_close(c[key], w[key], 1e-12, what + " " + key);
    }
  }
  ASSERT_EQ(out["comparisons"].size(), fx["comparisons"].size());
  for (std::size_t i = 0; i < out["comparisons"].size(); ++i) {
    const json& c = out["comparisons"][i];
    const json& w = fx["comparisons"][i];
    for (const char* key : {"dimension", "factor_a", "factor_b"}) EXPECT_EQ(c[key], w[key]) << i;
    expect_close(c["statistic"], w["statistic"], 1e-12, "U " + std::to_string(i));
    for (const char* key : {"p_value", "p_holm", "p_bh"}) {
      expect_close(c[key], w[key], 1e-10, std::string(key) + " " + std::to_string(i));
    }
    if (w["p_value"].is_null()) {
      EXPECT_TRUE(c.contains("note")) << i;
    }
  }
  const json& prov = out["provenance"];
  EXPECT_EQ(prov["command"], "metric absdiff");
  EXPECT_EQ(prov["seed"], 5);
  EXPECT_EQ(prov["parameters"]["pairs"], fx["pairs"]);
  EXPECT_EQ(prov["inputs"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST(CliMetricAbsDiff, SamplesWhenThereAreMorePairsThanAsked) {
  const std::string table = write_temp_file(
      "t.csv", "age,light,v\n1,a,0.1\n3,a,0.2\n5,a,0.4\n1,b,0.3\n3,b,0.9\n5,b,0.6\n");
  const CliResult r =
      run_cli("metric absdiff --table " + table + " --values v --factor age:1.1 --factor light" +
              " --pairs 2 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["cells"].size(), 4u);
  EXPECT_EQ(out["cells"][0]["valid_pairs"], 6);  // 3 per lighting
  EXPECT_EQ(out["cells"][0]["enumerated"], false);
  EXPECT_EQ(out["cells"][0]["n"], 2);
  EXPECT_EQ(out["cells"][2]["valid_pairs"], 3);  // light: one per age
  EXPECT_EQ(out["rows_missing"], 0);
  ASSERT_EQ(out["comparisons"].size(), 2u);
  EXPECT_EQ(out["comparisons"][1]["dimension"], "");
  // Same seed, same output values.
  const CliResult again =
      run_cli("metric absdiff --table " + table + " --values v --factor age:1.1 --factor light" +
              " --pairs 2 --seed 3");
  EXPECT_EQ(json::parse(again.out)["cells"], out["cells"]);
}

TEST(CliMetricAbsDiff, UsageErrorsExitTwoWithOneSentence) {
  const std::string table = write_temp_file("t.csv", "age,light,v\n1,a,0.1\n3,b,0.2\n");
  const std::string base = "metric absdiff --table " + table;
  struct Case {
    std::string args, needle;
  };
  for (const Case& c :
       {Case{" --values v --factor age:old", "--factor 'age:old' has threshold 'old'"},
        Case{" --values v --factor age:-1", "number >= 0"},
        Case{" --values v --factor :1.1", "has no column name"},
        Case{" --values v --factor pose", "--factor names column 'pose'"},
        Case{" --factor age --values v,w", "--values names column 'w'"},
        Case{" --values v --factor age --pairs 0", "--pairs must be at least 1"}}) {
    const CliResult r = run_cli(base + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
  const CliResult none = run_cli(base + " --values v");
  EXPECT_EQ(none.exit_code, 2) << none.err;
}

}  // namespace in_metric_absdiff_test
}  // namespace
