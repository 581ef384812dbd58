// The run store (run_store.h): states move once, resuming keeps everything, hostile files are
// refused with a clear error, concurrent recording loses nothing, and a process killed with
// SIGKILL in the middle of recording leaves a store that resumes to the same end state as a
// clean run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/generate/run_store.h"

namespace vlbias {
namespace {
namespace in_run_store_test {

namespace fs = std::filesystem;
using testing_util::error_of;

fs::path fresh_dir() {
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_store_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::pair<std::string, std::string>> requests(std::size_t n) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.emplace_back("img" + std::to_string(i) + "|describe|0",
                     "{\"prompt\": \"describe\", \"image\": " + std::to_string(i) + "}");
  }
  return out;
}

TEST(RunStore, RestoreCopiesAnotherStoresRowsWholeAndRefusesWhatItCannotPlace) {
  const fs::path dir = fresh_dir();
  RunStore shard(dir / "shard.sqlite", "lvlm v1");
  shard.add(requests(3));
  shard.record_attempt("img1|describe|0", "HTTP 503", 503, 0.5);
  shard.record_failed("img1|describe|0", "HTTP 400: too small", 400, 0.25);
  shard.record_done("img2|describe|0", "{\"text\": \"a person\"}", 200, 0.125);
  std::vector<RequestRecord> rows;
  shard.for_each([&](const RequestRecord& r) {
    if (r.status != RequestStatus::Pending) rows.push_back(r);
  });
  ASSERT_EQ(rows.size(), 2u);

  RunStore merged(dir / "merged.sqlite", "lvlm v1");
  merged.add(requests(4));
  merged.restore(rows, "shard 1");
  for (const RequestRecord& want : rows) {
    SCOPED_TRACE(want.key);
    const RequestRecord got = merged.get(want.key);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.attempts, want.attempts);
    EXPECT_EQ(got.http_status, want.http_status);
    EXPECT_EQ(got.response, want.response);
    EXPECT_EQ(got.error, want.error);
    EXPECT_EQ(got.latency_s, want.latency_s);
    EXPECT_EQ(got.updated_utc, want.updated_utc);
  }
  EXPECT_EQ(merged.get("img1|describe|0").attempts, 2);
  EXPECT_EQ(merged.counts().pending, 2u);

