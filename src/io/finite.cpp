#include "vlbias/io/finite.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"

namespace vlbias {

std::string describe_position(std::span<const std::size_t> shape, std::size_t flat_index) {
  if (shape.empty()) return "the scalar value";
  if (shape.size() == 1) return fmt::format("element {}", flat_index);
  std::string index;
  std::size_t rest = flat_index;
  std::vector<std::size_t> coords(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    coords[a] = shape[a] == 0 ? 0 : rest % shape[a];
    rest = shape[a] == 0 ? 0 : rest / shape[a];
  }
  if (shape.size() == 2) return fmt::format("row {}, column {}", coords[0], coords[1]);
  return fmt::format("index ({})", fmt::join(coords, ", "));
}

std::size_t find_nonfinite(const float* p, std::size_t n) {
  // Scan blocks with a branch-free reduction the compiler vectorises; only a
  // block known to hold a bad value is searched element by element.
  constexpr std::size_t kBlock = 1024;
  constexpr std::uint32_t kExpMask = 0x7f800000u;
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t len = std::min(kBlock, n - start);
    std::uint32_t bad = 0;
    for (std::size_t i = 0; i < len; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, p + start + i, sizeof bits);
      bad |= static_cast<std::uint32_t>((bits & kExpMask) == kExpMask);
    }
    if (bad != 0) {
      for (std::size_t i = 0; i < len; ++i) {
        if (!std::isfinite(p[start + i])) return start + i;
      }
    }
  }
  return n;
}

void require_finite(std::span<const float> values, std::span<const std::size_t> shape,
                    std::string_view what) {
  const std::size_t at = find_nonfinite(values.data(), values.size());
  if (at == values.size()) return;
  const float v = values[at];
  const char* kind = std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf");
  VLBIAS_FAIL(InputError, "{} has {} at {} (0-based); expected finite values only", what, kind,
              describe_position(shape, at));
}

void require_finite(MatrixView m, std::string_view what) {
  const std::array<std::size_t, 2> shape{m.rows, m.cols};
  require_finite(std::span<const float>(m.data, m.rows * m.cols), shape, what);
}

}  // namespace vlbias
