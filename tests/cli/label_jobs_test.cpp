// `vlbias label --chunk / --shard / --resume` and `vlbias merge` of label shards (issue 41;
// include/vlbias/labels/label_job.h). The shards of a CLIP labelling job (the tiny random CLIP of
// tests/fixtures/encode/e2e, with an unreadable and a missing image) merge into a LABELS.csv
// byte-identical to one process's; a merge of a shard missing, given twice, of another job or
// edited since is refused naming it; a run killed after its first checkpoint resumes to the
// uninterrupted bytes (an image changed meanwhile labelled again), and only as the same job (the
// key that differs named).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_label_jobs_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::run_killed_at_checkpoint;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kSource = fs::path(VLBIAS_SOURCE_DIR);
const fs::path kE2e = kSource / "tests/fixtures/encode/e2e";
const fs::path kFixtures = kSource / "tests/fixtures/labels";

std::string q(const fs::path& p) {
  return shell_quote(p.string());
}

// The fixture's clip job; `extra` adds options.
std::string clip_job(const fs::path& images, const std::string& extra,
                     const std::string& margin = "0.05") {
  return "--quiet label --images " + q(images) + " --model " + q(kE2e / "hf") + " --prompts " +
         q(kFixtures / "prompts.json") + " --attributes tone,mood --margin " + margin + extra;
}

TEST(CliLabelJobs, ShardsMergeIntoTheOneProcessTableByteForByte) {
  const fs::path images = kE2e / "images.csv";  // 6 items, 2 of them unreadable
  const fs::path whole = temp_dir() / "whole.csv";
  CliResult r = run_cli(clip_job(images, " --chunk 2 --out " + q(whole)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(whole.string() + ".partial"));
  EXPECT_FALSE(fs::exists(whole.string() + ".shard.json"));
  for (const std::size_t n : {2, 3, 5}) {
    SCOPED_TRACE(n);
    const fs::path dir = temp_dir() / ("shards" + std::to_string(n));
    std::string list;
    for (std::size_t i = 0; i < n; ++i) {
      r = run_cli(clip_job(images, " --chunk 2 --shard " + std::to_string(i) + "/" +
                                       std::to_string(n) + " --out " + q(dir / "{shard}/l.csv")));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const fs::path shard = dir / std::to_string(i) / "l.csv";
      ASSERT_TRUE(fs::exists(shard.string() + ".shard.json"));
      list = " " + q(shard) + list;  // any order
    }
    const fs::path merged = dir / "merged.csv";
    r = run_cli("merge " + q(merged) + list);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("4 of 6 items labelled (2 unreadable), 8 rows"), std::string::npos)
        << r.err;
    EXPECT_EQ(read_file(merged), read_file(whole));
  }
}

void expect_merge_refused(const std::string& args, const std::string& phrase) {
  SCOPED_TRACE(args);
  const CliResult r = run_cli("--quiet merge " + args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(phrase), std::string::npos) << r.err;
}

TEST(CliLabelJobs, AMergeOfShardsOfAnotherJobMissingTwiceOrEditedIsRefused) {
  const fs::path images = kE2e / "images.csv";
  const fs::path dir = temp_dir() / "bad_shards";
  for (const char* shard : {"0/2", "1/2"}) {
    ASSERT_EQ(run_cli(clip_job(images, std::string(" --chunk 2 --shard ") + shard + " --out " +
                                           q(dir / "{shard}.csv")))
                  .exit_code,
              0);
  }
  ASSERT_EQ(run_cli(clip_job(images, " --chunk 2 --shard 1/2 --out " + q(dir / "other_{shard}.csv"),
                             "0.5"))
                .exit_code,
            0);
  const std::string s0 = " " + q(dir / "0.csv"), s1 = " " + q(dir / "1.csv");
  const std::string out = q(dir / "merged.csv");
  expect_merge_refused(out + s0, "Shard 1 of 2 is missing");
  fs::copy_file(dir / "0.csv", dir / "copy.csv");
  fs::copy_file(dir / "0.csv.shard.json", dir / "copy.csv.shard.json");
  expect_merge_refused(out + s0 + " " + q(dir / "copy.csv"), "both shard 0 of 2");
  expect_merge_refused(out + s0 + " " + q(dir / "other_1.csv"), "its options is");
  expect_merge_refused(out + s0 + " " + q(images), "has no " + (images.string() + ".shard.json"));
  std::ofstream(dir / "1.csv", std::ios::app) << "x,,tone,warm,,,,,,,clip,m,s,p,o\n";
  expect_merge_refused(out + s0 + s1, "is not the table its records");
  EXPECT_FALSE(fs::exists(dir / "merged.csv"));
}

TEST(CliLabelJobs, ACheckpointIsResumedOnlyWithResumeAndOnlyAsTheSameJob) {
  const fs::path images = kE2e / "images.csv";
  const fs::path out = temp_dir() / "resume.csv";
  const fs::path partial = out.string() + ".partial";
  fs::create_directories(partial);
  std::ofstream(partial / "job.json") << "{\"labeller\": \"clip\", \"chunk\": 5}\n";
  CliResult r = run_cli(clip_job(images, " --out " + q(out)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pass --resume"), std::string::npos) << r.err;
  r = run_cli(clip_job(images, " --resume --out " + q(out)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Cannot resume " + partial.string() + ": its 'model' differs"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Kill -9 a run once its first checkpoint exists (or let it finish if it is faster), then resume
// after one image changed: the chunks holding it are labelled again (named in a warning), the
// others taken from the checkpoint, and the table is the uninterrupted run's on the images as
// they are now.
TEST(CliLabelJobs, ResumeAfterAKillGivesTheUninterruptedTable) {
  const fs::path images = temp_dir() / "img";
  fs::create_directories(images);
  const std::vector<std::string> names = {"a_photo.jpg", "b_rgba.png", "c_grey.png",
                                          "d_palette.png"};
  for (const std::string& name : names) fs::copy_file(kE2e / "images" / name, images / name);
  const fs::path table = temp_dir() / "many.csv";
  {
    std::ofstream f(table);
    f << "path\n";
    for (int c = 0; c < 40; ++c) {
      for (const std::string& name : names) f << (images / name).string() << "\n";
    }
  }
  const std::string job = clip_job(table, " --chunk 8 --batch 4");
  const std::string other = clip_job(table, " --chunk 8 --batch 4", "0.5");
  const fs::path out = temp_dir() / "killed.csv";
  const fs::path partial = out.string() + ".partial";
  const bool interrupted =
      run_killed_at_checkpoint(job + " --out " + q(out), partial / "chunk_000001.json", out);
  RecordProperty("interrupted", interrupted ? "yes" : "no");
  if (interrupted) {
    CliResult r = run_cli(job + " --out " + q(out));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
    r = run_cli(other + " --resume --out " + q(out));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("its 'options' differs"), std::string::npos) << r.err;
    fs::copy_file(images / "c_grey.png", images / "a_photo.jpg",
                  fs::copy_options::overwrite_existing);
    r = run_cli(job.substr(8) + " --resume --out " + q(out));  // without --quiet
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("changed since " + partial.string()), std::string::npos) << r.err;
  }
  const fs::path full = temp_dir() / "full.csv";
  ASSERT_EQ(run_cli(job + " --out " + q(full)).exit_code, 0);
  EXPECT_EQ(read_file(out), read_file(full));  // byte-identical to the uninterrupted run
  EXPECT_FALSE(fs::exists(partial));
}

}  // namespace in_label_jobs_test
}  // namespace
