#pragma once
// Internal to vlbias_text: the text operations CLIP's tokenizers apply before
// BPE, each matching a named Python / Rust reference character for character
// (tables: unicode_tables.h, generated from Python 3.11's unicodedata 14.0 and the
// `regex` module's Unicode 15.0). Text is held as UTF-32 code points.
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

// unicodedata.normalize("NFC", text).
std::u32string nfc(std::u32string_view text);
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

const char* unicode_data_version();   // unicodedata's, e.g. "14.0.0"
const char* regex_unicode_version();  // the `regex` module's, e.g. "15.0.0"

}  // namespace vlbias::unicode
