#pragma once
// Helpers shared by the tokenizer tests: the committed fixture vocabulary
// (tools/make_tokenizer_fixtures.py) and a scratch directory for hostile files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "vlbias/encode/models/clip_tokenizer.h"

namespace vlbias::testing_tokenizer {

inline std::filesystem::path fixture_dir() {
  return std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "encode" / "tokenizer";
}

inline const ClipTokenizer& fixture_tokenizer(TextCleaning cleaning) {
  static const ClipTokenizer hf = ClipTokenizer::from_files(
      fixture_dir() / "vocab.json", fixture_dir() / "merges.txt", TextCleaning::HuggingFace);
  static const ClipTokenizer oc = ClipTokenizer::from_files(
      fixture_dir() / "vocab.json", fixture_dir() / "merges.txt", TextCleaning::OpenClip);
  return cleaning == TextCleaning::HuggingFace ? hf : oc;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(const std::filesystem::path& p, std::string_view s) {
  std::ofstream out(p, std::ios::binary);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

// A fresh directory per test, removed afterwards.
class TokenizerDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("vlbias_tok_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace vlbias::testing_tokenizer
