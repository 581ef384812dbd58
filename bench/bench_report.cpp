// bench_report: rendering report.html (report.h render_report) from audit results, with
// Google Benchmark. Each results.json under RUNS (default runs/example, written by
// examples/run.sh) is one benchmark; the counters give the page's size and chart count.
//
//   bench_report [RUNS] [--benchmark_* flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "vlbias/report/report.h"

namespace {

vlbias::Json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return vlbias::Json::parse(ss.str());
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path runs = "runs/example";
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--", 0) == 0) {
      rest.push_back(argv[i]);
    } else {
      runs = argv[i];
    }
  }
  std::vector<std::filesystem::path> found;
  if (std::filesystem::is_directory(runs)) {
    for (const auto& e : std::filesystem::directory_iterator(runs)) {
      if (std::filesystem::exists(e.path() / "results.json")) found.push_back(e.path());
    }
  }
  if (found.empty()) {
    std::fprintf(stderr, "bench_report: no RUN/results.json under %s (run examples/run.sh)\n",
                 runs.string().c_str());
    return 2;
  }
  std::sort(found.begin(), found.end());
  for (const auto& run : found) {
    const auto results = std::make_shared<vlbias::Json>(read_json(run / "results.json"));
    benchmark::RegisterBenchmark(
        ("render/" + run.filename().string()).c_str(),
        [results](benchmark::State& state) {
          std::string html;
          for (auto _ : state) {
            html = vlbias::render_report(*results).html;
            benchmark::DoNotOptimize(html);
          }
          state.counters["html_kB"] = static_cast<double>(html.size()) / 1e3;
          state.counters["charts"] = static_cast<double>(count(html, "class=\"chart\""));
        })
        ->Unit(benchmark::kMillisecond);
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
