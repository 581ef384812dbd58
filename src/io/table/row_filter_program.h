#pragma once
// The parsed form of a row filter (row_filter.h), private to src/io: row_filter_parse.cpp
// builds it, row_filter.cpp evaluates it.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vlbias::io_internal {

struct FilterOperand {
  enum class Kind { Column, Number, Text };
  Kind kind = Kind::Text;
  std::size_t column = 0;  // Column: index into FilterProgram::columns
  double number = 0;       // Number; Text that reads as a number (text_is_number)
  bool text_is_number = false;
  std::string text;          // Text; Number: its text as written
  std::size_t position = 0;  // 0-based byte offset in the expression
};

enum class FilterOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn, IsEmpty, IsNotEmpty, And, Or, Not };

struct FilterNode {
  FilterOp op = FilterOp::Eq;
  std::vector<std::size_t> children;  // And / Or (two or more), Not (one)
  FilterOperand lhs, rhs;             // comparisons; lhs alone for In / NotIn / Is*
  std::vector<FilterOperand> list;    // In / NotIn
  std::size_t position = 0;           // the operator's offset
};

struct FilterProgram {
  std::string expression;
  std::string origin;
  std::vector<std::string> columns;
  std::vector<std::size_t> column_position;  // offset of each column's first mention
  std::vector<FilterNode> nodes;
  std::size_t root = 0;
};

FilterProgram parse_filter(std::string_view expression, std::string origin);

// The expression on one line and a caret under byte `position` (display columns count code
// points; control characters shown as spaces; long expressions cut around the position).
std::string filter_caret(std::string_view expression, std::size_t position);

}  // namespace vlbias::io_internal
