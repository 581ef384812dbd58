// `vlbias encode --shard I/N` and `vlbias merge`: shards of an encode / features job, merged,
// give the one-process output byte for byte (embeddings and rows file), whatever the order
// the shards are named in; shards of other jobs, a shard twice or missing, and rows out of
// place, rows files edited or swapped, files linked between shards and absurd counts are refused
// naming the shard; a shard may be named by its output file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/core/sha256.h"

namespace {
namespace in_encode_merge_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const std::string kDir = "tests/fixtures/encode/e2e/";

json manifest_of(const fs::path& out) {
  return json::parse(read_file(out.parent_path() / (out.stem().string() + ".manifest.json")));
}

// Runs `job` (an encode / features command line without --out) once whole into single/OUT and
// as `count` shards into shards/I/OUT, merges the shards (named last to first) into merged/OUT
// and checks the merged output and rows file against the single run's bytes.
void expect_merge_gives_the_single_run(const std::string& job, std::size_t count,
                                       const std::string& name = "emb.npy") {
  const fs::path root = temp_dir() / ("n" + std::to_string(count));
  const fs::path single = root / "single" / name, merged = root / "merged" / name;
  fs::create_directories(single.parent_path());
  fs::create_directories(merged.parent_path());
  CliResult r = run_cli(job + " --out " + shell_quote(single.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string shards;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string shard = std::to_string(i) + "/" + std::to_string(count);
    r = run_cli(job + " --shard " + shard + " --out " +
                shell_quote((root / "shards" / "{shard}" / name).string()));
    ASSERT_EQ(r.exit_code, 0) << shard << ": " << r.err;
    EXPECT_NE(r.err.find("(shard " + std::to_string(i) + " of "), std::string::npos) << r.err;
    shards = shell_quote((root / "shards" / std::to_string(i)).string()) + " " + shards;
  }
  r = run_cli("merge " + shell_quote(merged.string()) + " " + shards);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string stem = fs::path(name).stem().string();
  EXPECT_EQ(read_file(merged), read_file(single)) << "embeddings differ";
  EXPECT_EQ(read_file(merged.parent_path() / (stem + ".rows.csv")),
            read_file(single.parent_path() / (stem + ".rows.csv")));
  const json a = manifest_of(single), b = manifest_of(merged);
  EXPECT_EQ(b["failed"], a["failed"]);
  EXPECT_EQ(b["output"], a["output"]);
  EXPECT_EQ(b["input"], a["input"]);
  EXPECT_FALSE(b.contains("shard"));
  ASSERT_EQ(b["merged_from"].size(), count);
  for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(b["merged_from"][i]["index"], i);
}

TEST(CliEncodeMerge, ImageShardsMergeToTheSingleRunsBytes) {
  // 6 rows (a truncated JPEG and a missing file among them) in chunks of 2: shards of 2 chunks,
  // of 1, and with more shards than chunks (shard 3 of 4 is empty).
  const std::string job =
      "encode --model " + kDir + "hf --images " + kDir + "images.csv --chunk 2 --batch 2";
  for (const std::size_t count : {2u, 3u, 4u}) {
    SCOPED_TRACE(count);
    expect_merge_gives_the_single_run(job, count);
  }
}

TEST(CliEncodeMerge, TextShardsMergeToTheSingleRunsBytesAsSafetensors) {
  // Texts that a rows file must keep as written: digits, a formula, a comma, quotes, a newline.
  const fs::path texts = temp_dir() / "texts.csv";
  std::ofstream(texts) << "text\n007\n=1+1\n\"a, b\"\n\"say \"\"hi\"\"\"\n\"two\nlines\"\n"
                          "a photo of a person\n 3.5 \n";
  const std::string job = "encode --model " + kDir + "hf --texts " + shell_quote(texts.string()) +
                          " --chunk 3 --batch 2";
  expect_merge_gives_the_single_run(job, 2, "texts.safetensors");
}

TEST(CliEncodeMerge, FeatureShardsOfTheInceptionMergeToTheSingleRunsBytes) {
  const std::string job =
      "features --model tests/fixtures/encode/inception --images "
      "tests/fixtures/encode/inception/images --chunk 2 --batch 1";
  expect_merge_gives_the_single_run(job, 2);
}

TEST(CliEncodeMerge, ShardAutoReadsTheSlurmArray) {
  const fs::path out = temp_dir() / "s{shard}" / "emb.npy";
  const CliResult r =
      run_cli("encode --model " + kDir + "hf --images " + kDir +
                  "images.csv --chunk 2 --shard auto --out " + shell_quote(out.string()),
              "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=4 "
              "SLURM_ARRAY_TASK_MAX=6");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = manifest_of(temp_dir() / "s1" / "emb.npy");
  EXPECT_EQ(m["shard"]["index"], 1);
  EXPECT_EQ(m["shard"]["count"], 3);
  EXPECT_EQ(m["shard"]["scheme"], "chunk mod count");
  EXPECT_EQ(m["shard"]["items"], 2);  // chunk 1: rows 2 and 3
  EXPECT_EQ(m["input"]["items"], 6);
}

class CliEncodeMergeRefusal : public ::testing::Test {
 protected:
  // Shards 0..count-1 of the fixture images in chunks of `chunk` under temp_dir()/dir.
  static void make_shards(const std::string& dir, std::size_t count, std::size_t chunk = 2,
                          const std::string& model = "hf") {
    for (std::size_t i = 0; i < count; ++i) {
      const CliResult r = run_cli("encode --model " + kDir + model + " --images " + kDir +
                                  "images.csv --chunk " + std::to_string(chunk) + " --shard " +
                                  std::to_string(i) + "/" + std::to_string(count) + " --out " +
                                  shell_quote((temp_dir() / dir / "{shard}" / "emb.npy").string()));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static std::string shard(const std::string& dir, std::size_t i) {
    return shell_quote((temp_dir() / dir / std::to_string(i)).string());
  }
  // The merge of `shards` into a fresh output fails with exit code 2 and a message holding
  // `want`.
  static void expect_refused(const std::string& shards, const std::string& want) {
    const CliResult r =
        run_cli("merge " + shell_quote((temp_dir() / "out" / "emb.npy").string()) + " " + shards);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(temp_dir() / "out" / "emb.npy"));
  }
  void SetUp() override { fs::create_directories(temp_dir() / "out"); }
};

TEST_F(CliEncodeMergeRefusal, AMissingOrRepeatedShardIsNamed) {
  make_shards("a", 3);
  expect_refused(shard("a", 0) + " " + shard("a", 2), "Shard 1 of 3 is missing");
  expect_refused(shard("a", 0) + " " + shard("a", 1) + " " + shard("a", 1),
                 "are both shard 1 of 3");
}

TEST_F(CliEncodeMergeRefusal, ShardsOfAnotherJobAreNamed) {
  make_shards("a", 2);
  make_shards("chunk3", 2, 3);
  make_shards("three", 3);
  make_shards("oc", 2, 2, "open_clip");
  expect_refused(shard("a", 0) + " " + shard("chunk3", 1), "its chunk is 3, not 2");
  expect_refused(shard("a", 0) + " " + shard("three", 1), "is shard 1 of 3 but");
  expect_refused(shard("a", 0) + " " + shard("oc", 1), "its model is");
  // A whole run's output is no shard.
  const fs::path whole = temp_dir() / "whole" / "emb.npy";
  fs::create_directories(whole.parent_path());
  ASSERT_EQ(run_cli("encode --model " + kDir + "hf --images " + kDir + "images.csv --out " +
                    shell_quote(whole.string()))
                .exit_code,
            0);
  expect_refused(shard("a", 0) + " " + shell_quote(whole.parent_path().string()), "not a shard");
}

TEST_F(CliEncodeMergeRefusal, RowsOutOfTheirShardAreNamed) {
  make_shards("a", 2);
  // Shard 0 claims input row 2 (chunk 1, shard 1's).
  const fs::path rows = temp_dir() / "a" / "0" / "emb.rows.csv";
  std::string text = read_file(rows);
  const std::size_t at = text.find("\n1,");
  ASSERT_NE(at, std::string::npos) << text;
  const std::size_t comma = text.find(',', at + 3);
  text.replace(at + 3, comma - (at + 3), "2");
  std::ofstream(rows) << text;
  expect_refused(shard("a", 0) + " " + shard("a", 1), "which belongs to shard 1, not 0");
}

TEST_F(CliEncodeMergeRefusal, HostileManifestsAreInputErrors) {
  make_shards("a", 2);
  const fs::path manifest = temp_dir() / "a" / "1" / "emb.manifest.json";
  const std::string good = read_file(manifest);
  std::ofstream(manifest) << "{\"complete\": true, \"shard\": ";
  expect_refused(shard("a", 0) + " " + shard("a", 1), "emb.manifest.json");
  json m = json::parse(good);
  m["output"]["rows"] = "3";
  std::ofstream(manifest) << m.dump();
  expect_refused(shard("a", 0) + " " + shard("a", 1), "'rows' is \"3\", not a whole number");
  m = json::parse(good);
  m["shard"]["index"] = 7;
  std::ofstream(manifest) << m.dump();
  expect_refused(shard("a", 0) + " " + shard("a", 1), "shard 7 of 2 is out of range");
  m = json::parse(good);
  m["output"]["rows"] = 2;  // it holds 1 (row 2, broken.jpg, failed)
  std::ofstream(manifest) << m.dump();
  expect_refused(shard("a", 0) + " " + shard("a", 1), "its manifest says 2 x");
  fs::remove(manifest);
  expect_refused(shard("a", 0) + " " + shard("a", 1), "no *.manifest.json");
}

TEST_F(CliEncodeMergeRefusal, ANaNInAShardsEmbeddingsIsNamed) {
  make_shards("a", 2);
  const fs::path npy = temp_dir() / "a" / "1" / "emb.npy";
  std::string bytes = read_file(npy);
  const char nan[4] = {0x00, 0x00, static_cast<char>(0xc0), 0x7f};  // quiet NaN, little-endian
  bytes.replace(bytes.size() - 4, 4, nan, 4);
  std::ofstream(npy, std::ios::binary) << bytes;
  expect_refused(shard("a", 0) + " " + shard("a", 1),
                 "emb.npy: is not the file shard 1 of 2 wrote");
  // A NaN the shard itself wrote (its manifest records the file as it is) is named as well.
  const fs::path manifest = temp_dir() / "a" / "1" / "emb.manifest.json";
  json m = json::parse(read_file(manifest));
  m["shard"]["output_sha256"] = vlbias::sha256_file(npy.string());
  std::ofstream(manifest) << m.dump(2);
  expect_refused(shard("a", 0) + " " + shard("a", 1), "emb.npy: row 0 column 23 is nan");
}

TEST_F(CliEncodeMergeRefusal, OutOverAShardIsRefused) {
  make_shards("a", 2);
  const CliResult r =
      run_cli("merge " + shell_quote((temp_dir() / "a" / "0" / "emb.npy").string()) + " " +
              shard("a", 0) + " " + shard("a", 1));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("would overwrite shard"), std::string::npos) << r.err;
  const CliResult folder =
      run_cli("merge " + shell_quote(temp_dir().string()) + " " + shard("a", 0));
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.err.find("OUT names what to write"), std::string::npos) << folder.err;
}

// Data lines `a` and `b` (from 0) of the rows file `file` (row,input_row,path) swapped: their
// input_row cells only, or everything after the output row number (`whole_lines`).
void swap_rows_file_cells(const fs::path& file, std::size_t a, std::size_t b, bool whole_lines) {
  std::vector<std::string> lines;
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GT(lines.size(), std::max(a, b) + 1) << read_file(file);
  std::string& x = lines[a + 1];
  std::string& y = lines[b + 1];
  if (whole_lines) {
    // Everything after the output row number moves: input_row and path together.
    const std::size_t cx = x.find(','), cy = y.find(',');
    const std::string tail_x = x.substr(cx), tail_y = y.substr(cy);
    x = x.substr(0, cx) + tail_y;
    y = y.substr(0, cy) + tail_x;
  } else {
    // input_row only: row,input_row,path
    const std::size_t x1 = x.find(','), x2 = x.find(',', x1 + 1);
    const std::size_t y1 = y.find(','), y2 = y.find(',', y1 + 1);
    const std::string ix = x.substr(x1 + 1, x2 - x1 - 1), iy = y.substr(y1 + 1, y2 - y1 - 1);
    x = x.substr(0, x1 + 1) + iy + x.substr(x2);
    y = y.substr(0, y1 + 1) + ix + y.substr(y2);
  }
  std::ofstream out(file, std::ios::binary);
  for (const std::string& line : lines) out << line << "\n";
}

TEST_F(CliEncodeMergeRefusal, RowsSwappedOrEditedInAShardsRowsFileAreRefused) {
  // Shard 0 holds chunks 0 and 2 (input rows 0, 1, 4, 5; its output rows 0 and 1 are two rows
  // of chunk 0, so the swap keeps every row in its shard).
  make_shards("a", 2);
  const fs::path rows = temp_dir() / "a" / "0" / "emb.rows.csv";
  const std::string good = read_file(rows);
  const std::string wrote = "emb.rows.csv: is not the file shard 0 of 2 wrote";
  swap_rows_file_cells(rows, 0, 1, false);  // the embeddings would land at each other's rows
  expect_refused(shard("a", 0) + " " + shard("a", 1), wrote);
  std::ofstream(rows, std::ios::binary) << good;
  swap_rows_file_cells(rows, 0, 1, true);  // input_row and path moved together
  expect_refused(shard("a", 0) + " " + shard("a", 1), wrote);
  std::string forged = good;
  const std::size_t at = forged.find("images/");
  ASSERT_NE(at, std::string::npos) << good;
  forged.replace(at, 7, "photos/");
  std::ofstream(rows, std::ios::binary) << forged;
  expect_refused(shard("a", 0) + " " + shard("a", 1), wrote);
  // A failed item's name edited in a manifest: the items are no longer the job's.
  std::ofstream(rows, std::ios::binary) << good;
  const fs::path manifest = temp_dir() / "a" / "1" / "emb.manifest.json";
  json m = json::parse(read_file(manifest));
  ASSERT_FALSE(m["failed"].empty()) << m.dump();
  m["failed"][0]["item"] = "elsewhere.jpg";
  std::ofstream(manifest) << m.dump(2);
  expect_refused(shard("a", 0) + " " + shard("a", 1), "are not the job's items");
}

// Texts shards of equal size (4 texts in chunks of 2: shard 0 holds rows 0-1, shard 1 rows 2-3),
// where one shard's files can pass for the other's.
std::string equal_text_shards(const std::string& dir) {
  const fs::path texts = temp_dir() / "four.csv";
  std::ofstream(texts) << "text\na doctor\na nurse\na pilot\na farmer\n";
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const CliResult r =
        run_cli("encode --model " + kDir + "hf --texts " + shell_quote(texts.string()) +
                " --chunk 2 --shard " + std::to_string(i) + "/2 --out " +
                shell_quote((temp_dir() / dir / "{shard}" / "emb.npy").string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    shards += " " + shell_quote((temp_dir() / dir / std::to_string(i)).string());
  }
  return shards;
}

TEST_F(CliEncodeMergeRefusal, AShardsFileLinkedToAnotherShardsIsRefused) {
  const std::string shards = equal_text_shards("t");
  const fs::path mine = temp_dir() / "t" / "1" / "emb.npy";
  const fs::path theirs = temp_dir() / "t" / "0" / "emb.npy";
  fs::remove(mine);
  fs::create_symlink(theirs, mine);
  expect_refused(shards, "t/1/emb.npy: is a symbolic link");
  fs::remove(mine);
  fs::create_hard_link(theirs, mine);
  expect_refused(shards, "are one file (the same inode)");
}

TEST_F(CliEncodeMergeRefusal, AnAbsurdItemCountIsRefusedBeforeAnythingIsSized) {
  make_shards("a", 2);
  for (int i = 0; i < 2; ++i) {
    const fs::path manifest = temp_dir() / "a" / std::to_string(i) / "emb.manifest.json";
    json m = json::parse(read_file(manifest));
    m["input"]["items"] = std::size_t{1} << 62;
    std::ofstream(manifest) << m.dump(2);
  }
  const CliResult r = run_cli("merge " + shell_quote((temp_dir() / "out" / "emb.npy").string()) +
                                  " " + shard("a", 0) + " " + shard("a", 1),
                              "", 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("input.items is 4611686018427387904, but the 2 shards hold 6 items"),
            std::string::npos)
      << r.err;
}

TEST_F(CliEncodeMergeRefusal, AShardWithoutItsChecksIsRefusedAsWrittenByAnOlderVlbias) {
  make_shards("a", 2);
  const fs::path manifest = temp_dir() / "a" / "1" / "emb.manifest.json";
  json m = json::parse(read_file(manifest));
  m["shard"].erase("rows_sha256");
  std::ofstream(manifest) << m.dump(2);
  expect_refused(shard("a", 0) + " " + shard("a", 1),
                 "written by an older vlbias (its 'shard' has no 'rows_sha256'");
}

TEST(CliEncodeMerge, AShardsOutputFileNamesItsShard) {
  const std::string shards = equal_text_shards("t");
  const fs::path root = temp_dir();
  ASSERT_EQ(run_cli("merge " + shell_quote((root / "byfolder.npy").string()) + shards).exit_code,
            0);
  // The outputs as `ls` shows them, and a rows file: each finds the manifest beside it.
  const CliResult r = run_cli("merge " + shell_quote((root / "byfile.npy").string()) + " " +
                              shell_quote((root / "t" / "0" / "emb.npy").string()) + " " +
                              shell_quote((root / "t" / "1" / "emb.rows.csv").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(root / "byfile.npy"), read_file(root / "byfolder.npy"));
  // An output without its manifest says which file to give; shards given to a folder OUT say
  // to name an embedding file.
  fs::copy_file(root / "t" / "0" / "emb.npy", root / "lone.npy");
  CliResult lone = run_cli("merge " + shell_quote((root / "x.npy").string()) + " " +
                           shell_quote((root / "lone.npy").string()));
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_NE(lone.err.find("lone.manifest.json does not exist"), std::string::npos) << lone.err;
  lone = run_cli("merge " + shell_quote((root / "outdir").string()) + " " +
                 shell_quote((root / "t" / "0" / "emb.npy").string()));
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_NE(lone.err.find("give OUT as a .npy or .safetensors file"), std::string::npos)
      << lone.err;
}

TEST(CliEncodeMerge, AKilledShardResumesAloneToTheSameBytes) {
  // Shard 1 of 2 of 60 images in chunks of 4; killed after its first checkpoint, resumed.
  const fs::path table = temp_dir() / "many.csv";
  {
    std::ofstream f(table);
    f << "path\n";
    const fs::path abs = fs::path(VLBIAS_SOURCE_DIR) / kDir / "images";
    for (int c = 0; c < 15; ++c) {
      for (const char* n : {"a_photo.jpg", "b_rgba.png", "c_grey.png", "d_palette.png"}) {
        f << (abs / n).string() << "\n";
      }
    }
  }
  const std::string job = "encode --model " + kDir + "hf --images " + shell_quote(table.string()) +
                          " --chunk 4 --batch 2 --shard 1/2 --out ";
  const fs::path full = temp_dir() / "full" / "emb.npy", out = temp_dir() / "killed" / "emb.npy";
  ASSERT_EQ(run_cli(job + shell_quote(full.string())).exit_code, 0);
  // Start it in the background, wait for chunk 1 (the shard's first) and kill it.
  fs::create_directories(out.parent_path());
  vlbias::cli_util::run_shell("'" + std::string(vlbias::testing_util::vlbias_binary()) +
                              "' --threads 1 --quiet " + job + shell_quote(out.string()) +
                              " & pid=$!; for i in $(seq 600); do [ -e " +
                              shell_quote(out.string() + ".partial/chunk_000001.json") +
                              " ] && break; sleep 0.01; done; kill -9 $pid; wait $pid; true");
  // The manifest is written last: without it the run was interrupted (maybe after the .npy).
  if (!fs::exists(out.parent_path() / "emb.manifest.json")) {
    EXPECT_FALSE(fs::exists(out.string() + ".partial/chunk_000000.json"));  // shard 0's chunk
    const CliResult resumed = run_cli(job + shell_quote(out.string()) + " --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_GT(manifest_of(out)["resumed_items"].get<std::size_t>(), 0u);
  }
  EXPECT_EQ(read_file(out), read_file(full));
  EXPECT_EQ(read_file(out.parent_path() / "emb.rows.csv"),
            read_file(full.parent_path() / "emb.rows.csv"));
}

}  // namespace in_encode_merge_test
}  // namespace
