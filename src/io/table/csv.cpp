// CSV/TSV reading (RFC 4180) and writing.
//
// The reader makes one pass over the bytes (memory-mapped for files), turning
// each cell straight into a double or a dictionary code; no string is built per
// cell. A column stays Numeric until its first non-numeric cell; the rows read
// before that are then re-read once at the end to recover their exact text.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

using io_internal::kNaN;
using io_internal::kProgressChunk;
using io_internal::kReleaseChunk;
// UTF-8 is validated this far ahead of the parser, a cache-sized bite at a time.
constexpr std::size_t kValidateChunk = std::size_t{1} << 20;
// Rows read before the column vectors are sized from the average row length.
constexpr std::size_t kSampleRows = 1024;

struct ColumnBuilder {
  Column column;
  Dictionary dict;
  bool numeric = true;
  std::size_t flip_row = 0;  // rows read as numbers before the column turned String

  void add(std::string_view text, std::size_t row) {
    if (numeric) {
      if (text.empty()) {
        column.numbers.push_back(kNaN);
        return;
      }
      double value;
      if (io_internal::parse_number(text, &value)) {
        column.numbers.push_back(value);
        return;
      }
      to_string_column(row);
    }
    column.codes.push_back(text.empty() ? Column::kMissing : dict.intern(column.levels, text));
  }

  void to_string_column(std::size_t row) {
    numeric = false;
    flip_row = row;
    const std::size_t capacity = column.numbers.capacity();
    std::vector<double>().swap(column.numbers);  // free before allocating the codes
    column.codes.reserve(capacity);
    io_internal::advise_huge_pages(column.codes.data(), capacity * sizeof(std::uint32_t));
    column.codes.assign(row, Column::kMissing);
  }

  void reserve(std::size_t n) {
    if (numeric) {
      column.numbers.reserve(n);
      io_internal::advise_huge_pages(column.numbers.data(), n * sizeof(double));
    } else {
      column.codes.reserve(n);
      io_internal::advise_huge_pages(column.codes.data(), n * sizeof(std::uint32_t));
    }
  }
};

// OWASP's CSV-injection characters: a cell starting with one of them may be run as a formula.
bool formula_trigger(char c) {
  return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r' || c == '\n' ||
         c == '\0';
}

// Single quotes (none or more) and then a trigger: what append_csv_cell guards.
bool quotes_then_trigger(std::string_view text) {
  const std::size_t first = text.find_first_not_of('\'');
  return first != std::string_view::npos && formula_trigger(text[first]);
}

// Whether append_csv_cell writes the text with a leading single quote (table.h).
bool starts_like_a_formula(std::string_view text) {
  if (text.size() < 2 || !quotes_then_trigger(text)) return false;
  const char c = text.front();
  double ignored;
  const bool number_start = c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9');
  return !(number_start && io_internal::parse_number(text, &ignored));
}

std::string delimiter_name(char delimiter) {
  if (delimiter == '\t') return "a tab";
  return fmt::format("'{}'", delimiter);
}

class CsvReader {
 public:
  CsvReader(std::string_view text, const std::string& source, char delimiter,
            io_internal::FileBytes* file, bool text_only = false)
      : begin_(text.data()),
        end_(text.data() + text.size()),
        p_(begin_),
        validated_(begin_),
        source_(source),
        delim_(delimiter),
        text_only_(text_only),
        file_(file) {
    VLBIAS_CHECK(delimiter != '"' && delimiter != '\r' && delimiter != '\n', UsageError,
                 "cannot read '{}' with delimiter {}: a CSV delimiter cannot be a quote or a "
                 "line break",
                 source, delimiter_name(delimiter));
    std::fill(std::begin(stop_), std::end(stop_), false);
    stop_[static_cast<unsigned char>(delim_)] = true;
    stop_[static_cast<unsigned char>('\r')] = true;
    stop_[static_cast<unsigned char>('\n')] = true;
  }

  // Past a UTF-8 byte order mark and blank lines, the header row read; InputError when the file
  // holds none.
  void open_header() {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
    validate_ahead();
    skip_blank_lines();
    VLBIAS_CHECK(p_ < end_, InputError, "'{}' is empty: expected a header row", source_);
    read_header();
  }

