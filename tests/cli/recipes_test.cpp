// The paper recipes (examples/papers/*/run.sh) end to end: the real scripts under bash, with
// the built vlbias (VLBIAS=...), on the miniature dataset folders and the tests' tiny RANDOM
// CLIP folder; and the resumable steps of examples/papers/lib.sh on their own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_util.h"

namespace {
namespace in_recipes_test {

namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_bash;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

// Paper 004's recipe on DATASET into OUT, one image per race x gender cell, empty cells
// dropped (PER_CELL_MIN=1): the miniature FairFace has one or two adults in four of the
// fourteen cells, so the paper's 2,000 (or any n with every cell kept) stops at the sample.
const char* const kSmallRun = "N_PER_CELL=1 PER_CELL_MIN=1 bash examples/papers/004/run.sh ";

CliResult run_paper004(const fs::path& dataset, const fs::path& out) {
  return run_bash(kSmallRun + shell_quote(dataset.string()) + " tests/fixtures/encode/e2e/hf " +
                  shell_quote(out.string()));
}

const char* const kPaper004Steps[] = {"dataset",        "sample", "encode-images",
                                      "encode-prompts", "faces",  "audit"};

TEST(RecipePaper004, RunsFromTheMiniatureFairFaceToTheReportAndSkipsEveryStepTheSecondTime) {
  const fs::path out = temp_dir() / "run 004";  // a space: every path is quoted
  const CliResult first = run_paper004("tests/data/datasets/fairface", out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  for (const char* name : kPaper004Steps) {
    SCOPED_TRACE(name);
    EXPECT_NE(first.out.find(std::string("step ") + name + ": running"), std::string::npos)
        << first.out;
  }
  const std::string results = read_file(out / "audit" / "results.json");
  EXPECT_NE(results.find("\"kind\": \"trait-pairs\""), std::string::npos) << results;
  EXPECT_NE(results.find("\"confidence\": {"), std::string::npos);
  EXPECT_NE(results.find("\"pair\": \"dominant/agentic\""), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "audit" / "tables" / "confidence_tests.csv"));
  EXPECT_TRUE(fs::exists(out / "audit" / "report.html"));
  EXPECT_NE(first.out.find("report.html"), std::string::npos) << first.out;
  // Fig. 2: one map per sampled image, the overlays of each group's most confident.
  EXPECT_NE(results.find("\"explain\": {"), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "audit" / "explain" / "maps.npy"));
  EXPECT_TRUE(fs::exists(out / "audit" / "explain" / "overlays"));

