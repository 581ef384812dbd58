#pragma once
// Shared by tests/text: the fixture model folders of tools/make_text_tokenizer_fixtures.py.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "vlbias/sha256.h"
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

// SHA-256 (hex) of ids as int32 little-endian words, as the generator hashes them.
inline std::string ids_sha256(const std::vector<std::int32_t>& ids) {
  std::string bytes;
  bytes.reserve(ids.size() * 4);
  for (std::int32_t id : ids) {
    const auto u = static_cast<std::uint32_t>(id);
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<char>((u >> (8 * k)) & 0xFF));
  }
  return sha256_hex(bytes);
}

}  // namespace vlbias::testing_text
