// End-to-end tests of `vlbias metric trends` on the grouped table of
// tools/make_trend_fixtures.py (exact least squares cross-checked with numpy.polyfit
// and statsmodels; numpy.cov + eigh ellipses; paper 001, Hausladen et al.).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_trends_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const json& grouped() {
  return vlbias::testing_util::fixture_json("stats/trends.json")["grouped"];
}

// The fixture's CSV written into the test's temp dir; returns its path.
std::string write_table() {
  const std::filesystem::path path = temp_dir() / "faces.csv";
  std::ofstream(path) << grouped()["csv"].get<std::string>();
  return path.string();
}

// rel 1e-10 or abs 1e-12; null stays null.
void expect_value(const json& actual, const json& want, const std::string& what) {
  if (want.is_null()) {
    EXPECT_TRUE(actual.is_null()) << what << ": " << actual;
    return;
  }
  ASSERT_TRUE(actual.is_number()) << what << ": " << actual;
  const double w = want.get<double>();
  EXPECT_NEAR(actual.get<double>(), w, std::max(1e-12, 1e-10 * std::fabs(w))) << what;
}

void expect_array(const json& actual, const json& want, const std::string& what) {
  ASSERT_EQ(actual.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    expect_value(actual[i], want[i], what + "[" + std::to_string(i) + "]");
  }
}

void expect_fits(const json& got, const json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::string what = "fit " + std::to_string(i);
    const json& g = got[i];
    EXPECT_EQ(g["key"], (json{{"race", want[i]["key"][0]}, {"gender", want[i]["key"][1]}}));
    EXPECT_EQ(g["dimension"], want[i]["dimension"]) << what;
    expect_array(g["levels"], want[i]["levels"], what + " levels");
    expect_array(g["level_means"], want[i]["level_means"], what + " level_means");
    EXPECT_EQ(g["level_n"], want[i]["level_n"]) << what;
    expect_array(g["coefficients"], want[i]["coefficients"], what + " coefficients");
    expect_array(g["standard_errors"], want[i]["standard_errors"], what + " standard_errors");
    expect_value(g["r_squared"], want[i]["r_squared"], what + " r_squared");
    expect_value(g["residual_sd"], want[i]["residual_sd"], what + " residual_sd");
    EXPECT_EQ(g["n"], want[i]["n"]) << what;
    // A null is always explained by a note.
    const bool has_null = want[i]["standard_errors"][0].is_null() || want[i]["r_squared"].is_null();
    EXPECT_EQ(g.contains("note"), has_null) << what;
  }
}

TEST(CliMetricTrends, FitsToMeansAndAgeEllipses) {
  const std::string table = write_table();
  const std::filesystem::path out_file = temp_dir() / "trends.json";
  const CliResult r = run_cli("metric trends --table '" + table +
                              "' --values agency+,agency- --x age --by race,gender "
                              "--ellipse-points-by age --out '" +
                              out_file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(read_file(out_file));
  expect_fits(out["fits"], grouped()["fits"]["means"]);
  const json& want = grouped()["ellipses"]["age"];
  ASSERT_EQ(out["ellipses"].size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& e = out["ellipses"][i];
    const std::string what = "ellipse " + std::to_string(i);
    EXPECT_EQ(e["key"], (json{{"race", want[i]["key"][0]}, {"gender", want[i]["key"][1]}}));
    EXPECT_EQ(e["x_dimension"], "agency+");
    EXPECT_EQ(e["y_dimension"], "agency-");
    expect_array(e["center"], want[i]["center"], what + " center");
    expect_array(e["covariance"][0], want[i]["covariance"][0], what + " covariance[0]");
    expect_array(e["covariance"][1], want[i]["covariance"][1], what + " covariance[1]");
    expect_value(e["semi_major"], want[i]["semi_major"], what + " semi_major");
    if (want[i]["n"] != 2) {  // two points: minor axis is 0 up to rounding (library test)
      expect_value(e["semi_minor"], want[i]["semi_minor"], what + " semi_minor");
    }
    expect_value(e["angle_radians"], want[i]["angle"], what + " angle");
    EXPECT_EQ(e["k_sigma"], 2.0);
    EXPECT_EQ(e["n"], want[i]["n"]);
  }
  const json& prov = out["provenance"];
  EXPECT_EQ(prov["command"], "metric trends");
  EXPECT_EQ(prov["parameters"]["fit_to"], "means");
  EXPECT_EQ(prov["parameters"]["degree"], 2);
  EXPECT_EQ(prov["inputs"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST(CliMetricTrends, FitsToImagesAndImageEllipses) {
  const std::string table = write_table();
  const CliResult r = run_cli("metric trends --table '" + table +
                              "' --values agency+,agency- --x age --by race,gender --fit-to "
                              "images --k-sigma 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  expect_fits(out["fits"], grouped()["fits"]["images"]);
  const json& want = grouped()["ellipses"]["images"];
  ASSERT_EQ(out["ellipses"].size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    expect_value(out["ellipses"][i]["semi_major"], want[i]["semi_major"], "semi_major");
    expect_value(out["ellipses"][i]["semi_minor"], want[i]["semi_minor"], "semi_minor");
    expect_value(out["ellipses"][i]["angle_radians"], want[i]["angle"], "angle");
    EXPECT_EQ(out["ellipses"][i]["n"], want[i]["n"]);
  }
}

TEST(CliMetricTrends, ExplicitPlaneAndErrors) {
  const std::string table = write_table();
  const std::string base = "metric trends --table '" + table + "' --values agency+,agency- ";
  const CliResult swapped = run_cli(base + "--x age --by race --plane agency-:agency+");
  ASSERT_EQ(swapped.exit_code, 0) << swapped.err;
  const json out = json::parse(swapped.out);
  ASSERT_EQ(out["ellipses"].size(), 2u);  // Black, White
  EXPECT_EQ(out["ellipses"][0]["x_dimension"], "agency-");
  EXPECT_EQ(out["ellipses"][0]["key"], (json{{"race", "Black"}}));

  const CliResult unknown_x = run_cli(base + "--x smiling --by race,gender");
  EXPECT_EQ(unknown_x.exit_code, 2);
  EXPECT_NE(unknown_x.err.find("smiling"), std::string::npos) << unknown_x.err;
  EXPECT_NE(unknown_x.err.find("age"), std::string::npos) << unknown_x.err;  // lists columns

  const CliResult bad_plane = run_cli(base + "--x age --plane agency+:warmth-");
  EXPECT_EQ(bad_plane.exit_code, 2);
  EXPECT_NE(bad_plane.err.find("warmth-"), std::string::npos) << bad_plane.err;

  const CliResult bad_mode = run_cli(base + "--x age --fit-to everything");
  EXPECT_EQ(bad_mode.exit_code, 2);
  EXPECT_NE(bad_mode.err.find("--fit-to"), std::string::npos) << bad_mode.err;
}

}  // namespace in_metric_trends_test
}  // namespace
