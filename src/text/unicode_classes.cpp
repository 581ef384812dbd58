// Character classes of the text tokenizers (see unicode_text.h): general category,
// White_Space, and extended grapheme clusters.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "unicode_lookup.h"
#include "unicode_tables.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::unicode {
namespace {

namespace t = text_internal::tables;

// Most text stays below U+3000 (Latin, Greek, Cyrillic, Arabic, Indic scripts,
// punctuation): a direct table there saves the binary search per character.
constexpr char32_t kDirectCategories = 0x3000;

const std::array<GeneralCategory, kDirectCategories>& direct_categories() {
  static const auto table = [] {
    std::array<GeneralCategory, kDirectCategories> a{};  // Cn
    for (const t::ClassRange& r : t::kGeneralCategory) {
      for (char32_t c = r.first; c <= r.last && c < kDirectCategories; ++c) {
        a[c] = GeneralCategory{r.cls};
      }
    }
    return a;
  }();
  return table;
}

}  // namespace

GeneralCategory general_category(char32_t c) {
  if (c < kDirectCategories) return direct_categories()[c];
  const t::ClassRange* r = text_internal::lookup::find_run(t::kGeneralCategory, c);
  return r != nullptr ? GeneralCategory{r->cls} : GeneralCategory::Cn;
}

bool is_punctuation_category(GeneralCategory g) {
  return g >= GeneralCategory::Pc && g <= GeneralCategory::Po;
}

bool is_other_category(GeneralCategory g) {
  return g == GeneralCategory::Cn || g >= GeneralCategory::Cc;
}

bool is_white_space(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return text_internal::lookup::in_ranges(t::kWhiteSpace, c);
}

GraphemeBreak grapheme_break(char32_t c) {
  if (c < 0x7F) {
    if (c == '\r') return GraphemeBreak::CR;
    if (c == '\n') return GraphemeBreak::LF;
    return c < 0x20 ? GraphemeBreak::Control : GraphemeBreak::Other;
  }
  const t::ClassRange* r = text_internal::lookup::find_run(t::kGraphemeBreak, c);
  return r != nullptr ? GraphemeBreak{r->cls} : GraphemeBreak::Other;
}

bool is_extended_pictographic(char32_t c) {
  return c >= 0xA9 && text_internal::lookup::in_ranges(t::kExtendedPictographic, c);
}

std::size_t grapheme_end(std::u32string_view text, std::size_t begin) {
  using G = GraphemeBreak;
  std::size_t i = begin + 1;
  G prev = grapheme_break(text[begin]);
  // GB11: an Extended_Pictographic followed by Extend* (pict_extend), then a ZWJ
  // (pict_zwj); GB12/13: the number of regional indicators in a row.
  bool pict_extend = is_extended_pictographic(text[begin]);
  bool pict_zwj = false;
  std::size_t regional = prev == G::RegionalIndicator ? 1 : 0;
  for (; i < text.size(); ++i) {
    const char32_t c = text[i];
    const G cur = grapheme_break(c);
    bool join = false;
    if (prev == G::CR && cur == G::LF) {
      join = true;  // GB3
    } else if (prev == G::Control || prev == G::CR || prev == G::LF || cur == G::Control ||
               cur == G::CR || cur == G::LF) {
      join = false;  // GB4, GB5
    } else if (prev == G::L && (cur == G::L || cur == G::V || cur == G::LV || cur == G::LVT)) {
      join = true;  // GB6
    } else if ((prev == G::LV || prev == G::V) && (cur == G::V || cur == G::T)) {
      join = true;  // GB7
    } else if ((prev == G::LVT || prev == G::T) && cur == G::T) {
      join = true;  // GB8
    } else if (cur == G::Extend || cur == G::ZWJ || cur == G::SpacingMark || prev == G::Prepend) {
      join = true;  // GB9, GB9a, GB9b
    } else if (pict_zwj && is_extended_pictographic(c)) {
      join = true;  // GB11
    } else if (prev == G::RegionalIndicator && cur == G::RegionalIndicator) {
      join = regional % 2 == 1;  // GB12, GB13
    }
    if (!join) break;
    pict_zwj = pict_extend && cur == G::ZWJ;
    pict_extend = is_extended_pictographic(c) || (pict_extend && cur == G::Extend);
    regional = cur == G::RegionalIndicator ? regional + 1 : 0;
    prev = cur;
  }
  return i;
}

}  // namespace vlbias::unicode
