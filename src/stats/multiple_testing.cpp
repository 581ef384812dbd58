// Holm (1979) step-down and Benjamini-Hochberg (1995) step-up adjustments.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "vlbias/core/error.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

namespace {

// Indices of the non-NaN p-values, sorted ascending by p (stable).
std::vector<std::size_t> defined_order(std::span<const double> p) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::isnan(p[i])) continue;
    VLBIAS_CHECK(p[i] >= 0.0 && p[i] <= 1.0, InputError,
                 "p-value {} at position {} is outside [0, 1]", p[i], i);
    idx.push_back(i);
  }
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  return idx;
}

}  // namespace

std::vector<double> holm(std::span<const double> p) {
  std::vector<double> out(p.size(), kNaN);
  const auto idx = defined_order(p);
  const double m = static_cast<double>(idx.size());
  double running = 0.0;
  for (std::size_t r = 0; r < idx.size(); ++r) {
    const double adj = std::min(1.0, (m - static_cast<double>(r)) * p[idx[r]]);
    running = std::max(running, adj);  // step-down: enforce monotonicity
    out[idx[r]] = running;
  }
  return out;
}

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  std::vector<double> out(p.size(), kNaN);
  const auto idx = defined_order(p);
  const double m = static_cast<double>(idx.size());
  double running = 1.0;
  for (std::size_t r = idx.size(); r-- > 0;) {
    const double adj = p[idx[r]] * m / static_cast<double>(r + 1);
    running = std::min(running, adj);  // step-up: cumulative minimum from the largest p
    out[idx[r]] = std::min(1.0, running);
  }
  return out;
}

}  // namespace vlbias::stats
