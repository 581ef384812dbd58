#pragma once
// Internal to vlbias_text: binary searches over the generated tables of
// unicode_tables.h, each sorted by its first field.
#include <algorithm>
#include <iterator>
#include <span>

#include "unicode_tables.h"

namespace vlbias::text_internal::lookup {

inline bool in_ranges(std::span<const tables::Range> ranges, char32_t c) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                             [](char32_t v, const tables::Range& r) { return v < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->last;
}

// The run holding c, or nullptr.
template <typename Run>
const Run* find_run(std::span<const Run> runs, char32_t c) {
  auto it = std::upper_bound(runs.begin(), runs.end(), c,
                             [](char32_t v, const Run& r) { return v < r.first; });
  if (it == runs.begin()) return nullptr;
  const Run& r = *std::prev(it);
  return c <= r.last ? &r : nullptr;
}

}  // namespace vlbias::text_internal::lookup
