// Sharded request jobs (generate.h, "shards and their merge"; docs/scaling.md): `--shard
// I/N` on generate lvlm|t2i and score perspective|moderation|judge against in-process servers
// on 127.0.0.1 that answer deterministically; one process vs three shards merged by
// merge_run_shards, every export compared byte for byte; the merge's refusals, each naming
// the shard folder; a shard resumed alone.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "generate/http_test_server.h"
#include "generate_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/generate/generate.h"
#include "vlbias/io/base64.h"
#include "vlbias/io/run/shard.h"

namespace vlbias {
namespace {
namespace in_shard_requests_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using nlohmann::json;
using test_http::Request;
using test_http::Response;
using test_http::Server;
using namespace generate_test;  // NOLINT: the shared fixtures

constexpr std::size_t kShards = 3;

// An LVLM server: the answer names the image, prompt and seed; one request fails for good
// (400) and one is refused, so the merge carries every status.
Server lvlm_server(const ImageIndex& images) {
  return Server([&images](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    const std::string prompt = c.prompt == kPrompts[0] ? "describe" : "job";
    const std::uint64_t seed = c.body.value("seed", 99);
    if (c.image == "png_l8.png" && prompt == "describe" && seed == 0)
      return reply(400, R"({"error":{"message":"image too small"}})");
    if (c.image == "jpg_444.jpg" && seed == 1)
      return reply(200, chat_answer("", "stop", "I can't help with identifying people."));
    return reply(200, chat_answer(expected_text(c.image, prompt, seed)));
  });
}

// requests.jsonl without latency_s (measured, so it differs between any two runs).
std::string without_latency(const fs::path& path) {
  std::string out;
  for (json row : read_jsonl(path)) {
    row.erase("latency_s");
    out += row.dump() + "\n";
  }
  return out;
}

// The store's rows in insertion order: key, status, attempts, http_status, response, error,
// latency_s, updated_utc (one string each).
std::vector<std::vector<std::string>> store_rows(const fs::path& store) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(store.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT key, status, attempts, http_status, response, error, latency_s, "
                     "updated_utc FROM requests ORDER BY seq",
                     -1, &s, nullptr);
  std::vector<std::vector<std::string>> rows;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int c = 0; c < 8; ++c) {
      const auto* text = sqlite3_column_text(s, c);
      row.emplace_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return rows;
}

// Changes a store with one SQL statement (a test's way to make a shard incomplete).
void sql(const fs::path& store, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

std::vector<fs::path> shard_dirs(const fs::path& dir, std::size_t count = kShards) {
  std::vector<fs::path> dirs;
  for (std::size_t i = 0; i < count; ++i) dirs.push_back(dir / "shards" / std::to_string(i));
  return dirs;
}

// Runs `command ... --out ONE` once whole and once per shard (--out SHARDS/{shard}).
void run_whole_and_shards(const std::string& command, const fs::path& dir,
                          std::size_t count = kShards) {
  const auto one = run_with_key(fmt::format("{} --out '{}'", command, (dir / "one").string()));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  for (std::size_t i = 0; i < count; ++i) {
    const auto r = run_with_key(fmt::format("{} --shard {}/{} --out '{}'", command, i, count,
                                            (dir / "shards" / "{shard}").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
}

// Merged and one-process exports equal byte for byte; the merged store holds every shard's
// rows unchanged (updated_utc included), in the one process's order.
void expect_merge_equals_one(const fs::path& dir, const std::vector<std::string>& exports) {
  const fs::path one = dir / "one", merged = dir / "merged";
  for (const std::string& name : exports) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(fs::exists(merged / name));
    EXPECT_EQ(read_file(merged / name), read_file(one / name));
  }
  EXPECT_EQ(without_latency(merged / "requests.jsonl"), without_latency(one / "requests.jsonl"));
  std::map<std::string, std::vector<std::string>> shard_rows;
  for (const fs::path& shard : shard_dirs(dir)) {
    for (auto& row : store_rows(shard / "store.sqlite")) shard_rows[row[0]] = row;
  }
  const auto merged_rows = store_rows(merged / "store.sqlite");
  const auto one_rows = store_rows(one / "store.sqlite");
  ASSERT_EQ(merged_rows.size(), one_rows.size());
  ASSERT_EQ(merged_rows.size(), shard_rows.size());
  for (std::size_t i = 0; i < merged_rows.size(); ++i) {
    EXPECT_EQ(merged_rows[i][0], one_rows[i][0]) << "order at " << i;
    EXPECT_EQ(merged_rows[i], shard_rows[merged_rows[i][0]]);
  }
  const json run = json::parse(read_file(merged / "run.json"));
  EXPECT_EQ(run["store"], json::parse(read_file(one / "run.json"))["store"]);
  ASSERT_EQ(run["merged_from"].size(), kShards);
  EXPECT_EQ(run["merged_from"][2]["shard"], 2);
  EXPECT_EQ(run["merged_from"][2]["dir"], (dir / "shards" / "2").string());
  EXPECT_EQ(run["shard"]["count"], 1);
}

TEST(ShardRequests, LvlmShardsMergeIntoWhatOneProcessWrites) {
  ImageIndex images;
  Server server = lvlm_server(images);
  const fs::path dir = temp_dir();
  write_lvlm_spec(dir, server);
  run_whole_and_shards(fmt::format("generate lvlm '{}'", (dir / "spec.yaml").string()), dir);

  // Each shard holds the answers about its own images, in manifest order, and says so. The
  // images of each shard by hashlib: int(sha256(id).hexdigest()[:16], 16) % 3 for img0..img5
  // is 1, 1, 2, 1, 2, 2 (shard 0 makes no request, and merges all the same).
  const std::vector<std::set<std::string>> expected_ids = {
      {}, {"img0", "img1", "img3"}, {"img2", "img4", "img5"}};
  std::size_t answers = 0;
  for (std::size_t i = 0; i < kShards; ++i) {
    SCOPED_TRACE(i);
    const fs::path shard = shard_dirs(dir)[i];
    std::vector<std::string> ids;
    for (const json& row : read_jsonl(shard / "generations.jsonl")) {
      EXPECT_EQ(shard_of_key(row["id"].get<std::string>(), kShards), i);
      ids.push_back(row["id"]);
      ++answers;
    }
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));  // img0..img5: manifest order
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), expected_ids[i]);
    const json run = json::parse(read_file(shard / "run.json"));
    EXPECT_EQ(run["shard"]["index"], i);
    EXPECT_EQ(run["shard"]["count"], kShards);
    EXPECT_EQ(run["shard"]["scheme"], kKeyScheme);
    EXPECT_EQ(run["shard"]["input_rows"], 6);
    EXPECT_EQ(run["job"]["endpoint"]["model"], "tiny-llava");
  }
  EXPECT_EQ(answers, read_jsonl(dir / "one" / "generations.jsonl").size());

