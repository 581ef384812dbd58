// `generate t2i` writes RUN_DIR/outcomes.csv (one row per requested image, refused ones
// included) and the geo-diversity audit's `generated.outcomes` turns it into refusal rates per
// region with a chi-square test of equal rates (paper 002 reports filtered generations per
// region). An in-process images server refuses some prompts of one region.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate_util.h"
#include "report_checks.h"

namespace vlbias::generate_test {
namespace {
namespace in_t2i_outcomes_test {

using cli_util::temp_dir;

const fs::path kGeoExample = fs::path(VLBIAS_SOURCE_DIR) / "examples/geo_diversity";

// Three prompts per region: every "West Asia" prompt but the stove is refused (4 of its 6
// images), no "Africa" prompt is.
Server::Handler refusing_images(const std::string& png) {
  return [png](const Request& req) {
    const std::string prompt = json::parse(req.body)["prompt"];
    if (prompt.find("West Asia") != std::string::npos && prompt.find("stove") == std::string::npos)
      return reply(400, R"({"error":{"code":"content_policy_violation","message":"Rejected by the )"
                        R"(safety system."}})");
    return reply(200, json{{"created", 1}, {"data", {{{"b64_json", base64_encode(png)}}}}}.dump());
  };
}

void write_t2i_spec(const fs::path& dir, const std::string& url) {
  write(dir / "prompts.csv",
        "prompt,object,region\n"
        "bag in Africa,bag,Africa\ncar in Africa,car,Africa\nstove in Africa,stove,Africa\n"
        "bag in West Asia,bag,West Asia\ncar in West Asia,car,West Asia\n"
        "stove in West Asia,stove,West Asia\n");
  write(dir / "t2i.yaml", fmt::format(R"(version: 1
kind: generate-t2i
endpoint: {{api: openai-images, url: "{}", model: dall-e-3, api_key_env: VLBIAS_TEST_API_KEY}}
prompts: prompts.csv
images_per_prompt: 2
requests: {{concurrency: 2, base_delay_s: 0.01, max_delay_s: 0.02}}
)",
                                      url));
}

