#pragma once
// Internal to vlbias_text: the text operations the tokenizers apply (CLIP's before
// BPE, BERT's, GPT-2's, SentencePiece's), each matching a named Python / Rust
// reference character for character (tables: unicode_tables.h, generated from
// Python 3.11's unicodedata 14.0 and the `regex` module's Unicode 15.0). Text is
// held as UTF-32 code points.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vlbias::unicode {

// Decodes UTF-8 exactly as Python's bytes.decode("utf-8") accepts it (no overlong
// forms, surrogates or code points above U+10FFFF). Throws InputError naming
// `what` and the offending byte offset.
std::u32string decode_utf8(std::string_view bytes, std::string_view what);
void append_utf8(std::string& out, char32_t c);
std::string to_utf8(std::u32string_view text);

// Class of a code point in CLIP's pre-tokenizer pattern
// `[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+`, as the `regex` module sees it.
enum class PretokenClass : std::uint8_t { Other = 0, Letter = 1, Number = 2, Space = 3 };
PretokenClass pretoken_class(char32_t c);
// An "other" code point that open_clip's IGNORECASE pattern matches nowhere (U+0345).
bool unmatched_ignorecase(char32_t c);
// Whether c matches the ASCII literal `ascii` of the pattern under regex.IGNORECASE
// (ASCII case, plus U+017F for 's').
bool equal_ignorecase(char32_t c, char ascii);

bool is_python_space(char32_t c);  // str.isspace()
bool is_regex_space(char32_t c);   // the `regex` module's \s

// unicodedata.normalize("NFC", text) and ("NFD", text) (unicode_normalization.cpp).
std::u32string nfc(std::u32string_view text);
std::u32string nfd(std::u32string_view text);
// str.lower(): full mapping (U+0130 -> i + U+0307) and the Final_Sigma rule.
std::u32string lower_python(std::u32string_view text);
// Per-character full lowercase without context (Rust char::to_lowercase, which the
// Hugging Face tokenizers Lowercase normalizer applies): U+03A3 always -> U+03C3.
std::u32string lower_per_char(std::u32string_view text);
// regex.sub(r"\s+", " ", text).
std::u32string collapse_whitespace(std::u32string_view text);
// str.strip() (str.isspace characters at both ends).
std::u32string strip_python(std::u32string_view text);
// html.unescape (Python 3.11): numeric and named references, with and without ';'.
std::u32string html_unescape(std::u32string_view text);
// ftfy 6.3 fix_text with its default configuration minus fix_encoding (mojibake
// repair): per line, repeated until nothing changes: unescape_html (unless the text
// has a '<'), fix_c1_controls, fix_latin_ligatures, fix_character_width,
// uncurl_quotes, fix_line_breaks, remove_terminal_escapes, remove_control_chars, NFC.
std::u32string ftfy_fix_text(std::u32string_view text);

// ---- classes of the text tokenizers (unicode_classes.cpp) ----

// unicodedata.category, in the order of tools/make_unicode_tables.py's CATEGORIES.
enum class GeneralCategory : std::uint8_t {
  Cn = 0,
  Lu,
  Ll,
  Lt,
  Lm,
  Lo,
  Mn,
  Mc,
  Me,
  Nd,
  Nl,
  No,
  Pc,
  Pd,
  Ps,
  Pe,
  Pi,
  Pf,
  Po,
  Sm,
  Sc,
  Sk,
  So,
  Zs,
  Zl,
  Zp,
  Cc,
  Cf,
  Cs,
  Co
};
GeneralCategory general_category(char32_t c);
bool is_punctuation_category(GeneralCategory g);  // P*
bool is_other_category(GeneralCategory g);        // C* (Cn included)
// The White_Space property: Rust's char::is_whitespace and the `regex` module's \p{White_Space}.
bool is_white_space(char32_t c);

// Grapheme_Cluster_Break values (UAX #29), in the generator's GRAPHEME_BREAKS order.
enum class GraphemeBreak : std::uint8_t {
  Other = 0,
  CR,
  LF,
  Control,
  Extend,
  ZWJ,
  RegionalIndicator,
  Prepend,
  SpacingMark,
  L,
  V,
  T,
  LV,
  LVT
};
GraphemeBreak grapheme_break(char32_t c);
bool is_extended_pictographic(char32_t c);
// End (exclusive) of the extended grapheme cluster that starts at text[begin]
// (begin < text.size()): the UAX #29 rules GB3-GB13 of Unicode 15.0, as the `regex`
// module's \X and the unicode-segmentation crate's graphemes(true) split text.
std::size_t grapheme_end(std::u32string_view text, std::size_t begin);

const char* unicode_data_version();   // unicodedata's, e.g. "14.0.0"
const char* regex_unicode_version();  // the `regex` module's, e.g. "15.0.0"

}  // namespace vlbias::unicode
