#pragma once
// Builds the CSV tables of an audit row by row: every row puts the same columns in
// the same order (checked), numbers as Numeric columns (NaN = empty cell), text as
// String columns ("" = empty cell).
#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias::audits_internal {

class TableBuilder {
 public:
  explicit TableBuilder(std::string name) : name_(std::move(name)) {}

  void row() {
    VLBIAS_CHECK(rows_ == 0 || cursor_ == columns_.size(), InternalError,
                 "table {}: row {} has {} of {} columns", name_, rows_, cursor_, columns_.size());
    ++rows_;
    cursor_ = 0;
  }
  void put(const std::string& column, double value) { slot(column, true).numbers.push_back(value); }
  void put(const std::string& column, const std::string& value) {
    slot(column, false).texts.push_back(value);
  }
  void put(const std::string& column, const char* value) { put(column, std::string(value)); }

  Table build() {
    VLBIAS_CHECK(rows_ == 0 || cursor_ == columns_.size(), InternalError,
                 "table {}: last row is incomplete", name_);
    Table t;
    t.source = name_;
    t.rows = rows_;
    for (std::size_t r = 0; r < rows_; ++r) t.line_of_row.push_back(r + 2);
    for (auto& c : columns_) {
      if (c.numeric) {
        add_numeric_column(t, c.name, std::move(c.numbers));
      } else {
        add_string_column(t, c.name, c.texts);
      }
    }
    return t;
  }

 private:
  struct Pending {
    std::string name;
    bool numeric = false;
    std::vector<double> numbers;
    std::vector<std::string> texts;
  };
  Pending& slot(const std::string& column, bool numeric) {
    if (rows_ == 1 && cursor_ == columns_.size()) columns_.push_back({column, numeric, {}, {}});
    VLBIAS_CHECK(cursor_ < columns_.size() && columns_[cursor_].name == column &&
                     columns_[cursor_].numeric == numeric,
                 InternalError, "table {}: column '{}' out of order in row {}", name_, column,
                 rows_);
    return columns_[cursor_++];
  }

  std::string name_;
  std::vector<Pending> columns_;
  std::size_t rows_ = 0;
  std::size_t cursor_ = 0;
};

}  // namespace vlbias::audits_internal
