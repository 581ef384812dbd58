#include "table_detail.h"

#include <fcntl.h>
#include <locale.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/cell_text.h"

namespace vlbias::io_internal {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t';
}
// Underflow or overflow reported by from_chars: strtod in the C locale decides
// which (underflow rounds to a finite value, overflow gives inf).
bool parse_out_of_range(std::string_view text, double* value) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(0));
  if (c_locale == static_cast<locale_t>(0)) return false;
  const std::string copy(text);
  char* end = nullptr;
  const double v = strtod_l(copy.c_str(), &end, c_locale);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

}  // namespace

bool parse_number(std::string_view text, double* value) {
  std::size_t b = 0, e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  if (b == e) return false;
  const char* first = text.data() + b;
  const char* last = text.data() + e;
  // from_chars rejects '+' but spreadsheets write it; accept it before a digit or '.'.
  if (*first == '+') {
    ++first;
    if (first == last || !(is_digit(*first) || *first == '.')) return false;
  } else if (!(is_digit(*first) || *first == '-' || *first == '.')) {
    return false;  // rejects "nan", "inf", words, before calling from_chars
  }
  // Fast path (Clinger): at most 15 digits and a short fraction are exact as
  // integer / 10^k, and one IEEE division rounds that correctly.
  {
    static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char* s = first;
    const bool negative = *s == '-';
    if (negative) ++s;
    std::uint64_t mantissa = 0;
    int digits = 0, fraction = 0;
    while (s < last && is_digit(*s) && digits < 16) {
      mantissa = mantissa * 10 + static_cast<unsigned>(*s++ - '0');
      ++digits;
    }
    if (s < last && *s == '.') {
      ++s;
      while (s < last && is_digit(*s) && digits < 16) {
        mantissa = mantissa * 10 + static_cast<unsigned>(*s++ - '0');
        ++digits;
        ++fraction;
      }
    }
    if (s == last && digits > 0 && digits <= 15) {
      const double v = static_cast<double>(mantissa) / kPow10[fraction];
      *value = negative ? -v : v;
      return true;
    }
  }
  double v = 0;
  const auto result = std::from_chars(first, last, v, std::chars_format::general);
  if (result.ptr != last) return false;
  if (result.ec == std::errc::result_out_of_range) {
    return parse_out_of_range(std::string_view(first, last - first), value);
  }
  if (result.ec != std::errc() || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

void reorder_by_first_appearance(std::vector<std::uint32_t>& codes,
                                 std::vector<std::string>& levels) {
  constexpr std::uint32_t kMissing = 0xffffffffu;
  std::vector<std::uint32_t> remap(levels.size(), kMissing);
  std::vector<std::string> reordered;
  reordered.reserve(levels.size());
  for (auto& code : codes) {
    if (code == kMissing) continue;
    if (remap[code] == kMissing) {
      remap[code] = static_cast<std::uint32_t>(reordered.size());
      reordered.push_back(std::move(levels[code]));
    }
    code = remap[code];
  }
  levels = std::move(reordered);
}

FileBytes::FileBytes(const std::string& path) {
  // A device (/dev/zero never ends) or a folder is refused before it is opened; a named pipe is
  // opened without waiting for a writer (open_input_file).
  const bool pipe = check_input_file(path, "a table") == InputKind::Pipe;
  if (pipe) check_pipe_not_read(path);
  InputFile file = open_input_file(path, "a table");
  if (file.kind() == InputKind::File && file.size() > 0) {
    const auto bytes = static_cast<std::size_t>(file.size());
    void* addr = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, file.fd(), 0);
    if (addr != MAP_FAILED) {
      ::madvise(addr, bytes, MADV_SEQUENTIAL);
      data_ = static_cast<const char*>(addr);
      size_ = bytes;
      mapped_ = true;
      return;
    }
  }
  // Pipes, /proc files (size 0) and file systems without mmap: read to the end.
  buffer_ = file.read_all(std::numeric_limits<std::uintmax_t>::max(), "a table");
  data_ = buffer_.data();
  size_ = buffer_.size();
  // A pipe cannot be read again to hash it: its provenance hash is that of these bytes.
  if (file.kind() == InputKind::Pipe) record_pipe_sha256(path, sha256_hex(buffer_));
}

FileBytes::~FileBytes() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

void FileBytes::release_before(const char* upto) {
  if (!mapped_) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t end = (static_cast<std::size_t>(upto - data_) / page) * page;
  if (end <= released_) return;
  ::madvise(const_cast<char*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

void advise_huge_pages(const void* data, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

std::string quoted(std::string_view text, std::size_t max) {
  bool cut = false;
  if (text.size() > max) {
    std::size_t n = max;
    // Do not split a UTF-8 sequence.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xc0) == 0x80) --n;
    text = text.substr(0, n);
    cut = true;
  }
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

std::string where_row(const std::vector<std::size_t>& line_of_row, std::size_t row) {
  if (row < line_of_row.size()) return fmt::format("line {}", line_of_row[row]);
  return fmt::format("row {}", row + 1);
}

}  // namespace vlbias::io_internal

namespace vlbias {

bool parse_cell_number(std::string_view text, double* value) {
  return io_internal::parse_number(text, value);
}

}  // namespace vlbias
