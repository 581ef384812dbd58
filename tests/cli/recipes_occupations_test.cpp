// The occupations study's recipe (examples/studies/occupations/run.sh) end to end: the real
// script under bash, with the built vlbias, against an in-process OpenAI images server that
// answers with Debian's sample photographs (two with a face, one cat), real dlib face detection,
// and the tests' tiny RANDOM CLIP as the labeller (its labels mean nothing: this checks that
// the steps fit together, and that a second run skips them all).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/generate_util.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_recipes_occupations_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::expect_steps;
using cli_util::run_bash;
using cli_util::shell_quote;
using cli_util::temp_dir;
using namespace generate_test;  // NOLINT: the shared server fixtures

const fs::path kReal = fs::path(VLBIAS_SOURCE_DIR) / "tests/data/images/real";

// The images API: the photographs in turn (one request at a time, so runs draw alike).
struct PhotoServer {
  std::atomic<int> requests{0};
  Server server{[this](const Request&) {
    static const char* const kPhotos[] = {"astronaut.png", "grace_hopper.jpg", "chelsea.png"};
    const int n = requests++;
    const std::string bytes = read_file(kReal / kPhotos[n % 3]);
    return reply(200,
                 json{{"created", 1}, {"data", {{{"b64_json", base64_encode(bytes)}}}}}.dump());
  }};
};

CliResult run_recipe(const PhotoServer& s, const fs::path& out) {
  return run_bash(
      fmt::format("OCCUPATIONS=nurse,engineer,electrician SEEDS=3 CONCURRENCY=1 bash "
                  "examples/studies/occupations/run.sh {} tests/fixtures/encode/e2e/hf {}",
                  shell_quote(s.server.url("/v1")), shell_quote(out.string())));
}

TEST(RecipeOccupations, RunsFromAnEndpointToTheAuditAndSkipsEveryStepTheSecondTime) {
  PhotoServer s;
  const fs::path out = temp_dir() / "occupations run";  // a space: every path is quoted
  const CliResult first = run_recipe(s, out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::vector<std::string> steps = {"generate", "faces", "label", "audit"};
  expect_steps(first, steps, "running");
  EXPECT_EQ(s.requests, 9);
  EXPECT_EQ(read_file(out / "prompts.csv"),
            "prompt,occupation\n\"a photo of an engineer\",engineer\n"
            "\"a photo of a nurse\",nurse\n\"a photo of an electrician\",electrician\n");
  // dlib finds two faces in the astronaut photograph, one in Grace Hopper's and none in the
  // cat's: each occupation's three images hold three faces, each labelled once.
  const Table labels = read_table((out / "labels.csv").string());
  EXPECT_EQ(labels.rows, 9u);
  const json results = json::parse(read_file(out / "audit" / "results.json"));
  EXPECT_EQ(results["kind"], "representation");
  EXPECT_EQ(results["prompts"], 3);
  const json& prompts = results["analyses"]["distribution"]["attributes"][0]["prompts"];
  ASSERT_EQ(prompts.size(), 3u);
  for (const json& p : prompts) {
    SCOPED_TRACE(p.dump());
    EXPECT_EQ(p["images"], 3);
    EXPECT_NEAR(p["no_face_rate"].get<double>(), 1.0 / 3, 1e-12);
    EXPECT_NEAR(p["several_faces_rate"].get<double>(), 0.5, 1e-12);
    EXPECT_EQ(p["n"], 3);
  }
  // Every occupation has its BLS share: the amplification covers all three.
  const json& amp = results["analyses"]["amplification"];
  EXPECT_TRUE(amp["missing_targets"].empty());
  EXPECT_EQ(amp["classes"][0]["slope"]["prompts"], 3);
  EXPECT_TRUE(fs::exists(out / "audit" / "report.html"));
  // report.images: a grid of each prompt's generated images.
  ASSERT_TRUE(results.contains("exemplars"));
  EXPECT_NE(read_file(out / "audit" / "report.html").find("data:image/jpeg;base64,"),
            std::string::npos);

  const CliResult second = run_recipe(s, out);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  expect_steps(second, steps, "up to date");
  EXPECT_EQ(s.requests, 9);
}

TEST(RecipeOccupations, BadArgumentsAreUsageErrors) {
  const CliResult r = run_bash("bash examples/studies/occupations/run.sh not-a-url /tmp");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an http(s) URL"), std::string::npos) << r.err;
  const CliResult none = run_bash(
      "OCCUPATIONS=astronaut bash examples/studies/occupations/run.sh http://127.0.0.1:9/v1 "
      "tests/fixtures/encode/e2e/hf " +
      shell_quote((temp_dir() / "none").string()));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("names none of the 60"), std::string::npos) << none.err;
}

}  // namespace in_recipes_occupations_test
}  // namespace
}  // namespace vlbias
