// Correlation tables over table columns (correlate.h): `vlbias correlate`.
#include "vlbias/stats/correlate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/stats/intervals.h"

namespace vlbias {

namespace {

enum class Cell : std::uint8_t { Number, Missing, NonNumeric };

// One column as numbers, with each cell's state: a String column (some cell is not a number)
// is read cell by cell with the table's rule for numbers, so one stray "n/a" drops its row
// instead of the column.
struct ColumnValues {
  std::vector<double> value;
  std::vector<Cell> state;
};

ColumnValues column_values(const Table& table, const std::string& name) {
  const Column& col = table.column(name);
  ColumnValues out;
  out.value.assign(table.rows, stats::kNaN);
  out.state.assign(table.rows, Cell::Missing);
  if (col.type == ColumnType::Numeric) {
    for (std::size_t i = 0; i < table.rows; ++i) {
      out.value[i] = col.numbers[i];
      if (!std::isnan(col.numbers[i])) out.state[i] = Cell::Number;
    }
    return out;
  }
  std::vector<double> level_value(col.levels.size(), stats::kNaN);
  for (std::size_t l = 0; l < col.levels.size(); ++l) {
    double v = 0;
    if (parse_cell_number(col.levels[l], &v)) level_value[l] = v;
  }
  std::size_t numbers = 0, first_text = table.rows;
  for (std::size_t i = 0; i < table.rows; ++i) {
    const std::uint32_t code = col.codes[i];
    if (code == Column::kMissing) continue;
    out.value[i] = level_value[code];
    out.state[i] = std::isnan(out.value[i]) ? Cell::NonNumeric : Cell::Number;
    numbers += out.state[i] == Cell::Number;
    if (out.state[i] == Cell::NonNumeric && first_text == table.rows) first_text = i;
  }
  VLBIAS_CHECK(numbers > 0, InputError,
               "{}: column '{}' has no numeric cell (line {} holds '{}'); expected numbers to "
               "correlate",
               table.source, name, table.line_of_row[first_text], col.text(first_text));
  return out;
}

bool has_ties(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) != v.end();
}

stats::TestResult coefficient(CorrelationMethod method, std::span<const double> x,
                              std::span<const double> y, stats::Alternative alternative) {
  switch (method) {
    case CorrelationMethod::Spearman:
      return stats::spearman(x, y, alternative);
    case CorrelationMethod::Kendall:
      return stats::kendall_tau(x, y, alternative);
    default:
      return stats::pearson(x, y, alternative);
  }
}

// A two-sided interval at `level` for two-sided tests; for one-sided ones the bound on the
// alternative's side at `level` (the two-sided interval at 2 level - 1) and +-1 on the other.
stats::Interval one_sided(stats::Interval ci, stats::Alternative alternative, double level) {
  ci.level = level;
  if (alternative == stats::Alternative::Greater && !std::isnan(ci.lower)) ci.upper = 1.0;
  if (alternative == stats::Alternative::Less && !std::isnan(ci.upper)) ci.lower = -1.0;
  return ci;
}

void add_interval(CorrelationCell& cell, const std::vector<double>& x, const std::vector<double>& y,
                  const CorrelateOptions& o, std::uint64_t seed) {
  const bool two_sided = o.alternative == stats::Alternative::TwoSided;
  const double level = two_sided ? o.level : 2.0 * o.level - 1.0;
  const double n = static_cast<double>(cell.n);
  if (cell.method == CorrelationMethod::Pearson) {
    cell.interval_method = "fisher_z";
    if (cell.n <= 3) {
      cell.interval.level = o.level;
      cell.interval.note = "n = 3: the Fisher z interval needs more than 3 pairs";
      return;
    }
    cell.interval =
        stats::fisher_z_interval(cell.result.statistic, 1.0 / std::sqrt(n - 3.0), level);
  } else {
    if (o.bootstrap == 0) {
      cell.interval_method = "none";
      cell.interval.level = o.level;
      cell.interval.note = "no bootstrap replicates requested (--bootstrap 0)";
      return;
    }
    cell.interval_method = "percentile_bootstrap";
    const CorrelationMethod method = cell.method;
    auto statistic = [&x, &y, method](std::span<const std::uint32_t> idx) {
      std::vector<double> bx(idx.size()), by(idx.size());
      for (std::size_t i = 0; i < idx.size(); ++i) {
        bx[i] = x[idx[i]];
        by[i] = y[idx[i]];
      }
      return coefficient(method, bx, by, stats::Alternative::TwoSided).statistic;
    };
    cell.interval = stats::bootstrap_ci(cell.n, statistic, o.bootstrap, level, seed);
  }
  cell.interval = one_sided(cell.interval, o.alternative, o.level);
}

void check_options(const CorrelateOptions& o) {
  VLBIAS_CHECK(!o.x.empty() && !o.y.empty(), UsageError,
               "correlate needs at least one --x and one --y column");
  VLBIAS_CHECK(!o.methods.empty(), UsageError, "correlate needs at least one --method");
  VLBIAS_CHECK(o.level > 0.0 && o.level < 1.0, UsageError,
               "--ci must be between 0 and 1 (exclusive), got {}", o.level);
  VLBIAS_CHECK(o.alternative == stats::Alternative::TwoSided || o.level > 0.5, UsageError,
               "--ci {} with a one-sided --alternative: expected a level above 0.5", o.level);
  stats::check_resamples(o.bootstrap, "correlate --bootstrap");
}

// The (x, y) column pairs, without a column paired with itself or a pair seen in the other
// order.
std::vector<std::pair<std::string, std::string>> column_pairs(const CorrelateOptions& o) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& x : o.x) {
    for (const auto& y : o.y) {
      if (x == y) continue;
      const bool seen = std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) {
        return (p.first == x && p.second == y) || (p.first == y && p.second == x);
      });
      if (!seen) pairs.emplace_back(x, y);
    }
  }
  VLBIAS_CHECK(!pairs.empty(), UsageError,
               "--x and --y name no pair of two different columns to correlate");
  return pairs;
}

}  // namespace

