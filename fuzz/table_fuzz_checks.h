#pragma once
// Invariants every table the readers return must hold; a violation aborts so
// libFuzzer reports it. Shared by fuzz_csv and fuzz_jsonl.
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias::fuzz {

inline void check_table(const Table& t) {
  if (t.line_of_row.size() != t.rows) std::abort();
  for (std::size_t r = 1; r < t.rows; ++r) {
    if (t.line_of_row[r] <= t.line_of_row[r - 1]) std::abort();
  }
  std::set<std::string> names;
  for (const Column& c : t.columns) {
    if (c.name.empty() || !names.insert(c.name).second) std::abort();
    if (c.size() != t.rows) std::abort();
    if (c.type == ColumnType::Numeric) {
      if (!c.codes.empty() || !c.levels.empty()) std::abort();
      for (const double v : c.numbers) {
        if (std::isinf(v)) std::abort();
      }
    } else {
      if (!c.numbers.empty()) std::abort();
      // Levels are distinct, non-empty and numbered in order of first appearance.
      if (std::set<std::string>(c.levels.begin(), c.levels.end()).size() != c.levels.size()) {
        std::abort();
      }
      std::uint32_t next = 0;
      for (const std::uint32_t code : c.codes) {
        if (code == Column::kMissing) continue;
        if (code > next || code >= c.levels.size()) std::abort();
        if (code == next) ++next;
      }
      if (next != c.levels.size()) std::abort();
      for (const auto& level : c.levels) {
        if (level.empty()) std::abort();
      }
    }
    // Numeric columns are numbers; String columns are refused with an InputError.
    bool refused = false;
    try {
      (void)t.numeric(c.name, true);
    } catch (const InputError&) {
      refused = true;
    }
    if (refused != (c.type == ColumnType::String)) std::abort();
  }
}

inline void check_grouping(const Table& t) {
  if (t.columns.empty()) return;
  std::vector<std::string> by;
  for (std::size_t c = 0; c < t.columns.size() && c < 3; ++c) by.push_back(t.columns[c].name);
  const Grouping g = group_by(t, by);
  std::size_t total = g.rows_with_missing_key;
  for (const std::size_t n : g.sizes) {
    if (n == 0) std::abort();
    total += n;
  }
  if (total != t.rows || g.group_of_row.size() != t.rows) std::abort();
  std::vector<std::size_t> counted(g.size(), 0);
  for (const std::uint32_t id : g.group_of_row) {
    if (id == Grouping::kNoGroup) continue;
    if (id >= g.size()) std::abort();
    ++counted[id];
  }
  if (counted != g.sizes) std::abort();
  for (const auto& key : g.keys) {
    if (key.size() != by.size()) std::abort();
  }
  for (const auto& cell : g.empty_cells) {
    if (cell.size() != by.size()) std::abort();
  }
}

}  // namespace vlbias::fuzz
