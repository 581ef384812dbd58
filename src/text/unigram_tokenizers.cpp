// The tokenizers' Unigram pipeline of a tokenizer.json (see unigram.h):
// normalizers/precompiled.rs, replace.rs, strip.rs, pre_tokenizers/metaspace.rs and
// models/unigram/model.rs (encode_optimized with fuse_unk, tokenize with
// byte_fallback).
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "charsmap.h"
#include "text_files.h"
#include "unigram.h"
#include "unigram_viterbi.h"
#include "vlbias/core/error.h"
#include "vlbias/text/unicode_text.h"
#include "wordpiece.h"

namespace vlbias::text_internal {
namespace {

// KMP's failure function of a pattern (Knuth, Morris & Pratt 1977, "Fast pattern matching
// in strings", SIAM J. Comput. 6(2)): fail[k] = the length of the longest proper border of
// pattern[0, k + 1).
std::vector<std::size_t> replace_pattern_borders(std::u32string_view pattern) {
  std::vector<std::size_t> fail(pattern.size(), 0);
  for (std::size_t k = 1, b = 0; k < pattern.size(); ++k) {
    while (b > 0 && pattern[k] != pattern[b]) b = fail[b - 1];
    if (pattern[k] == pattern[b]) ++b;
    fail[k] = b;
  }
  return fail;
}

// replace.rs: every occurrence of the pattern, left to right and not overlapping, becomes
// the content. The occurrences come from KMP (linear in the text, where a comparison at
// every position costs text x pattern), the matcher restarting after each one.
// original_length: code points of the text before this and any earlier normalizer step.
std::u32string replace_all(std::u32string_view text, const NormalizerStep& step,
                           std::size_t original_length) {
  std::u32string out;
  out.reserve(text.size());
  if (step.pattern_spaces) {  // the regex " {2,}"
    std::size_t i = 0;
    while (i < text.size()) {
      std::size_t length = 0;
      while (i + length < text.size() && text[i + length] == U' ') ++length;
      if (length >= 2) {
        out += step.content;
        i += length;
      } else {
        out += text[i++];
      }
      check_normalized_growth(original_length, out.size(), step.source);
    }
    return out;
  }
  const std::u32string_view pattern = step.pattern;
  if (pattern.empty()) return std::u32string(text);
  const std::vector<std::size_t> fail = replace_pattern_borders(pattern);
  std::size_t matched = 0;  // pattern symbols matched ending at text[i - 1]
  std::size_t copied = 0;   // text before this is in out
  for (std::size_t i = 0; i < text.size(); ++i) {
    while (matched > 0 && text[i] != pattern[matched]) matched = fail[matched - 1];
    if (text[i] == pattern[matched]) ++matched;
    if (matched == pattern.size()) {
      const std::size_t begin = i + 1 - pattern.size();
      out.append(text.substr(copied, begin - copied));
      out += step.content;
      copied = i + 1;
      matched = 0;  // not overlapping: the next occurrence starts after this one
      check_normalized_growth(original_length, out.size(), step.source);
    }
  }
  out.append(text.substr(copied));
  return out;
}

std::u32string strip(std::u32string_view text, bool left, bool right) {
  std::size_t b = 0;
  std::size_t e = text.size();
  if (left) {
    while (b < e && unicode::is_white_space(text[b])) ++b;
  }
  if (right) {
    while (e > b && unicode::is_white_space(text[e - 1])) --e;
  }
  return std::u32string(text.substr(b, e - b));
}

class TokenizersUnigram final : public SegmentModel {
 public:
  TokenizersUnigram(std::vector<NormalizerStep> steps, MetaspaceOptions metaspace,
                    UnigramVocab vocab, const std::string& source);
  std::u32string normalize(std::u32string_view text) const override;
  void encode(std::u32string_view text, bool at_text_start,
              std::vector<std::int32_t>& out) const override;
  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    auto it = ids_.find(token);
    return it == ids_.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }
  std::size_t vocab_size() const override { return vocab_.pieces.size(); }

 private:
  void piece_ids(std::string_view piece, std::vector<std::int32_t>& out) const;
  void token_ids(std::string_view token, std::vector<std::int32_t>& out) const;

