// Paper 002's recipe (examples/papers/002/run.sh, DIG-In) end to end: the real script under
// bash, with the built vlbias, on a small GeoDE folder in the release's layout (written here
// from the fixture images), against an in-process OpenAI images server that refuses one
// region's stove prompts, with the tests' tiny RANDOM DINOv2 as the feature model (and
// their tiny RANDOM CLIP for the consistency indicator).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/generate_util.h"

namespace vlbias {
namespace {
namespace in_recipes_digin_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::expect_steps;
using cli_util::run_bash;
using cli_util::shell_quote;
using cli_util::temp_dir;
using namespace generate_test;  // NOLINT: the shared server fixtures

const fs::path kE2eImages = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/e2e/images";

// GeoDE as released (index.csv: file_path, object, region, ip_country; images/OBJECT/...):
// bag and stove x Africa and WestAsia, five images per cell, two countries per region.
void write_geode(const fs::path& dir) {
  std::vector<fs::path> sources;
  for (const std::string& f : kImageFiles) sources.push_back(kImages / f);
  for (const char* f : {"a_photo.jpg", "b_rgba.png", "c_grey.png", "d_palette.png"})
    sources.push_back(kE2eImages / f);
  std::string index = "file_path,object,region,ip_country\n";
  std::size_t n = 0;
  for (const char* object : {"bag", "stove"}) {
    fs::create_directories(dir / "images" / object);
    for (const char* region : {"Africa", "WestAsia"}) {
      for (int i = 0; i < 5; ++i, ++n) {
        const fs::path& src = sources[n % sources.size()];
        const std::string name = fmt::format("{}_{:04}{}", object, n, src.extension().string());
        fs::copy_file(src, dir / "images" / object / name);
        const char* country = std::string(region) == "Africa" ? (i < 3 ? "Nigeria" : "Kenya")
                                                              : (i < 3 ? "Turkey" : "Jordan");
        index += fmt::format("images/{}/{},{},{},{}\n", object, name, object, region, country);
      }
    }
  }
  write(dir / "index.csv", index);
}

// The images API: a fixture image per request in turn (one request at a time, so the same
// run draws the same images); "stove in West Asia" refused as content policy.
struct ImagesServer {
  std::atomic<int> requests{0};
  Server server{[this](const Request& req) {
    const int n = requests++;
    const std::string prompt = json::parse(req.body)["prompt"];
    if (prompt == "stove in West Asia")
      return reply(400, R"({"error":{"code":"content_policy_violation","message":"no"}})");
    const std::string png = read_file(kImages / kImageFiles[n % kImageFiles.size()]);
    return reply(200, json{{"created", 1}, {"data", {{{"b64_json", base64_encode(png)}}}}}.dump());
  }};
};

// The recipe with small counts into OUT; `env` assignments come last, so they override.
CliResult run_paper002(const ImagesServer& s, const fs::path& dataset, const fs::path& out,
                       const std::string& env = "") {
  return run_bash(fmt::format(
      "N_PER_CELL=4 COUNTRIES_PER_REGION=2 CONCURRENCY=1 {} bash examples/papers/002/run.sh {} "
      "{} tests/fixtures/encode/dinov2/gelu_p4 {}",
      env, shell_quote(dataset.string()), shell_quote(s.server.url("/v1")),
      shell_quote(out.string())));
}

const std::vector<std::string> kSteps = {"dataset",
                                         "sample",
                                         "features-real",
                                         "prompts-object",
                                         "generate-object",
                                         "features-object",
                                         "prompts-object-region",
                                         "generate-object-region",
                                         "features-object-region",
                                         "prompts-object-country",
                                         "generate-object-country",
                                         "features-object-country",
                                         "audit"};

TEST(RecipePaper002, RunsFromAGeodeFolderToTheIndicatorsAndSkipsEveryStepTheSecondTime) {
  ImagesServer s;
  const fs::path dataset = temp_dir() / "geode";
  write_geode(dataset);
  const fs::path out = temp_dir() / "run 002";  // a space: every path is quoted
  // With the tiny CLIP: the consistency indicator's image and object embeddings too.
  const std::string clip = "CLIP_DIR=tests/fixtures/encode/e2e/hf";
  const std::vector<std::string> clip_steps = {"clip-object", "clip-object-region",
                                               "clip-object-country", "clip-objects"};
  const CliResult first = run_paper002(s, dataset, out, clip);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  expect_steps(first, kSteps, "running");
  expect_steps(first, clip_steps, "running");
  // {object}: 2 prompts x 4; {object} in {region}: 4 x 4; {object} in {country}: 4 cells x 2
  // countries x 2 (4 per cell, balanced over the region's two countries).
  EXPECT_EQ(s.requests, 8 + 16 + 16);
  EXPECT_EQ(
      read_file(out / "prompts_object-region.csv"),
      "prompt,object,region,country,form\n"
      "bag in Africa,bag,Africa,,object-region\nbag in West Asia,bag,WestAsia,,object-region\n"
      "stove in Africa,stove,Africa,,object-region\n"
      "stove in West Asia,stove,WestAsia,,object-region\n");

  const std::string results_text = read_file(out / "audit" / "results.json");
  const json results = json::parse(results_text);
  EXPECT_EQ(results["kind"], "geo-diversity");
  const json& analyses = results["analyses"];
  for (const char* section :
       {"region", "object_region", "consistency", "distribution", "filtered"}) {
    SCOPED_TRACE(section);
    EXPECT_TRUE(analyses.contains(section)) << analyses.dump(1).substr(0, 2000);
  }
  // Refusals per region: the object-region and object-country sources' outcomes together.
  const json& filtered = analyses["filtered"]["regions"];
  ASSERT_EQ(filtered.size(), 2u) << filtered.dump(1);
  EXPECT_EQ(filtered[0]["region"], "Africa");
  EXPECT_EQ(filtered[0]["refused"], 0);
  EXPECT_EQ(filtered[1]["region"], "WestAsia");
  EXPECT_EQ(filtered[1]["refused"], 4);
  EXPECT_EQ(filtered[1]["requested"], 16);
  EXPECT_TRUE(fs::exists(out / "audit" / "report.html"));

  EXPECT_EQ(analyses["consistency"]["forms"].size(), 3u);

  const CliResult second = run_paper002(s, dataset, out, clip);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  expect_steps(second, kSteps, "up to date");
  expect_steps(second, clip_steps, "up to date");
  EXPECT_EQ(second.out.find("running"), std::string::npos) << second.out;
  EXPECT_EQ(read_file(out / "audit" / "results.json"), results_text);
  EXPECT_EQ(s.requests, 40);
}

TEST(RecipePaper002, ARenamedCountryRerunsTheRealSideAndOnlyTheCountryPrompts) {
  ImagesServer s;
  const fs::path dataset = temp_dir() / "geode";
  write_geode(dataset);
  const fs::path out = temp_dir() / "out";
  const CliResult first = run_paper002(s, dataset, out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  // Kenya becomes Ghana in the labels: the sample and the country prompts change; the
  // {object} and {object} in {region} prompts are rewritten with the same bytes, so their
  // images are not drawn again.
  std::string index = read_file(dataset / "index.csv");
  for (std::size_t at; (at = index.find(",Kenya\n")) != std::string::npos;)
    index.replace(at, 7, ",Ghana\n");
  write(dataset / "index.csv", index);
  const CliResult edited = run_paper002(s, dataset, out);
  ASSERT_EQ(edited.exit_code, 0) << edited.out << edited.err;
  expect_steps(
      edited,
      {"dataset", "sample", "features-real", "prompts-object", "prompts-object-region",
       "prompts-object-country", "generate-object-country", "features-object-country", "audit"},
      "running");
  expect_steps(
      edited,
      {"generate-object", "features-object", "generate-object-region", "features-object-region"},
      "up to date");
  EXPECT_EQ(s.requests, 40 + 16);  // the country prompts' run again, from nothing
  const std::string prompts = read_file(out / "prompts_object-country.csv");
  EXPECT_NE(prompts.find("bag in Ghana,bag,Africa,Ghana,object-country"), std::string::npos)
      << prompts;
  EXPECT_EQ(prompts.find("Kenya"), std::string::npos) << prompts;
}

}  // namespace in_recipes_digin_test
}  // namespace
}  // namespace vlbias
