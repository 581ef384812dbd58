#pragma once
// Internal to vlbias_text: SentencePiece Unigram tokenizers (XLM-RoBERTa), two flavors:
//
//   SentencePiece (sentencepiece.bpe.model, as transformers' XLMRobertaTokenizer runs
//     the sentencepiece library): the normalizer (the charsmap's longest match at each
//     position; leading, trailing and repeated spaces removed; a dummy "▁" prefix;
//     spaces as U+2581), Viterbi over the NORMAL pieces with path scores stored as
//     float32 (sums of a piece in double, of an unknown in float, as unigram_model.cc's
//     expression types make them), unknown characters scored min(score) - 10,
//     consecutive unknowns merged into one <unk> (or spelled as <0xXX> byte pieces with
//     byte_fallback); ids in fairseq's layout (<s>=0 <pad>=1 </s>=2 <unk>=3, every other
//     piece its SentencePiece id + 1, <mask> after the last).
//
//   Tokenizers (tokenizer.json): the normalizers it lists (Precompiled, Replace, Strip),
//     the Metaspace pre-tokenizer, and the Unigram model's Viterbi over every vocabulary
//     entry with float64 path scores, consecutive unknowns fused (fuse_unk), byte
//     fallback per fused string.
//
// Where the two differ on a text (the ids follow the source read):
//   - the charsmap: sentencepiece takes the longest rule at each position; the
//     tokenizers' Precompiled goes by grapheme cluster and replaces a cluster under 6
//     bytes whole by the rule of its shortest matching prefix ("Ａ\u0301" becomes "a");
//   - whitespace: sentencepiece strips and collapses spaces itself; tokenizer.json does
//     what its converter wrote: the current one (Strip right, Replace " {2,}" -> "▁",
//     Metaspace) nearly matches, older ones (Precompiled, Metaspace alone) turn every
//     space into a "▁" token;
//   - ties between segmentations: float32 against float64 path scores;
//   - the special tokens split out of the text: <mask>'s lstrip takes str.isspace()
//     characters in transformers, White_Space ones in the tokenizers.
// The fixtures (tools/make_text_tokenizer_fixtures.py) hold texts for each difference.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "charsmap.h"
#include "sentencepiece_model.h"
#include "tokenizer_pipeline.h"

namespace vlbias::text_internal {

// XLM-RoBERTa's SentencePiece tokenizer. InputError naming `source` for a model
// that is not a Unigram model, lacks fairseq's layout (<unk>, <s>, </s> at ids 0, 1,
// 2), has user-defined pieces, repeated pieces, or byte_fallback without all 256 byte
// pieces.
std::unique_ptr<SegmentModel> make_sentencepiece_model(SentencePieceModel model,
                                                       const std::string& source);

// A tokenizers normalizer step of a Unigram tokenizer.json.
struct NormalizerStep {
  enum class Kind { Precompiled, Replace, Strip } kind = Kind::Replace;
  PrecompiledCharsmap charsmap;  // Precompiled
  std::u32string pattern;        // Replace: a literal...
  bool pattern_spaces = false;   // ...or the regex " {2,}" (two or more U+0020)
  std::u32string content;        // Replace
  bool left = false;             // Strip
  bool right = false;            // Strip
  std::string source;            // what messages call it: "'DIR/tokenizer.json' normalizer Replace"
};

struct MetaspaceOptions {
  char32_t replacement = U'\u2581';
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  bool split = true;
};

struct UnigramVocab {
  std::vector<std::string> pieces;
  std::vector<double> scores;
  std::int32_t unk_id = -1;
  bool byte_fallback = false;
};

// InputError naming `source` for an empty vocabulary, a repeated piece or an unk_id
// outside it.
std::unique_ptr<SegmentModel> make_tokenizers_unigram_model(std::vector<NormalizerStep> steps,
                                                            MetaspaceOptions metaspace,
                                                            UnigramVocab vocab,
                                                            const std::string& source);

}  // namespace vlbias::text_internal
