// Joining table rows to embedding-matrix rows, by position or by an id column.
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);
constexpr std::size_t kExamples = 5;

std::string id_text(const Column& col, std::size_t row) {
  if (col.type == ColumnType::Numeric) return col.text(row);
  return io_internal::quoted(col.levels[col.codes[row]]);
}

void check_ids_present(const Table& table, const Column& col, const std::string& role) {
  for (std::size_t row = 0; row < table.rows; ++row) {
    VLBIAS_CHECK(!col.missing(row), InputError,
                 "{}'{}' has no id in column '{}' at {}; expected an id on every row", role,
                 table.source, col.name, io_internal::where_row(table.line_of_row, row));
  }
}

[[noreturn]] void fail_duplicate(const Table& index, const Column& col, std::size_t first,
                                 std::size_t second) {
  VLBIAS_FAIL(InputError,
              "index '{}' lists id {} of column '{}' twice ({} and {}); expected each id once",
              index.source, id_text(col, second), col.name,
              io_internal::where_row(index.line_of_row, first),
              io_internal::where_row(index.line_of_row, second));
}

// Index ids keyed by text, for string ids (or a string/number mix, compared as text).
class TextIds {
 public:
  explicit TextIds(const Table& index, const Column& col) {
    if (col.type == ColumnType::String) {
      std::vector<std::size_t> row_of_code(col.levels.size(), kNotFound);
      for (std::size_t row = 0; row < index.rows; ++row) {
        std::size_t& seen = row_of_code[col.codes[row]];
        if (seen != kNotFound) fail_duplicate(index, col, seen, row);
        seen = row;
      }
      for (std::size_t code = 0; code < col.levels.size(); ++code) {
        if (row_of_code[code] != kNotFound) map_.emplace(col.levels[code], row_of_code[code]);
      }
      return;
    }
    // Numbers as their shortest text; reserved so the views into them stay valid.
    texts_.reserve(index.rows);
    for (std::size_t row = 0; row < index.rows; ++row) {
      texts_.push_back(col.text(row));
      const auto [it, fresh] = map_.emplace(texts_.back(), row);
      if (!fresh) fail_duplicate(index, col, it->second, row);
    }
  }

  std::size_t find(std::string_view id) const {
    const auto it = map_.find(id);
    return it == map_.end() ? kNotFound : it->second;
  }

 private:
  std::vector<std::string> texts_;
  std::unordered_map<std::string_view, std::size_t> map_;
};

}  // namespace

std::vector<std::size_t> join_rows(const Table& table, std::size_t matrix_rows,
                                   const std::string& id_column, const Table* index) {
  if (id_column.empty()) {
    VLBIAS_CHECK(table.rows == matrix_rows, InputError,
                 "'{}' has {} rows but the embedding matrix has {} rows; expected one matrix row "
                 "per table row, or a join on an id column",
                 table.source, table.rows, matrix_rows);
    std::vector<std::size_t> identity(matrix_rows);
    std::iota(identity.begin(), identity.end(), std::size_t{0});
    return identity;
  }
  VLBIAS_CHECK(index != nullptr, UsageError,
               "joining '{}' on column '{}' needs an index table giving the id of each matrix row",
               table.source, id_column);
  VLBIAS_CHECK(index->rows == matrix_rows, InputError,
               "index '{}' has {} rows but the embedding matrix has {} rows; expected one index "
               "row per matrix row",
               index->source, index->rows, matrix_rows);
  const Column& ids = table.column(id_column);
  const Column& index_ids = index->column(id_column);
  check_ids_present(*index, index_ids, "index ");
  check_ids_present(table, ids, "");

  std::vector<std::size_t> out(table.rows, kNotFound);
  if (ids.type == ColumnType::Numeric && index_ids.type == ColumnType::Numeric) {
    U64Index map;
    std::vector<std::size_t> row_of_id;
    row_of_id.reserve(index->rows);
    for (std::size_t row = 0; row < index->rows; ++row) {
      const std::uint32_t id = map.insert(double_key(index_ids.numbers[row]));
      if (id < row_of_id.size()) fail_duplicate(*index, index_ids, row_of_id[id], row);
      row_of_id.push_back(row);
    }
    for (std::size_t row = 0; row < table.rows; ++row) {
      const std::uint32_t id = map.find(double_key(ids.numbers[row]));
      if (id != U64Index::kNone) out[row] = row_of_id[id];
    }
  } else {
    const TextIds map(*index, index_ids);
    if (ids.type == ColumnType::String) {
      std::vector<std::size_t> row_of_code(ids.levels.size());
      for (std::size_t code = 0; code < ids.levels.size(); ++code) {
        row_of_code[code] = map.find(ids.levels[code]);
      }
      for (std::size_t row = 0; row < table.rows; ++row) out[row] = row_of_code[ids.codes[row]];
    } else {
      for (std::size_t row = 0; row < table.rows; ++row) out[row] = map.find(ids.text(row));
    }
  }

  std::size_t absent = 0;
  std::string examples;
  for (std::size_t row = 0; row < table.rows; ++row) {
    if (out[row] != kNotFound) continue;
    if (absent < kExamples) {
      examples += fmt::format("{}{} ({})", absent ? ", " : "", id_text(ids, row),
                              io_internal::where_row(table.line_of_row, row));
    }
    ++absent;
  }
  VLBIAS_CHECK(absent == 0, InputError,
               "{} row{} of '{}' ha{} an id in column '{}' that index '{}' lacks: {}{}; expected "
               "every id to appear in the index",
               absent, absent == 1 ? "" : "s", table.source, absent == 1 ? "s" : "ve", id_column,
               index->source, examples, absent > kExamples ? ", ..." : "");
  return out;
}

}  // namespace vlbias