  // No key in the environment (the spec names VLBIAS_TEST_API_KEY): a merge sends nothing.
  ::unsetenv("VLBIAS_TEST_API_KEY");
  const std::size_t served = server.requests();
  const JobSummary summary = merge_run_shards(dir / "merged", shard_dirs(dir));
  EXPECT_EQ(summary.counts.total(), 24u);
  EXPECT_EQ(summary.counts.failed, 1u);
  EXPECT_EQ(summary.counts.refused, 2u);
  expect_merge_equals_one(dir, {"generations.jsonl"});
  EXPECT_EQ(server.requests(), served);
}

TEST(ShardRequests, ModerationShardsWriteOnlyTheirRowsAndMergeExactly) {
  Server server([](const Request& req) {
    const std::string text = json::parse(req.body)["input"];
    const double score = static_cast<double>(text.size() % 10) / 10;
    return reply(200, json{{"model", "omni-moderation-test"},
                           {"results",
                            {{{"flagged", score > 0.5},
                              {"category_scores", {{"harassment", score}, {"hate", 0.01}}}}}}}
                          .dump());
  });
  const fs::path dir = temp_dir();
  std::string table = "text,group\n";
  for (int i = 0; i < 20; ++i)
    table += fmt::format("{},g{}\n", i == 7 ? "" : "text " + std::string(i, 'x'), i % 3);
  write(dir / "texts.csv", table);
  run_whole_and_shards(fmt::format("score moderation '{}' --endpoint '{}' --concurrency 4",
                                   (dir / "texts.csv").string(), server.url("/v1/moderations")),
                       dir);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < kShards; ++i) {
    const auto lines = read_jsonl(shard_dirs(dir)[i] / "scored.jsonl");
    rows += lines.size();
  }
  EXPECT_EQ(rows, 20u);  // the empty text (row 7) in its shard too, unsent
  merge_run_shards(dir / "merged", shard_dirs(dir));
  expect_merge_equals_one(dir, {"scored.jsonl"});
}

