// Byte-level BPE (see byte_bpe.h): transformers' RobertaTokenizer / GPT2Tokenizer
// (_tokenize, bpe) and the tokenizers library's pre_tokenizers/byte_level.rs and
// models/bpe.
#include "byte_bpe.h"

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "text_files.h"
#include "vlbias/core/error.h"
#include "vlbias/text/bpe_merges.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {
namespace {

using unicode::PretokenClass;

// End of the run of `cls` characters from i.
std::size_t run_end(std::u32string_view text, std::size_t i, PretokenClass cls) {
  while (i < text.size() && unicode::pretoken_class(text[i]) == cls) ++i;
  return i;
}

// The match of GPT-2's pattern at text[i] (i < text.size()): its end. Alternatives
// are tried in order, as a backtracking regex engine does.
std::size_t gpt2_match(std::u32string_view text, std::size_t i) {
  const std::size_t n = text.size();
  if (text[i] == '\'' && i + 1 < n) {  // 's|'t|'re|'ve|'m|'ll|'d
    const std::u32string_view rest = text.substr(i + 1);
    for (std::u32string_view tail : {U"s", U"t", U"re", U"ve", U"m", U"ll", U"d"}) {
      if (rest.starts_with(tail)) return i + 1 + tail.size();
    }
  }
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: the optional space first.
  for (PretokenClass cls : {PretokenClass::Letter, PretokenClass::Number, PretokenClass::Other}) {
    if (text[i] == ' ' && i + 1 < n && unicode::pretoken_class(text[i + 1]) == cls) {
      return run_end(text, i + 1, cls);
    }
    if (unicode::pretoken_class(text[i]) == cls) return run_end(text, i, cls);
  }
  // Whitespace: `\s+(?!\S)` gives back the last space before a non-space; `\s+` then
  // takes a single space left before one.
  const std::size_t end = run_end(text, i, PretokenClass::Space);
  if (end == n || end - i == 1) return end;
  return end - 1;
}

class ByteBpeModel final : public SegmentModel {
 public:
  ByteBpeModel(ByteLevelOptions options, BpeVocab vocab)
      : options_(options), vocab_(std::move(vocab)), bound_(id_bound(vocab_.ids)) {}

  void encode(std::u32string_view text, bool at_text_start,
              std::vector<std::int32_t>& out) const override;
  std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    auto it = vocab_.ids.find(token);
    return it == vocab_.ids.end() ? std::nullopt : std::optional<std::int32_t>(it->second);
  }
  std::size_t vocab_size() const override { return bound_; }

 private:
  void piece_ids(std::u32string_view piece, std::vector<std::int32_t>& out) const;

  ByteLevelOptions options_;
  BpeVocab vocab_;
  std::size_t bound_;
};

void ByteBpeModel::encode(std::u32string_view text, bool /*at_text_start*/,
                          std::vector<std::int32_t>& out) const {
  std::u32string prefixed;
  if (options_.add_prefix_space && !text.empty() && text[0] != ' ') {
    prefixed.reserve(text.size() + 1);
    prefixed += U' ';
    prefixed += text;
    text = prefixed;
  }
  if (!options_.use_regex) {
    if (!text.empty()) piece_ids(text, out);
    return;
  }
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = gpt2_match(text, i);
    piece_ids(text.substr(i, end - i), out);
    i = end;
  }
}

void ByteBpeModel::piece_ids(std::u32string_view piece, std::vector<std::int32_t>& out) const {
  std::string bytes;
  for (char32_t c : piece) unicode::append_utf8(bytes, c);
  if (options_.ignore_merges) {
    std::string symbols;
    for (unsigned char b : bytes) symbols += byte_symbols()[b];
    auto it = vocab_.ids.find(symbols);
    if (it != vocab_.ids.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<std::int32_t> ids(bytes.size());
  for (std::size_t k = 0; k < bytes.size(); ++k) {
    ids[k] = vocab_.byte_ids[static_cast<unsigned char>(bytes[k])];
  }
  apply_bpe_merges(ids, vocab_.merges);
  out.insert(out.end(), ids.begin(), ids.end());
}

}  // namespace

const std::array<std::string, 256>& byte_symbols() {
  // Printable Latin-1 bytes map to themselves, the other 68 to U+0100 onwards.
  static const std::array<std::string, 256> symbols = [] {
    std::array<std::string, 256> s;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      unicode::append_utf8(s[b], printable ? static_cast<char32_t>(b) : next++);
    }
    return s;
  }();
  return symbols;
}

void set_byte_ids(BpeVocab& vocab, const std::string& source) {
  for (int b = 0; b < 256; ++b) {
    auto it = vocab.ids.find(byte_symbols()[b]);
    VLBIAS_CHECK(it != vocab.ids.end(), InputError,
                 "{} lacks the symbol '{}' of byte 0x{:02X}; a byte-level BPE vocabulary has all "
                 "256 byte symbols",
                 source, excerpt(byte_symbols()[b]), b);
    vocab.byte_ids[b] = it->second;
  }
}

void add_merge(BpeVocab& vocab, std::string_view left, std::string_view right,
               const std::string& where) {
  const std::string joined = std::string(left) + std::string(right);
  std::int32_t ids[3] = {-1, -1, -1};
  const std::string_view parts[3] = {left, right, joined};
  for (int k = 0; k < 3; ++k) {
    auto it = vocab.ids.find(parts[k]);
    VLBIAS_CHECK(it != vocab.ids.end(), InputError,
                 "{} merges '{}' and '{}', but '{}' is not in the vocabulary", where, excerpt(left),
                 excerpt(right), excerpt(parts[k]));
    ids[k] = it->second;
  }
  VLBIAS_CHECK(vocab.next_rank < std::numeric_limits<std::int32_t>::max(), InputError,
               "{}: too many merges", where);
  vocab.merges[bpe_pair_key(ids[0], ids[1])] = BpeMerge{vocab.next_rank++, ids[2]};
}

std::unique_ptr<SegmentModel> make_byte_bpe_model(ByteLevelOptions options, BpeVocab vocab) {
  return std::make_unique<ByteBpeModel>(options, std::move(vocab));
}

}  // namespace vlbias::text_internal
