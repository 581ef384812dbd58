// Table lookups and the reader chosen by file extension.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

// The columns that exist, for messages; a very wide table lists the first few.
std::string column_list(const Table& table) {
  constexpr std::size_t kShown = 20;
  if (table.columns.empty()) return "it has no columns";
  std::string out = "columns are: ";
  for (std::size_t c = 0; c < table.columns.size() && c < kShown; ++c) {
    if (c > 0) out += ", ";
    out += table.columns[c].name;
  }
  if (table.columns.size() > kShown) {
    out += fmt::format(", ... ({} more)", table.columns.size() - kShown);
  }
  return out;
}

}  // namespace

namespace io_internal {
std::string lower_extension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}
}  // namespace io_internal

std::optional<std::size_t> Table::find(std::string_view name) const {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].name == name) return c;
  }
  return std::nullopt;
}

const Column& Table::column(std::string_view name) const {
  const auto c = find(name);
  VLBIAS_CHECK(c.has_value(), InputError, "'{}' has no column '{}'; {}", source, name,
               column_list(*this));
  return columns[*c];
}

// A new column must have a fresh name and one value per row.
static void check_new_column(const Table& table, const std::string& name, std::size_t values) {
  VLBIAS_CHECK(!table.find(name).has_value(), InputError, "'{}' already has a column '{}'",
               table.source, name);
  VLBIAS_CHECK(values == table.rows, InputError, "column '{}' has {} values but '{}' has {} rows",
               name, values, table.source, table.rows);
}

void add_numeric_column(Table& table, std::string name, std::vector<double> values) {
  check_new_column(table, name, values.size());
  Column c;
  c.name = std::move(name);
  c.type = ColumnType::Numeric;
  c.numbers = std::move(values);
  table.columns.push_back(std::move(c));
}

void add_string_column(Table& table, std::string name, const std::vector<std::string>& values) {
  check_new_column(table, name, values.size());
  Column c;
  c.name = std::move(name);
  c.type = ColumnType::String;
  c.codes.resize(values.size());
  std::unordered_map<std::string_view, std::uint32_t> code_of;
  c.levels.reserve(16);
  for (std::size_t r = 0; r < values.size(); ++r) {
    if (values[r].empty()) {
      c.codes[r] = Column::kMissing;
      continue;
    }
    auto it = code_of.find(values[r]);
    if (it == code_of.end()) {
      it = code_of.emplace(values[r], static_cast<std::uint32_t>(c.levels.size())).first;
      c.levels.push_back(values[r]);
    }
    c.codes[r] = it->second;
  }
  table.columns.push_back(std::move(c));
}

const std::vector<double>& Table::numeric(std::string_view name, bool allow_missing) const {
  const Column& col = column(name);
  if (col.type == ColumnType::String && col.mixed && col.mixed->text_row < col.codes.size() &&
      col.codes[col.mixed->text_row] != Column::kMissing) {
    // JSON numbers and other types in one column: name both, with their types.
    const Column::MixedTypes& m = *col.mixed;
    VLBIAS_FAIL(InputError,
                "column '{}' in '{}' is not numeric: {} holds {} ({}) where {} holds a number; "
                "expected a JSON number (or null) in every row",
                name, source, io_internal::where_row(line_of_row, m.text_row), m.text_type,
                io_internal::quoted(col.levels[col.codes[m.text_row]]),
                io_internal::where_row(line_of_row, m.number_row));
  }
  if (col.type == ColumnType::String) {
    // Name the first row whose text is not a number; for JSON strings that hold
    // digits ("3"), the first non-missing row.
    std::vector<signed char> is_number(col.levels.size(), -1);
    std::size_t first_present = col.codes.size();
    for (std::size_t row = 0; row < col.codes.size(); ++row) {
      const std::uint32_t code = col.codes[row];
      if (code == Column::kMissing) continue;
      if (first_present == col.codes.size()) first_present = row;
      if (is_number[code] < 0) {
        double ignored;
        is_number[code] = io_internal::parse_number(col.levels[code], &ignored) ? 1 : 0;
      }
      if (is_number[code] == 0) {
        VLBIAS_FAIL(InputError, "column '{}' in '{}' is not numeric: {} holds {}", name, source,
                    io_internal::where_row(line_of_row, row),
                    io_internal::quoted(col.levels[code]));
      }
    }
    VLBIAS_CHECK(first_present != col.codes.size(), InputError,
                 "column '{}' in '{}' is not numeric: it is a text column with no values", name,
                 source);
    VLBIAS_FAIL(InputError,
                "column '{}' in '{}' is not numeric: {} holds {} as text, not as a number", name,
                source, io_internal::where_row(line_of_row, first_present),
                io_internal::quoted(col.levels[col.codes[first_present]]));
  }
  if (!allow_missing) {
    for (std::size_t row = 0; row < col.numbers.size(); ++row) {
      VLBIAS_CHECK(!std::isnan(col.numbers[row]), InputError,
                   "column '{}' in '{}' has a missing value at {}; expected a number", name, source,
                   io_internal::where_row(line_of_row, row));
    }
  }
  return col.numbers;
}

Table read_table(const std::string& path) {
  const std::string ext = io_internal::lower_extension(path);
  if (ext == ".csv") return read_csv(path);
  if (ext == ".tsv") return read_csv(path, CsvOptions{'\t'});
  if (ext == ".jsonl" || ext == ".ndjson") return read_jsonl(path);
  if (ext == ".parquet" || is_parquet_folder(path)) return read_parquet(path);
  VLBIAS_FAIL(InputError,
              "cannot read '{}' as a table: unsupported extension '{}'; expected .csv, .tsv, "
              ".jsonl, .ndjson or .parquet (or a folder of .parquet shards)",
              path, ext);
}

}  // namespace vlbias
