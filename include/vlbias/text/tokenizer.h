#pragma once
// The text tokenizers of the sequence classifiers vlbias runs natively (issue 21):
// token ids equal to the Hugging Face tokenizers of
//
//   BERT, DistilBERT (Detoxify "original", unitary/toxic-bert)   WordPiece
//   RoBERTa (Detoxify "unbiased")                                byte-level BPE
//   XLM-RoBERTa (Detoxify "multilingual")                        SentencePiece Unigram
//
// read from a Hugging Face model folder:
//
//   tokenizer.json (preferred when present): the `tokenizers` (Rust) pipeline it
//     declares: added_tokens, normalizer, pre_tokenizer, model, post_processor,
//     truncation. Only the components these families use are read: BertNormalizer,
//     Precompiled, Replace, Strip and Sequence normalizers; BertPreTokenizer, ByteLevel
//     and Metaspace pre-tokenizers; WordPiece, BPE and Unigram models; BertProcessing,
//     RobertaProcessing and TemplateProcessing. Anything else is refused by name.
//   vocab.txt (+ tokenizer_config.json): transformers' BertTokenizer (Python).
//   vocab.json + merges.txt (+ tokenizer_config.json): transformers' RobertaTokenizer.
//   sentencepiece.bpe.model: transformers' XLMRobertaTokenizer (the sentencepiece
//     library's normaliser and Viterbi, fairseq's id layout: <s>=0 <pad>=1 </s>=2
//     <unk>=3, SentencePiece ids + 1, <mask> last).
//
// Where the Python tokenizer and tokenizer.json of one model differ on a text (listed
// in src/text/wordpiece.h, byte_bpe.h and unigram.h), the ids follow the source read.
//
// Output per text: ids with the model's special tokens ([CLS] ... [SEP],
// <s> ... </s>), at most max_length of them, and whether content was cut to fit:
// truncation keeps the first max_length - (special tokens) content ids and is never
// silent (TokenizedText::truncated; the caller counts them).
//
// Thread safety: a TextTokenizer is immutable after from_folder(); encode() may run
// concurrently from any number of threads. Copies share the loaded model.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

enum class TokenizerKind { WordPiece, ByteLevelBpe, Unigram };
const char* to_string(TokenizerKind kind);

// Which files of the folder define the tokenizer.
enum class TokenizerSource {
  Auto,           // tokenizer.json when present, else the legacy files
  TokenizerJson,  // tokenizer.json only
  LegacyFiles,    // vocab.txt / vocab.json + merges.txt / sentencepiece.bpe.model only
};

struct TokenizerOptions {
  TokenizerSource source = TokenizerSource::Auto;
  // Overrides the model's maximum sequence length (see TextTokenizer::max_length).
  std::optional<std::size_t> max_length;
};

struct TokenizedText {
  // Special tokens and content ids, not padded: the attention mask is ids.size() ones.
  std::vector<std::int32_t> ids;
  // Content ids (without special tokens) the whole text has; more than fit when
  // truncated.
  std::size_t content_length = 0;
  // Content ids were dropped to fit max_length.
  bool truncated = false;

  std::size_t attention_length() const { return ids.size(); }
};

class TextTokenizer {
 public:
  // Loads the tokenizer of a Hugging Face model folder (see the top of this file).
  // Throws InputError naming the file and what was expected for a missing folder or
  // file, malformed JSON / vocabulary / merges / protobuf / charsmap, a component or
  // option that is not supported (named), and special tokens missing from the
  // vocabulary; UsageError when no maximum length can be determined and none is given,
  // or a given one leaves no room for content.
  static TextTokenizer from_folder(const std::filesystem::path& dir,
                                   const TokenizerOptions& options = {});

  // Ids of one UTF-8 text with special tokens, truncated to max_length(). Empty and
  // whitespace-only texts give the special tokens alone. Throws InputError when the
  // text is not valid UTF-8 (naming the byte offset).
  TokenizedText encode(std::string_view utf8_text) const;
  TokenizedText encode(std::string_view utf8_text, std::size_t max_length) const;
  // Content ids of the text: no special tokens, no truncation.
  std::vector<std::int32_t> content_ids(std::string_view utf8_text) const;

  // Maximum ids per text, special tokens included. Default: config.json's
  // max_position_embeddings, minus RoBERTa's position offset (pad_token_id + 1 = 2)
  // for model_type roberta / xlm-roberta, whose position ids start after the padding
  // index (514 - 2 = 512); else tokenizer.json's truncation.max_length; else
  // tokenizer_config.json's model_max_length (when below 10^6).
  std::size_t max_length() const;
  // Where max_length() came from, e.g. "config.json max_position_embeddings 514 - 2".
  const std::string& max_length_source() const;

  TokenizerKind kind() const;
  // "tokenizer.json", "vocab.txt", "vocab.json + merges.txt" or
  // "sentencepiece.bpe.model".
  const std::string& source() const;
  // Special tokens before and after the content.
  const std::vector<std::int32_t>& prefix_ids() const;
  const std::vector<std::int32_t>& suffix_ids() const;
  // Padding id for batching (the model's pad token), or -1 when it has none.
  std::int32_t pad_id() const;
  // Largest id + 1 (the embedding rows the model needs).
  std::size_t vocab_size() const;
  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  // The Unicode tables compiled in ("unicodedata 14.0.0, regex 15.0.0").
  static std::string unicode_version();

 private:
  struct Impl;
  explicit TextTokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace vlbias
