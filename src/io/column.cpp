#include <cmath>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/table.h"

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

}  // namespace vlbias