  // Given twice, unknown, or with another request: refused, and nothing of the batch is kept.
  RequestRecord fresh = merged.get("img3|describe|0");
  fresh.status = RequestStatus::Done;
  EXPECT_NE(error_of<InputError>([&] {
              merged.restore({fresh, rows[0]}, "shard 2");
            }).find("shard 2: request 'img1|describe|0' is also in another shard's store"),
            std::string::npos);
  EXPECT_EQ(merged.get("img3|describe|0").status, RequestStatus::Pending);
  RequestRecord unknown = fresh;
  unknown.key = "img9|describe|0";
  EXPECT_NE(error_of<InputError>([&] {
              merged.restore({unknown}, "shard 2");
            }).find("which the job's manifest and spec do not ask for"),
            std::string::npos);
  RequestRecord changed = fresh;
  changed.request = "{}";
  EXPECT_NE(error_of<InputError>([&] {
              merged.restore({changed}, "shard 2");
            }).find("differs from what the job asks now"),
            std::string::npos);
}

TEST(RunStore, StatesMoveOnceAndCount) {
  const fs::path path = fresh_dir() / "run.sqlite";
  RunStore store(path, "lvlm v1");
  EXPECT_EQ(store.add(requests(5)), 5u);
  EXPECT_EQ(store.pending(10),
            (std::vector<std::string>{"img0|describe|0", "img1|describe|0", "img2|describe|0",
                                      "img3|describe|0", "img4|describe|0"}));
  EXPECT_EQ(store.pending(2, 1), (std::vector<std::string>{"img1|describe|0", "img2|describe|0"}));
  store.record_attempt("img0|describe|0", "HTTP 429: slow down", 429, 0.01);
  store.record_done("img0|describe|0", "{\"text\": \"a person\"}", 200, 0.2);
  store.record_refused("img1|describe|0", "{\"text\": \"I can't help\"}", "refusal", 200, 0.1);
  store.record_failed("img2|describe|0", "HTTP 500 after 5 attempts", 500, 0.3);
  const RequestRecord r0 = store.get("img0|describe|0");
  EXPECT_EQ(r0.status, RequestStatus::Done);
  EXPECT_EQ(r0.attempts, 2);
  EXPECT_EQ(r0.http_status, 200);
  EXPECT_EQ(r0.error, "");
  EXPECT_EQ(r0.response, "{\"text\": \"a person\"}");
  EXPECT_FALSE(r0.updated_utc.empty());
  EXPECT_EQ(store.get("img1|describe|0").error, "refusal");
  const StoreCounts c = store.counts();
  EXPECT_EQ(c.pending, 2u);
  EXPECT_EQ(c.done, 1u);
  EXPECT_EQ(c.refused, 1u);
  EXPECT_EQ(c.failed, 1u);
  EXPECT_EQ(c.total(), 5u);
  // A final row is never recorded again; an unknown key is an input error.
  EXPECT_NE(error_of<InternalError>([&] {
              store.record_done("img0|describe|0", "{}", 200, 0);
            }).find("already done"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { store.record_done("nope", "{}", 200, 0); }).find("'nope'"),
            std::string::npos);
  EXPECT_THROW(store.get("nope"), InputError);
  EXPECT_EQ(store.retry_failed(), 1u);
  EXPECT_EQ(store.get("img2|describe|0").status, RequestStatus::Pending);
  EXPECT_EQ(store.get("img2|describe|0").attempts, 1);
}

TEST(RunStore, ResumingKeepsStateAndRefusesAnotherRun) {
  const fs::path path = fresh_dir() / "run.sqlite";
  {
    RunStore store(path, "lvlm v1");
    store.add(requests(3));
    store.record_done("img1|describe|0", "{}", 200, 0.1);
  }
  RunStore again(path, "lvlm v1");
  EXPECT_EQ(again.add(requests(4)), 1u);  // only the new key
  EXPECT_EQ(again.get("img1|describe|0").status, RequestStatus::Done);
  EXPECT_EQ(again.counts().pending, 3u);
  auto changed = requests(3);
  changed[2].second = "{\"prompt\": \"other\"}";
  EXPECT_NE(error_of<UsageError>([&] { again.add(changed); }).find("changed under the run"),
            std::string::npos);
  EXPECT_EQ(again.counts().total(), 4u);  // the failed add left nothing behind
  EXPECT_NE(error_of<UsageError>([&] { RunStore other(path, "lvlm v2"); }).find("another run"),
            std::string::npos);
}

TEST(RunStore, BadRequestsAreInputErrors) {
  RunStore store(fresh_dir() / "run.sqlite", "x");
  EXPECT_NE(error_of<InputError>([&] {
              store.add({{"", "{}"}});
            }).find("empty key"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] {
              store.add({{"k", "{}"}, {"k", "[]"}});
            }).find("twice"),
            std::string::npos);
  EXPECT_EQ(store.add({{"k", "{}"}, {"k", "{}"}}), 1u);  // the same pair twice is one request
}

