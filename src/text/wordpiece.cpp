// BERT's WordPiece tokenizer in its two flavors (see wordpiece.h): transformers'
// models/bert/tokenization_bert.py (BasicTokenizer, WordpieceTokenizer) and the
// tokenizers library's normalizers/bert.rs, pre_tokenizers/bert.rs and
// models/wordpiece.
#include "wordpiece.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "match_automaton.h"
#include "vlbias/core/utf8.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {
namespace {

using unicode::GeneralCategory;

bool is_ascii_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126);
}

// _is_punctuation / is_bert_punc: ASCII non-alphanumerics count as punctuation too.
bool is_bert_punctuation(char32_t c) {
  return is_ascii_punctuation(c) || unicode::is_punctuation_category(unicode::general_category(c));
}

// _is_control: category C*, except \t \n \r (counted as whitespace).
bool is_python_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return unicode::is_other_category(unicode::general_category(c));
}

// _is_whitespace: ' ', \t, \n, \r and Zs.
bool is_python_bert_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
         unicode::general_category(c) == GeneralCategory::Zs;
}

// is_control (normalizers/bert.rs): char::is_other of the unicode_categories crate,
// which is Cc, Cf and Co (not Cn or Cs).
bool is_rust_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  const GeneralCategory g = unicode::general_category(c);
  return g == GeneralCategory::Cc || g == GeneralCategory::Cf || g == GeneralCategory::Co;
}

bool is_python_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The Rust list starts its fifth range at U+2B920 instead of U+2B820.
bool is_rust_cjk(char32_t c) {
  return is_python_cjk(c) && !(c >= 0x2B820 && c <= 0x2B91F);
}

std::u32string strip_accents(std::u32string_view text) {
  std::u32string d = unicode::nfd(text);
  std::erase_if(d, [](char32_t c) { return unicode::general_category(c) == GeneralCategory::Mn; });
  return d;
}

class WordPieceModel final : public SegmentModel {
 public:
  WordPieceModel(BertFlavor flavor, BertNormalization norm, WordPieceVocab vocab)
      : flavor_(flavor), norm_(norm), vocab_(std::move(vocab)), bound_(id_bound(vocab_.ids)) {
    build_matchers();
  }

  std::u32string normalize(std::u32string_view text) const override;
  void encode(std::u32string_view text, bool at_text_start,
              std::vector<std::int32_t>& out) const override;
  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    auto it = vocab_.ids.find(token);
    return it == vocab_.ids.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }
  std::size_t vocab_size() const override { return bound_; }

 private:
  bool strips_accents() const { return norm_.strip_accents.value_or(norm_.lowercase); }
  void encode_transformers(std::u32string_view text, std::vector<std::int32_t>& out) const;
  void encode_tokenizers(std::u32string_view text, std::vector<std::int32_t>& out) const;
  void word_ids(std::u32string_view word, std::vector<std::int32_t>& out) const;
  void build_matchers();

  BertFlavor flavor_;
  BertNormalization norm_;
  WordPieceVocab vocab_;
  std::size_t bound_;
  // Over the reversed UTF-8 of the vocabulary entries (match_automaton.h): every entry (a
  // word's first piece), and the entries that start with the continuing prefix, without it
  // (the pieces after the first).
  MatchAutomaton<char> first_pieces_;
  MatchAutomaton<char> next_pieces_;
};

// Entries that are not UTF-8 (after the prefix, for the next pieces) can never equal the
// UTF-8 of a word's characters, so leaving them out changes no match.
void WordPieceModel::build_matchers() {
  std::vector<std::string> reversed_first, reversed_next;
  std::vector<std::int32_t> first_ids, next_ids;
  const std::string& prefix = vocab_.continuing_prefix;
  for (const auto& [token, id] : vocab_.ids) {
    if (first_invalid_utf8(token) == token.size()) {
      reversed_first.emplace_back(token.rbegin(), token.rend());
      first_ids.push_back(id);
    }
    const std::string_view rest =
        std::string_view(token).substr(std::min(prefix.size(), token.size()));
    if (token.starts_with(prefix) && first_invalid_utf8(rest) == rest.size()) {
      reversed_next.emplace_back(rest.rbegin(), rest.rend());
      next_ids.push_back(id);
    }
  }
  const auto keys = [](const std::vector<std::string>& strings,
                       const std::vector<std::int32_t>& ids) {
    std::vector<std::pair<std::string_view, std::int32_t>> out;
    for (std::size_t i = 0; i < strings.size(); ++i) out.emplace_back(strings[i], ids[i]);
    return out;
  };
  first_pieces_ = MatchAutomaton<char>(keys(reversed_first, first_ids));
  next_pieces_ = MatchAutomaton<char>(keys(reversed_next, next_ids));
}

// BertNormalizer (tokenizers): clean, space out CJK, strip accents, lowercase.
std::u32string WordPieceModel::normalize(std::u32string_view text) const {
  if (flavor_ == BertFlavor::Transformers) return std::u32string(text);
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (norm_.clean_text) {
      if (c == 0 || c == 0xFFFD || is_rust_control(c)) continue;
      if (c == '\t' || c == '\n' || c == '\r' || unicode::is_white_space(c)) c = ' ';
    }
    if (norm_.handle_chinese_chars && is_rust_cjk(c)) {
      out += U' ';
      out += c;
      out += U' ';
    } else {
      out += c;
    }
  }
  if (strips_accents()) out = strip_accents(out);
  if (norm_.lowercase) out = unicode::lower_per_char(out);
  return out;
}

