#pragma once
// Internal to vlbias_text: the Unicode and HTML data the text tokenizers need,
// generated from Python (unicodedata, `regex`, html) by tools/make_unicode_tables.py
// into unicode_tables.cpp. Every table is sorted by its first field; lookups are
// in unicode_text.cpp. Code points are Unicode scalar values (no surrogates).
#include <cstdint>
#include <span>

namespace vlbias::text_internal::tables {

// Versions the tables were generated from: Python's unicodedata (NFC, lowercase,
// str.isspace) and the `regex` module (the pre-tokenizer's \p{L}, \p{N}, \s).
extern const char kUnicodeDataVersion[];
extern const char kRegexUnicodeVersion[];

struct Range {
  char32_t first;
  char32_t last;  // inclusive
};

// Pre-tokenizer class of [first, last]: 1 letter, 2 number, 3 whitespace; code
// points in no range are "other" (punctuation, symbols, marks, controls, unassigned).
struct ClassRange {
  char32_t first;
  char32_t last;
  std::uint8_t cls;
};

// c in [first, last] with (c - first) % stride == 0 maps to c + delta.
struct DeltaRun {
  char32_t first;
  char32_t last;
  std::int32_t delta;
  std::uint8_t stride;
};

// A code point that maps to up to three code points (unused ones are 0).
struct MultiMap {
  char32_t from;
  char32_t to[3];
};

struct CodeMap {
  char32_t from;
  char32_t to;
};

struct CccRange {
  char32_t first;
  char32_t last;
  std::uint8_t ccc;
};

// One level of canonical decomposition: cp -> first [second]; second == 0 for a
// singleton. Hangul syllables are decomposed algorithmically instead.
struct Decomposition {
  char32_t cp;
  char32_t first;
  char32_t second;
};

// html.entities.html5: name (with its ';' when the name has one) -> UTF-8 value;
// ftfy_upper is what ftfy's unescape_html gives "&NAME;" (the name in capitals),
// nullptr when ftfy does not decode that spelling.
struct Entity {
  const char* name;
  const char* value;
  const char* ftfy_upper;
};

extern const std::span<const ClassRange> kPretokenClasses;
// "Other" code points that [^\s\p{L}\p{N}] stops matching under regex.IGNORECASE
// (U+0345, whose case folding is a letter): open_clip's pattern matches them nowhere.
extern const std::span<const Range> kIgnoreCaseUnmatched;
// Non-ASCII code points that match an ASCII literal of the pattern under
// regex.IGNORECASE: {ascii, cp} (U+017F long s matches 's').
extern const std::span<const CodeMap> kIgnoreCaseAliases;
extern const std::span<const Range> kPythonSpace;    // str.isspace()
extern const std::span<const Range> kPythonDecimal;  // re's \d on str (Nd)
extern const std::span<const DeltaRun> kLowerRuns;   // str.lower(), one-to-one part
extern const std::span<const MultiMap> kLowerMulti;  // str.lower(), one-to-many part
// Python's Final_Sigma context: Case_Ignorable, and Cased (minus Case_Ignorable).
extern const std::span<const Range> kCaseIgnorable;
extern const std::span<const Range> kCased;
extern const std::span<const CccRange> kCombiningClass;  // non-zero classes only
extern const std::span<const Decomposition> kDecompositions;
// Composites of two-character decompositions that NFC does not recompose.
extern const std::span<const Range> kCompositionExclusions;
// ftfy fix_character_width (U+3000 and U+FF01..U+FFEF -> NFKC) and fix_latin_ligatures.
extern const std::span<const DeltaRun> kWidthRuns;
extern const std::span<const MultiMap> kWidthMulti;
extern const std::span<const MultiMap> kLigatures;
// ftfy fix_c1_controls: U+0080 + i -> kC1Windows1252[i] (sloppy Windows-1252).
extern const std::span<const char32_t> kC1Windows1252;
extern const std::span<const Entity> kHtml5Entities;
// html.unescape's numeric references: replaced code points, and removed ones.
extern const std::span<const CodeMap> kHtmlInvalidCharrefs;
extern const std::span<const Range> kHtmlInvalidCodepoints;
// unicodedata.category: cls is the GeneralCategory value (unicode_text.h); code
// points in no range are Cn (unassigned).
extern const std::span<const ClassRange> kGeneralCategory;
// The White_Space property (the `regex` module's \p{White_Space}).
extern const std::span<const Range> kWhiteSpace;
// Grapheme_Cluster_Break: cls is the GraphemeBreak value; no range means Other.
extern const std::span<const ClassRange> kGraphemeBreak;
extern const std::span<const Range> kExtendedPictographic;

}  // namespace vlbias::text_internal::tables