  Table read() {
    open_header();

    const std::size_t ncols = names_.size();
    std::vector<ColumnBuilder> builders(ncols);
    for (ColumnBuilder& b : builders) b.numeric = !text_only_;
    const char* data_start = p_;
    const std::size_t data_line = line_;
    Table table;
    table.source = source_;
    std::size_t row = 0;
    const char* released = p_;
    for (;;) {
      skip_blank_lines();
      if (p_ >= end_) break;
      keep_pace(released);
      if (row >= kSampleRows && row == table.line_of_row.capacity()) {
        // Size the vectors from the average row length so far instead of
        // doubling them. Erring high is cheap: pages never written are never
        // resident, whereas each regrowth copies every column.
        const double per_row = static_cast<double>(p_ - data_start) / static_cast<double>(row);
        const auto estimate = row + static_cast<std::size_t>((end_ - p_) / per_row * 1.25) + 1024;
        table.line_of_row.reserve(estimate);
        io_internal::advise_huge_pages(table.line_of_row.data(), estimate * sizeof(std::size_t));
        for (auto& b : builders) b.reserve(estimate);
      }
      const std::size_t record_line = line_;
      const std::size_t fields = read_record([&](std::size_t i, std::string_view text) {
        if (i < ncols) builders[i].add(text, row);
      });
      for (std::size_t i = fields; i < ncols && fields >= min_fields_; ++i)
        builders[i].add("", row);
      VLBIAS_CHECK(fields == ncols || (fields >= min_fields_ && fields < ncols), InputError,
                   "'{}' line {} has {} field{}, the header has {}; expected {} fields separated "
                   "by {}",
                   source_, record_line, fields, fields == 1 ? "" : "s", ncols, ncols,
                   delimiter_name(delim_));
      table.line_of_row.push_back(record_line);
      ++row;
    }

    while (validated_ < end_) validate_ahead();  // a long header or trailing blank lines
    recover_early_rows(builders, data_start, data_line);

    table.rows = row;
    table.columns.reserve(ncols);
    for (std::size_t c = 0; c < ncols; ++c) {
      ColumnBuilder& b = builders[c];
      b.column.name = std::move(names_[c]);
      b.column.type = b.numeric ? ColumnType::Numeric : ColumnType::String;
      table.columns.push_back(std::move(b.column));
    }
    return table;
  }