  std::vector<NormalizerStep> steps_;
  MetaspaceOptions metaspace_;
  UnigramVocab vocab_;
  TokenIds ids_;
  PieceMatcher matcher_;
  double unk_score_ = 0;
  std::array<std::int32_t, 256> byte_ids_{};  // -1 where "<0xXX>" is not a token
};

TokenizersUnigram::TokenizersUnigram(std::vector<NormalizerStep> steps, MetaspaceOptions metaspace,
                                     UnigramVocab vocab, const std::string& source)
    : steps_(std::move(steps)), metaspace_(metaspace), vocab_(std::move(vocab)) {
  VLBIAS_CHECK(!vocab_.pieces.empty(), InputError,
               "{}: the Unigram vocabulary is empty; expected [piece, score] pairs", source);
  VLBIAS_CHECK(vocab_.unk_id >= 0 && static_cast<std::size_t>(vocab_.unk_id) < vocab_.pieces.size(),
               InputError, "{}: unk_id {} is not an index of the {} pieces", source, vocab_.unk_id,
               vocab_.pieces.size());
  double min_score = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::string_view, std::int32_t>> keys;
  for (std::size_t i = 0; i < vocab_.pieces.size(); ++i) {
    const std::string& piece = vocab_.pieces[i];
    const auto id = static_cast<std::int32_t>(i);
    VLBIAS_CHECK(!piece.empty(), InputError, "{}: piece {} is empty; expected a string", source, i);
    VLBIAS_CHECK(ids_.emplace(piece, id).second, InputError,
                 "{}: the piece '{}' is given twice (ids {} and {}); expected every piece once",
                 source, excerpt(piece), ids_.at(piece), i);
    min_score = std::min(min_score, vocab_.scores[i]);
    keys.emplace_back(piece, id);
  }
  matcher_ = PieceMatcher(std::move(keys));
  unk_score_ = min_score - 10.0;  // K_UNK_PENALTY
  for (int b = 0; b < 256; ++b) {
    auto it = ids_.find(byte_piece(static_cast<unsigned char>(b)));
    byte_ids_[b] = it == ids_.end() ? -1 : it->second;
  }
}

// Each step's growth is bounded against the text as given (check_normalized_growth), so a
// Sequence of steps cannot multiply it step after step.
std::u32string TokenizersUnigram::normalize(std::u32string_view text) const {
  std::size_t text_bytes = 0;
  for (char32_t c : text) text_bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  std::u32string out(text);
  for (const NormalizerStep& step : steps_) {
    switch (step.kind) {
      case NormalizerStep::Kind::Precompiled:
        out = step.charsmap.normalize_graphemes(out, text_bytes);
        break;
      case NormalizerStep::Kind::Replace:
        out = replace_all(out, step, text.size());
        break;
      case NormalizerStep::Kind::Strip:
        out = strip(out, step.left, step.right);
        break;
    }
  }
  return out;
}

// Metaspace: spaces become the replacement, which is prepended when the scheme
// says so and the text does not start with it; with split, every replacement
// starts a new piece (the delimiter merged with what follows it).
void TokenizersUnigram::encode(std::u32string_view text, bool at_text_start,
                               std::vector<std::int32_t>& out) const {
  std::u32string s(text);
  std::replace(s.begin(), s.end(), U' ', metaspace_.replacement);
  const bool prepend = metaspace_.prepend == MetaspaceOptions::Prepend::Always ||
                       (metaspace_.prepend == MetaspaceOptions::Prepend::First && at_text_start);
  if (prepend && (s.empty() || s[0] != metaspace_.replacement)) {
    s.insert(s.begin(), metaspace_.replacement);
  }
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= s.size(); ++i) {
    if (i < s.size() && !(metaspace_.split && s[i] == metaspace_.replacement)) continue;
    piece_ids(unicode::to_utf8(std::u32string_view(s).substr(begin, i - begin)), out);
    begin = i;
  }
}

// Unigram::encode (encode_optimized, fuse_unk) and tokenize.
void TokenizersUnigram::piece_ids(std::string_view piece, std::vector<std::int32_t>& out) const {
  if (piece.empty()) return;
  const auto score_of = [this](std::int32_t id) { return vocab_.scores[id]; };
  const std::vector<PathPiece> path =
      best_path<double, double>(piece, matcher_, score_of, unk_score_, vocab_.unk_id);
  for (std::size_t k = 0; k < path.size(); ++k) {
    const std::size_t begin = path[k].begin;
    if (path[k].id == vocab_.unk_id) {
      while (k + 1 < path.size() && path[k + 1].id == vocab_.unk_id) ++k;
    }
    token_ids(piece.substr(begin, path[k].end - begin), out);
  }
}

void TokenizersUnigram::token_ids(std::string_view token, std::vector<std::int32_t>& out) const {
  auto it = ids_.find(token);
  if (it != ids_.end()) {
    out.push_back(it->second);
  } else if (vocab_.byte_fallback && std::all_of(token.begin(), token.end(), [this](char b) {
               return byte_ids_[static_cast<unsigned char>(b)] >= 0;
             })) {
    for (char b : token) out.push_back(byte_ids_[static_cast<unsigned char>(b)]);
  } else {
    out.push_back(vocab_.unk_id);
  }
}

}  // namespace

std::unique_ptr<SegmentModel> make_tokenizers_unigram_model(std::vector<NormalizerStep> steps,
                                                            MetaspaceOptions metaspace,
                                                            UnigramVocab vocab,
                                                            const std::string& source) {
  return std::make_unique<TokenizersUnigram>(std::move(steps), metaspace, std::move(vocab), source);
}

}  // namespace vlbias::text_internal
