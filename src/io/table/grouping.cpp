// Intersectional grouping.
//
// Each grouping column maps its observed levels to ranks in sorted order; a
// row's key is the mixed-radix number of its ranks, so comparing keys compares
// the rows' level tuples lexicographically. Keys are then renumbered densely in
// increasing order, which gives sorted group ids with no per-row strings.
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>

#include "table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/table/table.h"

namespace vlbias {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
constexpr std::uint32_t kNoGroup32 = Grouping::kNoGroup;
// Cross products of observed levels larger than this are not enumerated.
constexpr std::uint64_t kMaxCombinations = 100000;

// The observed levels of one grouping column, in sorted order.
struct SortedLevels {
  std::vector<std::string> text;
  std::vector<std::uint32_t> rank_of_code;  // String columns
  std::vector<double> values;               // Numeric columns, sorted
};

// Ranks of distinct keys (listed by id) in increasing key order.
template <typename Key>
std::vector<std::uint32_t> ranks_of(const std::vector<Key>& distinct) {
  std::vector<std::pair<Key, std::uint32_t>> sorted(distinct.size());
  for (std::uint32_t id = 0; id < distinct.size(); ++id) sorted[id] = {distinct[id], id};
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint32_t> rank(distinct.size());
  for (std::uint32_t r = 0; r < sorted.size(); ++r) rank[sorted[r].second] = r;
  return rank;
}

bool row_in(const std::vector<bool>& mask, std::size_t row) {
  return mask.empty() || mask[row];
}

SortedLevels string_levels(const Column& col, const std::vector<bool>& mask) {
  std::vector<char> observed(col.levels.size(), 0);
  for (std::size_t row = 0; row < col.codes.size(); ++row) {
    const std::uint32_t code = col.codes[row];
    if (code != Column::kMissing && row_in(mask, row)) observed[code] = 1;
  }
  std::vector<std::uint32_t> order;
  for (std::uint32_t code = 0; code < observed.size(); ++code) {
    if (observed[code]) order.push_back(code);
  }
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return col.levels[a] < col.levels[b]; });
  SortedLevels out;
  out.rank_of_code.assign(col.levels.size(), kNone);
  for (std::uint32_t rank = 0; rank < order.size(); ++rank) {
    out.rank_of_code[order[rank]] = rank;
    out.text.push_back(col.levels[order[rank]]);
  }
  return out;
}

// Numeric columns: `ids[row]` gets the rank of the row's value (kNone when
// missing or masked out).
SortedLevels numeric_levels(const Column& col, const std::vector<bool>& mask,
                            std::vector<std::uint32_t>& ids) {
  U64Index index;
  std::vector<double> distinct;
  ids.assign(col.numbers.size(), kNone);
  for (std::size_t row = 0; row < col.numbers.size(); ++row) {
    const double v = col.numbers[row];
    if (std::isnan(v) || !row_in(mask, row)) continue;
    const std::uint32_t id = index.insert(double_key(v));
    if (id == distinct.size()) distinct.push_back(v == 0.0 ? 0.0 : v);
    ids[row] = id;
  }
  const std::vector<std::uint32_t> rank_of_id = ranks_of(distinct);
  SortedLevels out;
  out.values.resize(distinct.size());
  for (std::uint32_t id = 0; id < distinct.size(); ++id) out.values[rank_of_id[id]] = distinct[id];
  out.text.reserve(out.values.size());
  for (const double v : out.values) out.text.push_back(fmt::format("{}", v));
  for (auto& id : ids) {
    if (id != kNone) id = rank_of_id[id];
  }
  return out;
}

// Folds one column into the row keys (key = key * radix + rank; kNoGroup rows
// are skipped). rank(row) is kNone for a missing cell, which drops the row and
// counts it. When the combined key would not fit 32 bits the keys are
// renumbered, in increasing order, on the way. Returns the new bound on keys.
template <typename Rank>
std::uint64_t fold(std::vector<std::uint32_t>& keys, std::uint64_t bound, std::uint64_t radix,
                   Rank rank, std::size_t& missing) {
  const std::uint64_t space = bound * radix;  // both < 2^32: no overflow
  // Combines each row's key with its rank in this column; `store` maps the
  // combined 64-bit key to the 32-bit key kept for the row.
  auto combine = [&](auto store) {
    for (std::size_t row = 0; row < keys.size(); ++row) {
      if (keys[row] == kNoGroup32) continue;
      const std::uint32_t r = rank(row);
      if (r == kNone) {
        keys[row] = kNoGroup32;
        ++missing;
        continue;
      }
      keys[row] = store(keys[row] * radix + r);
    }
  };
  if (space < kNoGroup32) {
    combine([](std::uint64_t key) { return static_cast<std::uint32_t>(key); });
    return space;
  }
  U64Index index;
  combine([&index](std::uint64_t key) { return index.insert(key); });
  const std::vector<std::uint32_t> rank_of_id = ranks_of(index.keys());
  for (auto& k : keys) {
    if (k != kNoGroup32) k = rank_of_id[k];
  }
  return rank_of_id.size();
}

