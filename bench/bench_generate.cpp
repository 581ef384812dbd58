// bench_generate: the driver loop (driver.h) against a local server that answers instantly
// (tests/generate/http_test_server.h on 127.0.0.1): requests per second at concurrency 1, 8
// and 64, each request recorded in a fresh SQLite run store. Issue 9's goal: the client is
// never the bottleneck below 1,000 requests/s.
//
//   bench_generate [--requests N] [--concurrency 1,8,64]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>

#include "../tests/generate/http_test_server.h"
#include "vlbias/driver.h"
#include "vlbias/log.h"

int main(int argc, char** argv) {
  std::size_t requests = 5000;
  std::vector<std::size_t> levels{1, 8, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--requests") {
      requests = std::stoul(argv[i + 1]);
    } else if (a == "--concurrency") {
      levels.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string part; std::getline(ss, part, ',');) levels.push_back(std::stoul(part));
    } else {
      std::fprintf(stderr, "usage: bench_generate [--requests N] [--concurrency 1,8,64]\n");
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
  for (std::size_t c : levels) {
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
    const auto read = [](const vlbias::HttpResponse& r) {
      return vlbias::Verdict{vlbias::RequestStatus::Done, r.body, ""};
    };
    const vlbias::DriveSummary s = vlbias::drive(store, build, read, o);
    std::printf(
        "{\"concurrency\": %zu, \"requests\": %zu, \"done\": %zu, \"seconds\": %.3f, "
        "\"requests_per_s\": %.0f}\n",
        c, requests, s.done, s.elapsed_s, static_cast<double>(s.done) / s.elapsed_s);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
