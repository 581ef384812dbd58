#include "vlbias/core/utf8.h"

#include <fmt/format.h>

#include "vlbias/core/terminal.h"

namespace vlbias {

namespace {

// The length of the valid UTF-8 sequence that starts at s[i] (1 to 4), or 0 when the bytes
// there are not one (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF).
std::size_t utf8_sequence_length(const unsigned char* s, std::size_t n, std::size_t i) {
  const unsigned c = s[i];
  if (c < 0x80) return 1;
  std::size_t len;
  unsigned lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > n) return 0;
  if (s[i + 1] < lo || s[i + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (s[i + k] < 0x80 || s[i + k] > 0xbf) return 0;
  }
  return len;
}

}  // namespace

std::size_t first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const std::size_t len = utf8_sequence_length(s, n, i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

std::string printable_text(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::string out;
  out.reserve(n);
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = s[i];
    const std::size_t len = utf8_sequence_length(s, n, i);
    if (len == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);  // a control character or a byte that is not UTF-8
      ++i;
    } else if (c == 0xc2 && s[i + 1] <= 0x9f) {
      out += fmt::format("\\u{:04x}", s[i + 1]);  // C1 controls U+0080..U+009F (CSI is U+009B)
      i += 2;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace vlbias
