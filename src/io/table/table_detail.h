#pragma once
// Helpers shared by the table readers, grouping and joins (private to src/io).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/utf8.h"
#include "vlbias/io/table/string_index.h"

namespace vlbias {
class Record;
}

namespace vlbias::io_internal {

// The table readers' shared settings: a missing numeric cell, and how often a streaming reader
// drops the mapped pages behind it and reports progress.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr std::size_t kReleaseChunk = std::size_t{32} << 20;
inline constexpr std::size_t kProgressChunk = std::size_t{8} << 20;

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// True when `text`, with ASCII spaces and tabs trimmed, is a complete finite
// decimal number ("3", "-2.5", "+1e-3", ".5"); sets *value. "NaN", "inf", hex,
// and values beyond double's range are not numbers; underflow gives 0.
bool parse_number(std::string_view text, double* value);

// Renumbers codes so that levels appear in order of first appearance by row,
// dropping levels that no row uses.
void reorder_by_first_appearance(std::vector<std::uint32_t>& codes,
                                 std::vector<std::string>& levels);

// The bytes of a file: memory-mapped when it is a regular file, read whole when it is a
// pipe (whose SHA-256 is then recorded for provenance: input_file.h). Throws InputError
// naming the file and strerror when it cannot be read, UsageError for a device, folder or
// socket (check_input_file).
class FileBytes {
 public:
  explicit FileBytes(const std::string& path);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  std::string_view view() const { return {data_, size_}; }
  // Drops the pages of [data, upto) from memory (the kernel re-reads them if
  // touched again), so that parsing a large file keeps its footprint small.
  void release_before(const char* upto);

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  std::size_t released_ = 0;
  std::string buffer_;
};

// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes)
// with huge pages: filling a vector of tens of millions of cells otherwise
// costs one page fault per 4 KiB.
void advise_huge_pages(const void* data, std::size_t bytes);

using vlbias::first_invalid_utf8;  // utf8.h

// `text` in double quotes for messages, cut to `max` bytes with "..." and with
// control characters escaped. Call it qualified (io_internal::quoted): with a std::string
// argument, an unqualified call finds std::quoted by ADL wherever <iomanip> is visible.
std::string quoted(std::string_view text, std::size_t max = 60);

// "row 5" for tables without line numbers, else "line N".
std::string where_row(const std::vector<std::size_t>& line_of_row, std::size_t row);

// ".csv" etc. for a path: its last extension, lower-cased ("" when none).
std::string lower_extension(const std::string& path);

// Streams a CSV file's rows to on_row (record_stream.cpp fills `record`'s names).
std::size_t stream_csv(const std::string& path, char delimiter,
                       const std::vector<std::string>& columns, Record& record,
                       const std::function<void(const Record&)>& on_row,
                       const std::function<void(std::size_t, std::size_t)>& on_progress,
                       std::size_t required);

}  // namespace vlbias::io_internal
