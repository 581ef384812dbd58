// bench_generate: the driver loop (driver.h) against a local server that answers instantly
// (tests/generate/http_test_server.h on 127.0.0.1): requests per second at concurrency 1, 8
// and 64, each request recorded in a fresh SQLite run store. Issue 9's goal: the client is
// never the bottleneck below 1,000 requests/s.
//
// Then the whole `vlbias generate lvlm` job (generate.h) at the same levels: six fixture
// images (JPEG and PNG) as base64 data URIs, the chat answers parsed, generations.jsonl and
// requests.jsonl exported; requests/s over the drive and over the whole job.
//
//   bench_generate [--requests N] [--concurrency 1,8,64] [--job-only 1]
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
#include "vlbias/generate/driver.h"
#include "vlbias/generate/generate.h"

int main(int argc, char** argv) {
  std::size_t requests = 5000;
  std::vector<std::size_t> levels{1, 8, 64};
  bool job_only = false;  // skip the bare driver loop (to measure the job's memory alone)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--requests") {
      requests = std::stoul(argv[i + 1]);
    } else if (a == "--job-only") {
      job_only = std::string(argv[i + 1]) == "1";
    } else if (a == "--concurrency") {
      levels.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string part; std::getline(ss, part, ',');) levels.push_back(std::stoul(part));
    } else {
      std::fprintf(stderr,
                   "usage: bench_generate [--requests N] [--concurrency 1,8,64] [--job-only 1]\n");
      return 2;
    }
  }
  vlbias::set_quiet(true);
  const std::string answer =
      "{\"choices\": [{\"message\": {\"role\": \"assistant\", \"content\": \"A person.\"}}]}";
  vlbias::test_http::Server server([&](const vlbias::test_http::Request&) {
    vlbias::test_http::Response r;
    r.body = answer;
    return r;
  });
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("vlbias_bench_generate_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string url = server.url("/v1/chat/completions");
  for (std::size_t c : job_only ? std::vector<std::size_t>{} : levels) {
    const auto path = dir / fmt::format("c{}.sqlite", c);
    std::filesystem::remove(path);
    vlbias::RunStore store(path, "bench");
    std::vector<std::pair<std::string, std::string>> reqs;
    for (std::size_t i = 0; i < requests; ++i) {
      reqs.emplace_back(
          "img" + std::to_string(i) + "|p|0",
          "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"Describe.\"}]}");
    }
    store.add(reqs);
    vlbias::DriveOptions o;
    o.concurrency = c;
    const auto build = [&](const std::string&, const std::string& body) {
      vlbias::HttpRequest h;
      h.url = url;
      h.headers = {{"Content-Type", "application/json"}};
      h.body = body;
      return h;
    };
    const auto read = [](const std::string&, const std::string&, const vlbias::HttpResponse& r) {
      return vlbias::Verdict{vlbias::RequestStatus::Done, r.body, ""};
    };
    const vlbias::DriveSummary s = vlbias::drive(store, build, read, o);
    std::printf(
        "{\"concurrency\": %zu, \"requests\": %zu, \"done\": %zu, \"seconds\": %.3f, "
        "\"requests_per_s\": %.0f}\n",
        c, requests, s.done, s.elapsed_s, static_cast<double>(s.done) / s.elapsed_s);
    std::fflush(stdout);
  }

  // The whole LVLM job: requests rounded up to 6 images x 5 prompts x seeds.
  const std::filesystem::path images =
      std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images";
  {
    std::ofstream manifest(dir / "images.csv");
    manifest << "file,race\n";
    for (const char* f :
         {"jpg_1x1.jpg", "jpg_420.jpg", "jpg_422.jpg", "jpg_444.jpg", "png_1x1.png", "png_l8.png"})
      manifest << f << ",x\n";
  }
  const std::size_t seeds = (requests + 29) / 30;
  for (std::size_t c : levels) {
    vlbias::LvlmJob job;
    job.endpoint.url = url;
    job.endpoint.model = "m";
    job.manifest = dir / "images.csv";
    job.image_column = "file";
    job.image_root = images;
    for (int p = 0; p < 5; ++p)
      job.prompts.push_back({fmt::format("p{}", p), "Describe.", std::nullopt, {}});
    job.seeds.clear();
    for (std::size_t s = 0; s < seeds; ++s) job.seeds.push_back(s);
    job.control.concurrency = c;
    const auto run_dir = dir / fmt::format("lvlm_c{}", c);
    std::filesystem::remove_all(run_dir);
    const auto start = std::chrono::steady_clock::now();
    const vlbias::JobSummary s = vlbias::generate_lvlm(job, run_dir);
    const double whole =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto store_bytes = std::filesystem::file_size(run_dir / "store.sqlite");
    std::printf(
        "{\"job\": \"generate lvlm\", \"concurrency\": %zu, \"requests\": %zu, \"done\": %zu, "
        "\"drive_seconds\": %.3f, \"drive_requests_per_s\": %.0f, \"job_seconds\": %.3f, "
        "\"job_requests_per_s\": %.0f, \"store_mb\": %.1f}\n",
        c, s.counts.total(), s.counts.done, s.drive.elapsed_s,
        static_cast<double>(s.drive.done) / s.drive.elapsed_s, whole,
        static_cast<double>(s.counts.done) / whole, static_cast<double>(store_bytes) / 1e6);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
