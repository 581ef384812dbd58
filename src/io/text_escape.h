#pragma once
// Internal to vlbias_io: untrusted file content quoted in error messages is
// kept to one printable line of bounded length.
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace vlbias::io_internal {

// Printable ASCII is kept, every other byte becomes \xNN; at most `max_chars`
// input bytes are shown, then "...".
inline std::string escape_for_message(std::string_view s, std::size_t max_chars) {
  std::string out;
  const std::size_t n = s.size() < max_chars ? s.size() : max_chars;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (n < s.size()) out += "...";
  return out;
}

}  // namespace vlbias::io_internal
