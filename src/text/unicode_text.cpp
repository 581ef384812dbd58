// Text operations of CLIP's tokenizers (see unicode_text.h); each function names
// the Python or Rust code it reproduces.
#include "vlbias/text/unicode_text.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "unicode_lookup.h"
#include "unicode_tables.h"
#include "vlbias/core/error.h"

namespace vlbias::unicode {
namespace {

namespace t = text_internal::tables;
using text_internal::lookup::find_run;
using text_internal::lookup::in_ranges;

// c + delta when c is on the run's stride, else c.
char32_t apply_runs(std::span<const t::DeltaRun> runs, char32_t c) {
  const t::DeltaRun* r = find_run(runs, c);
  if (r == nullptr || (c - r->first) % r->stride != 0) return c;
  return static_cast<char32_t>(static_cast<std::int64_t>(c) + r->delta);
}

const t::MultiMap* find_multi(std::span<const t::MultiMap> map, char32_t c) {
  auto it = std::lower_bound(map.begin(), map.end(), c,
                             [](const t::MultiMap& m, char32_t v) { return m.from < v; });
  return it != map.end() && it->from == c ? &*it : nullptr;
}

void append_multi(std::u32string& out, const t::MultiMap& m) {
  for (char32_t x : m.to) {
    if (x != 0) out.push_back(x);
  }
}

// ---- Final_Sigma (Python's handle_capital_sigma in unicodeobject.c) ----

bool is_case_ignorable(char32_t c) {
  return in_ranges(t::kCaseIgnorable, c);
}
bool is_cased(char32_t c) {
  return in_ranges(t::kCased, c);
}

// U+03A3 at position i lowercases to final U+03C2 when a Cased character precedes it
// (skipping Case_Ignorable ones) and none follows (likewise).
bool final_sigma(std::u32string_view s, std::size_t i) {
  std::size_t j = i;
  while (j > 0 && is_case_ignorable(s[j - 1])) --j;
  if (j == 0 || !is_cased(s[j - 1])) return false;
  std::size_t k = i + 1;
  while (k < s.size() && is_case_ignorable(s[k])) ++k;
  return k == s.size() || !is_cased(s[k]);
}

void append_lower(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  if (const t::MultiMap* m = find_multi(t::kLowerMulti, c)) {
    append_multi(out, *m);
    return;
  }
  out.push_back(apply_runs(t::kLowerRuns, c));
}

// ---- html.unescape (Python 3.11 html/__init__.py) ----

bool is_ascii_digit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_hex(char32_t c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_ascii_alnum(char32_t c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

const t::Entity* find_entity(std::string_view name) {
  const auto& e = t::kHtml5Entities;
  auto it = std::lower_bound(e.begin(), e.end(), name, [](const t::Entity& x, std::string_view v) {
    return std::string_view(x.name) < v;
  });
  return it != e.end() && std::string_view(it->name) == name ? &*it : nullptr;
}

void append_utf8_literal(std::u32string& out, const char* utf8) {
  // Table values are well-formed UTF-8 written by the generator.
  out += decode_utf8(utf8, "a generated entity value");
}

// _replace_charref for a numeric reference: digits in [begin, end), base 10 or 16.
void append_numeric_charref(std::u32string_view digits, int base, std::u32string& out) {
  constexpr std::uint32_t kTooBig = 0x110000;
  std::uint32_t num = 0;
  for (char32_t d : digits) {
    const std::uint32_t v = is_ascii_digit(d) ? d - '0' : (d | 0x20) - 'a' + 10;
    num = num * base + v;
    if (num >= kTooBig) num = kTooBig;  // Python's int is unbounded: anything beyond is "too big"
  }
  const auto& inv = t::kHtmlInvalidCharrefs;
  auto it = std::lower_bound(inv.begin(), inv.end(), num,
                             [](const t::CodeMap& m, std::uint32_t v) { return m.from < v; });
  if (it != inv.end() && it->from == num) {
    out.push_back(it->to);
  } else if ((num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) {
    out.push_back(0xFFFD);
  } else if (!in_ranges(t::kHtmlInvalidCodepoints, num)) {
    out.push_back(num);
  }
}

// One match of html's _charref regex
//   &(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)
// at s[i] == '&'. Appends the replacement and returns the index after the match,
// or returns i when nothing matches there.
std::size_t unescape_one(std::u32string_view s, std::size_t i, std::u32string& out) {
  const std::size_t n = s.size();
  std::size_t j = i + 1;
  if (j < n && s[j] == '#') {
    std::size_t k = j + 1;
    int base = 10;
    if (k < n && is_ascii_digit(s[k])) {
      while (k < n && is_ascii_digit(s[k])) ++k;
    } else if (k + 1 < n && (s[k] == 'x' || s[k] == 'X') && is_ascii_hex(s[k + 1])) {
      base = 16;
      ++k;
      while (k < n && is_ascii_hex(s[k])) ++k;
    } else {
      return i;
    }
    const std::size_t digits_begin = base == 16 ? j + 2 : j + 1;
    append_numeric_charref(s.substr(digits_begin, k - digits_begin), base, out);
    return k < n && s[k] == ';' ? k + 1 : k;
  }
  std::size_t k = j;
  while (k < n && k - j < 32 && s[k] != '\t' && s[k] != '\n' && s[k] != '\f' && s[k] != ' ' &&
         s[k] != '<' && s[k] != '&' && s[k] != '#' && s[k] != ';') {
    ++k;
  }
  if (k == j) return i;
  if (k < n && s[k] == ';') ++k;
  const std::u32string_view name = s.substr(j, k - j);
  // Entity names are ASCII: only the ASCII head of `name` can match one.
  std::size_t ascii = 0;
  while (ascii < name.size() && name[ascii] < 0x80) ++ascii;
  std::string head(ascii, '\0');
  for (std::size_t x = 0; x < ascii; ++x) head[x] = static_cast<char>(name[x]);
  if (ascii == name.size()) {
    if (const t::Entity* e = find_entity(head)) {
      append_utf8_literal(out, e->value);
      return k;
    }
  }
  // The longest prefix (at least two characters) that is an entity name.
  for (std::size_t x = std::min(name.size() - 1, ascii); x >= 2; --x) {
    if (const t::Entity* e = find_entity(std::string_view(head).substr(0, x))) {
      append_utf8_literal(out, e->value);
      out.append(name.substr(x));
      return k;
    }
  }
  out.push_back('&');
  out.append(name);
  return k;
}

// ---- ftfy 6.3 fixers (ftfy/fixes.py, ftfy/chardata.py) ----

// unescape_html: `&#?[0-9A-Za-z]{1,24};` replaced by HTML_ENTITIES (html5 names with
// ';' and all-caps spellings of lowercase ones), or for "&#..." by html.unescape
// when that consumes the semicolon; anything else is left as is.
std::u32string ftfy_unescape_html(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    if (s[i] != '&') {
      out.push_back(s[i++]);
      continue;
    }
    std::size_t j = i + 1;
    const bool numeric = j < n && s[j] == '#';
    if (numeric) ++j;
    std::size_t k = j;
    while (k < n && k - j < 24 && is_ascii_alnum(s[k])) ++k;
    if (k == j || k >= n || s[k] != ';') {
      out.push_back(s[i++]);
      continue;
    }
    const std::u32string_view match = s.substr(i, k + 1 - i);
    i = k + 1;
    std::string name;  // without '&', with ';'
    for (char32_t c : match.substr(1)) name.push_back(static_cast<char>(c));
    if (!numeric) {
      if (const t::Entity* e = find_entity(name)) {
        append_utf8_literal(out, e->value);
        continue;
      }
      // "&NAME;" for a lowercase html5 name: only when NAME has no lowercase letter.
      std::string lower = name;
      bool capitals = true;
      for (char& c : lower) {
        if (c >= 'a' && c <= 'z') capitals = false;
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      }
      const t::Entity* e = capitals ? find_entity(lower) : nullptr;
      if (e != nullptr && e->ftfy_upper != nullptr) {
        append_utf8_literal(out, e->ftfy_upper);
      } else {
        out.append(match);
      }
      continue;
    }
    const std::u32string unescaped = html_unescape(match);
    out.append(unescaped.find(U';') == std::u32string::npos ? std::u32string_view(unescaped)
                                                            : match);
  }
  return out;
}

char32_t width_single(char32_t c) {
  return apply_runs(t::kWidthRuns, c);
}

// One pass of the per-character fixers, in ftfy's order: fix_c1_controls,
// fix_latin_ligatures, fix_character_width, uncurl_quotes. Composing them per
// character is exact: no output of one is an input the earlier ones change.
std::u32string fix_characters(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  auto emit = [&out](char32_t c) {
    // uncurl_quotes: SINGLE_QUOTE_RE [\u02bc\u2018-\u201b], DOUBLE_QUOTE_RE [\u201c-\u201f]
    if (c == 0x02BC || (c >= 0x2018 && c <= 0x201B)) {
      out.push_back('\'');
    } else if (c >= 0x201C && c <= 0x201F) {
      out.push_back('"');
    } else {
      out.push_back(c);
    }
  };
  for (char32_t c : s) {
    if (c >= 0x80 && c <= 0x9F) c = t::kC1Windows1252[c - 0x80];
    if (const t::MultiMap* lig = find_multi(t::kLigatures, c)) {
      // Ligature parts are plain letters and U+02BC, never width forms.
      for (char32_t x : lig->to) {
        if (x != 0) emit(x);
      }
      continue;
    }
    if (c == 0x3000 || (c >= 0xFF01 && c <= 0xFFEF)) {
      if (const t::MultiMap* w = find_multi(t::kWidthMulti, c)) {
        for (char32_t x : w->to) {
          if (x != 0) emit(x);
        }
        continue;
      }
      c = width_single(c);
    }
    emit(c);
  }
  return out;
}

// fix_line_breaks: CRLF, CR, U+2028, U+2029, U+0085 -> LF.
std::u32string fix_line_breaks(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char32_t c = s[i];
    if (c == '\r') {
      out.push_back('\n');
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else if (c == 0x2028 || c == 0x2029 || c == 0x85) {
      out.push_back('\n');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool is_python_decimal(char32_t c) {
  return is_ascii_digit(c) || (c >= 0x80 && in_ranges(t::kPythonDecimal, c));
}

// remove_terminal_escapes: re.sub('\033\\[((?:\\d|;)*)([a-zA-Z])', '', s), where \d
// is any Unicode decimal digit (Python re on str).
std::u32string remove_terminal_escapes(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == 0x1B && i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t k = i + 2;
      while (k < s.size() && (s[k] == ';' || is_python_decimal(s[k]))) ++k;
      if (k < s.size() && ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z'))) {
        i = k + 1;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// remove_control_chars: chardata.CONTROL_CHARS.
bool ftfy_control(char32_t c) {
  return c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
         (c >= 0x206A && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC);
}

// fix_and_explain's loop on one segment with the subset's fixers.
std::u32string ftfy_fix_segment(std::u32string segment, bool unescape) {
  // Every pass that changes the text after the first one shrinks it (entities), so
  // the loop ends; the bound only guards that reasoning.
  const std::size_t max_passes = segment.size() + 8;
  for (std::size_t pass = 0; pass < max_passes; ++pass) {
    std::u32string text = unescape ? ftfy_unescape_html(segment) : segment;
    text = fix_line_breaks(fix_characters(text));
    text = remove_terminal_escapes(text);
    std::erase_if(text, ftfy_control);
    text = nfc(text);
    if (text == segment) return text;
    segment = std::move(text);
  }
  VLBIAS_FAIL(InternalError, "ftfy subset did not reach a fixed point after {} passes", max_passes);
}

}  // namespace

// ---- UTF-8 ----

std::u32string decode_utf8(std::string_view bytes, std::string_view what) {
  std::u32string out;
  out.reserve(bytes.size());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    std::size_t len = 0;
    char32_t c = 0;
    char32_t min = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2, c = b0 & 0x1F, min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3, c = b0 & 0x0F, min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4, c = b0 & 0x07, min = 0x10000;
    } else {
      VLBIAS_FAIL(InputError, "{} is not valid UTF-8: byte {} (0x{:02X}) cannot start a character",
                  what, i, b0);
    }
    for (std::size_t k = 1; k < len; ++k) {
      VLBIAS_CHECK(i + k < n, InputError,
                   "{} is not valid UTF-8: the character starting at byte {} is cut off at the "
                   "end",
                   what, i);
      const auto b = static_cast<unsigned char>(bytes[i + k]);
      VLBIAS_CHECK((b & 0xC0) == 0x80, InputError,
                   "{} is not valid UTF-8: byte {} (0x{:02X}) should continue the character "
                   "starting at byte {}",
                   what, i + k, b, i);
      c = (c << 6) | (b & 0x3F);
    }
    VLBIAS_CHECK(c >= min, InputError,
                 "{} is not valid UTF-8: bytes {}..{} are an overlong form of U+{:04X}", what, i,
                 i + len - 1, static_cast<unsigned>(c));
    VLBIAS_CHECK(c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF), InputError,
                 "{} is not valid UTF-8: bytes {}..{} encode U+{:04X}, which is not a Unicode "
                 "scalar value",
                 what, i, i + len - 1, static_cast<unsigned>(c));
    out.push_back(c);
    i += len;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string to_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) append_utf8(out, c);
  return out;
}

// ---- classes ----

PretokenClass pretoken_class(char32_t c) {
  static const std::array<PretokenClass, 0x80> ascii = [] {
    std::array<PretokenClass, 0x80> a{};
    for (const t::ClassRange& r : t::kPretokenClasses) {
      for (char32_t x = r.first; x <= r.last && x < 0x80; ++x) a[x] = PretokenClass{r.cls};
    }
    return a;
  }();
  if (c < 0x80) return ascii[c];
  const t::ClassRange* r = find_run(t::kPretokenClasses, c);
  return r != nullptr ? PretokenClass{r->cls} : PretokenClass::Other;
}

bool unmatched_ignorecase(char32_t c) {
  return c >= 0x80 && in_ranges(t::kIgnoreCaseUnmatched, c);
}

bool equal_ignorecase(char32_t c, char ascii) {
  const auto a = static_cast<char32_t>(ascii);
  if (c == a) return true;
  if (a >= 'a' && a <= 'z' && c == a - 32) return true;
  if (a >= 'A' && a <= 'Z' && c == a + 32) return true;
  for (const t::CodeMap& m : t::kIgnoreCaseAliases) {
    if (m.from == a && m.to == c) return true;
  }
  return false;
}

bool is_python_space(char32_t c) {
  return in_ranges(t::kPythonSpace, c);
}
bool is_regex_space(char32_t c) {
  return pretoken_class(c) == PretokenClass::Space;
}

// ---- normalisation and case ----

std::u32string lower_python(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == 0x03A3) {
      out.push_back(final_sigma(text, i) ? 0x03C2 : 0x03C3);
    } else {
      append_lower(text[i], out);
    }
  }
  return out;
}

std::u32string lower_per_char(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) append_lower(c, out);
  return out;
}

std::u32string collapse_whitespace(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (is_regex_space(text[i])) {
      out.push_back(' ');
      while (i < text.size() && is_regex_space(text[i])) ++i;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

std::u32string strip_python(std::u32string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && is_python_space(text[b])) ++b;
  while (e > b && is_python_space(text[e - 1])) --e;
  return std::u32string(text.substr(b, e - b));
}

std::u32string html_unescape(std::u32string_view text) {
  if (text.find(U'&') == std::u32string_view::npos) return std::u32string(text);
  std::u32string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '&') {
      const std::size_t next = unescape_one(text, i, out);
      if (next != i) {
        i = next;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

std::u32string ftfy_fix_text(std::u32string_view text) {
  // fix_text: one segment per line (each ends after its '\n'); unescape_html="auto"
  // is switched off for good at the first segment that contains '<'.
  std::u32string out;
  out.reserve(text.size());
  bool unescape = true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(U'\n', pos);
    end = end == std::u32string_view::npos ? text.size() : end + 1;
    const std::u32string_view segment = text.substr(pos, end - pos);
    if (segment.find(U'<') != std::u32string_view::npos) unescape = false;
    out += ftfy_fix_segment(std::u32string(segment), unescape);
    pos = end;
  }
  return out;
}

const char* unicode_data_version() {
  return t::kUnicodeDataVersion;
}
const char* regex_unicode_version() {
  return t::kRegexUnicodeVersion;
}

}  // namespace vlbias::unicode
