// Paper 001's recipe (examples/papers/001/run.sh) end to end: the real script under bash, with
// the built vlbias, on the miniature CausalFace release and the tests' tiny RANDOM CLIP folder
// (its embeddings mean nothing; the pipeline is the real one).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {
namespace in_recipes_causalface_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_bash;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

CliResult run_paper001(const fs::path& dataset, const fs::path& out) {
  return run_bash("bash examples/papers/001/run.sh " + shell_quote(dataset.string()) +
                  " tests/fixtures/encode/e2e/hf " + shell_quote(out.string()));
}

const char* const kSteps[] = {"dataset",   "select",    "encode-images", "encode-prompts", "audit",
                              "table-age", "audit-age", "table-smiling", "audit-smiling"};

void expect_steps(const CliResult& r, const std::string& state) {
  vlbias::cli_util::expect_steps(r, {std::begin(kSteps), std::end(kSteps)}, state);
}

TEST(RecipePaper001, RunsFromTheMiniatureCausalFaceToTheReportsAndSkipsEveryStepTheSecondTime) {
  const fs::path out = temp_dir() / "run 001";  // a space: every path is quoted
  const CliResult first = run_paper001("tests/data/datasets/causalface", out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  expect_steps(first, "running");

  // Seven images: original backgrounds, the smiling image without brightness correction.
  EXPECT_EQ(json::parse(read_file(out / "select.json"))["rows_drawn"], 7);
  const std::string results = read_file(out / "audit" / "results.json");
  const json all = json::parse(results);
  EXPECT_EQ(all["kind"], "social-perception");
  for (const char* section : {"association", "scweat", "markedness", "ranking", "absdiff"}) {
    SCOPED_TRACE(section);
    EXPECT_TRUE(all["analyses"].contains(section)) << all["analyses"].dump().substr(0, 500);
  }
  EXPECT_EQ(all["prompts"], 208);  // 4 templates x (neutral, 44 words, 7 group names)
  const json age = json::parse(read_file(out / "audit-age" / "results.json"));
  for (const char* section : {"association", "trends", "ellipses", "absdiff"}) {
    SCOPED_TRACE(section);
    EXPECT_TRUE(age["analyses"].contains(section)) << age["analyses"].dump().substr(0, 500);
  }
  EXPECT_EQ(age["images"], 3);  // the age folder's images, joined to images.npy by path
  for (const char* dir : {"audit", "audit-age", "audit-smiling"}) {
    SCOPED_TRACE(dir);
    EXPECT_TRUE(fs::exists(out / dir / "report.html"));
  }
  EXPECT_NE(first.out.find("report.html"), std::string::npos) << first.out;

  const CliResult second = run_paper001("tests/data/datasets/causalface", out);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  expect_steps(second, "up to date");
  EXPECT_EQ(second.out.find("running"), std::string::npos) << second.out;
  EXPECT_EQ(read_file(out / "audit" / "results.json"), results);
}

TEST(RecipePaper001, AnImageThatChangesRerunsTheStepsThatReadItButNotThePrompts) {
  const fs::path dataset = temp_dir() / "causalface";
  fs::copy("tests/data/datasets/causalface", dataset, fs::copy_options::recursive);
  const fs::path out = temp_dir() / "out";
  const CliResult first = run_paper001(dataset, out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  // New pixels under the same name (a pose image takes a lighting image's bytes): the table is
  // the same, the embeddings are not.
  fs::copy_file(dataset / "final_picked_lighting/seed_7/black_male_l_-1.png",
                dataset / "final_picked_pose/seed_7/white_female_y_0.0.png",
                fs::copy_options::overwrite_existing);
  const CliResult edited = run_paper001(dataset, out);
  ASSERT_EQ(edited.exit_code, 0) << edited.out << edited.err;
  for (const char* name : {"dataset", "encode-images", "audit", "audit-age", "audit-smiling"}) {
    SCOPED_TRACE(name);
    EXPECT_NE(edited.out.find(std::string("step ") + name + ": running"), std::string::npos)
        << edited.out;
  }
  // The image table's bytes did not change, nor did the prompts or the model.
  for (const char* name : {"select", "encode-prompts", "table-age", "table-smiling"}) {
    SCOPED_TRACE(name);
    EXPECT_NE(edited.out.find(std::string("step ") + name + ": up to date"), std::string::npos)
        << edited.out;
  }
}

}  // namespace in_recipes_causalface_test
}  // namespace
