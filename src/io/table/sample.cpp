// Stratified sampling (sample.h) with numpy's generator (numpy_random.h).
#include "vlbias/io/table/sample.h"

#include <algorithm>
#include <cmath>

#include "vlbias/core/error.h"
#include "vlbias/core/numpy_random.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/table/row_filter.h"

namespace vlbias {
namespace {

constexpr std::size_t kMaxDrawsPerCell = 100'000'000;

void check_options(const SampleOptions& o) {
  VLBIAS_CHECK(o.n.has_value() != o.frac.has_value(), UsageError,
               "sample: give exactly one of --n (rows per cell) and --frac (fraction per cell)");
  // Rows drawn with replacement are held in memory: a bound instead of an allocation failure.
  VLBIAS_CHECK(!o.replace || !o.n || *o.n <= kMaxDrawsPerCell, UsageError,
               "sample: --n is {}; with --replace at most {} rows per cell", *o.n,
               kMaxDrawsPerCell);
  if (o.frac) {
    VLBIAS_CHECK(std::isfinite(*o.frac) && *o.frac > 0, UsageError,
                 "sample: --frac is {}; expected a fraction above 0", *o.frac);
    VLBIAS_CHECK(o.replace || *o.frac <= 1, UsageError,
                 "sample: --frac is {}; above 1 needs --replace (rows drawn more than once)",
                 *o.frac);
  }
}

// Rows wanted from a cell of `available` rows. Python's round() (half to even), as pandas'
// groupby.sample(frac=...) computes it.
std::size_t target_of(const SampleOptions& o, std::size_t available) {
  if (o.n) return *o.n;
  const double want = *o.frac * static_cast<double>(available);
  VLBIAS_CHECK(want <= static_cast<double>(kMaxDrawsPerCell), UsageError,
               "sample: --frac {} of a cell of {} rows is more than {} rows", *o.frac, available,
               kMaxDrawsPerCell);
  const double low = std::floor(want);
  const double diff = want - low;
  double r = diff > 0.5 ? low + 1 : low;
  if (diff == 0.5) r = std::fmod(low, 2.0) == 0 ? low : low + 1;
  return static_cast<std::size_t>(r);
}

}  // namespace

const char* to_string(SampleCell::Status status) {
  switch (status) {
    case SampleCell::Status::Full:
      return "full";
    case SampleCell::Status::Short:
      return "short";
    case SampleCell::Status::Dropped:
      return "dropped";
    case SampleCell::Status::Empty:
      return "empty";
  }
  return "?";
}

SampleResult stratified_sample(const Table& table, const SampleOptions& o) {
  check_options(o);
  SampleResult r;
  r.rows_in_table = table.rows;
  std::vector<bool> mask;
  if (!o.where.empty()) mask = RowFilter::parse(o.where, o.where_origin).evaluate(table);
  r.rows_passing_filter =
      mask.empty() ? table.rows
                   : static_cast<std::size_t>(std::count(mask.begin(), mask.end(), true));
  const Grouping g = group_by(table, o.by, mask);
  r.rows_missing_key = g.rows_with_missing_key;
  // Each cell's rows in table order: the population numpy's choice indexes.
  std::vector<std::vector<std::size_t>> members(g.size());
  for (std::size_t g_i = 0; g_i < g.size(); ++g_i) members[g_i].reserve(g.sizes[g_i]);
  for (std::size_t row = 0; row < table.rows; ++row) {
    if (g.group_of_row[row] != Grouping::kNoGroup) members[g.group_of_row[row]].push_back(row);
  }
  NumpyGenerator rng(o.seed);
  for (std::size_t c = 0; c < g.size(); ++c) {
    SampleCell cell;
    cell.key = g.keys[c];
    cell.available = members[c].size();
    cell.target = target_of(o, cell.available);
    if (cell.available < o.per_cell_min) {
      cell.status = SampleCell::Status::Dropped;
      ++r.dropped_cells;
      r.cells.push_back(std::move(cell));
      continue;
    }
    const auto m = static_cast<std::int64_t>(cell.available);
    std::vector<std::int64_t> idx;
    if (o.replace) {
      idx = rng.choice_with_replacement(m, static_cast<std::int64_t>(cell.target));
    } else {
      const std::size_t k = std::min(cell.target, cell.available);
      if (k < cell.target) {
        cell.status = SampleCell::Status::Short;
        ++r.short_cells;
      }
      idx = rng.choice_without_replacement(m, static_cast<std::int64_t>(k));
    }
    for (const std::int64_t i : idx) r.rows.push_back(members[c][static_cast<std::size_t>(i)]);
    cell.drawn = idx.size();
    r.cells.push_back(std::move(cell));
  }
  for (const auto& key : g.empty_cells) {
    SampleCell cell;
    cell.key = key;
    cell.target = target_of(o, 0);
    cell.status = o.per_cell_min > 0 ? SampleCell::Status::Dropped : SampleCell::Status::Empty;
    if (cell.status == SampleCell::Status::Dropped) {
      ++r.dropped_cells;
    } else if (cell.target > 0) {
      ++r.short_cells;
    }
    r.cells.push_back(std::move(cell));
  }
  std::sort(r.rows.begin(), r.rows.end());
  return r;
}

Table take_rows(const Table& table, std::span<const std::size_t> rows) {
  Table out;
  out.source = table.source;
  out.rows = rows.size();
  out.line_of_row.reserve(rows.size());
  for (const std::size_t row : rows) {
    out.line_of_row.push_back(row < table.line_of_row.size() ? table.line_of_row[row] : row + 2);
  }
  for (const Column& col : table.columns) {
    Column c;
    c.name = col.name;
    c.type = col.type;
    if (col.type == ColumnType::Numeric) {
      c.numbers.reserve(rows.size());
      for (const std::size_t row : rows) c.numbers.push_back(col.numbers[row]);
    } else {
      c.levels = col.levels;
      c.codes.reserve(rows.size());
      for (const std::size_t row : rows) c.codes.push_back(col.codes[row]);
    }
    out.columns.push_back(std::move(c));
  }
  return out;
}

std::vector<std::uint32_t> sample_rows(const std::vector<std::uint32_t>& rows, std::size_t n,
                                       std::uint64_t seed, std::uint64_t stream) {
  Rng rng(seed, stream);
  std::vector<std::uint32_t> out = rows;
  n = std::min(n, out.size());
  for (std::size_t i = 0; i < n; ++i) std::swap(out[i], out[i + rng.uniform_index(out.size() - i)]);
  out.resize(n);
  return out;
}

}  // namespace vlbias