TEST(RunStore, HostileFilesAreRefusedClearly) {
  const fs::path dir = fresh_dir();
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  };
  const fs::path text = write("text.sqlite", "key,request\nk,{}\n");
  EXPECT_NE(error_of<InputError>([&] { RunStore s(text, "x"); }).find("not a vlbias run store"),
            std::string::npos);
  std::string header("SQLite format 3\0", 16);
  const fs::path truncated = write("truncated.sqlite", header + std::string(40, '\xff'));
  EXPECT_NE(error_of<InputError>([&] { RunStore s(truncated, "x"); }).find(truncated.string()),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { RunStore s(dir, "x"); }).find("is a folder"),
            std::string::npos);
  EXPECT_THROW(RunStore s(dir / "missing" / "run.sqlite", "x"), InputError);
  // Someone else's SQLite database.
  { RunStore s(dir / "ours.sqlite", "x"); }
  const fs::path other = dir / "other.sqlite";
  fs::copy_file(dir / "ours.sqlite", other);
  {
    // Turn it into a database without our meta table by renaming it through SQLite itself:
    // open as a store is impossible, so corrupt the table name in place (same length).
    std::fstream f(other, std::ios::in | std::ios::out | std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string bytes = ss.str();
    for (std::size_t p; (p = bytes.find("vlbias_meta")) != std::string::npos;)
      bytes.replace(p, 11, "other_table");
    f.seekp(0);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  EXPECT_THROW(RunStore s(other, "x"), InputError);
}

TEST(RunStore, ExportWritesJsonlInOrder) {
  const fs::path dir = fresh_dir();
  RunStore store(dir / "run.sqlite", "x");
  store.add({{"a", "{\"p\": 1}"}, {"b", "not json"}, {"c", "{}"}});
  store.record_done("a", "{\"text\": \"hi\", \"toxicity\": 0.25}", 200, 0.5);
  store.record_refused("b", "blocked by the content filter", "content_filter", 400, 0.1);
  store.export_jsonl(dir / "out.jsonl");
  std::ifstream in(dir / "out.jsonl");
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["key"], "a");
  EXPECT_EQ(rows[0]["status"], "done");
  EXPECT_EQ(rows[0]["response"]["toxicity"], 0.25);
  EXPECT_EQ(rows[0]["request"]["p"], 1);
  EXPECT_EQ(rows[1]["request"], "not json");
  EXPECT_EQ(rows[1]["response"], "blocked by the content filter");
  EXPECT_EQ(rows[1]["status"], "refused");
  EXPECT_EQ(rows[1]["error"], "content_filter");
  EXPECT_EQ(rows[2]["status"], "pending");
  EXPECT_TRUE(rows[2]["response"].is_null());
}

TEST(RunStore, ConcurrentRecordingLosesNothing) {
  RunStore store(fresh_dir() / "run.sqlite", "x");
  const auto reqs = requests(2000);
  store.add(reqs);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < reqs.size(); i += 8) {
        store.record_done(reqs[i].first, "{\"i\": " + std::to_string(i) + "}", 200, 0.0);
      }
    });
  }
  for (auto& th : threads) th.join();
  const StoreCounts c = store.counts();
  EXPECT_EQ(c.done, 2000u);
  EXPECT_EQ(c.pending, 0u);
  EXPECT_EQ(store.get(reqs[1234].first).attempts, 1);
}

// A real child process records results and is killed with SIGKILL mid-run; the store it
// leaves resumes to exactly the state of a clean run.
TEST(RunStore, SurvivesKillNineAndResumesToTheCleanResult) {
  const fs::path dir = fresh_dir();
  const fs::path path = dir / "run.sqlite";
  const auto reqs = requests(3000);
  {
    RunStore store(path, "crash");
    store.add(reqs);
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      RunStore store(path, "crash");
      // Paced (as real requests are) so the parent sees it mid-run: 3000 x 300 us >= 0.9 s.
      for (const auto& [key, request] : reqs) {
        store.record_done(key, request, 200, 0.0);
        usleep(300);
      }
    } catch (...) {
    }
    _exit(0);
  }
  // Kill it once some, but not all, results are in.
  for (int i = 0; i < 2000; ++i) {
    usleep(1000);
    RunStore peek(path, "crash");
    if (peek.counts().done >= 200) break;
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child finished before it was killed";

  RunStore store(path, "crash");
  const StoreCounts after_crash = store.counts();
  EXPECT_EQ(after_crash.total(), reqs.size());
  EXPECT_GT(after_crash.done, 0u);
  EXPECT_GT(after_crash.pending, 0u);
  EXPECT_EQ(store.add(reqs), 0u);  // --resume adds nothing
  for (std::vector<std::string> batch; !(batch = store.pending(500)).empty();) {
    for (const std::string& key : batch) store.record_done(key, store.get(key).request, 200, 0.0);
  }
  store.export_jsonl(dir / "resumed.jsonl");

  RunStore clean(dir / "clean.sqlite", "crash");
  clean.add(reqs);
  for (const auto& [key, request] : reqs) clean.record_done(key, request, 200, 0.0);
  clean.export_jsonl(dir / "clean.jsonl");
  auto read = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(read(dir / "resumed.jsonl"), read(dir / "clean.jsonl"));
  for (const auto& [key, request] : reqs) ASSERT_EQ(store.get(key).attempts, 1) << key;
}

}  // namespace in_run_store_test
}  // namespace
}  // namespace vlbias
