#pragma once
// Internal to vlbias_text: SentencePiece's precompiled normalization rules
// (NormalizerSpec.precompiled_charsmap; tokenizer.json's Precompiled normalizer holds
// the same blob in base64).
//
// Blob: <u32 little-endian trie size in bytes><double-array trie (darts-clone units,
// u32 each)><normalized strings, each ended by '\0'>. A key is a UTF-8 string; its
// trie leaf holds the offset of its replacement in the normalized strings.
// parse() checks the layout; a trie that points outside its array or its strings is
// only met while searching, which then throws InputError naming the source.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias::text_internal {

class PrecompiledCharsmap {
 public:
  PrecompiledCharsmap() = default;  // no rules
  // InputError naming `source` for a blob shorter than its header, a trie size that is
  // not a whole number of units or exceeds the blob, and strings that are not UTF-8.
  static PrecompiledCharsmap parse(std::string_view blob, std::string source);

  bool empty() const { return units_.empty(); }

  struct Match {
    std::size_t length;  // bytes of the key
    std::string_view replacement;
  };
  // sentencepiece's Normalizer::NormalizePrefix: the longest key that prefixes `bytes`.
  std::optional<Match> longest_prefix(std::string_view bytes) const;
  // spm_precompiled's transform(): the replacement of the shortest key that prefixes
  // `bytes`.
  std::optional<std::string_view> shortest_prefix(std::string_view bytes) const;

  // The tokenizers' Precompiled normalizer: per extended grapheme cluster, a cluster
  // under 6 bytes that some key prefixes is replaced as a whole (shortest key);
  // otherwise each character is replaced on its own when it is a key.
  std::u32string normalize_graphemes(std::u32string_view text) const;

 private:
  // Calls on_match(key length, replacement) for each key that prefixes `bytes`,
  // shortest first, until it returns false.
  template <typename F>
  void prefix_search(std::string_view bytes, F on_match) const;
  std::string_view replacement_at(std::uint32_t offset) const;

  std::vector<std::uint32_t> units_;
  std::string normalized_;
  std::string source_;
};

}  // namespace vlbias::text_internal
