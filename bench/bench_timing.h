#pragma once
// The timing harness of the model benchmarks (bench_encode, bench_classifier): "--name value"
// options, best-of-reps wall time, peak RSS, and random token-id texts written as JSON for the
// PyTorch side (bench/vs_torch_*.py) to run the same inputs.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "vlbias/core/rng.h"

namespace vlbias::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// VmHWM (peak) / VmRSS from /proc/self/status, in MiB.
inline double proc_status_mib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) / 1024.0;
  }
  return 0.0;
}

// Best-of-reps seconds of fn().
template <typename Fn>
double best_time(std::size_t reps, Fn fn) {
  double best = 1e300;
  for (std::size_t r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// Command-line options: "--name value" for the names in `with_value`, bare "--name" for those in
// `switches` (value "1"). Anything else, or a missing value, prints `usage` and exits 2.
class Flags {
 public:
  Flags(int argc, char** argv, const std::set<std::string>& with_value,
        const std::set<std::string>& switches, const char* usage) {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (switches.count(a) > 0) {
        values_.insert_or_assign(a, std::string("1"));
      } else if (with_value.count(a) > 0 && i + 1 < argc) {
        values_.insert_or_assign(a, std::string(argv[++i]));
      } else {
        fail(usage);
      }
    }
  }

  [[noreturn]] static void fail(const char* usage) {
    std::fputs(usage, stderr);
    std::exit(2);
  }

  std::string text(const std::string& name, const std::string& fallback = "") const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  std::size_t count(const std::string& name, std::size_t fallback) const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : std::stoul(it->second);
  }
  bool has(const std::string& name) const { return values_.count(name) > 0; }

 private:
  std::map<std::string, std::string> values_;
};

// `count` texts of prefix + random ids + suffix, each min(len_cap, L) tokens long with L uniform
// in [len_min, len_max] (len_min >= prefix + suffix). random_id(rng) draws one id.
template <typename RandomId>
std::vector<std::vector<std::int32_t>> random_texts(Rng& rng, std::size_t count,
                                                    std::size_t len_min, std::size_t len_max,
                                                    std::size_t len_cap,
                                                    const std::vector<std::int32_t>& prefix,
                                                    const std::vector<std::int32_t>& suffix,
                                                    RandomId random_id) {
  std::vector<std::vector<std::int32_t>> texts(count);
  for (auto& t : texts) {
    const std::size_t n = std::min(len_cap, len_min + rng.uniform_index(len_max - len_min + 1));
    t.assign(prefix.begin(), prefix.end());
    while (t.size() + suffix.size() < n) t.push_back(random_id(rng));
    t.insert(t.end(), suffix.begin(), suffix.end());
  }
  return texts;
}

inline std::size_t total_tokens(const std::vector<std::vector<std::int32_t>>& texts) {
  std::size_t n = 0;
  for (const auto& t : texts) n += t.size();
  return n;
}

// The texts as a JSON array of arrays of ids.
inline void write_texts_json(std::ostream& out, const std::vector<std::vector<std::int32_t>>& t) {
  out << "[";
  for (std::size_t i = 0; i < t.size(); ++i) {
    out << (i ? ",\n[" : "[");
    for (std::size_t j = 0; j < t[i].size(); ++j) out << (j ? "," : "") << t[i][j];
    out << "]";
  }
  out << "]";
}

}  // namespace vlbias::bench
