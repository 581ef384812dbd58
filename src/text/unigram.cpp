// SentencePiece Unigram tokenizers (see unigram.h): sentencepiece's normalizer.cc
// (Normalize), unigram_model.cc (EncodeOptimized) and sentencepiece_processor.cc
// (unknown pieces), transformers' XLMRobertaTokenizer (fairseq ids), and the
// tokenizers' models/unigram (encode_optimized, tokenize), normalizers/replace.rs,
// strip.rs and pre_tokenizers/metaspace.rs.
#include "unigram.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "text_files.h"
#include "unigram_viterbi.h"
#include "vlbias/core/error.h"
#include "vlbias/text/unicode_text.h"
#include "wordpiece.h"

namespace vlbias::text_internal {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581

// ---- sentencepiece ----

class SentencePieceUnigram final : public SegmentModel {
 public:
  SentencePieceUnigram(SentencePieceModel model, const std::string& source);
  void encode(std::u32string_view text, bool at_text_start,
              std::vector<std::int32_t>& out) const override;
  std::optional<std::int32_t> token_to_id(std::string_view token) const override;
  std::size_t vocab_size() const override { return model_.pieces.size() + 2; }

 private:
  std::string normalize_spm(std::string_view input) const;
  std::pair<std::string_view, std::size_t> normalize_prefix(std::string_view input) const;
  std::int32_t fairseq_id(std::string_view piece) const;

  SentencePieceModel model_;
  PrecompiledCharsmap charsmap_;
  PieceMatcher matcher_;
  TokenIds piece_ids_;  // every piece -> SentencePiece id
  float unk_score_ = 0;
  std::int32_t unk_id_ = 0;
  std::array<std::int32_t, 256> byte_ids_{};  // SentencePiece ids of <0xXX>
};

SentencePieceUnigram::SentencePieceUnigram(SentencePieceModel model, const std::string& source)
    : model_(std::move(model)) {
  using Type = SentencePieceModel::PieceType;
  const auto& pieces = model_.pieces;
  VLBIAS_CHECK(model_.model_type == 1, InputError,
               "'{}' is a SentencePiece model of type {}; expected 1 (UNIGRAM), as XLM-R's", source,
               model_.model_type);
  VLBIAS_CHECK(pieces.size() >= 3 && pieces[0].type == Type::Unknown &&
                   pieces[1].type == Type::Control && pieces[2].type == Type::Control,
               InputError,
               "'{}' does not start with <unk>, <s>, </s> (UNKNOWN, CONTROL, CONTROL at ids 0, 1, "
               "2); expected XLM-R's layout, which fairseq's ids depend on",
               source);
  float min_score = std::numeric_limits<float>::max();
  std::vector<std::pair<std::string_view, std::int32_t>> keys;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const auto id = static_cast<std::int32_t>(i);
    const auto& p = pieces[i];
    VLBIAS_CHECK(p.type != Type::UserDefined, InputError,
                 "'{}' has the user-defined piece '{}' (id {}); user-defined pieces are not "
                 "supported",
                 source, excerpt(p.piece), i);
    VLBIAS_CHECK(i == 0 || p.type != Type::Unknown, InputError,
                 "'{}' has a second unknown piece '{}' at id {}; expected one <unk>", source,
                 excerpt(p.piece), i);
    VLBIAS_CHECK(piece_ids_.emplace(p.piece, id).second, InputError,
                 "'{}' has the piece '{}' twice (id {}); expected every piece once", source,
                 excerpt(p.piece), i);
    if (p.type == Type::Normal) {
      min_score = std::min(min_score, p.score);
      keys.emplace_back(p.piece, id);
    }
  }
  matcher_ = PieceMatcher(std::move(keys));
  unk_score_ = min_score - 10.0f;  // kUnkPenalty
  if (model_.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      auto it = piece_ids_.find(byte_piece(static_cast<unsigned char>(b)));
      VLBIAS_CHECK(it != piece_ids_.end() && pieces[it->second].type == Type::Byte, InputError,
                   "'{}' has byte_fallback but no byte piece {}; expected all 256", source,
                   byte_piece(static_cast<unsigned char>(b)));
      byte_ids_[b] = it->second;
    }
  }
  if (!model_.precompiled_charsmap.empty()) {
    charsmap_ = PrecompiledCharsmap::parse(model_.precompiled_charsmap,
                                           "the precompiled_charsmap of '" + source + "'");
  }
}

// Normalizer::NormalizePrefix: the longest rule, else one character as is.
std::pair<std::string_view, std::size_t> SentencePieceUnigram::normalize_prefix(
    std::string_view input) const {
  if (auto m = charsmap_.longest_prefix(input)) return {m->replacement, m->length};
  const std::size_t n = std::min(utf8_length(static_cast<unsigned char>(input[0])), input.size());
  return {input.substr(0, n), n};
}

