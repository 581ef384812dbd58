#pragma once
// The texts of a table column, optionally absent (src/io/table/column.cpp): what the prompt
// commands and the text scorers read from a column of text.
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/io/table/table.h"

namespace vlbias {

// Column `name`'s cell of every row as text (Column::text: "" where missing). When `optional`
// and the table has no such column: table.rows empty texts; else Table::column's InputError
// naming the file, the column and the columns that exist.
std::vector<std::string> column_texts(const Table& table, std::string_view name,
                                      bool optional = false);

}  // namespace vlbias