TEST(ShardRequests, PerspectiveShardsMergeExactly) {
  Server server([](const Request& req) {
    const std::string text = json::parse(req.body)["comment"]["text"];
    const double score = static_cast<double>(text.size() % 7) / 7;
    return reply(
        200,
        json{{"attributeScores", {{"TOXICITY", {{"summaryScore", {{"value", score}}}}}}}}.dump());
  });
  const fs::path dir = temp_dir();
  std::string table = "text\n";
  for (int i = 0; i < 12; ++i) table += fmt::format("comment {}\n", std::string(i, 'y'));
  write(dir / "texts.csv", table);
  run_whole_and_shards(
      fmt::format("score perspective '{}' --url '{}' --key-env VLBIAS_TEST_API_KEY "
                  "--max-qps 0",
                  (dir / "texts.csv").string(), server.url("/v1alpha1/analyze")),
      dir);
  // Through `vlbias merge`, the shards named last to first, with no key in the environment.
  std::string shards;
  for (const fs::path& d : shard_dirs(dir)) shards = "'" + d.string() + "' " + shards;
  const CliResult merged = run_cli("merge '" + (dir / "merged").string() + "' " + shards);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  expect_merge_equals_one(dir, {"scored.jsonl"});
}

TEST(ShardRequests, JudgeShardsMergeExactly) {
  Server server([](const Request& req) {
    const std::string prompt = json::parse(req.body)["messages"].back()["content"];
    return reply(200, chat_answer(prompt.size() % 2 ? "safe" : "unsafe\nS10"));
  });
  const fs::path dir = temp_dir();
  std::string table = "text\n";
  for (int i = 0; i < 15; ++i) table += fmt::format("answer number {}\n", i * 7);
  write(dir / "texts.csv", table);
  write(dir / "judge.yaml", fmt::format(R"(version: 1
kind: score-judge
endpoint: {{url: "{}", model: guard}}
prompt: "{{text}}"
parser: llama-guard
)",
                                        server.url("/v1/chat/completions")));
  run_whole_and_shards(fmt::format("score judge '{}' '{}'", (dir / "texts.csv").string(),
                                   (dir / "judge.yaml").string()),
                       dir);
  merge_run_shards(dir / "merged", shard_dirs(dir));
  expect_merge_equals_one(dir, {"scored.jsonl"});
}

