// Base64 (base64.h).
#include "vlbias/io/base64.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto v = (std::uint32_t(std::uint8_t(bytes[i])) << 16) |
                   (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) | std::uint8_t(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::array<int, 256> value;
  value.fill(-1);
  for (int k = 0; k < 64; ++k) value[std::uint8_t(kAlphabet[k])] = k;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0, symbols = 0, padding = 0;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int v = value[std::uint8_t(c)];
    if (v < 0 || padding > 0) return std::nullopt;  // a symbol after padding is malformed
    acc = (acc << 6) | std::uint32_t(v);
    bits += 6;
    ++symbols;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xFF);
    }
  }
  // A lone symbol in the last quantum cannot encode a byte; padding never exceeds 2 and,
  // when present, completes the quantum.
  if (symbols % 4 == 1 || padding > 2) return std::nullopt;
  if (padding > 0 && (symbols + padding) % 4 != 0) return std::nullopt;
  return out;
}

std::string base64_decode_strict(std::string_view text, std::string_view what) {
  VLBIAS_CHECK(text.size() % 4 == 0, InputError,
               "{} has {} characters; expected base64 in groups of 4", what, text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool symbol = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '+' || c == '/';
    // '=' pads only the last group: its 4th symbol, or its 3rd and 4th.
    const std::size_t from_end = text.size() - i;
    const bool padding = c == '=' && (from_end == 1 || (from_end == 2 && text.back() == '='));
    if (!symbol && !padding) {
      const auto u = static_cast<unsigned char>(c);
      VLBIAS_FAIL(InputError, "{} has '{}' at character {}; expected base64", what,
                  u >= 0x20 && u < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", u), i);
    }
  }
  std::optional<std::string> bytes = base64_decode(text);
  VLBIAS_CHECK(bytes.has_value(), InputError, "{} is not valid base64", what);
  return std::move(*bytes);
}

}  // namespace vlbias
