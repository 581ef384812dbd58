#include <cmath>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/table/column_texts.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

bool Column::missing(std::size_t row) const {
  if (type == ColumnType::Numeric) return std::isnan(numbers[row]);
  return codes[row] == kMissing;
}

std::string Column::text(std::size_t row) const {
  if (missing(row)) return "";
  if (type == ColumnType::Numeric) return fmt::format("{}", numbers[row]);
  return levels[codes[row]];
}

std::vector<std::string> column_texts(const Table& table, std::string_view name, bool optional) {
  std::vector<std::string> out(table.rows);
  if (optional && !table.find(name)) return out;
  const Column& c = table.column(name);
  for (std::size_t r = 0; r < table.rows; ++r) out[r] = c.text(r);
  return out;
}

}  // namespace vlbias
