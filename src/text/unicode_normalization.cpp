// Unicode normalization forms NFC and NFD (UAX #15) over the canonical decompositions
// and combining classes of unicode_tables.h (unicodedata 14.0).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "unicode_lookup.h"
#include "unicode_tables.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias::unicode {
namespace {

namespace t = text_internal::tables;
using text_internal::lookup::find_run;
using text_internal::lookup::in_ranges;

std::uint8_t combining_class(char32_t c) {
  if (c < 0x300) return 0;
  const t::CccRange* r = find_run(t::kCombiningClass, c);
  return r != nullptr ? r->ccc : 0;
}

// ---- NFC (UAX #15: canonical decomposition, canonical ordering, composition) ----

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kSCount = 11172;

void decompose_into(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {  // Hangul syllable (UAX #15 section 16)
    const char32_t s = c - kSBase;
    out.push_back(kLBase + s / (kVCount * kTCount));
    out.push_back(kVBase + (s % (kVCount * kTCount)) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto& d = t::kDecompositions;
  auto it = std::lower_bound(d.begin(), d.end(), c,
                             [](const t::Decomposition& e, char32_t v) { return e.cp < v; });
  if (it == d.end() || it->cp != c) {
    out.push_back(c);
    return;
  }
  decompose_into(it->first, out);
  if (it->second != 0) decompose_into(it->second, out);
}

// Primary composites keyed by (first << 21 | second), built once from the
// decompositions minus the exclusions.
const std::unordered_map<std::uint64_t, char32_t>& compositions() {
  static const std::unordered_map<std::uint64_t, char32_t> map = [] {
    std::unordered_map<std::uint64_t, char32_t> m;
    for (const t::Decomposition& d : t::kDecompositions) {
      if (d.second == 0 || in_ranges(t::kCompositionExclusions, d.cp)) continue;
      m.emplace((std::uint64_t{d.first} << 21) | d.second, d.cp);
    }
    return m;
  }();
  return map;
}

// The composite of (a, b), or 0 when they do not compose.
char32_t compose_pair(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  const auto& map = compositions();
  auto it = map.find((std::uint64_t{a} << 21) | b);
  return it != map.end() ? it->second : 0;
}

// Canonical decomposition followed by canonical ordering (a stable sort of each run
// of non-starters by combining class): NFD.
std::u32string canonical_decomposition(std::u32string_view text) {
  std::u32string d;
  d.reserve(text.size() + 8);
  for (char32_t c : text) decompose_into(c, d);
  for (std::size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(
        d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(j),
        [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  return d;
}

}  // namespace

std::u32string nfc(std::u32string_view text) {
  // Below U+0300 every character is a starter that neither decomposes nor composes.
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0x300; })) {
    return std::u32string(text);
  }
  std::u32string d = canonical_decomposition(text);
  if (d.empty()) return d;
  // Canonical composition (the UAX #15 sample algorithm).
  std::size_t starter = 0;
  char32_t starter_ch = d[0];
  int last_class = combining_class(starter_ch) == 0 ? 0 : 256;
  std::size_t out = 1;
  for (std::size_t i = 1; i < d.size(); ++i) {
    const char32_t c = d[i];
    const int cls = combining_class(c);
    const char32_t composite = compose_pair(starter_ch, c);
    if (composite != 0 && (last_class < cls || last_class == 0)) {
      d[starter] = composite;
      starter_ch = composite;
      continue;
    }
    if (cls == 0) {
      starter = out;
      starter_ch = c;
    }
    last_class = cls;
    d[out++] = c;
  }
  d.resize(out);
  return d;
}

std::u32string nfd(std::u32string_view text) {
  // Below U+00C0 no character decomposes or has a non-zero combining class.
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0xC0; })) {
    return std::u32string(text);
  }
  return canonical_decomposition(text);
}

}  // namespace vlbias::unicode
