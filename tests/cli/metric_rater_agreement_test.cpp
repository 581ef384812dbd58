// End-to-end tests of `vlbias metric agreement` in raters mode (issue 24): long (--rating,
// --unit, --rater) and wide (--raters) tables against tools/make_rater_agreement_fixtures.py,
// Krippendorff's published example, how the mode is told apart from the scorers' mode
// (--scores), and the usage and input errors a user can meet.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_rater_agreement_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;
using vlbias::cli_util::write_temp_file;

const json& fixture() {
  return vlbias::testing_util::fixture_json("stats/rater_agreement.json");
}

json run_json(const std::string& args) {
  const CliResult r = run_cli("metric agreement " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

std::string usage_error(const std::string& args) {
  const CliResult r = run_cli("metric agreement " + args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
  return r.err;
}

void expect_coefficient(const json& got, const json& want, const std::string& what) {
  ASSERT_TRUE(got["estimate"].is_number()) << what << ": " << got;
  EXPECT_NEAR(got["estimate"].get<double>(), want["estimate"].get<double>(), 1e-12) << what;
  EXPECT_EQ(got["units"], want["units"]) << what;
  if (!want.contains("bootstrap")) return;
  EXPECT_NEAR(got["bootstrap_ci"]["lower"].get<double>(), want["bootstrap"]["ci"][0], 1e-12)
      << what;
  EXPECT_NEAR(got["bootstrap_ci"]["upper"].get<double>(), want["bootstrap"]["ci"][1], 1e-12)
      << what;
}

void expect_pairs(const json& got, const json& want, const char* weights) {
  ASSERT_EQ(got["pairs"].size(), want.size());
  for (const json& w : want) {
    SCOPED_TRACE(w["raters"].dump());
    bool found = false;
    for (const json& g : got["pairs"]) {
      if (g["raters"] != w["raters"] && g["raters"] != json({w["raters"][1], w["raters"][0]})) {
        continue;
      }
      found = true;
      EXPECT_NEAR(g["estimate"].get<double>(), w[weights].get<double>(), 1e-12);
      EXPECT_NEAR(g["bootstrap_ci"]["lower"].get<double>(), w["bootstrap"]["ci"][0], 1e-12);
    }
    EXPECT_TRUE(found);
  }
}

TEST(CliMetricRaterAgreement, LongRatingsMatchTheReference) {
  const json& f = fixture()["likert"];
  const std::string table = write_temp_file("long.csv", f["long_csv"].get<std::string>());
  const std::filesystem::path out_file = temp_dir() / "raters.json";
  const CliResult r = run_cli("metric agreement --table " + table +
                              " --unit item_id --rater annotator --rating score --scale ordinal "
                              "--weights quadratic --bootstrap 200 --seed 7 --out '" +
                              out_file.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(read_file(out_file));
  EXPECT_EQ(out["mode"], "raters");
  EXPECT_EQ(out["format"], "long");
  EXPECT_EQ(out["scale"], "ordinal");
  EXPECT_EQ(out["units"], 40);
  EXPECT_EQ(out["ratings"], f["long"]["ratings"]);
  EXPECT_EQ(out["missing_ratings"], 1);
  EXPECT_EQ(out["categories"], f["categories"]);
  EXPECT_EQ(out["units_single_rating"], 2);
  expect_coefficient(out["krippendorff_alpha"], f["long"]["alpha"]["ordinal"], "alpha");
  expect_coefficient(out["fleiss_kappa"], f["long"]["fleiss"], "fleiss");
  EXPECT_EQ(out["fleiss_kappa"]["ratings_per_unit"], 4);
  EXPECT_NE(out["fleiss_kappa"]["note"].get<std::string>().find("19 of 40 rated units"),
            std::string::npos);
  EXPECT_EQ(out["cohen_kappa"]["weights"], "quadratic");
  expect_pairs(out["cohen_kappa"], f["long"]["cohen"], "quadratic");
  EXPECT_EQ(out["krippendorff_alpha"]["bootstrap_ci"]["seed"], 7);
  EXPECT_EQ(out["krippendorff_alpha"]["bootstrap_ci"]["method"],
            "percentile bootstrap over pairable units");
  const json& prov = out["provenance"];
  EXPECT_EQ(prov["command"], "metric agreement");
  EXPECT_EQ(prov["parameters"]["mode"], "raters");
  EXPECT_EQ(prov["parameters"]["rater"], "annotator");
  EXPECT_EQ(prov["seed"], 7);
}

TEST(CliMetricRaterAgreement, WideRatingsMatchTheReferenceWhateverTheThreads) {
  const json& f = fixture()["likert"];
  const std::string table = write_temp_file("wide.csv", f["wide_csv"].get<std::string>());
  const std::string args = "metric agreement --table " + table +
                           " --raters r1,r2,r3,r4 --unit item_id --scale interval "
                           "--weights linear --bootstrap 200 --seed 7";
  const CliResult one = run_cli("--threads 1 " + args);
  const CliResult three = run_cli("--threads 3 " + args);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(three.exit_code, 0) << three.err;
  json a = json::parse(one.out), b = json::parse(three.out);
  a.erase("provenance");
  b.erase("provenance");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["format"], "wide");
  expect_coefficient(a["krippendorff_alpha"], f["wide"]["alpha"]["interval"], "alpha");
  expect_coefficient(a["fleiss_kappa"], f["wide"]["fleiss"], "fleiss");
  expect_pairs(a["cohen_kappa"], f["wide"]["cohen"], "linear");
}

TEST(CliMetricRaterAgreement, ReproducesKrippendorffsPublishedAlphas) {
  const json& k = fixture()["krippendorff_2011"];
  const std::string table = write_temp_file("k2011.csv", k["csv"].get<std::string>());
  for (const char* scale : {"nominal", "ordinal", "interval"}) {
    SCOPED_TRACE(scale);
    const json out =
        run_json("--table " + table + " --raters A,B,C,D --scale " + scale + " --bootstrap 0");
    const double alpha = out["krippendorff_alpha"]["estimate"].get<double>();
    EXPECT_NEAR(alpha, k["published"][scale].get<double>(), 0.0005);
    EXPECT_NEAR(alpha, k["reference"][scale].get<double>(), 1e-14);
    EXPECT_EQ(out["krippendorff_alpha"]["bootstrap_ci"]["note"], "no bootstrap requested");
    EXPECT_EQ(out["notes"][0],
              "1 unit(s) have a single rating: Krippendorff's alpha drops them (no pair to "
              "compare)");
  }
}

TEST(CliMetricRaterAgreement, TextLabelsAndUndefinedCoefficientsAreStated) {
  const json& f = fixture()["labels"];
  const std::string table = write_temp_file("labels.csv", f["csv"].get<std::string>());
  const json out = run_json("--table " + table +
                            " --unit word,language --rater annotator --rating label --seed 7 "
                            "--bootstrap 200");
  expect_coefficient(out["krippendorff_alpha"], f["reference"]["alpha"]["nominal"], "alpha");
  expect_coefficient(out["fleiss_kappa"], f["reference"]["fleiss"], "fleiss");
  expect_pairs(out["cohen_kappa"], f["reference"]["cohen"], "none");

  const std::string same = write_temp_file("same.csv", "w,a,b\nx,yes,yes\ny,yes,yes\n");
  const json undefined = run_json("--table " + same + " --raters a,b");
  EXPECT_TRUE(undefined["krippendorff_alpha"]["estimate"].is_null());
  EXPECT_NE(undefined["krippendorff_alpha"]["note"].get<std::string>().find("0 / 0"),
            std::string::npos);
  EXPECT_TRUE(undefined["cohen_kappa"]["mean"].is_null());
  const json one = run_json("--table " + same + " --raters a");
  EXPECT_EQ(one["notes"][0],
            "1 rater(s): agreement needs at least 2 raters, so every coefficient is undefined");
}

TEST(CliMetricRaterAgreement, TheModeIsToldApartByItsOptions) {
  const std::string table = write_temp_file("t.csv", "u,r,x,y\n1,a,1,2\n1,b,2,2\n2,a,3,3\n");
  const std::string t = "--table " + table;
  EXPECT_NE(usage_error(t).find("needs exactly one of --scores A,B"), std::string::npos);
  EXPECT_NE(usage_error(t + " --scores x,y --raters x,y").find("exactly one of"),
            std::string::npos);
  EXPECT_NE(
      usage_error(t + " --raters x,y --threshold 2").find("--threshold does not apply to raters"),
      std::string::npos);
  EXPECT_NE(usage_error(t + " --raters x,y --group u").find("--group does not apply"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --scores x,y --weights linear")
                .find("--weights does not apply to --scores"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --raters x,y --rater r").find("--rater does not apply"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --rating x --rater r").find("--rating (one row per rating) needs"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --raters x,x").find("--raters names column 'x' twice"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --raters x,y --scale ratio").find("--scale must be nominal"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --raters x,y --weights square").find("--weights must be none"),
            std::string::npos);
  EXPECT_NE(usage_error(t + " --raters x,z").find("--raters names column 'z'"), std::string::npos);
  EXPECT_NE(usage_error(t + " --rating x --unit uu --rater r").find("(did you mean 'u'?)"),
            std::string::npos);
}

TEST(CliMetricRaterAgreement, RefusesTextForOrdinalScalesDuplicatesAndEmptyTables) {
  const std::string text = write_temp_file("text.csv", "u,r,x\n1,a,low\n1,b,high\n");
  const std::string t = "--table " + text + " --unit u --rater r --rating x";
  EXPECT_NE(usage_error(t + " --scale ordinal").find("line 2 holds \"low\""), std::string::npos);
  EXPECT_NE(usage_error(t + " --weights quadratic").find("not numeric"), std::string::npos);
  EXPECT_EQ(run_cli("metric agreement " + t).exit_code, 0);  // nominal text labels are fine

  const std::string twice = write_temp_file("twice.csv", "u,r,x\n1,a,1\n1,a,2\n");
  EXPECT_NE(usage_error("--table " + twice + " --unit u --rater r --rating x")
                .find("rater 'a' rates unit '1' twice, differently (rows 2 and 3)"),
            std::string::npos);
  const json dropped =
      run_json("--table " + twice + " --unit u --rater r --rating x " + "--conflicting drop");
  EXPECT_EQ(dropped["conflicting_ratings_dropped"], 1);
  EXPECT_EQ(dropped["ratings"], 0);
  EXPECT_NE(usage_error("--table " + twice + " --unit u --rater r --rating x --conflicting keep")
                .find("--conflicting must be error or drop"),
            std::string::npos);
  const std::string empty = write_temp_file("empty.csv", "u,r,x\n");
  EXPECT_NE(usage_error("--table " + empty + " --unit u --rater r --rating x")
                .find("has no ratings (0 rows: 0 without a rating, 0 without a unit or rater)"),
            std::string::npos);
}

}  // namespace in_metric_rater_agreement_test
}  // namespace