// Normalizer::Normalize.
std::string SentencePieceUnigram::normalize_spm(std::string_view input) const {
  const bool remove_extra = model_.remove_extra_whitespaces;
  const std::size_t input_size = input.size();
  if (remove_extra) {
    while (!input.empty()) {
      const auto [replacement, length] = normalize_prefix(input);
      if (replacement != " ") break;
      input.remove_prefix(length);
    }
  }
  if (input.empty()) return {};
  std::string out;
  out.reserve(input.size() * 3);
  const auto add_space = [&] { out += model_.escape_whitespaces ? kSpaceSymbol : " "; };
  const bool suffix = model_.treat_whitespace_as_suffix;
  if (!suffix && model_.add_dummy_prefix) add_space();
  bool previous_space = remove_extra;
  while (!input.empty()) {
    auto [piece, length] = normalize_prefix(input);
    while (previous_space && piece.starts_with(' ')) piece.remove_prefix(1);
    if (!piece.empty()) {
      for (char c : piece) {
        if (model_.escape_whitespaces && c == ' ') {
          out += kSpaceSymbol;
        } else {
          out += c;
        }
      }
      previous_space = piece.ends_with(' ');
      check_normalized_growth(input_size, out.size(), charsmap_.source());
    }
    input.remove_prefix(length);
    if (!remove_extra) previous_space = false;
  }
  if (remove_extra) {
    const std::string_view space = model_.escape_whitespaces ? kSpaceSymbol : " ";
    std::size_t end = out.size();
    while (std::string_view(out.data(), end).ends_with(space)) end -= space.size();
    out.erase(end);
  }
  if (suffix && model_.add_dummy_prefix) add_space();
  return out;
}

// XLMRobertaTokenizer._convert_token_to_id: fairseq's four tokens, else the
// SentencePiece id + 1, with SentencePiece's unknown (id 0) as <unk> = 3.
std::int32_t SentencePieceUnigram::fairseq_id(std::string_view piece) const {
  static constexpr std::array<std::string_view, 4> kFairseq = {"<s>", "<pad>", "</s>", "<unk>"};
  for (std::size_t k = 0; k < kFairseq.size(); ++k) {
    if (piece == kFairseq[k]) return static_cast<std::int32_t>(k);
  }
  auto it = piece_ids_.find(piece);
  const std::int32_t spm_id = it == piece_ids_.end() ? unk_id_ : it->second;
  return spm_id == unk_id_ ? 3 : spm_id + 1;
}

void SentencePieceUnigram::encode(std::u32string_view text, bool /*at_text_start*/,
                                  std::vector<std::int32_t>& out) const {
  const std::string normalized = normalize_spm(unicode::to_utf8(text));
  if (normalized.empty()) return;
  const auto score_of = [this](std::int32_t id) { return model_.pieces[id].score; };
  const std::vector<PathPiece> path =
      best_path<float, double>(normalized, matcher_, score_of, unk_score_, unk_id_);
  // PopulateSentencePieceText: unknown pieces spelled as bytes with byte_fallback,
  // else a run of them merged into one piece (whose string is looked up again).
  for (std::size_t k = 0; k < path.size(); ++k) {
    const PathPiece& p = path[k];
    if (p.id != unk_id_) {
      out.push_back(fairseq_id(model_.pieces[p.id].piece));
      continue;
    }
    if (model_.byte_fallback) {
      for (std::size_t b = p.begin; b < p.end; ++b) {
        out.push_back(byte_ids_[static_cast<unsigned char>(normalized[b])] + 1);
      }
      continue;
    }
    std::size_t end = p.end;
    while (k + 1 < path.size() && path[k + 1].id == unk_id_) end = path[++k].end;
    out.push_back(fairseq_id(std::string_view(normalized).substr(p.begin, end - p.begin)));
  }
}

std::optional<std::int32_t> SentencePieceUnigram::token_to_id(std::string_view token) const {
  if (token == "<mask>") return static_cast<std::int32_t>(model_.pieces.size() + 1);
  if (token != "<s>" && token != "<pad>" && token != "</s>" && token != "<unk>" &&
      !piece_ids_.contains(token)) {
    return std::nullopt;
  }
  return fairseq_id(token);
}

}  // namespace

std::unique_ptr<SegmentModel> make_sentencepiece_model(SentencePieceModel model,
                                                       const std::string& source) {
  return std::make_unique<SentencePieceUnigram>(std::move(model), source);
}

}  // namespace vlbias::text_internal
