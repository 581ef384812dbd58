#pragma once
// The bundled examples' audits (`vlbias audit examples/<name>/spec.yaml`), made once and shared
// by the test processes that read them (Report.*, Summary.*, ReportInChromium.*). ctest starts
// one process per test, and a dozen tests read the same five runs, each of which takes seconds
// (five under the sanitizers): a cache per process would run every example about a dozen times.
//
// A run is made once per vlbias executable and per state of the examples: under
// <the executable's folder>/example_runs/<key>/<name>, where the key hashes the executable's
// path, size and modification time and those of every file under examples/ and the fixtures
// the examples read (a rebuilt vlbias, the Release suite's executable, or an edited spec gets
// runs of its own; other keys' runs are removed when a new key is made). A run is written to a
// folder of its own process and renamed into place, so processes that make one at once all
// succeed and one copy stays. Each test gets its own copy (tests change the folders they get:
// they re-render, tamper with and rerun them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "cli_util.h"

namespace vlbias::cli_util {

namespace example_runs_detail {

// FNV-1a over `text`, continuing from `h`.
inline std::uint64_t fnv1a(std::uint64_t h, const std::string& text) {
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

// Path, size and modification time of `file`, as one line of the key.
inline std::string file_stamp(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  const auto time = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
  return file.string() + ' ' + std::to_string(ec ? 0 : size) + ' ' + std::to_string(time) + '\n';
}

// The key of the executable under test and of the examples' inputs as they are now.
inline std::string key() {
  const std::filesystem::path source = VLBIAS_SOURCE_DIR;
  std::vector<std::string> stamps{file_stamp(testing_util::vlbias_binary())};
  for (const char* dir : {"examples", "tests/fixtures/encode/inception"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(source / dir)) {
      if (e.is_regular_file()) stamps.push_back(file_stamp(e.path()));
    }
  }
  std::sort(stamps.begin(), stamps.end());
  std::uint64_t h = 14695981039346656037ULL;
  for (const std::string& s : stamps) h = fnv1a(h, s);
  return std::to_string(h);
}

}  // namespace example_runs_detail

// A fresh copy, at `dir` (replaced), of the audit of examples/<name>/spec.yaml by the vlbias
// under test; the audit runs only when no earlier test process of this executable ran it.
// Returns `dir`; records a failure (and leaves `dir` empty) when the audit fails.
inline std::filesystem::path example_run(const std::string& name,
                                         const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  static const std::string key = example_runs_detail::key();
  const fs::path root = testing_util::vlbias_binary_dir() / "example_runs";
  const fs::path shared = root / key / name;
  std::error_code ec;
  if (!fs::exists(shared / "results.json")) {
    if (!fs::exists(root / key)) {  // a new executable or new examples: older runs are stale
      for (const auto& e : fs::directory_iterator(root, ec)) {
        if (e.path().filename() != key) fs::remove_all(e.path(), ec);
      }
    }
    fs::create_directories(root / key);
    const fs::path mine = root / key / (name + ".making." + std::to_string(::getpid()));
    fs::remove_all(mine);
    const CliResult r =
        run_cli("--quiet audit examples/" + name + "/spec.yaml --out '" + mine.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code == 0) fs::rename(mine, shared, ec);  // fails when another process won
    fs::remove_all(mine, ec);
  }
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (fs::exists(shared / "results.json")) {
    fs::copy(shared, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  return dir;
}

}  // namespace vlbias::cli_util
