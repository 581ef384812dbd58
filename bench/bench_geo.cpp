// bench_geo: a whole geo-diversity audit (paper 002) at the scale of DIG-In's GeoDE study:
// 6 regions x 27 objects x 180 real images (29,160), the same number of generations for each of
// the {object} in {region} and {object} in {country} prompts, 1,080 {object} generations per
// object, Inception-sized features (2,048-d), CLIP-sized embeddings (768-d), bootstrap 1,000.
//
//   bench_geo [--dir DIR] [--threads N] [--dim D] [--per-cell N] [--bootstrap B] [--phases]
//
// The study is generated once into DIR (default: a folder under the system temp dir; reused
// when its spec.yaml exists) by tests/audits/geo_study.h. Each timed audit runs in a child
// process (peak RSS is its own). With --phases each analysis is also timed alone. Prints one
// JSON line.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../tests/audits/geo_study.h"
#include "bench_child.h"

namespace {

namespace fs = std::filesystem;
using vlbias::bench::ChildResult;
using vlbias::bench::in_child;
using vlbias::bench::only;
using vlbias::bench::time_audit;

}  // namespace

int main(int argc, char** argv) {
  fs::path dir;
  unsigned threads = 0;
  bool phases = false;
  vlbias::synthetic::GeoStudyOptions o;
  o.regions = {"Africa", "Americas", "EastAsia", "Europe", "SouthEastAsia", "WestAsia"};
  o.prompt_regions = {"Africa", "the Americas",   "East Asia",
                      "Europe", "Southeast Asia", "West Asia"};
  o.objects.clear();
  for (int i = 0; i < 27; ++i) o.objects.push_back(fmt::format("object{:02d}", i));
  o.dim = 2048;
  o.clip_dim = 768;
  o.real_per_cell = 180;
  o.per_cell = 180;
  o.pool_per_object = 1080;
  o.bootstrap = 1000;
  o.distribution = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--dir") {
      dir = next();
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(std::stoul(next()));
    } else if (a == "--dim") {
      o.dim = std::stoul(next());
    } else if (a == "--per-cell") {
      o.real_per_cell = o.per_cell = std::stoul(next());
      o.pool_per_object = 6 * o.per_cell;
    } else if (a == "--bootstrap") {
      o.bootstrap = std::stoul(next());
    } else if (a == "--phases") {
      phases = true;
    } else {
      std::fprintf(stderr,
                   "usage: bench_geo [--dir DIR] [--threads N] [--dim D] [--per-cell N] "
                   "[--bootstrap B] [--phases]\n");
      return 2;
    }
  }
  if (dir.empty()) {
    dir = fs::temp_directory_path() /
          fmt::format("vlbias_bench_geo_d{}_n{}_b{}", o.dim, o.per_cell, o.bootstrap);
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  double generate_seconds = 0.0;
  if (!fs::exists(dir / "spec.yaml")) {
    const ChildResult gen = in_child([&] {
      const auto t0 = std::chrono::steady_clock::now();
      vlbias::synthetic::write_geo_study(dir, o);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    if (!gen.ok) return 1;
    generate_seconds = gen.seconds;
  }
  const ChildResult full =
      in_child([&] { return time_audit(dir / "spec.yaml", dir / "run", threads); });
  if (!full.ok) return 1;
  nlohmann::ordered_json out{
      {"bench", "geo-diversity audit"},
      {"real_images", o.regions.size() * o.objects.size() * o.real_per_cell},
      {"generated_images",
       2 * o.regions.size() * o.objects.size() * o.per_cell + o.objects.size() * o.pool_per_object},
      {"dim", o.dim},
      {"clip_dim", o.clip_dim},
      {"bootstrap", o.bootstrap},
      {"threads", threads},
      {"generate_seconds", generate_seconds},
      {"seconds", full.seconds},
      {"cpu_seconds", full.cpu_seconds},
      {"peak_rss_mb", full.peak_rss_mb}};
  if (phases) {
    std::ifstream in(dir / "spec.yaml");
    const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const char* name : {"region", "object_region", "consistency", "distribution"}) {
      const fs::path spec = dir / fmt::format("spec_{}.yaml", name);
      std::ofstream(spec) << only(yaml, {name});
      const ChildResult r = in_child([&] { return time_audit(spec, dir / "run_phase", threads); });
      out["phase_seconds"][name] = r.ok ? r.seconds : -1.0;
    }
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
