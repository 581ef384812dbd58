#pragma once
// Internal to vlbias_text: BERT's WordPiece tokenizer (BERT, DistilBERT).
//
// Two flavors of the same algorithm, which differ on some texts:
//   Transformers: transformers' BertTokenizer (BasicTokenizer + WordpieceTokenizer,
//     Python), read from vocab.txt.
//   Tokenizers: the tokenizers library's BertNormalizer + BertPreTokenizer + WordPiece
//     (Rust), read from tokenizer.json.
// Where they differ (each followed by its flavor):
//   - control characters removed: Python any category C* (so also unassigned code
//     points); Rust Cc, Cf and Co only (unassigned ones are kept and become [UNK]);
//   - whitespace: Python ' ', \t, \n, \r and Zs (U+2028/2029 split words later);
//     Rust the White_Space property;
//   - CJK ideographs spaced out: Python U+2B820..U+2CEAF, Rust U+2B920..U+2CEAF
//     (U+2B820..U+2B91F stay inside words in Rust);
//   - Python applies NFC before splitting words (cased models see composed
//     characters; Rust leaves the text as written);
//   - lower-casing: Python per character before the special tokens are split out,
//     then str.lower per word (with Greek final sigma, moot after the first pass),
//     then NFD + drop Mn; Rust NFD + drop Mn first, then per-character lowercase.
// Both use Unicode data of Python's unicodedata 14.0 here (the Rust crates carry
// their own versions, which differ only on characters assigned since).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tokenizer_pipeline.h"

namespace vlbias::text_internal {

enum class BertFlavor { Transformers, Tokenizers };

struct BertNormalization {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;  // unset: strip when lower-casing
  bool lowercase = true;
};

// Hash and equality that find std::string keys from std::string_view.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIds = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

struct WordPieceVocab {
  TokenIds ids;
  std::int32_t unk_id = -1;
  std::string continuing_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
};

std::unique_ptr<SegmentModel> make_wordpiece_model(BertFlavor flavor, BertNormalization norm,
                                                   WordPieceVocab vocab);

// Largest id + 1 of a vocabulary (0 when empty).
std::size_t id_bound(const TokenIds& ids);

}  // namespace vlbias::text_internal