void WordPieceModel::encode(std::u32string_view text, bool /*at_text_start*/,
                            std::vector<std::int32_t>& out) const {
  if (flavor_ == BertFlavor::Transformers) {
    encode_transformers(text, out);
  } else {
    encode_tokenizers(text, out);
  }
}

// Calls f(begin, end) for each maximal run of characters that are not `is_space`.
template <typename IsSpace, typename F>
void for_each_word(std::u32string_view text, IsSpace is_space, F f) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > begin) f(text.substr(begin, i - begin));
  }
}

// Calls f(piece) for the runs between punctuation characters and for each
// punctuation character (_run_split_on_punc, Split with Isolated).
template <typename F>
void for_each_punctuation_piece(std::u32string_view word, F f) {
  std::size_t begin = 0;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (!is_bert_punctuation(word[i])) continue;
    if (i > begin) f(word.substr(begin, i - begin));
    f(word.substr(i, 1));
    begin = i + 1;
  }
  if (begin < word.size()) f(word.substr(begin));
}

// BasicTokenizer.tokenize, then WordpieceTokenizer.tokenize per token.
void WordPieceModel::encode_transformers(std::u32string_view text,
                                         std::vector<std::int32_t>& out) const {
  std::u32string cleaned;
  cleaned.reserve(text.size());
  for (char32_t c : text) {
    if (norm_.clean_text) {  // _clean_text
      if (c == 0 || c == 0xFFFD || is_python_control(c)) continue;
      if (is_python_bert_space(c)) c = ' ';
    }
    if (norm_.handle_chinese_chars && is_python_cjk(c)) {  // _tokenize_chinese_chars
      cleaned += U' ';
      cleaned += c;
      cleaned += U' ';
    } else {
      cleaned += c;
    }
  }
  const std::u32string composed = unicode::nfc(cleaned);
  const auto python_space = [](char32_t c) { return unicode::is_python_space(c); };
  for_each_word(composed, python_space, [&](std::u32string_view token) {
    std::u32string word(token);
    if (norm_.lowercase) {
      word = unicode::lower_python(word);
      if (norm_.strip_accents != false) word = strip_accents(word);
    } else if (norm_.strip_accents == true) {
      word = strip_accents(word);
    }
    // The pieces are joined with " " and split on whitespace again.
    for_each_punctuation_piece(word, [&](std::u32string_view piece) {
      for_each_word(piece, python_space, [&](std::u32string_view w) { word_ids(w, out); });
    });
  });
}

// BertPreTokenizer: split on whitespace (removed), then isolate punctuation.
void WordPieceModel::encode_tokenizers(std::u32string_view text,
                                       std::vector<std::int32_t>& out) const {
  const auto white_space = [](char32_t c) { return unicode::is_white_space(c); };
  for_each_word(text, white_space, [&](std::u32string_view word) {
    for_each_punctuation_piece(word, [&](std::u32string_view piece) { word_ids(piece, out); });
  });
}

// Greedy longest-match-first: the longest vocabulary entry at the start, then
// "##"-prefixed entries for the rest; [UNK] for the whole word when some position
// has no match or the word is longer than max_input_chars_per_word characters. The
// references try every end from the word's end down at each position (cubic in the word's
// length); here the longest entry starting at every byte comes from one scan of each
// automaton (linear), so a hostile max_input_chars_per_word costs nothing more.
void WordPieceModel::word_ids(std::u32string_view word, std::vector<std::int32_t>& out) const {
  if (word.size() > vocab_.max_input_chars_per_word) {
    out.push_back(vocab_.unk_id);
    return;
  }
  const std::string bytes = unicode::to_utf8(word);
  std::vector<std::pair<std::size_t, std::int32_t>> first, next;
  using Pick = MatchAutomaton<char>::Pick;
  first_pieces_.starting_at(bytes, Pick::Longest, first);
  next_pieces_.starting_at(bytes, Pick::Longest, next);
  const std::size_t first_id = out.size();
  for (std::size_t pos = 0; pos < bytes.size();) {
    const auto [length, id] = pos == 0 ? first[0] : next[pos];
    if (length == 0) {
      out.resize(first_id);
      out.push_back(vocab_.unk_id);
      return;
    }
    out.push_back(id);
    pos += length;
  }
}

}  // namespace

std::size_t id_bound(const TokenIds& ids) {
  std::size_t bound = 0;
  for (const auto& entry : ids) {
    bound = std::max(bound, static_cast<std::size_t>(entry.second) + 1);
  }
  return bound;
}

std::unique_ptr<SegmentModel> make_wordpiece_model(BertFlavor flavor, BertNormalization norm,
                                                   WordPieceVocab vocab) {
  return std::make_unique<WordPieceModel>(flavor, norm, std::move(vocab));
}

}  // namespace vlbias::text_internal
