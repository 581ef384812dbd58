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
      : flavor_(flavor), norm_(norm), vocab_(std::move(vocab)), bound_(id_bound(vocab_.ids)) {}

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

  BertFlavor flavor_;
  BertNormalization norm_;
  WordPieceVocab vocab_;
  std::size_t bound_;
};

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
// has no match or the word is longer than max_input_chars_per_word characters.
void WordPieceModel::word_ids(std::u32string_view word, std::vector<std::int32_t>& out) const {
  if (word.size() > vocab_.max_input_chars_per_word) {
    out.push_back(vocab_.unk_id);
    return;
  }
  const std::size_t first_id = out.size();
  // UTF-8 of the word, and the byte offset of each character.
  std::string bytes;
  std::vector<std::size_t> offset;
  offset.reserve(word.size() + 1);
  for (char32_t c : word) {
    offset.push_back(bytes.size());
    unicode::append_utf8(bytes, c);
  }
  offset.push_back(bytes.size());
  std::string candidate;
  std::size_t start = 0;
  while (start < word.size()) {
    candidate.assign(start > 0 ? vocab_.continuing_prefix : std::string());
    const std::size_t head = candidate.size();
    candidate.append(bytes, offset[start], std::string::npos);
    std::size_t end = word.size();
    std::int32_t found = -1;
    for (; end > start; --end) {
      const std::string_view piece(candidate.data(), head + offset[end] - offset[start]);
      auto it = vocab_.ids.find(piece);
      if (it != vocab_.ids.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      out.resize(first_id);
      out.push_back(vocab_.unk_id);
      return;
    }
    out.push_back(found);
    start = end;
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