  // Streams the rows, handing the requested columns of each to on_row (record_stream.h).
  std::size_t stream(const std::vector<std::string>& columns, Record& record,
                     const std::function<void(const Record&)>& on_row,
                     const std::function<void(std::size_t, std::size_t)>& on_progress,
                     std::size_t required) {
    open_header();
    const std::size_t ncols = names_.size();
    // field index -> requested column index (or npos)
    std::vector<std::size_t> wanted(ncols, std::string::npos);
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const auto it = std::find(names_.begin(), names_.end(), columns[k]);
      if (it == names_.end() && k >= required) continue;  // optional: missing in every row
      if (it == names_.end()) {
        std::string names;
        for (const std::string& n : names_) names += (names.empty() ? "" : ", ") + n;
        VLBIAS_FAIL(InputError, "'{}' has no column '{}'; its columns are: {}", source_, columns[k],
                    names);
      }
      wanted[static_cast<std::size_t>(it - names_.begin())] = k;
    }
    record.text_.assign(columns.size(), std::string_view());
    record.present_.assign(columns.size(), false);
    record.json_number_.clear();
    std::vector<std::string> owned(columns.size());
    std::size_t rows = 0;
    const char* released = p_;
    const char* reported = p_;
    for (;;) {
      skip_blank_lines();
      if (p_ >= end_) break;
      keep_pace(released);
      if (on_progress && static_cast<std::size_t>(p_ - reported) >= kProgressChunk) {
        on_progress(static_cast<std::size_t>(p_ - begin_), static_cast<std::size_t>(end_ - begin_));
        reported = p_;
      }
      const std::size_t record_line = line_;
      const std::size_t fields = read_record([&](std::size_t i, std::string_view text) {
        if (i >= ncols || wanted[i] == std::string::npos) return;
        const std::size_t k = wanted[i];
        if (!text.empty() && text.data() == scratch_.data()) {  // a field with doubled quotes
          owned[k].assign(text);
          text = owned[k];
        }
        record.text_[k] = text;
        record.present_[k] = !text.empty();
      });
      VLBIAS_CHECK(fields == ncols || (fields >= min_fields_ && fields < ncols), InputError,
                   "'{}' line {} has {} field{}, the header has {}; expected {} fields separated "
                   "by {}",
                   source_, record_line, fields, fields == 1 ? "" : "s", ncols, ncols,
                   delimiter_name(delim_));
      for (std::size_t i = fields; i < ncols; ++i) {  // an omitted unnamed tail cell
        if (wanted[i] == std::string::npos) continue;
        record.text_[wanted[i]] = std::string_view();
        record.present_[wanted[i]] = false;
      }
      record.line_ = record_line;
      on_row(record);
      ++rows;
    }
    while (validated_ < end_) validate_ahead();
    if (on_progress) {
      on_progress(static_cast<std::size_t>(end_ - begin_), static_cast<std::size_t>(end_ - begin_));
    }
    return rows;
  }

 private:
  // Before each record: keeps UTF-8 validation half a chunk ahead of the parser (a long
  // quoted field may have run past it) and releases the mapped pages behind it.
  void keep_pace(const char*& released) {
    while (validated_ < end_ && static_cast<std::size_t>(validated_ - begin_) <
                                    static_cast<std::size_t>(p_ - begin_) + kValidateChunk / 2) {
      validate_ahead();
    }
    if (file_ != nullptr && static_cast<std::size_t>(p_ - released) >= kReleaseChunk) {
      file_->release_before(p_);
      released = p_;
    }
  }

  // Reads one record at p_, calling on_field(index, text) for each field (the
  // text is valid only during the call); returns the number of fields and
  // leaves p_ after the record's line end.
  template <typename OnField>
  std::size_t read_record(OnField&& on_field) {
    std::size_t field = 0;
    for (;;) {
      std::string_view text;
      if (p_ < end_ && *p_ == '"') {
        text = read_quoted(field);
      } else {
        const char* start = p_;
        while (p_ < end_ && !stop_[static_cast<unsigned char>(*p_)]) ++p_;
        text = std::string_view(start, static_cast<std::size_t>(p_ - start));
      }
      on_field(field, text);
      ++field;
      if (p_ < end_ && *p_ == delim_) {
        ++p_;
        continue;
      }
      if (p_ < end_) {
        if (*p_ == '\r' && p_ + 1 < end_ && p_[1] == '\n') ++p_;
        ++p_;
        ++line_;
      }
      return field;
    }
  }

  std::string_view read_quoted(std::size_t field) {
    const std::size_t open_line = line_;
    const char* start = ++p_;
    const char* q = start;
    bool doubled = false;
    const char* close;
    for (;;) {
      close = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(end_ - q)));
      VLBIAS_CHECK(close != nullptr, InputError,
                   "'{}' line {}, {}: a quoted field opens here and is never closed; expected "
                   "a closing '\"'",
                   source_, open_line, describe_column(field));
      count_lines(q, close);
      if (close + 1 < end_ && close[1] == '"') {
        doubled = true;
        q = close + 2;
        continue;
      }
      break;
    }
    p_ = close + 1;
    VLBIAS_CHECK(p_ == end_ || *p_ == delim_ || *p_ == '\r' || *p_ == '\n', InputError,
                 "'{}' line {}, {}: unexpected text after a closing quote; expected {} or the "
                 "end of the line",
                 source_, line_, describe_column(field), delimiter_name(delim_));
    // The formula-injection guard of append_csv_cell: "'=x" was written for "=x".
    const bool guarded = close - start >= 2 && *start == '\'' &&
                         quotes_then_trigger(std::string_view(start, close - start));
    if (!doubled) {
      if (guarded) ++start;
      return std::string_view(start, static_cast<std::size_t>(close - start));
    }
    scratch_.clear();
    for (const char* s = start + (guarded ? 1 : 0); s < close; ++s) {
      scratch_ += *s;
      if (*s == '"') ++s;  // the second quote of a doubled pair
    }
    return scratch_;
  }

  // Line breaks inside a quoted field: LF, CRLF or a lone CR each count once.
  void count_lines(const char* from, const char* to) {
    for (const char* s = from; s < to; ++s) {
      if (*s == '\n' || (*s == '\r' && (s + 1 == end_ || s[1] != '\n'))) ++line_;
    }
  }

  void skip_blank_lines() {
    while (p_ < end_ && (*p_ == '\n' || *p_ == '\r')) {
      if (*p_ == '\r' && p_ + 1 < end_ && p_[1] == '\n') ++p_;
      ++p_;
      ++line_;
    }
  }

  void read_header() {
    const std::size_t header_line = line_;
    read_record([&](std::size_t, std::string_view text) { names_.emplace_back(text); });
    std::unordered_map<std::string_view, std::size_t> seen;
    // pandas' DataFrame.to_csv() writes its index under an empty first header; read it as
    // pandas does ("Unnamed: 0"). An empty name anywhere else is a mistake.
    if (names_.size() > 1 && names_[0].empty()) names_[0] = "Unnamed: 0";
    // Spreadsheet exports (ViSAGe's CSVs) end the header with empty names ("...,coords,,")
    // and leave those cells off the rows: read the unnamed tail as pandas does, "Unnamed: i"
    // columns that a row may omit (missing cells).
    min_fields_ = names_.size();
    while (min_fields_ > 1 && names_[min_fields_ - 1].empty()) {
      --min_fields_;
      names_[min_fields_] = fmt::format("Unnamed: {}", min_fields_);
    }
    for (std::size_t c = 0; c < names_.size(); ++c) {
      VLBIAS_CHECK(!names_[c].empty(), InputError,
                   "'{}' line {}: header column {} is empty; expected a column name", source_,
                   header_line, c + 1);
      const auto [it, fresh] = seen.emplace(names_[c], c);
      VLBIAS_CHECK(fresh, InputError,
                   "'{}' line {}: header names column '{}' twice (columns {} and {}); expected "
                   "unique names",
                   source_, header_line, names_[c], it->second + 1, c + 1);
    }
    header_done_ = true;
  }

  std::string describe_column(std::size_t field) const {
    if (field < names_.size() && header_done_) {
      return fmt::format("column {} ('{}')", field + 1, names_[field]);
    }
    return fmt::format("column {}", field + 1);
  }

  // Validates the next bite of input; chunks end after a '\n', which never
  // falls inside a multi-byte sequence.
  void validate_ahead() {
    if (validated_ >= end_) return;
    const char* to = end_;
    if (static_cast<std::size_t>(end_ - validated_) > kValidateChunk) {
      const char* at = validated_ + kValidateChunk;
      const void* nl = std::memchr(at, '\n', static_cast<std::size_t>(end_ - at));
      to = nl ? static_cast<const char*>(nl) + 1 : end_;
    }
    const auto length = static_cast<std::size_t>(to - validated_);
    if (!simdjson::validate_utf8(validated_, length)) {
      const std::size_t bad = io_internal::first_invalid_utf8(std::string_view(validated_, length));
      fail_utf8(validated_ + bad);
    }
    validated_ = to;
  }

  [[noreturn]] void fail_utf8(const char* at) {
    std::size_t line = 1;
    const char* line_start = begin_;
    for (const char* s = begin_; s < at; ++s) {
      if (*s == '\n' || (*s == '\r' && (s + 1 == end_ || s[1] != '\n'))) {
        ++line;
        line_start = s + 1;
      }
    }
    VLBIAS_FAIL(InputError,
                "'{}' line {} is not valid UTF-8 (byte {} of the line is 0x{:02x}); expected "
                "UTF-8 text",
                source_, line, at - line_start + 1, static_cast<unsigned char>(*at));
  }

  // Columns that turned String after some numeric rows: read those rows again
  // for their exact text ("1.0" stays "1.0"), then put the levels back in order
  // of first appearance.
  void recover_early_rows(std::vector<ColumnBuilder>& builders, const char* data_start,
                          std::size_t data_line) {
    std::size_t rows = 0;
    for (const auto& b : builders) {
      if (!b.numeric) rows = std::max(rows, b.flip_row);
    }
    if (rows == 0) return;
    p_ = data_start;
    line_ = data_line;
    const std::size_t ncols = builders.size();
    for (std::size_t row = 0; row < rows; ++row) {
      skip_blank_lines();
      read_record([&](std::size_t i, std::string_view text) {
        if (i >= ncols) return;
        ColumnBuilder& b = builders[i];
        if (b.numeric || row >= b.flip_row || text.empty()) return;
        b.column.codes[row] = b.dict.intern(b.column.levels, text);
      });
    }
    for (auto& b : builders) {
      if (!b.numeric && b.flip_row > 0) {
        io_internal::reorder_by_first_appearance(b.column.codes, b.column.levels);
      }
    }
  }

  const char* begin_;
  const char* end_;
  const char* p_;
  const char* validated_;
  std::size_t line_ = 1;
  std::string source_;
  char delim_;
  bool text_only_ = false;
  io_internal::FileBytes* file_;
  bool stop_[256];
  std::string scratch_;
  std::vector<std::string> names_;
  bool header_done_ = false;
  std::size_t min_fields_ = 0;  // fields a record may stop at (before an unnamed tail)
};

}  // namespace