const char* to_string(CorrelationMethod method) {
  switch (method) {
    case CorrelationMethod::Spearman:
      return "spearman";
    case CorrelationMethod::Kendall:
      return "kendall";
    default:
      return "pearson";
  }
}

std::vector<CorrelationMethod> parse_correlation_methods(const std::string& text) {
  if (text == "all") {
    return {CorrelationMethod::Pearson, CorrelationMethod::Spearman, CorrelationMethod::Kendall};
  }
  std::vector<CorrelationMethod> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    CorrelationMethod m = CorrelationMethod::Pearson;
    if (name == "spearman") {
      m = CorrelationMethod::Spearman;
    } else if (name == "kendall") {
      m = CorrelationMethod::Kendall;
    } else {
      VLBIAS_CHECK(name == "pearson", UsageError,
                   "unknown correlation method '{}': expected pearson, spearman, kendall or all",
                   name);
    }
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    start = comma + 1;
  }
  return out;
}

stats::Alternative parse_alternative(const std::string& text) {
  if (text == "greater") return stats::Alternative::Greater;
  if (text == "less") return stats::Alternative::Less;
  VLBIAS_CHECK(text == "two-sided", UsageError,
               "unknown alternative '{}': expected two-sided, greater or less", text);
  return stats::Alternative::TwoSided;
}

CorrelateReport correlate_table(const Table& table, const CorrelateOptions& options) {
  check_options(options);
  CorrelateReport report;
  report.options = options;
  report.rows = table.rows;
  const auto pairs = column_pairs(options);
  std::vector<std::string> names;
  for (const auto& [x, y] : pairs) {
    for (const std::string* c : {&x, &y}) {
      if (std::find(names.begin(), names.end(), *c) == names.end()) names.push_back(*c);
    }
  }
  std::vector<ColumnValues> columns;
  for (const auto& name : names) columns.push_back(column_values(table, name));
  auto column_of = [&](const std::string& name) -> const ColumnValues& {
    return columns[std::find(names.begin(), names.end(), name) - names.begin()];
  };

  // Row lists: every row, then each group of the `by` columns.
  std::vector<std::vector<std::string>> group_keys = {{}};
  std::vector<std::vector<std::uint32_t>> group_rows(1);
  for (std::uint32_t i = 0; i < table.rows; ++i) group_rows[0].push_back(i);
  if (!options.by.empty()) {
    const Grouping grouping = group_by(table, options.by);
    report.rows_missing_key = grouping.rows_with_missing_key;
    for (std::size_t g = 0; g < grouping.size(); ++g) group_keys.push_back(grouping.keys[g]);
    group_rows.resize(group_keys.size());
    for (std::uint32_t i = 0; i < table.rows; ++i) {
      const std::uint32_t g = grouping.group_of_row[i];
      if (g != Grouping::kNoGroup) group_rows[g + 1].push_back(i);
    }
  }

  for (const CorrelationMethod method : options.methods) {
    const std::size_t first = report.cells.size();
    for (std::size_t g = 0; g < group_keys.size(); ++g) {
      for (const auto& [xn, yn] : pairs) {
        const ColumnValues& xc = column_of(xn);
        const ColumnValues& yc = column_of(yn);
        CorrelationCell cell;
        cell.group = group_keys[g];
        cell.x = xn;
        cell.y = yn;
        cell.method = method;
        cell.result.test = to_string(method);
        std::vector<double> xs, ys;
        for (const std::uint32_t i : group_rows[g]) {
          if (xc.state[i] == Cell::Number && yc.state[i] == Cell::Number) {
            xs.push_back(xc.value[i]);
            ys.push_back(yc.value[i]);
          } else if (xc.state[i] == Cell::NonNumeric || yc.state[i] == Cell::NonNumeric) {
            ++cell.dropped_non_numeric;
          } else {
            ++cell.dropped_missing;
          }
        }
        cell.n = xs.size();
        cell.interval.level = options.level;
        cell.interval_method = "none";
        if (cell.n < 3) {
          cell.result.note = fmt::format(
              "fewer than 3 complete pairs (n = {}): the correlation is not reported", cell.n);
          report.cells.push_back(std::move(cell));
          continue;
        }
        cell.ties = has_ties(xs) || has_ties(ys);
        cell.result = coefficient(method, xs, ys, options.alternative);
        if (cell.result.note.empty()) {
          add_interval(cell, xs, ys, options, derive_seed(options.seed, report.cells.size()));
        }
        report.cells.push_back(std::move(cell));
      }
    }
    std::vector<double> p;
    for (std::size_t i = first; i < report.cells.size(); ++i)
      p.push_back(report.cells[i].result.p_value);
    const auto holm = stats::holm(p);
    const auto bh = stats::benjamini_hochberg(p);
    for (std::size_t i = first; i < report.cells.size(); ++i) {
      report.cells[i].p_holm = holm[i - first];
      report.cells[i].p_bh = bh[i - first];
    }
  }
  return report;
}

}  // namespace vlbias
