#pragma once
// Internal to vlbias_text: a loaded tokenizer as the steps every family shares
// (UTF-8 check, the Python tokenizers' whole-text rules, added-token splitting,
// normalizer, special tokens around the content) around one family's model
// (wordpiece.h, byte_bpe.h, unigram.h). Loaders: tokenizer_json.cpp (tokenizer.json,
// the `tokenizers` pipeline) and legacy_files.cpp (the transformers Python tokenizers'
// files).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "match_automaton.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias::text_internal {

// An added (special) token: tokenizer.json's added_tokens, or a special token of the
// Python tokenizers.
struct AddedToken {
  std::u32string content;
  std::int32_t id = -1;
  bool lstrip = false;      // also takes the whitespace before it
  bool rstrip = false;      // also takes the whitespace after it
  bool normalized = false;  // matched in normalized text (tokenizers); content is normalized
};

// [begin, end) of a text: text to tokenize (token < 0) or a matched added token.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::int32_t token = -1;
};

// What lstrip / rstrip take: Python's str.isspace (transformers) or White_Space
// (tokenizers' char::is_whitespace).
enum class SpaceRule { PythonIsspace, WhiteSpace };

// An automaton over the reversed `tokens` (match_automaton.h), each token's value its
// position in the list: which tokens start at each position of a text, in one scan.
MatchAutomaton<char32_t> reversed_token_matcher(const std::vector<std::u32string>& tokens);

// Splits text at added tokens, leftmost-longest (the tokenizers' aho-corasick
// LeftmostLongest; transformers' Trie.split finds the same for tokens none of which
// contains another). Linear in the text whatever the tokens (an automaton, not a search
// per position and token).
class AddedTokenSplitter {
 public:
  AddedTokenSplitter() = default;
  AddedTokenSplitter(std::vector<AddedToken> tokens, SpaceRule spaces);
  bool empty() const { return tokens_.empty(); }
  // Non-empty text spans and token spans covering `text` in order.
  std::vector<Span> split(std::u32string_view text) const;

 private:
  std::vector<AddedToken> tokens_;   // longest first
  MatchAutomaton<char32_t> starts_;  // tokens_ reversed, values their positions in tokens_
  SpaceRule spaces_ = SpaceRule::WhiteSpace;
};

// One family's work on the text between added tokens.
class SegmentModel {
 public:
  virtual ~SegmentModel() = default;
  // The tokenizer.json normalizer; identity where there is none (the Python
  // tokenizers normalize inside encode()).
  virtual std::u32string normalize(std::u32string_view text) const { return std::u32string(text); }
  // Appends the ids of (normalized) text. `at_text_start`: the span begins the text
  // (Metaspace's prepend_scheme "first").
  virtual void encode(std::u32string_view text, bool at_text_start,
                      std::vector<std::int32_t>& out) const = 0;
  virtual std::optional<std::int32_t> token_to_id(std::string_view token) const = 0;
  // Largest id + 1.
  virtual std::size_t vocab_size() const = 0;
};

struct Pipeline {
  TokenizerKind kind = TokenizerKind::WordPiece;
  std::string source;  // "tokenizer.json", "vocab.txt", ...
  std::unique_ptr<SegmentModel> model;
  AddedTokenSplitter raw_tokens;         // matched in the raw text
  AddedTokenSplitter normalized_tokens;  // matched in each normalized span (tokenizers)
  // transformers' PreTrainedTokenizer.tokenize with do_lower_case: every character
  // outside these special tokens is lower-cased on its own (re.sub of
  // "(specials)|(.+?)" with str.lower), before the added tokens are split out.
  // reversed_token_matcher of the special tokens, in their order.
  MatchAutomaton<char32_t> lowercase_except;
  bool lowercase_text = false;
  // RobertaTokenizer.prepare_for_tokenization with add_prefix_space: " " before a text
  // whose first character is not whitespace.
  bool python_prefix_space = false;
  std::vector<std::int32_t> prefix;  // special tokens before the content
  std::vector<std::int32_t> suffix;  // and after it
  std::int32_t pad_id = -1;
  std::unordered_map<std::string, std::int32_t> added_ids;  // content (UTF-8) -> id
  // A maximum length tokenizer.json states (truncation.max_length), and where it came
  // from.
  std::optional<std::size_t> stated_max_length;
  std::string stated_max_length_source;

  // Appends the content ids of a UTF-8 text (InputError when it is not UTF-8).
  void encode_content(std::string_view utf8_text, std::vector<std::int32_t>& out) const;
};

// tokenizer.json of a folder (tokenizer_json.cpp).
Pipeline load_tokenizer_json(const std::filesystem::path& file);
// The legacy files of a folder (legacy_files.cpp); InputError when none is there.
Pipeline load_legacy_files(const std::filesystem::path& dir);

}  // namespace vlbias::text_internal
