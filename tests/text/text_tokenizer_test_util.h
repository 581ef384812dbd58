#pragma once
// Shared by tests/text: the fixture model folders of tools/make_text_tokenizer_fixtures.py.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "test_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias::testing_text {

inline std::filesystem::path model_dir(const std::string& name) {
  return std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/text/models" / name;
}

// "bert_uncased/legacy" or "xlmr/tokenizer.json": one tokenizer per fixture key,
// loaded once per process.
inline const TextTokenizer& fixture_tokenizer(const std::string& key) {
  static std::map<std::string, TextTokenizer> cache;
  auto it = cache.find(key);
  if (it == cache.end()) {
    const std::size_t slash = key.find('/');
    TokenizerOptions options;
    options.source = key.substr(slash + 1) == "legacy" ? TokenizerSource::LegacyFiles
                                                       : TokenizerSource::TokenizerJson;
    it = cache.emplace(key, TextTokenizer::from_folder(model_dir(key.substr(0, slash)), options))
             .first;
  }
  return it->second;
}

using testing_util::TempDir;

// A copy of fixture model `name` in `dst`, without the files named in `skip`.
inline std::filesystem::path copy_model(const std::string& name, const std::filesystem::path& dst,
                                        const std::vector<std::string>& skip = {}) {
  const std::filesystem::path to = dst / name;
  std::filesystem::create_directories(to);
  for (const auto& e : std::filesystem::directory_iterator(model_dir(name))) {
    const std::string file = e.path().filename().string();
    if (std::find(skip.begin(), skip.end(), file) != skip.end()) continue;
    std::filesystem::copy_file(e.path(), to / file);
  }
  return to;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// SHA-256 (hex) of ids as int32 little-endian words, as the generator hashes them.
inline std::string ids_sha256(const std::vector<std::int32_t>& ids) {
  return sha256_hex(testing_util::little_endian_bytes(ids.data(), ids.size()));
}

}  // namespace vlbias::testing_text