// A geo-diversity spec over the example's real and generated features, with `outcomes` on the
// generated source; the filtered section and the region indicator without intervals
// (bootstrap: 0: the page must then show none, as results.json holds none).
std::string geo_spec(const std::string& outcomes) {
  return fmt::format(R"(version: 1
kind: geo-diversity
seed: 1
real: {{table: "{0}/real.csv", features: "{0}/real.npy"}}
generated:
  - table: "{0}/generated.csv"
    features: "{0}/generated.npy"
    outcomes: "{1}"
aliases:
  region: {{"West Asia": WestAsia}}
analyses:
  region: {{k: 3, bootstrap: 0}}
  object_region: false
  consistency: false
  distribution: false
)",
                     kGeoExample.string(), outcomes);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(T2iOutcomes, RefusedImagesAreListedAndTheGeoAuditReportsTheirRatePerRegion) {
  Server server(refusing_images(read_file(kImages / "png_1x1.png")));
  const fs::path dir = temp_dir();
  write_t2i_spec(dir, server.url("/v1/images/generations"));
  const std::string t2i = fmt::format("generate t2i '{}' --out '{}'", (dir / "t2i.yaml").string(),
                                      (dir / "run").string());
  const auto r = run_with_key(t2i);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(json::parse(r.out)["outputs"].dump().find("outcomes.csv"), std::string::npos);

  // One row per requested image, in request order; refused ones with the API's message.
  const std::vector<std::string> rows = lines_of(read_file(dir / "run/outcomes.csv"));
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[0], "prompt,object,region,sample,seed,status,reason");
  EXPECT_EQ(rows[1], "bag in Africa,bag,Africa,0,,ok,");
  EXPECT_EQ(rows[8],
            "bag in West Asia,bag,West Asia,1,,refused,"
            "content_policy: Rejected by the safety system.");
  EXPECT_EQ(rows[12], "stove in West Asia,stove,West Asia,1,,ok,");
  std::map<std::string, int> refused;  // per region
  for (const char* region : {"Africa", "West Asia"}) {
    const std::string column = fmt::format(",{},", region);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      if (rows[i].find(column) != std::string::npos &&
          rows[i].find(",refused,content_policy") != std::string::npos)
        ++refused[region];
    }
  }
  EXPECT_EQ(refused["West Asia"], 4);
  EXPECT_EQ(refused["Africa"], 0);
  // manifest.csv still lists only the 8 saved images.
  EXPECT_EQ(lines_of(read_file(dir / "run/manifest.csv")).size(), 9u);

  // --resume sends nothing again and rebuilds the same table from the whole store.
  const std::string before = read_file(dir / "run/outcomes.csv");
  const auto resumed = run_with_key(t2i + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(read_file(dir / "run/outcomes.csv"), before);

  write(dir / "geo.yaml", geo_spec((dir / "run/outcomes.csv").string()));
  const auto a = run_cli(fmt::format("--quiet audit '{}' --out '{}'", (dir / "geo.yaml").string(),
                                     (dir / "audit").string()));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json f = json::parse(read_file(dir / "audit/results.json"))["analyses"]["filtered"];
  ASSERT_EQ(f["regions"].size(), 2u);
  EXPECT_EQ(f["regions"][0]["region"], "Africa");
  EXPECT_EQ(f["regions"][0]["requested"], 6);
  EXPECT_EQ(f["regions"][0]["refused"], 0);
  EXPECT_EQ(f["regions"][1]["region"], "WestAsia");  // aliased
  EXPECT_EQ(f["regions"][1]["refused"], 4);
  EXPECT_NEAR(f["regions"][1]["rate"].get<double>(), 4.0 / 6.0, 1e-12);
  // Wilson 95% of 4/6 by hand: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n).
  EXPECT_NEAR(f["regions"][1]["ci"]["lower"].get<double>(), 0.29999, 1e-4);
  EXPECT_NEAR(f["regions"][1]["ci"]["upper"].get<double>(), 0.90324, 1e-4);
  // Blocked/answered 0/6 and 4/6: expected 2 and 4 per region, so
  // X^2 = 4/2 + 4/2 + 4/4 + 4/4 = 6 (df 1, p = 0.014306), Cramer's V = sqrt(6/12).
  EXPECT_NEAR(f["test"]["statistic"].get<double>(), 6.0, 1e-12);
  EXPECT_NEAR(f["test"]["p_value"].get<double>(), 0.0143058784, 1e-8);
  EXPECT_NEAR(f["test"]["effect_size"].get<double>(), std::sqrt(0.5), 1e-12);
  const std::vector<std::string> table = lines_of(read_file(dir / "audit/tables/filtered.csv"));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0], "region,requested,refused,filtered,rate,ci_lower,ci_upper");
  EXPECT_EQ(table[1].rfind("Africa,6,0,0,0,", 0), 0u) << table[1];
  EXPECT_TRUE(fs::exists(dir / "audit/tables/filtered_test.csv"));
  report_checks::check_report(dir / "audit");  // the page shows results.json's numbers
  const json region = json::parse(read_file(dir / "audit/results.json"))["analyses"]["region"];
  ASSERT_GT(region["forms"].size(), 0u);
  for (const json& g : region["forms"][0]["regions"]) {
    SCOPED_TRACE(g.dump());
    EXPECT_FALSE(g.contains("precision_ci"));  // bootstrap: 0 draws no interval
    EXPECT_FALSE(g.contains("coverage_ci"));
    EXPECT_TRUE(g.contains("precision"));
  }
  const std::string html = read_file(dir / "audit/report.html");
  EXPECT_NE(html.find("Refused and filtered generations per region"), std::string::npos);
  EXPECT_NE(html.find("The share of generations refused or filtered differs across regions"),
            std::string::npos);
}

TEST(T2iOutcomes, OutcomesWithoutTheRegionColumnOrMissingAreSpecErrors) {
  const fs::path dir = temp_dir();
  write(dir / "outcomes.csv",
        "prompt,object,place,sample,seed,status,reason\nx,bag,Africa,0,,ok,\n");
  write(dir / "geo.yaml", geo_spec((dir / "outcomes.csv").string()));
  auto r = run_cli(fmt::format("--quiet audit '{}' --out '{}'", (dir / "geo.yaml").string(),
                               (dir / "audit").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("outcomes.csv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'region'"), std::string::npos) << r.err;

  write(dir / "outcomes.csv",
        "prompt,object,region,sample,seed,status,reason\n"
        "x,bag,Africa,0,,blocked,\n");
  r = run_cli(fmt::format("--quiet audit '{}' --out '{}'", (dir / "geo.yaml").string(),
                          (dir / "audit2").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("line 2: column 'status' holds 'blocked'"), std::string::npos) << r.err;

  write(dir / "geo.yaml", geo_spec((dir / "absent.csv").string()));
  r = run_cli(fmt::format("--quiet audit '{}' --out '{}'", (dir / "geo.yaml").string(),
                          (dir / "audit3").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot read '" + (dir / "absent.csv").string() + "'"), std::string::npos)
      << r.err;
}

}  // namespace in_t2i_outcomes_test
}  // namespace
}  // namespace vlbias::generate_test
