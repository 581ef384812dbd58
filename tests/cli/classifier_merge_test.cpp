// `vlbias score classifier --shard I/N` and `vlbias merge OUT_DIR SHARD_DIR...`: the merged
// scored.jsonl is the one-process file byte for byte; shards of another job, a shard missing
// and a scored.jsonl that does not hold its chunks, was edited or is another shard's (a link)
// are refused naming the shard; a shard may be named by its scored.jsonl or manifest.json.
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

// Two shards of 6 rows each (12 texts in chunks of 3: shard 0 holds chunks 0 and 2, shard 1
// chunks 1 and 3), where one shard's file can pass for the other's; returns them shell-quoted.
std::string equal_shards(const std::string& dir) {
  const fs::path table = temp_dir() / "twelve.jsonl";
  {
    std::ofstream out(table, std::ios::binary);
    const json texts = fixture_json("classifier/expected.json")["texts"];
    for (std::size_t id = 0; id < 12; ++id) {
      out << json{{"id", id}, {"text", texts[id]["text"]}}.dump() << "\n";
    }
  }
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const CliResult r =
        run_cli("score classifier --model " + kModels + "bert_multilabel " +
                shell_quote(table.string()) + " --chunk 3 --shard " + std::to_string(i) +
                "/2 --out " + shell_quote((temp_dir() / dir / "{shard}").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    shards += " " + shard(dir, i);
  }
  return shards;
}

void expect_refused(const std::string& shards, const std::string& want) {
  const CliResult r = merge("out", shards);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(temp_dir() / "out" / "scored.jsonl"));
}

TEST(CliClassifierMerge, AScoredFileLinkedToAnotherShardsIsRefused) {
  const std::string shards = equal_shards("e");
  const fs::path mine = temp_dir() / "e" / "1" / "scored.jsonl";
  const fs::path theirs = temp_dir() / "e" / "0" / "scored.jsonl";
  fs::remove(mine);
  fs::create_symlink(theirs, mine);
  expect_refused(shards, "e/1/scored.jsonl: is a symbolic link");
  fs::remove(mine);
  fs::create_hard_link(theirs, mine);
  expect_refused(shards, "are one file (the same inode)");
}

TEST(CliClassifierMerge, SwappedOrForgedRowsAreRefused) {
  const std::string shards = equal_shards("e");
  const fs::path scored = temp_dir() / "e" / "0" / "scored.jsonl";
  const std::string good = read_file(scored);
  const std::size_t first_end = good.find('\n') + 1;
  const std::size_t second_end = good.find('\n', first_end) + 1;
  // The first two rows swapped: each row's scores land on the other's input row.
  std::ofstream(scored, std::ios::binary) << good.substr(first_end, second_end - first_end)
                                          << good.substr(0, first_end) << good.substr(second_end);
  const std::string wrote = "e/0/scored.jsonl: is not the file shard 0 of 2 wrote";
  expect_refused(shards, wrote);
  // A text edited in place: the scores are no longer that text's.
  json row = json::parse(good.substr(0, first_end - 1));
  row["text"] = "forged";
  std::ofstream(scored, std::ios::binary) << row.dump() << "\n" << good.substr(first_end);
  expect_refused(shards, wrote);
}

TEST(CliClassifierMerge, AShardWithoutItsCheckOrWithAnAbsurdRowCountIsRefused) {
  const std::string shards = equal_shards("e");
  const fs::path manifest = temp_dir() / "e" / "1" / "manifest.json";
  const std::string good = read_file(manifest);
  json m = json::parse(good);
  m["shard"].erase("scored_sha256");
  std::ofstream(manifest) << m.dump(2);
  expect_refused(shards, "written by an older vlbias (its 'shard' has no 'scored_sha256'");
  // input.rows of 2^62 in every shard (they must agree): refused before a loop over its chunks.
  for (int i = 0; i < 2; ++i) {
    const fs::path f = temp_dir() / "e" / std::to_string(i) / "manifest.json";
    json j = json::parse(i == 1 ? good : read_file(f));
    j["input"]["rows"] = std::size_t{1} << 62;
    std::ofstream(f) << j.dump(2);
  }
  const CliResult r =
      run_cli("merge " + shell_quote((temp_dir() / "out").string()) + shards, "", 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("input.rows is 4611686018427387904, but the 2 shards hold 12 rows"),
            std::string::npos)
      << r.err;
}

TEST(CliClassifierMerge, AShardNamedByItsScoredFileOrManifestIsItsFolder) {
  const std::string shards = equal_shards("e");
  ASSERT_EQ(merge("byfolder", shards).exit_code, 0);
  const CliResult r =
      merge("byfile", shell_quote((temp_dir() / "e" / "0" / "scored.jsonl").string()) + " " +
                          shell_quote((temp_dir() / "e" / "1" / "manifest.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "byfile" / "scored.jsonl"),
            read_file(temp_dir() / "byfolder" / "scored.jsonl"));
}

}  // namespace in_classifier_merge_test
}  // namespace
