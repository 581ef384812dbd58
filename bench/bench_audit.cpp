// bench_audit: `vlbias audit` at the scale of the CausalFace study (paper 001): about
// 18,000 images x 512-d (6 race x gender groups, ages, smiling, lighting, pose,
// pseudo-identity seeds), the social-perception manifest (4 templates), SC-WEAT with
// 10,000 permutations over race, gender and race+gender, bootstrap 1000, AbsDiff 1000
// pairs; and a trait-pairs audit of the same images (paper 004).
//
//   bench_audit [--dir DIR] [--threads N] [--kind social|trait|both] [--phases]
//               [--seeds S] [--dim D] [--permutations P]
//
// The study is generated once into DIR/<kind>/ (default: a folder under the system
// temp dir; reused when its spec.yaml exists) by tests/audits/dual_encoder_study.h.
// Each timed run_audit runs in a child process, so its peak RSS (wait4 ru_maxrss) is
// the audit's alone. With --phases every analysis is also timed on its own: a run
// with only it and association enabled, minus the association-only run. Prints one
// JSON line per kind.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tests/audits/dual_encoder_study.h"
#include "bench_child.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"

namespace {

namespace fs = std::filesystem;
using vlbias::bench::ChildResult;
using vlbias::bench::in_child;
using vlbias::bench::only;
using vlbias::bench::time_audit;
using vlbias::synthetic::StudyKind;
using vlbias::synthetic::StudyOptions;

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = fs::temp_directory_path() / "vlbias_bench_audit";
  unsigned threads = 2;
  std::string kinds = "both";
  bool phases = false;
  std::size_t seeds = 167;  // 167 x 6 groups x 18 images = 18,036 images
  std::size_t dim = 512;
  std::size_t permutations = 10000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--dir" && has_value) {
      dir = argv[++i];
    } else if (a == "--threads" && has_value) {
      threads = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (a == "--kind" && has_value) {
      kinds = argv[++i];
    } else if (a == "--phases") {
      phases = true;
    } else if (a == "--seeds" && has_value) {
      seeds = std::stoul(argv[++i]);
    } else if (a == "--dim" && has_value) {
      dim = std::stoul(argv[++i]);
    } else if (a == "--permutations" && has_value) {
      permutations = std::stoul(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: bench_audit [--dir DIR] [--threads N] [--kind social|trait|both] "
                   "[--phases] [--seeds S] [--dim D] [--permutations P]\n");
      return 2;
    }
  }

  for (const std::string kind : {"social", "trait"}) {
    if (kinds != "both" && kinds != kind) continue;
    StudyOptions o;
    o.kind = kind == "social" ? StudyKind::SocialPerception : StudyKind::TraitPairs;
    o.seeds = seeds;
    o.dim = dim;
    o.effect = 0.3;
    o.planted_group = kind == "social"
                          ? std::vector<std::pair<std::string, std::string>>{{"race", "Black"}}
                          : std::vector<std::pair<std::string, std::string>>{{"gender", "female"}};
    o.permutations = permutations;
    o.bootstrap = 1000;
    o.absdiff_pairs = 1000;
    o.ranking_k = 1000;
    o.groupings = {{"race"}, {"gender"}, {"race", "gender"}};
    const fs::path study_dir = dir / fmt::format("{}_s{}_d{}_p{}", kind, seeds, dim, permutations);
    std::size_t images = 0, prompts = 0;
    const ChildResult gen = in_child([&] {
      const auto t0 = std::chrono::steady_clock::now();
      if (!fs::exists(study_dir / "spec.yaml")) {
        vlbias::synthetic::write_synthetic_study(study_dir, o);
      }
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    if (!gen.ok) {
      std::fprintf(stderr, "bench_audit: generating %s failed\n", study_dir.c_str());
      return 1;
    }
    {
      const vlbias::Table t = vlbias::read_table((study_dir / "images.csv").string());
      const vlbias::Table p = vlbias::read_table((study_dir / "prompts.csv").string());
      images = t.rows;
      prompts = p.rows;
    }
    const ChildResult full =
        in_child([&] { return time_audit(study_dir / "spec.yaml", study_dir / "run", threads); });
    if (!full.ok) {
      std::fprintf(stderr, "bench_audit: the %s audit failed\n", kind.c_str());
      return 1;
    }
    nlohmann::json line{{"bench", "audit"},
                        {"kind", kind == "social" ? "social-perception" : "trait-pairs"},
                        {"images", images},
                        {"dim", dim},
                        {"prompts", prompts},
                        {"permutations", permutations},
                        {"threads", threads},
                        {"cores", std::thread::hardware_concurrency()},
                        {"generate_seconds", gen.seconds},
                        {"seconds", full.seconds},
                        {"cpu_seconds", full.cpu_seconds},
                        {"peak_rss_mb", full.peak_rss_mb}};
    if (phases) {
      const std::string yaml = vlbias::synthetic::synthetic_spec_yaml(o);
      std::vector<std::string> names =
          kind == "social" ? std::vector<std::string>{"scweat",  "markedness", "ranking",
                                                      "absdiff", "trends",     "ellipses"}
                           : std::vector<std::string>{"confidence", "scweat"};
      auto run_only = [&](const std::set<std::string>& keep, const std::string& tag) {
        const fs::path spec = study_dir / fmt::format("spec_{}.yaml", tag);
        std::ofstream(spec) << only(yaml, keep);
        return in_child(
            [&] { return time_audit(spec, study_dir / fmt::format("run_{}", tag), threads); });
      };
      const ChildResult base = run_only({"association"}, "association");
      nlohmann::json ph{{"load_and_association", base.seconds}};
      for (const std::string& n : names) {
        const ChildResult r = run_only({"association", n}, n);
        ph[n] = r.ok ? nlohmann::json(r.seconds - base.seconds) : nlohmann::json("failed");
      }
      line["phases"] = ph;
    }
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
  return 0;
}
