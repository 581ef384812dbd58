#pragma once
// Stratified sampling of table rows (`vlbias sample`; docs/specs.md#sampling): n rows, or a
// fraction, per cell of the `by` columns, among the rows a row filter keeps, drawn exactly as
// numpy/pandas draw them:
//
//   rng = np.random.default_rng(seed)
//   for each cell in key order (pandas' groupby(by, sort=True) order):
//       idx = rng.choice(available, size=target, replace=replace)
//
// so `df[mask].groupby(by).sample(n=target, random_state=np.random.default_rng(seed))` picks
// the same rows (tools/make_sample_fixtures.py checks both). `available` counts the cell's
// rows in table order; cells dropped by per_cell_min and empty cells draw nothing and
// consume no random numbers. Single-threaded and independent of --threads.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vlbias/io/table/table.h"

namespace vlbias {

struct SampleOptions {
  std::vector<std::string> by;   // one or more columns
  std::optional<std::size_t> n;  // rows per cell; exactly one of n and frac
  std::optional<double> frac;    // per cell: round-half-even(frac x available) rows
  std::string where;             // row filter (row_filter.h); empty: every row
  std::string where_origin = "--where";
  bool replace = false;          // draw with replacement (rows may repeat)
  std::size_t per_cell_min = 0;  // cells with fewer available rows are dropped
  std::uint64_t seed = 0;
};

struct SampleCell {
  enum class Status {
    Full,     // drew its target
    Short,    // fewer rows than the target without replacement: drew all of them
    Dropped,  // fewer than per_cell_min rows: drew none
    Empty,    // a combination of observed levels with no row (Grouping::empty_cells)
  };
  std::vector<std::string> key;  // one text per `by` column
  std::size_t available = 0;
  std::size_t target = 0;
  std::size_t drawn = 0;
  Status status = Status::Full;
};

struct SampleResult {
  // Drawn row indices in table order (a row drawn k times under replacement appears k times).
  std::vector<std::size_t> rows;
  // Non-empty cells in key order, then the empty cells in key order.
  std::vector<SampleCell> cells;
  std::size_t rows_in_table = 0;
  std::size_t rows_passing_filter = 0;  // all rows when there is no filter
  std::size_t rows_missing_key = 0;     // passing rows with a missing `by` cell (never drawn)
  std::size_t short_cells = 0;          // Short, and Empty cells with a target above 0
  std::size_t dropped_cells = 0;
};

// InputError for unknown columns or a filter error; UsageError for bad options (neither or
// both of n and frac, frac outside (0, 1] without replacement, frac <= 0, more than 10^8
// rows per cell with replacement). Short cells are
// not an error here: they are flagged in the result (the CLI refuses them unless
// --allow-short).
SampleResult stratified_sample(const Table& table, const SampleOptions& options);

const char* to_string(SampleCell::Status status);

// The table holding `rows` of `table` in that order (all columns, levels kept).
Table take_rows(const Table& table, std::span<const std::size_t> rows);

// Draws min(n, |rows|) of `rows` without replacement: the first n of a forward Fisher-Yates
// shuffle with Rng(seed, stream) (core/rng.h), in draw order. The audits' seeded subsets (the
// geo-diversity sets, the report's exemplar grids).
std::vector<std::uint32_t> sample_rows(const std::vector<std::uint32_t>& rows, std::size_t n,
                                       std::uint64_t seed, std::uint64_t stream = 0);

}  // namespace vlbias
