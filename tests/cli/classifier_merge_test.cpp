// `vlbias score classifier --shard I/N` and `vlbias merge OUT_DIR SHARD_DIR...`: the merged
// scored.jsonl is the one-process file byte for byte; shards of another job, a shard missing
// and a scored.jsonl that does not hold its chunks are refused naming the shard.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_classifier_merge_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;
using vlbias::testing_util::fixture_json;

const std::string kModels = "tests/fixtures/classifier/";

// The fixture's hostile texts twice, with an id column (JSONL).
fs::path texts_table() {
  const fs::path p = temp_dir() / "texts.jsonl";
  std::ofstream out(p, std::ios::binary);
  std::size_t id = 0;
  for (int copy = 0; copy < 2; ++copy) {
    for (const auto& t : fixture_json("classifier/expected.json")["texts"]) {
      out << json{{"id", id++}, {"text", t["text"]}}.dump() << "\n";
    }
  }
  return p;
}

std::string job(const std::string& model) {
  return "score classifier --model " + kModels + model + " " + shell_quote(texts_table().string()) +
         " --chunk 3 --batch 2";
}

// Shards 0..count-1 of `model` into temp_dir()/dir/I; returns them shell-quoted, last first.
std::string make_shards(const std::string& dir, std::size_t count,
                        const std::string& model = "bert_multilabel") {
  std::string shards;
  for (std::size_t i = 0; i < count; ++i) {
    const CliResult r =
        run_cli(job(model) + " --shard " + std::to_string(i) + "/" + std::to_string(count) +
                " --out " + shell_quote((temp_dir() / dir / "{shard}").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    shards = shell_quote((temp_dir() / dir / std::to_string(i)).string()) + " " + shards;
  }
  return shards;
}

std::string shard(const std::string& dir, std::size_t i) {
  return shell_quote((temp_dir() / dir / std::to_string(i)).string());
}

CliResult merge(const std::string& out, const std::string& shards) {
  return run_cli("merge " + shell_quote((temp_dir() / out).string()) + " " + shards);
}

TEST(CliClassifierMerge, ShardsMergeToTheSingleRunsScoredJsonl) {
  const fs::path single = temp_dir() / "single";
  ASSERT_EQ(run_cli(job("bert_multilabel") + " --out " + shell_quote(single.string())).exit_code,
            0);
  for (const std::size_t count : {2u, 3u, 7u}) {
    SCOPED_TRACE(count);
    const std::string dir = "s" + std::to_string(count);
    const CliResult r = merge("m" + std::to_string(count), make_shards(dir, count));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const fs::path out = temp_dir() / ("m" + std::to_string(count));
    EXPECT_EQ(read_file(out / "scored.jsonl"), read_file(single / "scored.jsonl"));
    const json a = json::parse(read_file(single / "manifest.json"));
    const json b = json::parse(read_file(out / "manifest.json"));
    EXPECT_EQ(b["truncated"], a["truncated"]);
    EXPECT_EQ(b["empty_texts"], a["empty_texts"]);
    EXPECT_EQ(b["input"], a["input"]);
    EXPECT_EQ(b["output"], a["output"]);
    EXPECT_EQ(b["merged_from"].size(), count);
    EXPECT_FALSE(b.contains("shard"));
  }
}

TEST(CliClassifierMerge, ShardsOfAnotherJobOrAMissingShardAreNamed) {
  make_shards("a", 3);
  make_shards("other", 3, "distilbert_single");
  CliResult r = merge("out", shard("a", 0) + " " + shard("a", 2));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Shard 1 of 3 is missing"), std::string::npos) << r.err;
  r = merge("out", shard("a", 0) + " " + shard("other", 1) + " " + shard("a", 2));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("its model is"), std::string::npos) << r.err;
  const fs::path whole = temp_dir() / "whole";
  ASSERT_EQ(run_cli(job("bert_multilabel") + " --out " + shell_quote(whole.string())).exit_code, 0);
  r = merge("out", shell_quote(whole.string()) + " " + shard("a", 1));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a shard"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(temp_dir() / "out" / "scored.jsonl"));
}

TEST(CliClassifierMerge, AScoredFileThatDoesNotHoldItsChunksIsNamed) {
  const std::string all = make_shards("a", 2);
  const fs::path scored = temp_dir() / "a" / "1" / "scored.jsonl";
  const std::string good = read_file(scored);
  std::ofstream(scored, std::ios::binary) << good.substr(0, good.rfind('\n', good.size() - 2) + 1);
  CliResult r = merge("out", all);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds fewer rows than its chunks"), std::string::npos) << r.err;
  std::ofstream(scored, std::ios::binary) << good << "{\"id\": 99}\n";
  r = merge("out", all);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds more rows than its chunks"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(temp_dir() / "out" / "scored.jsonl"));
}

}  // namespace in_classifier_merge_test
}  // namespace