// Renumbers the keys (< bound) densely in increasing order; returns how many
// distinct keys there are. A bitmap of used keys with running counts gives each
// key's rank when it is at most a few bits per row; sparser keys go through a
// hash index and a sort.
std::uint64_t compress(std::vector<std::uint32_t>& keys, std::uint64_t bound) {
  if (bound <= 16 * static_cast<std::uint64_t>(keys.size()) + (1u << 20)) {
    std::vector<std::uint64_t> used((bound + 63) / 64, 0);
    for (const auto k : keys) {
      if (k != kNoGroup32) used[k >> 6] |= std::uint64_t{1} << (k & 63);
    }
    std::vector<std::uint32_t> before(used.size());  // used keys in earlier words
    std::uint32_t count = 0;
    for (std::size_t w = 0; w < used.size(); ++w) {
      before[w] = count;
      count += static_cast<std::uint32_t>(std::popcount(used[w]));
    }
    for (auto& k : keys) {
      if (k == kNoGroup32) continue;
      const std::uint64_t below = used[k >> 6] & ((std::uint64_t{1} << (k & 63)) - 1);
      k = before[k >> 6] + static_cast<std::uint32_t>(std::popcount(below));
    }
    return count;
  }
  U64Index index;
  for (auto& k : keys) {
    if (k != kNoGroup32) k = index.insert(k);
  }
  const std::vector<std::uint32_t> rank_of_id = ranks_of(index.keys());
  for (auto& k : keys) {
    if (k != kNoGroup32) k = rank_of_id[k];
  }
  return rank_of_id.size();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

// The columns to group by, each named once.
std::vector<const Column*> grouping_columns(const Table& table,
                                            const std::vector<std::string>& columns) {
  std::vector<const Column*> cols;
  std::unordered_set<std::string_view> seen;
  for (const auto& name : columns) {
    cols.push_back(&table.column(name));
    VLBIAS_CHECK(seen.insert(name).second, InputError,
                 "cannot group '{}' by column '{}' twice; expected distinct columns", table.source,
                 name);
  }
  return cols;
}

// Folds every column's level ranks into the row keys (out.group_of_row), then compresses them
// to group ids in key order; returns the number of groups.
std::uint64_t key_rows(const std::vector<const Column*>& cols, const std::vector<bool>& row_mask,
                       std::vector<SortedLevels>& levels, Grouping& out) {
  // The row keys live in group_of_row itself: no wider per-row array is needed.
  std::vector<std::uint32_t>& keys = out.group_of_row;
  for (std::size_t row = 0; row < keys.size(); ++row) {
    keys[row] = row_in(row_mask, row) ? 0 : kNoGroup32;
  }
  std::vector<std::uint32_t> ids;
  std::uint64_t bound = 1;  // every live key is < bound
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const Column& col = *cols[c];
    if (col.type == ColumnType::Numeric) {
      levels[c] = numeric_levels(col, row_mask, ids);
      bound = fold(
          keys, bound, levels[c].text.size(), [&](std::size_t row) { return ids[row]; },
          out.rows_with_missing_key);
    } else {
      levels[c] = string_levels(col, row_mask);
      const auto& rank_of_code = levels[c].rank_of_code;
      bound = fold(
          keys, bound, levels[c].text.size(),
          [&](std::size_t row) {
            const std::uint32_t code = col.codes[row];
            return code == Column::kMissing ? kNone : rank_of_code[code];
          },
          out.rows_with_missing_key);
    }
  }
  std::vector<std::uint32_t>().swap(ids);
  return compress(keys, bound);
}

