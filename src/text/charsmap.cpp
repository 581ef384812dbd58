// SentencePiece's precompiled charsmap (see charsmap.h): sentencepiece's
// normalizer.cc (DecodePrecompiledCharsMap, NormalizePrefix), darts-clone's
// DoubleArray::commonPrefixSearch, and the tokenizers' normalizers/precompiled.rs.
#include "charsmap.h"

#include <cstring>
#include <string>
#include <utility>

#include "text_files.h"
#include "vlbias/core/error.h"
#include "vlbias/core/utf8.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::text_internal {
namespace {

// darts-clone unit fields.
bool has_leaf(std::uint32_t unit) {
  return ((unit >> 8) & 1) == 1;
}
std::uint32_t value_of(std::uint32_t unit) {
  return unit & ((1u << 31) - 1);
}
std::uint32_t label_of(std::uint32_t unit) {
  return unit & ((1u << 31) | 0xFF);
}
std::uint64_t offset_of(std::uint32_t unit) {
  return static_cast<std::uint64_t>(unit >> 10) << ((unit & (1u << 9)) >> 6);
}

}  // namespace

void check_normalized_growth(std::size_t input, std::size_t output, std::string_view source) {
  const std::size_t limit = kMaxNormalizedGrowth * input + kNormalizedSlack;
  VLBIAS_CHECK(output <= limit, InputError,
               "{} turns {} units of text into more than {} ({} per unit + {}); expected a "
               "normalizer that at most multiplies the text by {} (Unicode's largest "
               "normalization is 18 code points from one); the model files are corrupt or hostile",
               source, input, limit, kMaxNormalizedGrowth, kNormalizedSlack, kMaxNormalizedGrowth);
}

PrecompiledCharsmap PrecompiledCharsmap::parse(std::string_view blob, std::string source) {
  PrecompiledCharsmap map;
  VLBIAS_CHECK(blob.size() > 4, InputError,
               "{} has {} bytes; expected a 4-byte trie size, the trie and its strings", source,
               blob.size());
  std::uint32_t trie_size = 0;
  for (int k = 3; k >= 0; --k) trie_size = (trie_size << 8) | static_cast<unsigned char>(blob[k]);
  VLBIAS_CHECK(trie_size >= 4 && trie_size % 4 == 0 && trie_size <= blob.size() - 4, InputError,
               "{} declares a trie of {} bytes in a blob of {}; expected a positive multiple of "
               "4 that fits",
               source, trie_size, blob.size());
  map.units_.resize(trie_size / 4);
  for (std::size_t i = 0; i < map.units_.size(); ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(blob.data() + 4 + 4 * i);
    map.units_[i] = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                    (static_cast<std::uint32_t>(p[2]) << 16) |
                    (static_cast<std::uint32_t>(p[3]) << 24);
  }
  map.normalized_ = std::string(blob.substr(4 + trie_size));
  // The replacements are '\0'-separated UTF-8 (the tokenizers refuse the blob otherwise).
  (void)unicode::decode_utf8(map.normalized_, source + "'s normalized strings");
  map.source_ = std::move(source);
  return map;
}

std::string_view PrecompiledCharsmap::replacement_at(std::uint32_t offset) const {
  VLBIAS_CHECK(offset < normalized_.size(), InputError,
               "{} maps a key to offset {} of its {} bytes of normalized strings", source_, offset,
               normalized_.size());
  const char* begin = normalized_.data() + offset;
  const void* nul = std::memchr(begin, '\0', normalized_.size() - offset);
  const std::size_t length =
      nul != nullptr ? static_cast<const char*>(nul) - begin : normalized_.size() - offset;
  const std::string_view replacement(begin, length);
  // An offset inside a multi-byte character would cut it (decode_utf8 names the byte).
  if (first_invalid_utf8(replacement) != replacement.size()) {
    (void)unicode::decode_utf8(replacement,
                               source_ + "'s replacement at offset " + std::to_string(offset));
  }
  return replacement;
}

template <typename F>
void PrecompiledCharsmap::prefix_search(std::string_view bytes, F on_match) const {
  if (units_.empty()) return;
  const auto unit_at = [this](std::uint64_t pos) {
    VLBIAS_CHECK(pos < units_.size(), InputError,
                 "{} has a trie that points at unit {} of its {}; the charsmap is corrupt", source_,
                 pos, units_.size());
    return units_[pos];
  };
  std::uint64_t node = offset_of(units_[0]);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == 0) return;  // keys never contain '\0'
    node ^= c;
    const std::uint32_t unit = unit_at(node);
    if (label_of(unit) != c) return;
    node ^= offset_of(unit);
    if (has_leaf(unit)) {
      if (!on_match(i + 1, value_of(unit_at(node)))) return;
    }
  }
}

std::optional<PrecompiledCharsmap::Match> PrecompiledCharsmap::longest_prefix(
    std::string_view bytes) const {
  // Only the longest match's replacement is looked up (and checked).
  std::optional<std::pair<std::size_t, std::uint32_t>> found;
  prefix_search(bytes, [&](std::size_t length, std::uint32_t offset) {
    found = {length, offset};
    return true;
  });
  if (!found) return std::nullopt;
  return Match{found->first, replacement_at(found->second)};
}

std::optional<std::string_view> PrecompiledCharsmap::shortest_prefix(std::string_view bytes) const {
  std::optional<std::string_view> found;
  prefix_search(bytes, [&](std::size_t, std::uint32_t offset) {
    found = replacement_at(offset);
    return false;
  });
  return found;
}

std::u32string PrecompiledCharsmap::normalize_graphemes(std::u32string_view text,
                                                        std::size_t original_bytes) const {
  std::string out;
  out.reserve(text.size() + 8);
  std::string cluster;
  std::string one;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = unicode::grapheme_end(text, begin);
    cluster.clear();
    for (std::size_t k = begin; k < end; ++k) unicode::append_utf8(cluster, text[k]);
    std::optional<std::string_view> whole;
    if (cluster.size() < 6) whole = shortest_prefix(cluster);
    if (whole) {
      out += *whole;
      check_normalized_growth(original_bytes, out.size(), source_);
    } else {
      for (std::size_t k = begin; k < end; ++k) {
        one.clear();
        unicode::append_utf8(one, text[k]);
        const std::optional<std::string_view> replaced = shortest_prefix(one);
        out += replaced ? *replaced : std::string_view(one);
        check_normalized_growth(original_bytes, out.size(), source_);
      }
    }
    begin = end;
  }
  return unicode::decode_utf8(out, source_ + "'s output");
}

}  // namespace vlbias::text_internal
