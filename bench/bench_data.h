#pragma once
// Deterministic synthetic data shared with bench/vs_scipy.py (which computes the
// same formula with numpy): value_i = frac(i * 0.6180339887498949) * 10 with an
// added group shift 0.01 * g, g = (i * 7) mod k. Integer arithmetic and one
// double multiply, so both sides produce identical values.
#include <cmath>
#include <cstdint>
#include <vector>

namespace vlbias::bench {

inline void make_data(std::size_t n, std::size_t k, std::vector<double>& values,
                      std::vector<std::uint32_t>& groups) {
  values.resize(n);
  groups.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) * 0.6180339887498949;
    const std::uint32_t g = static_cast<std::uint32_t>((i * 7) % k);
    groups[i] = g;
    values[i] = (x - std::floor(x)) * 10.0 + 0.01 * g;
  }
}

}  // namespace vlbias::bench