// Each group's levels, from its first row; with `ranks` non-empty, their ranks too
// (group-major).
void add_group_keys(const std::vector<const Column*>& cols, const std::vector<SortedLevels>& levels,
                    const std::vector<std::size_t>& first_row, std::vector<std::uint32_t>& ranks,
                    Grouping& out) {
  const std::size_t groups = first_row.size(), ncols = cols.size();
  out.keys.resize(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    out.keys[g].reserve(ncols);
    for (std::size_t c = 0; c < ncols; ++c) {
      const Column& col = *cols[c];
      std::uint32_t rank;
      if (col.type == ColumnType::Numeric) {
        const double v = col.numbers[first_row[g]];
        const auto& values = levels[c].values;
        rank = static_cast<std::uint32_t>(std::lower_bound(values.begin(), values.end(), v) -
                                          values.begin());
      } else {
        rank = levels[c].rank_of_code[col.codes[first_row[g]]];
      }
      if (!ranks.empty()) ranks[g * ncols + c] = rank;
      out.keys[g].push_back(levels[c].text[rank]);
    }
  }
}

// Walks the cross product of observed levels in key order beside the (sorted) groups,
// listing the combinations no group has.
void add_empty_cells(const std::vector<SortedLevels>& levels,
                     const std::vector<std::uint32_t>& ranks, std::uint64_t combinations,
                     Grouping& out) {
  const std::size_t groups = out.keys.size(), ncols = levels.size();
  std::vector<std::uint32_t> combo(ncols, 0);
  std::size_t g = 0;
  for (std::uint64_t i = 0; i < combinations; ++i) {
    if (g < groups && std::equal(combo.begin(), combo.end(), ranks.begin() + g * ncols)) {
      ++g;
    } else {
      std::vector<std::string> cell;
      cell.reserve(ncols);
      for (std::size_t c = 0; c < ncols; ++c) cell.push_back(levels[c].text[combo[c]]);
      out.empty_cells.push_back(std::move(cell));
    }
    for (std::size_t c = ncols; c-- > 0;) {
      if (++combo[c] < levels[c].text.size()) break;
      combo[c] = 0;
    }
  }
}

}  // namespace

std::string Grouping::label(std::size_t g) const {
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c > 0) out += ", ";
    out += columns[c];
    out += '=';
    out += keys[g][c];
  }
  return out;
}

Grouping group_by(const Table& table, const std::vector<std::string>& columns,
                  const std::vector<bool>& row_mask) {
  VLBIAS_CHECK(!columns.empty(), InputError,
               "cannot group '{}' by an empty list of columns; expected at least one column",
               table.source);
  VLBIAS_CHECK(row_mask.empty() || row_mask.size() == table.rows, InternalError,
               "group_by on '{}': row mask has {} entries for {} rows", table.source,
               row_mask.size(), table.rows);
  const std::vector<const Column*> cols = grouping_columns(table, columns);

  const std::size_t rows = table.rows;
  VLBIAS_CHECK(rows < kNoGroup32, InputError, "'{}' has {} rows, too many to group", table.source,
               rows);
  Grouping out;
  out.columns = columns;
  out.group_of_row.resize(rows);
  std::vector<SortedLevels> levels(cols.size());
  const std::uint64_t groups = key_rows(cols, row_mask, levels, out);

  // Group sizes; the first row of each group gives its levels.
  out.sizes.assign(groups, 0);
  std::vector<std::size_t> first_row(groups, rows);
  for (std::size_t row = 0; row < rows; ++row) {
    const std::uint32_t g = out.group_of_row[row];
    if (g == kNoGroup32) continue;
    if (out.sizes[g]++ == 0) first_row[g] = row;
  }

  // Empty intersectional cells come from the cross product of observed levels;
  // it is walked only when small enough to list.
  std::uint64_t combinations = 1;
  bool too_many = false;
  for (const auto& l : levels) {
    const std::uint64_t n = l.text.size();
    if (n != 0 && combinations > kMaxCombinations / n) too_many = true;
    combinations = too_many ? kMaxCombinations + 1 : combinations * n;
  }
  // (A column with no observed level leaves no rows and no cells.)
  const bool list_empty = !too_many && combinations > groups;

  std::vector<std::uint32_t> ranks(list_empty ? groups * cols.size() : 0);
  add_group_keys(cols, levels, first_row, ranks, out);
  if (too_many) {
    double product = 1;
    for (const auto& l : levels) product *= static_cast<double>(l.text.size());
    if (product > static_cast<double>(groups)) {
      warn(
          "grouping '{}' by {}: the {:.0f} combinations of observed levels exceed {}; "
          "{:.0f} empty cells are not listed",
          table.source, joined(columns), product, kMaxCombinations,
          product - static_cast<double>(groups));
    }
  }
  if (list_empty) add_empty_cells(levels, ranks, combinations, out);
  return out;
}

}  // namespace vlbias
