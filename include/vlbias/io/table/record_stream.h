#pragma once
// Streaming rows of a CSV/TSV/JSONL table (src/io): for inputs too large to hold
// as a Table (tens of millions of generated answers), for_each_record reads one
// row at a time and hands out only the requested columns. Memory stays constant:
// the file is memory-mapped and pages behind the reader are released.
//
// Cells follow the Table conventions (table.h): an empty CSV cell, a JSON null,
// an empty JSON string or an absent key is missing; JSON numbers read as their
// shortest round-trip text ("30", "2.5") when asked for as text, booleans as
// "true"/"false", arrays as their JSON text; CSV cells keep their exact text.
// Nested JSON objects are reached with dotted names ("a.b"). UTF-8 is validated.
//
// Errors (InputError, naming file and line): unreadable file, unknown extension,
// malformed CSV/JSON (as read_table), a CSV header without a requested column
// (naming the columns it has), a file without rows, and, for JSONL (whose keys
// may be absent from some rows), a requested column that no row has.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias {

struct Table;

// One row as seen by the callback; views are valid only during the call.
class Record {
 public:
  // Column i of the requested list.
  bool missing(std::size_t i) const { return !present_[i]; }
  std::string_view text(std::size_t i) const { return present_[i] ? text_[i] : std::string_view(); }
  // The cell as a number: NaN when missing; InputError naming the file, line and
  // column when it holds text that is not a finite decimal number.
  double number(std::size_t i) const;
  std::size_t line() const { return line_; }  // 1-based; the CSV header is line 1
  const std::string& source() const { return *source_; }
  const std::string& column_name(std::size_t i) const { return (*names_)[i]; }

  // Set by the readers.
  std::vector<std::string_view> text_;
  std::vector<bool> present_;
  std::vector<double> json_number_;  // JSONL: the value of a numeric cell (else NaN)
  std::size_t line_ = 0;
  const std::string* source_ = nullptr;
  const std::vector<std::string>* names_ = nullptr;
};

// Calls on_row for every row of `path` (format by extension, as read_table), in
// file order; on_progress(bytes done, bytes total) every few MiB. Returns the
// number of rows. Columns from index `required` on are optional: a file without one
// reads it as missing in every row instead of failing (e.g. a `scorer` column that
// files scored by vlbias have and others do not).
std::size_t for_each_record(const std::string& path, const std::vector<std::string>& columns,
                            const std::function<void(const Record&)>& on_row,
                            const std::function<void(std::size_t, std::size_t)>& on_progress = {},
                            std::size_t required = static_cast<std::size_t>(-1));

// The rows of a table in memory, handed out the same way (cells as Column::text gives them:
// numbers in their shortest round-trip text). InputError naming the table and the columns it
// has when a requested column before `required` is absent.
std::size_t for_each_record(const Table& table, const std::vector<std::string>& columns,
                            const std::function<void(const Record&)>& on_row,
                            std::size_t required = static_cast<std::size_t>(-1));

}  // namespace vlbias
