#pragma once
// Helpers shared by every test executable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace vlbias::testing_util {

// The vlbias executable the CLI tests run: $VLBIAS_BINARY when set, else the one built beside
// the tests. CI compiles the tests once and links them a second time against the Release build,
// whose tests point VLBIAS_BINARY at the Release executable (tests/CMakeLists.txt).
inline const char* vlbias_binary() {
  const char* env = std::getenv("VLBIAS_BINARY");
  return env != nullptr && *env != '\0' ? env : VLBIAS_BINARY;
}

// Sets an environment variable for the life of the object (the process and the commands it
// starts), then restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    const char* old = std::getenv(name_.c_str());
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

// The folder of vlbias_binary(): where tests leave artefacts for people to look at.
inline std::filesystem::path vlbias_binary_dir() {
  return std::filesystem::path(vlbias_binary()).parent_path();
}

// A committed JSON fixture, parsed once per process. `relative` is relative to
// tests/fixtures/ (e.g. "stats/resampling.json").
inline const nlohmann::json& fixture_json(const std::string& relative) {
  static std::map<std::string, nlohmann::json> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) {
    const std::string path = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/" + relative;
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "missing fixture " << path;
    it = cache.emplace(relative, in.good() ? nlohmann::json::parse(in) : nlohmann::json()).first;
  }
  return it->second;
}

// A fresh folder under the system temp dir, "<prefix>XXXXXX" (mkdtemp), removed with its
// contents when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "vlbias_test_") {
    std::string templ = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    EXPECT_NE(mkdtemp(templ.data()), nullptr) << templ;
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Writes `bytes` verbatim (binary, no newline translation) to `name` in the folder; its path.
  std::filesystem::path write(const std::string& name, const std::string& bytes) const {
    const std::filesystem::path p = path_ / name;
    std::ofstream out(p, std::ios::binary);
    out << bytes;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// An empty folder of the running test's own: temp dir / "<prefix><pid><test name>", emptied
// first (process ids are reused, and an earlier run's leftovers must not leak in).
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()) + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Temporaries an atomic write left in `dir` (atomic_file.h names them ".<name>.<random>.tmp"):
// none once a write has committed or failed.
inline std::vector<std::string> leftover_temporaries(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) out.push_back(name);
  }
  return out;
}

// Runs f and returns the message of the E it throws; records a failure when it
// throws nothing or something else.
template <typename E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a different exception type, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return "";
}

// max |got - want| / max(|want|, floor): a float result's error at the scale of the reference
// (features, logits, feature maps), for comparisons with an independent forward. The sizes must
// agree (a failure otherwise).
inline double scaled_error(const std::vector<float>& got, const std::vector<float>& want,
                           double floor = 0.0) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0.0, scale = floor;
  for (float v : want) scale = std::max(scale, std::abs(static_cast<double>(v)));
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
  }
  return worst / scale;
}

// The 32-bit words words[0..n) as little-endian bytes (what the fixture scripts hash). Raw
// pointers: the tests' code is unoptimised in both suites, where a call per byte took seconds
// over the Unicode sweeps (bench/ci_budget.md).
template <typename Word>
std::string little_endian_bytes(const Word* words, std::size_t n) {
  static_assert(sizeof(Word) == 4, "32-bit words");
  std::string out(n * 4, '\0');
  char* bytes = out.data();
  for (std::size_t i = 0; i < n; ++i) {
    const auto w = static_cast<std::uint32_t>(words[i]);
    for (int k = 0; k < 4; ++k) bytes[4 * i + k] = static_cast<char>((w >> (8 * k)) & 0xff);
  }
  return out;
}

// The text of tokenizer.json `tok` with `count` added tokens appended: "<x0>", "<x1>", ... with
// ids 100 + k % 1000, special and not normalized (issue 37's hostile tokenizers). Spliced in as
// text: built as JSON objects, 100,000 of them took most of those tests' time in the tests'
// unoptimised code (bench/ci_budget.md).
inline std::string with_added_tokens(nlohmann::json tok, int count) {
  const std::string marker = "\"vlbias-added-tokens-marker\"";
  tok["added_tokens"].push_back("vlbias-added-tokens-marker");
  std::string text = tok.dump();
  std::string added;
  for (int k = 0; k < count; ++k) {
    if (k > 0) added += ',';
    added += "{\"id\":" + std::to_string(100 + k % 1000) + ",\"content\":\"<x" + std::to_string(k) +
             ">\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
             "\"normalized\":false,\"special\":true}";
  }
  text.replace(text.find(marker), marker.size(), added);
  return text;
}

}  // namespace vlbias::testing_util
