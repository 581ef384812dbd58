// `vlbias metric clipscore` end to end against tools/make_clipscore_fixtures.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_metric_clipscore_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const std::string kDir = "tests/fixtures/metrics/clipscore_";

const json& expected() {
  return vlbias::testing_util::fixture_json("metrics/clipscore.json");
}

void expect_summary(const json& got, const json& want) {
  EXPECT_EQ(got["n"].get<std::size_t>(), want["n"].get<std::size_t>());
  EXPECT_NEAR(got["mean"].get<double>(), want["mean"].get<double>(), 1e-10);
  EXPECT_NEAR(got["sd"].get<double>(), want["sd"].get<double>(), 1e-10);
  EXPECT_NEAR(got["percentiles"]["10"].get<double>(), want["percentiles"][0].get<double>(), 1e-10);
  EXPECT_NEAR(got["percentiles"]["50"].get<double>(), want["percentiles"][1].get<double>(), 1e-10);
  EXPECT_NEAR(got["percentiles"]["90"].get<double>(), want["percentiles"][2].get<double>(), 1e-10);
}

TEST(CliClipScore, PairedVariantsMatchNumpy) {
  for (const char* v : {"raw", "hessel", "torchmetrics"}) {
    const CliResult r = run_cli("metric clipscore --images " + kDir + "images.npy --texts " + kDir +
                                "texts.npy --variant " + v);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["variant"], v);
    EXPECT_EQ(out["pairing"], "row i with row i");
    expect_summary(out["overall"], expected()[v]["paired"]["summary"]);
  }
}

TEST(CliClipScore, TextRowColumnAndGroupsMatchNumpy) {
  const std::string per_sample = (temp_dir() / "scores.csv").string();
  const CliResult r = run_cli("metric clipscore --images " + kDir + "images.npy --texts " + kDir +
                              "objects.npy --table " + kDir +
                              "table.csv --text-row text_row --by region --variant hessel "
                              "--per-sample '" +
                              per_sample + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  EXPECT_EQ(out["pairing"], "text-row column");
  expect_summary(out["overall"], expected()["hessel"]["text_row"]["summary"]);
  ASSERT_EQ(out["groups"].size(), 3u);
  for (const json& g : out["groups"]) {
    const std::string region = g["group"]["region"];
    expect_summary(g, expected()["hessel"]["text_row_by_region"][region]);
  }
  const std::string csv = read_file(per_sample);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "row,cosine,score");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 41);
}

TEST(CliClipScore, OneTextForAllImages) {
  // Broadcast (one text row) is checked in the library test; 40 vs 3 rows is refused.
  const CliResult r =
      run_cli("metric clipscore --images " + kDir + "images.npy --texts " + kDir + "objects.npy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("40 images but 3 texts"), std::string::npos) << r.err;
}

TEST(CliClipScore, UsageErrors) {
  CliResult r = run_cli("metric clipscore --images " + kDir + "images.npy --texts " + kDir +
                        "texts.npy --variant clip-s");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("raw, hessel or torchmetrics"), std::string::npos) << r.err;
  r = run_cli("metric clipscore --images " + kDir + "images.npy --texts " + kDir +
              "texts.npy --by region");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("need --table"), std::string::npos) << r.err;
  r = run_cli("metric clipscore --images " + kDir + "images.npy --texts " + kDir +
              "objects.npy --table " + kDir + "table.csv --text-row region");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace in_metric_clipscore_test
}  // namespace
