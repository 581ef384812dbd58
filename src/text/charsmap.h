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

// The most a normalizer may write: 32 units (bytes of UTF-8, or code points) per unit of
// its input, plus 64. Unicode's largest expansion is U+FDFA, which NFKC (and so the
// nmt_nfkc charsmaps) turns into 18 code points (33 bytes from 3); a rule written to
// stretch one character to megabytes (issue 37: a 4 MiB replacement, 389 MB per character
// of text, out of memory at 1,000) is refused instead.
inline constexpr std::size_t kMaxNormalizedGrowth = 32;
inline constexpr std::size_t kNormalizedSlack = 64;
// InputError naming `source` (the model file and its normalizer) when `output` units came
// from `input` units of text beyond that bound. Normalizers call it as they append, so no
// more than one replacement is held beyond the bound.
void check_normalized_growth(std::size_t input, std::size_t output, std::string_view source);

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
  // otherwise each character is replaced on its own when it is a key. InputError
  // (check_normalized_growth) when the output's UTF-8 outgrows `original_bytes`, the UTF-8
  // length of the text before this and any earlier normalizer step.
  std::u32string normalize_graphemes(std::u32string_view text, std::size_t original_bytes) const;

  // What the charsmap's messages call it ("the precompiled_charsmap of '...'").
  const std::string& source() const { return source_; }

 private:
  // Calls on_match(key length, offset of its replacement) for each key that prefixes
  // `bytes`, shortest first, until it returns false.
  template <typename F>
  void prefix_search(std::string_view bytes, F on_match) const;
  std::string_view replacement_at(std::uint32_t offset) const;

  std::vector<std::uint32_t> units_;
  std::string normalized_;
  std::string source_;
};

}  // namespace vlbias::text_internal
