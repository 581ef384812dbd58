// bench_shard_merge: sharding and merging a request job (generate.h, "shards and their
// merge"; docs/scaling.md). `vlbias score moderation` over a table of N texts against a local
// server that answers at once (tests/generate/http_test_server.h on 127.0.0.1): once whole,
// then as 4 shards one after another (the same total work), then merge_run_shards of the 4
// folders; the merged scored.jsonl must equal the whole run's byte for byte. Prints one JSON
// line: seconds of each step and the overhead of sharding.
//
//   bench_shard_merge [--rows N] [--shards K] [--concurrency C]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "../tests/generate/http_test_server.h"
#include "vlbias/core/log.h"
#include "vlbias/generate/generate.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t rows = 100'000, shards = 4, concurrency = 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rows") {
      rows = std::stoul(argv[i + 1]);
    } else if (a == "--shards") {
      shards = std::stoul(argv[i + 1]);
    } else if (a == "--concurrency") {
      concurrency = std::stoul(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: bench_shard_merge [--rows N] [--shards K] [--concurrency C]\n");
      return 2;
    }
  }
  vlbias::set_quiet(true);
  vlbias::test_http::Server server([](const vlbias::test_http::Request& req) {
    vlbias::test_http::Response r;
    const double score = static_cast<double>(req.body.size() % 100) / 100;
    r.body = fmt::format(
        R"({{"model":"omni-moderation-test","results":[{{"flagged":{},"category_scores":{{"harassment":{},"hate":0.01}}}}]}})",
        score > 0.5 ? "true" : "false", score);
    return r;
  });
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_bench_shard_merge_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream table(dir / "texts.csv");
    table << "id,text\n";
    for (std::size_t r = 0; r < rows; ++r) table << r << ",answer number " << r * 7919 << "\n";
  }
  vlbias::ModerationJob job;
  job.endpoint.url = server.url("/v1/moderations");
  job.endpoint.model = "omni-moderation-test";
  job.input = dir / "texts.csv";
  job.control.concurrency = concurrency;

  auto start = std::chrono::steady_clock::now();
  vlbias::score_moderation(job, dir / "whole");
  const double whole_s = seconds_since(start);

  double shards_s = 0, slowest_s = 0;
  std::vector<fs::path> dirs;
  for (std::size_t i = 0; i < shards; ++i) {
    vlbias::ModerationJob part = job;
    part.control.shard = vlbias::Shard{i, shards, "bench"};
    dirs.push_back(dir / fmt::format("shard{}", i));
    start = std::chrono::steady_clock::now();
    vlbias::score_moderation(part, dirs.back());
    const double s = seconds_since(start);
    shards_s += s;
    slowest_s = std::max(slowest_s, s);
  }
  start = std::chrono::steady_clock::now();
  const vlbias::JobSummary merged = vlbias::merge_run_shards(dir / "merged", dirs);
  const double merge_s = seconds_since(start);
  const bool same = slurp(dir / "merged" / "scored.jsonl") == slurp(dir / "whole" / "scored.jsonl");
  fmt::print(
      "{{\"rows\": {}, \"shards\": {}, \"concurrency\": {}, \"whole_s\": {:.3f}, "
      "\"shards_total_s\": {:.3f}, \"slowest_shard_s\": {:.3f}, \"merge_s\": {:.3f}, "
      "\"sharding_overhead\": {:.3f}, \"merged_requests\": {}, \"scored_identical\": {}}}\n",
      rows, shards, concurrency, whole_s, shards_s, slowest_s, merge_s, shards_s / whole_s - 1,
      merged.counts.total(), same);
  fs::remove_all(dir);
  return same ? 0 : 1;
}
