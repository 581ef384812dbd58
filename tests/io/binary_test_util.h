#pragma once
// Helpers shared by the .npy / .safetensors / mapping tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"

namespace vlbias::testing_binary {

inline std::filesystem::path fixture(std::string_view name) {
  return std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "io" / name;
}

inline const nlohmann::json& expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(fixture("binary_expected.json"));
    return nlohmann::json::parse(in);
  }();
  return j;
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::uint8_t> bytes_of(std::string_view s) {
  return {s.begin(), s.end()};
}

inline void write_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Values equal bit for bit, except that any NaN matches any NaN.
inline void expect_same_floats(const std::vector<float>& got, const nlohmann::json& want_bits,
                               const std::string& what) {
  ASSERT_EQ(got.size(), want_bits.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::uint32_t w = want_bits[i].get<std::uint32_t>();
    float wf;
    std::memcpy(&wf, &w, 4);
    if (std::isnan(wf)) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i;
    } else {
      EXPECT_EQ(bits(got[i]), w) << what << " element " << i << ": got " << got[i] << ", want "
                                 << wf;
    }
  }
}

// Runs f, requiring an InputError whose message contains every needle.
template <typename F>
void expect_input_error(F&& f, std::initializer_list<std::string_view> needles) {
  try {
    f();
    ADD_FAILURE() << "expected an InputError mentioning: " << *needles.begin();
  } catch (const InputError& e) {
    for (std::string_view n : needles) EXPECT_THAT(e.what(), ::testing::HasSubstr(std::string(n)));
  }
}

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("vlbias_iobin_") + std::to_string(::getpid()) + "_" +
            info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path path(std::string_view name) const { return dir_ / name; }

  std::filesystem::path dir_;
};

// Captures warnings for the lifetime of the object.
struct WarningCapture {
  std::vector<std::string> messages;
  WarningCapture() {
    set_warning_sink([this](const std::string& m) { messages.push_back(m); });
  }
  ~WarningCapture() { set_warning_sink(nullptr); }
};

}  // namespace vlbias::testing_binary
