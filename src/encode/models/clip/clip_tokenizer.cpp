// CLIP's byte-level BPE tokenizer (see include/vlbias/encode/models/clip_tokenizer.h). The
// cleaning, pre-tokenizer and BPE follow open_clip's src/open_clip/tokenizer.py
// (SimpleTokenizer) and transformers' models/clip (CLIPTokenizer, and the
// tokenizer.json normalizer / pre-tokenizer of CLIPTokenizerFast).
#include "vlbias/encode/models/clip_tokenizer.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "vlbias/core/error.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/text/bpe_merges.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias {
namespace {

using unicode::PretokenClass;

constexpr std::string_view kStartToken = "<|startoftext|>";
constexpr std::string_view kEndToken = "<|endoftext|>";
constexpr std::u32string_view kStartToken32 = U"<|startoftext|>";
constexpr std::u32string_view kEndToken32 = U"<|endoftext|>";
constexpr std::string_view kEndOfWord = "</w>";

std::string shown(std::string_view token) {
  return escape_for_message(token, 60);
}

// GPT-2's bytes_to_unicode (open_clip tokenizer.py): printable Latin-1 bytes map
// to themselves, the other 68 bytes to U+0100 onwards in byte order.
std::array<char32_t, 256> byte_to_unicode() {
  std::array<char32_t, 256> map{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    map[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return map;
}

std::string file_text(const std::filesystem::path& path, std::string_view what) {
  const MappedFile file(path, MapAccess::Sequential);
  VLBIAS_CHECK(file.size() > 0, InputError, "'{}' is empty; expected a CLIP {}", path.string(),
               what);
  return std::string(reinterpret_cast<const char*>(file.data()), file.size());
}

// SAX reader for vocab.json: one flat object of token -> integer id. A SAX pass
// sees a repeated key, which a DOM parse would silently drop.
class VocabReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit VocabReader(std::string source) : source_(std::move(source)) {}

  std::unordered_map<std::string, std::int32_t> take() { return std::move(vocab_); }

  bool null() override { return not_an_id("null"); }
  bool boolean(bool) override { return not_an_id("a boolean"); }
  bool number_integer(number_integer_t v) override {
    if (v >= 0) return number_unsigned(static_cast<number_unsigned_t>(v));
    return not_an_id(fmt::format("the negative number {}", v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    check_value_position("a number");
    VLBIAS_CHECK(v <= static_cast<number_unsigned_t>(std::numeric_limits<std::int32_t>::max()),
                 InputError, "'{}' gives token '{}' the id {}, beyond the int32 range", source_,
                 shown(key_), v);
    const auto id = static_cast<std::int32_t>(v);
    auto [it, fresh] = id_owner_.emplace(id, key_);
    VLBIAS_CHECK(fresh, InputError, "'{}' gives the id {} to both '{}' and '{}'", source_, id,
                 shown(it->second), shown(key_));
    vocab_.emplace(key_, id);
    return true;
  }
  bool number_float(number_float_t v, const string_t&) override {
    return not_an_id(fmt::format("the non-integer number {}", v));
  }
  bool string(string_t&) override { return not_an_id("a string"); }
  bool binary(binary_t&) override { return not_an_id("binary data"); }
  bool start_object(std::size_t) override {
    VLBIAS_CHECK(depth_ == 0, InputError,
                 "'{}' gives token '{}' an object; expected {{\"token\": id, ...}}", source_,
                 shown(key_));
    ++depth_;
    return true;
  }
  bool key(string_t& k) override {
    VLBIAS_CHECK(!vocab_.contains(k), InputError, "'{}' lists the token '{}' twice", source_,
                 shown(k));
    key_ = k;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return not_an_id("an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    std::string_view what = e.what();
    if (const auto cut = what.find("] "); cut != std::string_view::npos)
      what.remove_prefix(cut + 2);
    VLBIAS_FAIL(InputError, "'{}' is not valid JSON near byte {}: {}", source_, position,
                escape_for_message(what, 200));
  }

 private:
  void check_value_position(std::string_view kind) const {
    VLBIAS_CHECK(depth_ == 1, InputError, "'{}' is {} at the top level; expected {{\"token\": id}}",
                 source_, kind);
  }
  bool not_an_id(std::string_view kind) {
    check_value_position(kind);
    VLBIAS_FAIL(InputError, "'{}' gives token '{}' {}; expected an integer id", source_,
                shown(key_), kind);
  }

  std::string source_;
  int depth_ = 0;
  std::string key_;
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::unordered_map<std::int32_t, std::string> id_owner_;
};

// A piece of pre-tokenized text: [begin, end) of the cleaned text, or a special id.
struct Piece {
  std::size_t begin;
  std::size_t end;
  std::int32_t special;  // -1 for an ordinary piece
};

}  // namespace

struct ClipTokenizer::Impl {
  TextCleaning cleaning = TextCleaning::HuggingFace;
  std::int32_t start_id = 0;
  std::int32_t end_id = 0;
  std::size_t vocab_size = 0;
  std::array<std::int32_t, 256> byte_id{};      // byte symbol
  std::array<std::int32_t, 256> byte_end_id{};  // byte symbol + "</w>"
  BpeMergeTable merges;

  std::u32string clean(std::u32string text) const;
  std::vector<Piece> pretokenize(std::u32string_view text) const;
  void bpe(std::string_view piece, std::vector<std::int32_t>& out) const;
  // Appends the ids of `utf8_text`, stopping once `out` holds `limit` ids.
  void tokenize(std::string_view utf8_text, std::vector<std::int32_t>& out,
                std::size_t limit) const;
};

std::u32string ClipTokenizer::Impl::clean(std::u32string text) const {
  if (cleaning == TextCleaning::HuggingFace) {
    // tokenizer.json normalizer: Sequence[NFC, Replace(\s+ -> " "), Lowercase].
    text = unicode::lower_per_char(unicode::collapse_whitespace(unicode::nfc(text)));
    const std::size_t b = text.find_first_not_of(U' ');
    if (b == std::u32string::npos) return {};
    return text.substr(b, text.find_last_not_of(U' ') + 1 - b);
  }
  // SimpleTokenizer: whitespace_clean(basic_clean(text)).lower(), where basic_clean
  // is ftfy.fix_text, html.unescape twice, strip.
  text = unicode::ftfy_fix_text(text);
  text = unicode::strip_python(unicode::html_unescape(unicode::html_unescape(text)));
  text = unicode::strip_python(unicode::collapse_whitespace(text));
  return unicode::lower_python(text);
}

std::vector<Piece> ClipTokenizer::Impl::pretokenize(std::u32string_view text) const {
  // re.findall of the CLIP pattern: at each position the first alternative that
  // matches wins; where none does, one character is skipped (whitespace, and under
  // open_clip's IGNORECASE the few "other" characters the negated class misses).
  const bool open_clip = cleaning == TextCleaning::OpenClip;
  const auto literal_at = [&](std::size_t i, std::u32string_view lit) {
    if (text.size() - i < lit.size()) return false;
    for (std::size_t k = 0; k < lit.size(); ++k) {
      const bool same = open_clip
                            ? unicode::equal_ignorecase(text[i + k], static_cast<char>(lit[k]))
                            : text[i + k] == lit[k];
      if (!same) return false;
    }
    return true;
  };
  const auto is_other = [&](char32_t c) {
    return unicode::pretoken_class(c) == PretokenClass::Other &&
           !(open_clip && unicode::unmatched_ignorecase(c));
  };
  std::vector<Piece> pieces;
  // Hugging Face splits the special tokens out of the normalized text first, at
  // exact matches anywhere; open_clip has them as the pattern's first alternatives.
  std::size_t segment_end = text.size();
  std::int32_t segment_special = -1;
  const auto next_special = [&](std::size_t from) {
    segment_end = text.size();
    segment_special = -1;
    if (open_clip) return;
    const std::size_t s = text.find(kStartToken32, from);
    const std::size_t e = text.find(kEndToken32, from);
    if (s < e) {
      segment_end = s, segment_special = start_id;
    } else if (e != std::u32string_view::npos) {
      segment_end = e, segment_special = end_id;
    }
  };
  next_special(0);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i == segment_end) {
      pieces.push_back({i, i, segment_special});
      i += segment_special == start_id ? kStartToken32.size() : kEndToken32.size();
      next_special(i);
      continue;
    }
    const std::size_t limit = segment_end;
    const char32_t c = text[i];
    std::size_t j = i;
    if (open_clip && (literal_at(i, kStartToken32) || literal_at(i, kEndToken32))) {
      j = i + (literal_at(i, kStartToken32) ? kStartToken32.size() : kEndToken32.size());
      const std::u32string_view match = text.substr(i, j - i);
      // SimpleTokenizer's cache maps only the exact spellings to the special ids.
      const std::int32_t special =
          match == kStartToken32 ? start_id : (match == kEndToken32 ? end_id : -1);
      pieces.push_back({i, j, special});
      i = j;
      continue;
    }
    if (literal_at(i, U"'") && i + 1 < limit) {
      // 's|'t|'re|'ve|'m|'ll|'d
      for (std::u32string_view tail : {U"s", U"t", U"re", U"ve", U"m", U"ll", U"d"}) {
        if (i + 1 + tail.size() <= limit && literal_at(i + 1, tail)) {
          j = i + 1 + tail.size();
          break;
        }
      }
      if (j != i) {
        pieces.push_back({i, j, -1});
        i = j;
        continue;
      }
    }
    const PretokenClass cls = unicode::pretoken_class(c);
    if (cls == PretokenClass::Letter) {
      while (j < limit && unicode::pretoken_class(text[j]) == PretokenClass::Letter) ++j;
    } else if (cls == PretokenClass::Number) {
      j = i + 1;
    } else if (is_other(c)) {
      while (j < limit && is_other(text[j])) ++j;
    } else {
      ++i;  // matched by no alternative
      continue;
    }
    pieces.push_back({i, j, -1});
    i = j;
  }
  return pieces;
}

void ClipTokenizer::Impl::bpe(std::string_view piece, std::vector<std::int32_t>& out) const {
  // SimpleTokenizer.bpe on symbol ids (every symbol is a vocabulary token, checked at load, so
  // ids identify merges as strings do): the piece's bytes, the last with "</w>", then merged by
  // rank (vlbias/text/bpe_merges.h).
  std::vector<std::int32_t> word(piece.size());
  for (std::size_t k = 0; k < piece.size(); ++k) {
    const auto b = static_cast<unsigned char>(piece[k]);
    word[k] = k + 1 == piece.size() ? byte_end_id[b] : byte_id[b];
  }
  apply_bpe_merges(word, merges);
  out.insert(out.end(), word.begin(), word.end());
}

void ClipTokenizer::Impl::tokenize(std::string_view utf8_text, std::vector<std::int32_t>& out,
                                   std::size_t limit) const {
  const std::u32string text = clean(unicode::decode_utf8(utf8_text, "the text to tokenize"));
  std::string bytes;
  for (const Piece& p : pretokenize(text)) {
    if (out.size() >= limit) return;
    if (p.special >= 0) {
      out.push_back(p.special);
      continue;
    }
    bytes.clear();
    for (std::size_t k = p.begin; k < p.end; ++k) unicode::append_utf8(bytes, text[k]);
    bpe(bytes, out);
  }
}

ClipTokenizer::ClipTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

ClipTokenizer ClipTokenizer::from_files(const std::filesystem::path& vocab_json,
                                        const std::filesystem::path& merges_txt,
                                        TextCleaning cleaning) {
  auto impl = std::make_shared<Impl>();
  impl->cleaning = cleaning;

  const std::string vocab_source = vocab_json.string();
  const std::string vocab_text = file_text(vocab_json, "vocab.json");
  // The reader refuses any nesting itself; the shared limit keeps all JSON readers alike.
  check_json_depth(vocab_text, fmt::format("'{}'", vocab_source));
  VocabReader reader(vocab_source);
  nlohmann::json::sax_parse(vocab_text, &reader);
  const std::unordered_map<std::string, std::int32_t> vocab = reader.take();
  VLBIAS_CHECK(!vocab.empty(), InputError, "'{}' has no tokens; expected {{\"token\": id, ...}}",
               vocab_source);
  const auto id_of = [&](std::string_view token) {
    auto it = vocab.find(std::string(token));
    return it == vocab.end() ? -1 : it->second;
  };
  impl->start_id = id_of(kStartToken);
  impl->end_id = id_of(kEndToken);
  VLBIAS_CHECK(impl->start_id >= 0 && impl->end_id >= 0, InputError,
               "'{}' lacks the special token {}", vocab_source,
               impl->start_id < 0 ? kStartToken : kEndToken);
  std::int32_t max_id = 0;
  for (const auto& [token, id] : vocab) max_id = std::max(max_id, id);
  impl->vocab_size = static_cast<std::size_t>(max_id) + 1;
  const std::array<char32_t, 256> byte_chars = byte_to_unicode();
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    unicode::append_utf8(symbol, byte_chars[b]);
    impl->byte_id[b] = id_of(symbol);
    impl->byte_end_id[b] = id_of(symbol + std::string(kEndOfWord));
    VLBIAS_CHECK(impl->byte_id[b] >= 0 && impl->byte_end_id[b] >= 0, InputError,
                 "'{}' lacks the byte symbol '{}{}' of byte 0x{:02X}; a CLIP vocabulary has all "
                 "256 byte symbols, each also with </w>",
                 vocab_source, shown(symbol), impl->byte_id[b] < 0 ? "" : kEndOfWord, b);
  }

  const std::string merges_source = merges_txt.string();
  const std::string merges_text = file_text(merges_txt, "merges.txt");
  std::size_t line_no = 0;
  std::int32_t rank = 0;
  for (std::size_t pos = 0; pos < merges_text.size();) {
    std::size_t end = merges_text.find('\n', pos);
    if (end == std::string::npos) end = merges_text.size();
    std::string_view line(merges_text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    (void)unicode::decode_utf8(line, fmt::format("'{}' line {}", merges_source, line_no));
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    VLBIAS_CHECK(space != std::string_view::npos && space > 0 && space + 1 < line.size() &&
                     line.find(' ', space + 1) == std::string_view::npos,
                 InputError, "'{}' line {} is '{}'; expected two symbols separated by one space",
                 merges_source, line_no, shown(line));
    const std::string_view left = line.substr(0, space);
    const std::string_view right = line.substr(space + 1);
    const std::string joined = std::string(left) + std::string(right);
    for (std::string_view token : {left, right, std::string_view(joined)}) {
      VLBIAS_CHECK(id_of(token) >= 0, InputError,
                   "'{}' line {} merges '{}' and '{}', but '{}' is not a token of '{}'",
                   merges_source, line_no, shown(left), shown(right), shown(token), vocab_source);
    }
    VLBIAS_CHECK(rank < std::numeric_limits<std::int32_t>::max(), InputError,
                 "'{}' has too many merges", merges_source);
    // A repeated pair takes its last rank (Python dict / Rust HashMap collect).
    impl->merges[bpe_pair_key(id_of(left), id_of(right))] = BpeMerge{rank++, id_of(joined)};
  }
  return ClipTokenizer(std::move(impl));
}

std::vector<std::int32_t> ClipTokenizer::encode(std::string_view utf8_text,
                                                std::size_t context_length) const {
  VLBIAS_CHECK(context_length >= 2, UsageError,
               "context length {} leaves no room for <|startoftext|> and <|endoftext|>; expected "
               "at least 2 (CLIP uses 77)",
               context_length);
  std::vector<std::int32_t> ids{impl_->start_id};
  // Once more than context_length - 2 text ids exist the result is cut, so the
  // rest of the text need not be encoded.
  impl_->tokenize(utf8_text, ids, context_length);
  if (ids.size() + 1 > context_length) ids.resize(context_length - 1);
  ids.push_back(impl_->end_id);
  return ids;
}

std::size_t ClipTokenizer::token_count(std::string_view utf8_text) const {
  std::vector<std::int32_t> ids;
  impl_->tokenize(utf8_text, ids, std::numeric_limits<std::size_t>::max());
  return ids.size();
}

std::string ClipTokenizer::clean(std::string_view utf8_text) const {
  return unicode::to_utf8(impl_->clean(unicode::decode_utf8(utf8_text, "the text to clean")));
}

std::int32_t ClipTokenizer::start_id() const {
  return impl_->start_id;
}
std::int32_t ClipTokenizer::end_id() const {
  return impl_->end_id;
}
std::size_t ClipTokenizer::vocab_size() const {
  return impl_->vocab_size;
}
TextCleaning ClipTokenizer::cleaning() const {
  return impl_->cleaning;
}

std::string ClipTokenizer::unicode_version() {
  return fmt::format("unicodedata {}, regex {}", unicode::unicode_data_version(),
                     unicode::regex_unicode_version());
}

}  // namespace vlbias
