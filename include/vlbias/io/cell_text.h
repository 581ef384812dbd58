#pragma once
// Text from untrusted files as io's readers treat it, public for the readers above io that must
// do the same (the dataset readers, src/datasets/): numbers parsed as a table cell's, and file
// content quoted in error messages kept to one printable line of bounded length.
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace vlbias {

// True when `text`, with ASCII spaces and tabs trimmed, is a complete finite decimal number as a
// table cell is read (include/vlbias/io/table/table.h: "3", "-2.5", "+1e-3", ".5"); sets *value.
// "NaN", "inf", hex and values beyond double's range are not numbers; underflow gives 0.
bool parse_cell_number(std::string_view text, double* value);

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

}  // namespace vlbias
