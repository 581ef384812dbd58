#pragma once
// Internal to vlbias_text: byte-level BPE as GPT-2 and RoBERTa use it.
//
// Pre-tokenizer: GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (unlike CLIP's: the space before a word is kept in the word, no lower-casing, no
// "</w>"), each piece's UTF-8 bytes mapped to GPT-2's byte-to-unicode symbols, then
// merges by rank: repeatedly the lowest-ranked adjacent pair, every occurrence left to
// right (GPT-2's bpe(), which the tokenizers' priority queue reproduces for any merge
// list where a pair never ranks below the merge that creates one of its symbols, as
// in every trained vocabulary).
//
// Where transformers' RobertaTokenizer (Python) and tokenizer.json (the tokenizers'
// ByteLevel) differ, the ids follow the source read:
//   - add_prefix_space: Python prepends " " once, to a text whose first character is
//     not str.isspace() (Pipeline::python_prefix_space); ByteLevel prepends it to every
//     span between added tokens that does not start with ' ' (done here);
//   - <mask>'s lstrip takes str.isspace() characters in Python (also U+001C..U+001F),
//     White_Space ones in the tokenizers.
// RoBERTa's files have add_prefix_space false, so only the second can show.
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "tokenizer_pipeline.h"
#include "vlbias/text/bpe_merges.h"
#include "wordpiece.h"

namespace vlbias::text_internal {

struct BpeVocab {
  TokenIds ids;
  BpeMergeTable merges;
  std::int32_t next_rank = 0;                // merges added so far, repeats included
  std::array<std::int32_t, 256> byte_ids{};  // id of each byte's symbol
};

struct ByteLevelOptions {
  bool add_prefix_space = false;  // tokenizers flavor only (see above)
  bool use_regex = true;
  bool ignore_merges = false;  // a piece that is itself a token is not merged
};

// The byte-to-unicode symbols (GPT-2's bytes_to_unicode), UTF-8.
const std::array<std::string, 256>& byte_symbols();

// Looks up the byte symbols; InputError naming `source` when one is missing.
void set_byte_ids(BpeVocab& vocab, const std::string& source);
// Adds merge (left, right) with the next rank; InputError naming `where` when a part or
// the result is not a token. A repeated pair takes its last rank (as Python's dict and
// the tokenizers' HashMap do).
void add_merge(BpeVocab& vocab, std::string_view left, std::string_view right,
               const std::string& where);

std::unique_ptr<SegmentModel> make_byte_bpe_model(ByteLevelOptions options, BpeVocab vocab);

}  // namespace vlbias::text_internal