TEST(ShardRequests, T2iShardsMergeImagesAndManifestExactly) {
  const std::string png = read_file(kImages / "png_1x1.png");
  const std::string jpg = read_file(kImages / "jpg_1x1.jpg");
  Server server([&](const Request& req) {
    const json b = json::parse(req.body);
    const int seed = b["seed"];
    const std::string image = base64_encode(seed % 2 ? jpg : png);
    return reply(200, json{{"images", {image}}, {"info", json{{"seed", seed}}.dump()}}.dump());
  });
  const fs::path dir = temp_dir();
  write_prompts(dir);
  write(dir / "spec.yaml", fmt::format(R"(version: 1
kind: generate-t2i
endpoint: {{api: sd-webui, url: "{}", model: sd-v1-5, timeout_s: 5}}
prompts: prompts.csv
images_per_prompt: 3
seed: 100
)",
                                       server.url("/sdapi/v1/txt2img")));
  run_whole_and_shards(fmt::format("generate t2i '{}'", (dir / "spec.yaml").string()), dir);
  merge_run_shards(dir / "merged", shard_dirs(dir));
  expect_merge_equals_one(dir, {"manifest.csv", "outcomes.csv"});
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "one" / "images")) {
    if (!entry.is_regular_file()) continue;
    const fs::path relative = fs::relative(entry.path(), dir / "one");
    EXPECT_EQ(read_file(dir / "merged" / relative), read_file(entry.path())) << relative;
    ++files;
  }
  EXPECT_EQ(files, 9u);
}

