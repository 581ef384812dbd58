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
// temp dir; reused when its spec.yaml exists) by tests/audits/synthetic_study.h.
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

#include "../tests/audits/synthetic_study.h"
#include "vlbias/audit.h"
#include "vlbias/log.h"
#include "vlbias/parallel.h"

namespace {

namespace fs = std::filesystem;
using vlbias::synthetic::StudyKind;
using vlbias::synthetic::StudyOptions;

struct ChildResult {
  bool ok = false;
  double seconds = 0.0;
  double peak_rss_mb = 0.0;
  double cpu_seconds = 0.0;  // user + system time of the child
};

// Runs fn in a child process; fn returns seconds (or a negative number on failure).
template <typename Fn>
ChildResult in_child(Fn fn) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    close(fds[0]);
    double seconds = -1.0;
    try {
      seconds = fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_audit: %s\n", e.what());
    }
    if (write(fds[1], &seconds, sizeof seconds) != sizeof seconds) _exit(1);
    _exit(seconds < 0 ? 1 : 0);
  }
  close(fds[1]);
  ChildResult r;
  double seconds = -1.0;
  const bool got = read(fds[0], &seconds, sizeof seconds) == sizeof seconds;
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  r.ok = got && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  r.seconds = seconds;
  r.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  r.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  return r;
}

// The spec with only the analyses in `keep` left on (the others set to false).
std::string only(const std::string& yaml, const std::set<std::string>& keep) {
  std::istringstream in(yaml);
  std::string line, out;
  bool in_analyses = false;
  while (std::getline(in, line)) {
    if (line == "analyses:") in_analyses = true;
    if (in_analyses && line.rfind("  ", 0) == 0) {
      const std::string key = line.substr(2, line.find(':') - 2);
      if (!keep.count(key)) line = fmt::format("  {}: false", key);
    }
    out += line + "\n";
  }
  return out;
}

double time_audit(const fs::path& spec_path, const fs::path& run_dir, unsigned threads) {
  vlbias::set_quiet(true);
  vlbias::set_thread_count(threads);
  const auto t0 = std::chrono::steady_clock::now();
  const vlbias::AuditSpec spec = vlbias::load_audit_spec(spec_path);
  vlbias::run_audit(spec, run_dir);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

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