  const CliResult second = run_paper004("tests/data/datasets/fairface", out);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  for (const char* name : kPaper004Steps) {
    SCOPED_TRACE(name);
    EXPECT_NE(second.out.find(std::string("step ") + name + ": up to date"), std::string::npos)
        << second.out;
  }
  EXPECT_EQ(second.out.find("running"), std::string::npos) << second.out;
  EXPECT_EQ(read_file(out / "audit" / "results.json"), results);
}

TEST(RecipePaper004, RerunsTheStepsAfterTheDatasetWhenALabelChangesButNotWhenFilesAreTouched) {
  const fs::path dataset = temp_dir() / "fairface";
  fs::copy("tests/data/datasets/fairface", dataset, fs::copy_options::recursive);
  const fs::path out = temp_dir() / "out";
  const CliResult first = run_paper004(dataset, out);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

  // New timestamps, the same bytes: content hashes, so nothing reruns.
  const CliResult touched = run_bash(
      "find " + shell_quote(dataset.string()) + " -type f -exec touch {} + && " + kSmallRun +
      shell_quote(dataset.string()) + " tests/fixtures/encode/e2e/hf " + shell_quote(out.string()));
  ASSERT_EQ(touched.exit_code, 0) << touched.out << touched.err;
  EXPECT_EQ(touched.out.find("running"), std::string::npos) << touched.out;

  // train/4.jpg (Indian, 20-29) becomes a man: a new cell, so a new sample and new embeddings.
  const fs::path labels = dataset / "fairface_label_train.csv";
  std::string text = read_file(labels);
  const std::string row = "train/4.jpg,20-29,Female,";
  ASSERT_NE(text.find(row), std::string::npos);
  text.replace(text.find(row), row.size(), "train/4.jpg,20-29,Male,");
  std::ofstream(labels, std::ios::binary) << text;

  const CliResult edited = run_paper004(dataset, out);
  ASSERT_EQ(edited.exit_code, 0) << edited.out << edited.err;
  for (const char* name : {"dataset", "sample", "encode-images", "faces", "audit"}) {
    SCOPED_TRACE(name);
    EXPECT_NE(edited.out.find(std::string("step ") + name + ": running"), std::string::npos)
        << edited.out;
  }
  // The prompts and the model did not change.
  EXPECT_NE(edited.out.find("step encode-prompts: up to date"), std::string::npos) << edited.out;
  EXPECT_NE(read_file(out / "sample.csv").find("Male,Indian"), std::string::npos)
      << read_file(out / "sample.csv");
}

// lib.sh alone: a step whose command fails leaves no stamp and runs again; a step whose output
// was deleted runs again; a changed command line runs again.
TEST(RecipeSteps, RunAgainAfterAFailureAMissingOutputOrANewCommand) {
  const fs::path dir = temp_dir() / "steps dir";
  fs::create_directories(dir);
  const std::string prelude =
      "set -euo pipefail; source examples/papers/lib.sh; OUT_DIR=" + shell_quote(dir.string()) +
      "; cd \"$OUT_DIR\"; ";
  const CliResult failed = run_bash(prelude + "step s --out o.txt -- false");
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("step s: failed"), std::string::npos) << failed.err;
  EXPECT_FALSE(fs::exists(dir / ".steps" / "s.sha256"));

  const std::string make_o = "step s --in in.txt --out o.txt -- cp in.txt o.txt";
  const CliResult ran = run_bash(prelude + "echo a > in.txt; " + make_o + "; " + make_o);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "step s: running\nstep s: up to date\n");

  const CliResult again =
      run_bash(prelude + "rm o.txt; " + make_o + "; echo b > in.txt; " + make_o + "; " +
               "step s --in in.txt --out o.txt -- cp -f in.txt o.txt");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "step s: running\nstep s: running\nstep s: running\n");
  EXPECT_EQ(read_file(dir / "o.txt"), "b\n");
}

// resume_or_fresh: a step's command continues the run folder an interrupted attempt with the same
// inputs left, and starts afresh (the folder removed) when an input changed.
TEST(RecipeSteps, ARunFolderIsResumedForTheSameInputsAndStartedAfreshForNewOnes) {
  const fs::path dir = temp_dir() / "resume dir";
  fs::create_directories(dir);
  // f records how it found the folder, leaves a partial answer in it, and fails the first time
  // (an interrupted generate); later it succeeds.
  const std::string prelude =
      "set -euo pipefail; source examples/papers/lib.sh; OUT_DIR=" + shell_quote(dir.string()) +
      "; cd \"$OUT_DIR\"; f() { if resume_or_fresh run; then echo resume >>log; else echo fresh "
      ">>log; fi; mkdir -p run; [[ -e run/partial ]] && echo kept >>log; touch run/partial; "
      "[[ -e interrupted ]] || { touch interrupted; return 1; }; touch o; }; ";
  const std::string make_o = "step s --in in.txt --out o -- f";
  const CliResult interrupted = run_bash(prelude + "echo a > in.txt; " + make_o);
  EXPECT_NE(interrupted.exit_code, 0);
  const CliResult resumed = run_bash(prelude + make_o);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(read_file(dir / "log"), "fresh\nresume\nkept\n");
  const CliResult edited = run_bash(prelude + "echo b > in.txt; " + make_o);
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  EXPECT_EQ(read_file(dir / "log"), "fresh\nresume\nkept\nfresh\n");  // run/partial removed
  const CliResult outside = run_bash(prelude + "resume_or_fresh run");
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.err.find("call it from a step's command"), std::string::npos) << outside.err;
}

}  // namespace in_recipes_test
}  // namespace