Table parse_csv(std::string_view text, const std::string& source, const CsvOptions& options) {
  return CsvReader(text, source, options.delimiter, nullptr, options.text_only).read();
}

namespace io_internal {
std::size_t stream_csv(const std::string& path, char delimiter,
                       const std::vector<std::string>& columns, Record& record,
                       const std::function<void(const Record&)>& on_row,
                       const std::function<void(std::size_t, std::size_t)>& on_progress,
                       std::size_t required) {
  FileBytes file(path);
  CsvReader reader(file.view(), path, delimiter, &file);
  return reader.stream(columns, record, on_row, on_progress, required);
}
}  // namespace io_internal

Table read_csv(const std::string& path, const CsvOptions& options) {
  io_internal::FileBytes file(path);
  return CsvReader(file.view(), path, options.delimiter, &file, options.text_only).read();
}

// ---------------------------------------------------------------- writing

namespace {

bool needs_quotes(std::string_view text) {
  return text.find_first_of(",\"\r\n") != std::string_view::npos;
}

}  // namespace

void append_csv_cell(std::string& out, std::string_view text) {
  const bool guard = starts_like_a_formula(text);
  if (!guard && !needs_quotes(text)) {
    out += text;
    return;
  }
  out += guard ? "\"'" : "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void write_csv(const Table& table, const std::string& path) {
  AtomicWriter out(path);
  std::string buffer;
  auto flush = [&](bool force) {
    if (!force && buffer.size() < (std::size_t{1} << 20)) return;
    out.write(buffer.data(), buffer.size());
    buffer.clear();
  };
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    if (c > 0) buffer += ',';
    append_csv_cell(buffer, table.columns[c].name);
  }
  buffer += '\n';
  fmt::memory_buffer number;
  for (std::size_t row = 0; row < table.rows; ++row) {
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) buffer += ',';
      const Column& col = table.columns[c];
      if (col.missing(row)) {
        // A one-column row with a missing cell would be a blank line, which
        // readers skip: write it as "" instead.
        if (table.columns.size() == 1) buffer += "\"\"";
        continue;
      }
      if (col.type == ColumnType::Numeric) {
        number.clear();
        fmt::format_to(std::back_inserter(number), "{}", col.numbers[row]);
        buffer.append(number.data(), number.size());
      } else {
        append_csv_cell(buffer, col.levels[col.codes[row]]);
      }
    }
    buffer += '\n';
    flush(false);
  }
  flush(true);
  out.commit();
}

}  // namespace vlbias
