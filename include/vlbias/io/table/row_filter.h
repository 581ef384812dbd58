#pragma once
// Row filters: one small expression language wherever vlbias selects table rows
// (`vlbias sample --where`, an lvlm audit's `ratings[].where`). Parsed once, evaluated per row.
// The grammar and its rules are documented in docs/specs.md#row-filters:
//
//   expr       := and ("or" and)*
//   and        := unary ("and" unary)*
//   unary      := "not" unary | "(" expr ")" | comparison
//   comparison := operand op operand            op: == != < <= > >=
//               | operand ["not"] "in" "(" literal ("," literal)* [","] ")"
//               | operand "is" ["not"] "empty"
//   operand    := column | literal              column: name or `any name` (`` for `)
//   literal    := number | "text" | 'text'      escapes \" \' \\ \n \t \r \uXXXX
//
// Keywords are case-insensitive; a column named like one is written in backticks.
// Two values compare as numbers when both are numbers (a Numeric column's cell, an unquoted
// number, or text that reads completely as a decimal number); otherwise as text (bytes).
// An ordering (<, <=, >, >=) between an unquoted number and a value that is not a number is an
// InputError naming the row, the column and the value (never a silent false): FairFace's
// `age` holds bins such as "20-29". A missing (empty) cell makes every comparison false,
// `!=` and `not in` included; `is empty` / `is not empty` test for it.
//
// Errors: syntax errors are UsageErrors naming the character position with the expression
// and a caret under it; a column the table lacks is an InputError naming it and the columns
// the table has. Nesting (parentheses and `not`) is limited to 64 levels.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace io_internal {
struct FilterProgram;
}

class RowFilter {
 public:
  static constexpr int kMaxNesting = 64;

  // `origin` names the expression in messages ("--where", "'spec.yaml' ratings[0].where").
  // Throws UsageError for a syntax error.
  static RowFilter parse(std::string_view expression, std::string origin);

  const std::string& expression() const;
  // The columns the expression names, each once, in order of first appearance.
  const std::vector<std::string>& columns() const;

  // One flag per table row: true where the row passes. InputError for a column the table
  // lacks or an ordering of a number with a non-number cell.
  std::vector<bool> evaluate(const Table& table) const;
  // Whether a streamed row passes; record_columns[i] is the index in `record` of columns()[i].
  bool matches(const Record& record, std::span<const std::size_t> record_columns) const;

 private:
  std::shared_ptr<const io_internal::FilterProgram> program_;
};

}  // namespace vlbias