// The message of what `merge` throws; "" when it does not throw.
template <typename Error>
std::string merge_error(const fs::path& out, const std::vector<fs::path>& shards) {
  try {
    merge_run_shards(out, shards);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ShardRequests, MergeRefusesMissingDoubledMismatchedAndUnfinishedShardsNamingTheFolder) {
  ImageIndex images;
  Server server = lvlm_server(images);
  const fs::path dir = temp_dir();
  write_lvlm_spec(dir, server);
  const std::string command = fmt::format("generate lvlm '{}'", (dir / "spec.yaml").string());
  run_whole_and_shards(command, dir);
  const std::vector<fs::path> shards = shard_dirs(dir);
  auto expect_refused = [&](const std::vector<fs::path>& given, const std::string& name,
                            const std::string& words) {
    SCOPED_TRACE(words);
    fs::remove_all(dir / "merged");
    const std::string message = merge_error<InputError>(dir / "merged", given);
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_FALSE(fs::exists(dir / "merged" / "store.sqlite"));  // nothing half-merged is left
  };
  expect_refused({shards[0], shards[2]}, "shard 1 of 3 is missing", "shard 1 of 3 is missing");
  expect_refused({shards[0], shards[1], shards[2], shards[1]}, shards[1].string(), "give each");
  // Shards of other counts, another model, another input.
  const fs::path two = dir / "two";
  const auto r = run_with_key(fmt::format("{} --shard 1/2 --out '{}'", command, two.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_refused({shards[0], shards[1], two}, two.string(), "shard count");
  const fs::path other = dir / "other";
  write_lvlm_spec(other, server, "", "bigger-llava");
  ASSERT_EQ(run_with_key(fmt::format("generate lvlm '{}' --shard 2/3 --out '{}'",
                                     (other / "spec.yaml").string(), (other / "2").string()))
                .exit_code,
            0);
  expect_refused({shards[0], shards[1], other / "2"}, (other / "2").string(), "another job");
  write(dir / "images.csv", read_file(dir / "images.csv") + "img6,jpg_1x1.jpg,Asian,male\n");
  expect_refused(shards, (dir / "images.csv").string(), "changed since the shards read it");
  write(dir / "images.csv", read_file(other / "images.csv"));  // as it was
  // A shard still pending, and a hostile run.json.
  sql(shards[1] / "store.sqlite", "UPDATE requests SET status = 0 WHERE seq = 1");
  expect_refused(shards, shards[1].string(), "still pending");
  sql(shards[1] / "store.sqlite", "DELETE FROM requests WHERE seq = 1");
  expect_refused(shards, shards[1].string(), "lacks request");
  const std::string run_json = read_file(shards[2] / "run.json");
  write(shards[2] / "run.json", "{not json");
  expect_refused(shards, shards[2].string(), "run.json");
  json hostile = json::parse(run_json);
  hostile["shard"] = "two of three";
  write(shards[2] / "run.json", hostile.dump());
  expect_refused(shards, shards[2].string(), "'shard' is not an object");
  hostile = json::parse(run_json);
  hostile["kind"] = 3;
  write(shards[2] / "run.json", hostile.dump());
  expect_refused(shards, shards[2].string(), "not a run.json of a vlbias request job");
  hostile = json::parse(run_json);
  hostile["job"]["seeds"] = "zero";
  for (const fs::path& s : shards) {
    json changed = json::parse(read_file(s / "run.json"));
    changed["job"]["seeds"] = "zero";
    write(s / "run.json", changed.dump());
  }
  write(shards[2] / "run.json", hostile.dump());
  expect_refused(shards, shards[0].string(), "its job is not what vlbias writes");
  expect_refused({shards[0], dir / "nowhere", shards[2]}, (dir / "nowhere").string(),
                 "not a folder");
  EXPECT_NE(merge_error<UsageError>(shards[0], shards).find("output folder"), std::string::npos);
}

TEST(ShardRequests, AShardResumesAloneAndOnlyAsItself) {
  ImageIndex images;
  std::atomic<bool> healthy = false;
  Server server([&](const Request& req) {
    const ChatCall c = parse_chat(req, images);
    if (!healthy && c.image == "jpg_420.jpg") return reply(503, "down");
    const std::string prompt = c.prompt == kPrompts[0] ? "describe" : "job";
    return reply(200, chat_answer(expected_text(c.image, prompt, c.body.value("seed", 99))));
  });
  const fs::path dir = temp_dir();
  write_lvlm_spec(dir, server, "", "tiny-llava");
  // jpg_420.jpg is img1; its shard fails its requests first (attempts run out).
  const std::size_t shard = shard_of_key("img1", kShards);
  write(dir / "spec.yaml",
        read_file(dir / "spec.yaml")
            .replace(read_file(dir / "spec.yaml").find("max_attempts: 4"), 15, "max_attempts: 1"));
  const std::string command =
      fmt::format("generate lvlm '{}' --shard {}/{} --out '{}'", (dir / "spec.yaml").string(),
                  shard, kShards, (dir / "shard").string());
  ASSERT_EQ(run_with_key(command).exit_code, 0);
  EXPECT_EQ(json::parse(read_file(dir / "shard" / "run.json"))["store"]["failed"], 4);
  // Another shard's options on this folder: refused (the store's fingerprint has the shard).
  const auto wrong = run_with_key(fmt::format(
      "generate lvlm '{}' --shard {}/{} --resume --out '{}'", (dir / "spec.yaml").string(),
      (shard + 1) % kShards, kShards, (dir / "shard").string()));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("another run"), std::string::npos) << wrong.err;
  healthy = true;
  const auto resumed = run_with_key(command + " --resume --retry-failed");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const json run = json::parse(read_file(dir / "shard" / "run.json"));
  EXPECT_EQ(run["store"]["failed"], 0);
  EXPECT_EQ(run["this_run"]["added"], 0);
  EXPECT_EQ(run["this_run"]["done"], 4);
}

TEST(ShardRequests, ShardAutoReadsTheSlurmArrayAndFillsShardInOut) {
  ImageIndex images;
  Server server = lvlm_server(images);
  const fs::path dir = temp_dir();
  write_lvlm_spec(dir, server);
  const auto r = cli_util::run_cli(
      fmt::format("generate lvlm '{}' --shard auto --out '{}'", (dir / "spec.yaml").string(),
                  (dir / "s{shard}").string()),
      fmt::format("VLBIAS_TEST_API_KEY={} SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_COUNT=4 "
                  "SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=13",
                  kSecret));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json run = json::parse(read_file(dir / "s2" / "run.json"));
  EXPECT_EQ(run["shard"]["index"], 2);
  EXPECT_EQ(run["shard"]["count"], 4);
  EXPECT_NE(run["shard"]["source"].get<std::string>().find("Slurm"), std::string::npos);
  const auto bad = run_with_key(fmt::format("generate lvlm '{}' --shard 3/3 --out '{}'",
                                            (dir / "spec.yaml").string(), (dir / "x").string()));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("out of range"), std::string::npos) << bad.err;
}

}  // namespace in_shard_requests_test
}  // namespace
}  // namespace vlbias
