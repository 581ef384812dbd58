#pragma once
// Shared by the audit benchmarks (bench_audit, bench_geo): a timed run in a child process,
// so its peak RSS is its own, and specs with only some analyses left on.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "vlbias/audits/audit.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"

namespace vlbias::bench {

namespace fs = std::filesystem;

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
      std::fprintf(stderr, "bench: %s\n", e.what());
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
inline std::string only(const std::string& yaml, const std::set<std::string>& keep) {
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

inline double time_audit(const fs::path& spec_path, const fs::path& run_dir, unsigned threads) {
  vlbias::set_quiet(true);
  vlbias::set_thread_count(threads);
  const auto t0 = std::chrono::steady_clock::now();
  const vlbias::AuditSpec spec = vlbias::load_audit_spec(spec_path);
  vlbias::run_audit(spec, run_dir);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}
}  // namespace vlbias::bench
