// `vlbias metric prdc|fid|kid|vendi` end to end against tools/make_prdc_fixtures.py and
// tools/make_distribution_fixtures.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

namespace {
namespace in_metric_distribution_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const std::string kDir = "tests/fixtures/";

const json& prdc_cases() {
  return vlbias::testing_util::fixture_json("metrics/prdc.json")["cases"];
}
const json& dist_cases() {
  return vlbias::testing_util::fixture_json("metrics/distribution.json")["cases"];
}

double rel(double got, double want) {
  return std::abs(got - want) / std::max(1.0, std::abs(want));
}

TEST(CliPrdc, DuplicatesUnderBothBallRulesMatchReference) {
  const json& c = prdc_cases()["duplicates"];
  const std::string files = "--real " + kDir + c["real"].get<std::string>() + " --fake " + kDir +
                            c["fake"].get<std::string>();
  for (const json& want : c["results"]) {
    const bool inclusive = want["inclusive"].get<bool>();
    const CliResult r =
        run_cli("metric prdc " + files + " --k " + std::to_string(want["k"].get<int>()) +
                (inclusive ? " --inclusive" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["precision"].get<double>(), want["precision"].get<double>());
    EXPECT_EQ(out["recall"].get<double>(), want["recall"].get<double>());
    EXPECT_EQ(out["coverage"].get<double>(), want["coverage"].get<double>());
    EXPECT_NEAR(out["density"].get<double>(), want["density"].get<double>(), 1e-15);
    EXPECT_EQ(out["ball"], inclusive ? "inclusive (d <= r)" : "strict (d < r)");
    EXPECT_EQ(out["provenance"]["parameters"]["inclusive"], inclusive);
    EXPECT_EQ(out["provenance"]["inputs"].size(), 2u);
  }
}

TEST(CliPrdc, PerSampleFilesMatchReference) {
  const json& c = prdc_cases()["grid"];
  const json& want = c["results"][0];  // k = 1, strict
  const std::string per_real = (temp_dir() / "real.csv").string();
  const std::string per_fake = (temp_dir() / "fake.csv").string();
  const CliResult r = run_cli("metric prdc --real " + kDir + c["real"].get<std::string>() +
                              " --fake " + kDir + c["fake"].get<std::string>() +
                              " --k 1 --per-real '" + per_real + "' --per-fake '" + per_fake + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table real = vlbias::read_table(per_real);
  const vlbias::Table fake = vlbias::read_table(per_fake);
  const json& ps = want["per_sample"];
  ASSERT_EQ(real.rows, ps["real_covered"].size());
  for (std::size_t i = 0; i < real.rows; ++i) {
    EXPECT_DOUBLE_EQ(real.numeric("radius")[i], std::sqrt(ps["real_radius_sq"][i].get<double>()));
    EXPECT_EQ(real.numeric("covered")[i], ps["real_covered"][i].get<double>());
    EXPECT_EQ(real.numeric("in_generated_manifold")[i], ps["real_in_fake_balls"][i].get<double>());
  }
  ASSERT_EQ(fake.rows, ps["fake_ball_count"].size());
  for (std::size_t j = 0; j < fake.rows; ++j) {
    EXPECT_EQ(fake.numeric("real_balls")[j], ps["fake_ball_count"][j].get<double>());
    EXPECT_EQ(fake.numeric("inside")[j], ps["fake_ball_count"][j].get<double>() > 0 ? 1.0 : 0.0);
  }
}

TEST(CliPrdc, BadInputIsExitCode2WithAMessage) {
  const std::string real = kDir + "metrics/prdc_grid_real.npy";
  CliResult r =
      run_cli("metric prdc --real " + real + " --fake " + kDir + "metrics/prdc_random_fake.npy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has 3 columns but"), std::string::npos) << r.err;
  r = run_cli("metric prdc --real " + real + " --fake " + real + " --k 500");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs at least 501 rows"), std::string::npos) << r.err;
  r = run_cli("metric prdc --real " + real + " --fake missing.npy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.npy"), std::string::npos) << r.err;
  r = run_cli("metric prdc --real " + real + " --fake " + real + " --k -1");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CliFid, MatchesReference) {
  for (const char* name : {"random", "wide", "duplicates", "grid"}) {
    const json& c = dist_cases()[name];
    const CliResult r = run_cli("metric fid --real " + kDir + c["a"].get<std::string>() +
                                " --fake " + kDir + c["b"].get<std::string>());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_LT(rel(out["fid"].get<double>(), c["fid"]["fid"].get<double>()), 1e-12) << name;
    EXPECT_LT(rel(out["trace_sqrt"].get<double>(), c["fid"]["trace_sqrt"].get<double>()), 1e-12);
  }
}

TEST(CliKid, SubsetsMatchReference) {
  const json& c = dist_cases()["random"];
  const json& want = c["kid"];
  const CliResult r = run_cli("metric kid --real " + kDir + c["a"].get<std::string>() + " --fake " +
                              kDir + c["b"].get<std::string>() + " --subsets " +
                              std::to_string(want["subsets"].get<int>()) + " --subset-size " +
                              std::to_string(want["subset_size"].get<int>()) + " --seed " +
                              std::to_string(want["seed"].get<int>()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_LT(rel(out["kid"].get<double>(), want["kid"].get<double>()), 1e-6);
  EXPECT_LT(rel(out["sd"].get<double>(), want["sd"].get<double>()), 1e-5);
  EXPECT_EQ(out["provenance"]["seed"], want["seed"]);
  const CliResult full = run_cli("metric kid --real " + kDir + c["a"].get<std::string>() +
                                 " --fake " + kDir + c["b"].get<std::string>() + " --subsets 0");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const json f = json::parse(full.out);
  EXPECT_LT(rel(f["kid"].get<double>(), c["kid_full"].get<double>()), 1e-6);
  EXPECT_TRUE(f["sd"].is_null());
}

TEST(CliVendi, OverallAndPerGroup) {
  const json& c = dist_cases()["wide"];
  // A table splitting the 30 rows into two groups; each group's score is its own Vendi.
  const std::string table = (temp_dir() / "groups.csv").string();
  {
    std::string text = "region\n";
    for (int i = 0; i < 30; ++i) text += i < 12 ? "Africa\n" : "Europe\n";
    FILE* f = std::fopen(table.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  const CliResult r = run_cli("metric vendi --features " + kDir + c["a"].get<std::string>() +
                              " --table '" + table + "' --by region");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_LT(rel(out["vendi"].get<double>(), c["vendi_a"]["q1"].get<double>()), 1e-9);
  ASSERT_EQ(out["groups"].size(), 2u);
  EXPECT_EQ(out["groups"][0]["group"]["region"], "Africa");
  EXPECT_EQ(out["groups"][0]["n"], 12);
  EXPECT_GT(out["groups"][0]["vendi"].get<double>(), 1.0);
  EXPECT_LE(out["groups"][0]["vendi"].get<double>(), 12.0);
  const CliResult inf =
      run_cli("metric vendi --features " + kDir + c["a"].get<std::string>() + " --q inf");
  ASSERT_EQ(inf.exit_code, 0) << inf.err;
  EXPECT_LT(rel(json::parse(inf.out)["vendi"].get<double>(), c["vendi_a"]["qinf"].get<double>()),
            1e-9);
  CliResult bad =
      run_cli("metric vendi --features " + kDir + c["a"].get<std::string>() + " --q abc");
  EXPECT_EQ(bad.exit_code, 2);
  bad = run_cli("metric vendi --features " + kDir + c["a"].get<std::string>() + " --by region");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--table and --by go together"), std::string::npos) << bad.err;
}

// Features scaled to about `scale` (a deterministic pattern), written to the test's folder.
std::string scaled_features(const std::string& name, std::size_t rows, float scale) {
  vlbias::Matrix m(rows, 8);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < 8; ++k) {
      const int level = static_cast<int>((i * 7 + k * 3) % 11) - 5;  // -5 .. 5
      m.at(i, k) = scale * static_cast<float>(level) / 5.0f;
    }
  }
  const std::string path = (temp_dir() / name).string();
  vlbias::write_npy(path, m);
  return path;
}

// issue 19: KID printed "kid": null with exit 0 for features near 1e30 (the float32 dot
// products overflow); it is an input error naming the cause, as PRDC gives. FID and Vendi stay
// finite there (double sums, cosine kernel).
TEST(CliKid, FeaturesWhoseKernelOverflowsAreAnInputErrorNotNull) {
  const std::string a = scaled_features("big_a.npy", 30, 1e30f);
  const std::string b = scaled_features("big_b.npy", 20, 1e30f);
  CliResult r = run_cli("metric kid --real '" + a + "' --fake '" + b + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("KID: a feature row has squared norm"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rescale the features"), std::string::npos) << r.err;
  r = run_cli("metric kid --subsets 0 --real '" + a + "' --fake '" + b + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // Moderate features, a kernel whose 16th power overflows double.
  const std::string c = scaled_features("c.npy", 30, 1.0f), d = scaled_features("d.npy", 20, 1.0f);
  r = run_cli("metric kid --real '" + c + "' --fake '" + d + "' --degree 16 --coef0 1e30");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("lower --degree/--coef0"), std::string::npos) << r.err;
  r = run_cli("metric kid --real '" + c + "' --fake '" + d + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json::parse(r.out)["kid"].is_number());

  const CliResult fid = run_cli("metric fid --real '" + a + "' --fake '" + b + "'");
  ASSERT_EQ(fid.exit_code, 0) << fid.err;
  EXPECT_TRUE(json::parse(fid.out)["fid"].is_number()) << fid.out;
  const CliResult vendi = run_cli("metric vendi --features '" + a + "'");
  ASSERT_EQ(vendi.exit_code, 0) << vendi.err;
  EXPECT_TRUE(json::parse(vendi.out)["vendi"].is_number()) << vendi.out;
}

// issue 19: --subsets 100000000000 ran out of memory (exit 1, "out of memory"); resample counts
// are checked when the command line is parsed, naming the allowed range.
TEST(CliKid, SubsetCountsBeyondTheRangeAreAUsageError) {
  const json& c = dist_cases()["random"];
  const std::string files =
      " --real " + kDir + c["a"].get<std::string>() + " --fake " + kDir + c["b"].get<std::string>();
  const CliResult r = run_cli("metric kid" + files + " --subsets 100000000000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--subsets"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0 to 1000000"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("out of memory"), std::string::npos) << r.err;
}

}  // namespace in_metric_distribution_test
}  // namespace
