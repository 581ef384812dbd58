#pragma once
// Correlation tables over a table's columns (src/stats/correlate.cpp): the engine behind
// `vlbias correlate` (docs/methods.md#correlation-tables). For every (x, y) column pair, every
// requested coefficient and every level of the `by` columns plus all rows together: n, the
// coefficient, its p-value (scipy 1.10 pearsonr / spearmanr / kendalltau), an interval and
// Holm and Benjamini-Hochberg adjusted p-values over each coefficient's table.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

enum class CorrelationMethod { Pearson, Spearman, Kendall };
// "pearson", "spearman", "kendall"; parse_correlation_methods also takes "all" and lists
// ("pearson,kendall"), UsageError otherwise.
const char* to_string(CorrelationMethod method);
std::vector<CorrelationMethod> parse_correlation_methods(const std::string& text);
// "two-sided", "greater", "less"; UsageError otherwise.
stats::Alternative parse_alternative(const std::string& text);

struct CorrelateOptions {
  std::vector<std::string> x;   // columns (each paired with every y column)
  std::vector<std::string> y;   // a pair of one column with itself, or a pair seen already
                                // in the other order, is skipped
  std::vector<std::string> by;  // optional grouping columns (intersectional)
  std::vector<CorrelationMethod> methods = {CorrelationMethod::Pearson};
  stats::Alternative alternative = stats::Alternative::TwoSided;
  double level = 0.95;           // interval level, in (0, 1); above 0.5 when one-sided
  std::size_t bootstrap = 1000;  // Spearman and Kendall interval replicates; 0: no interval
  std::uint64_t seed = 0;
};

struct CorrelationCell {
  std::vector<std::string> group;  // values of the `by` columns; empty: every row
  std::string x, y;
  CorrelationMethod method = CorrelationMethod::Pearson;
  std::size_t n = 0;                    // complete pairs used
  std::size_t dropped_missing = 0;      // rows (of this group) with x or y missing
  std::size_t dropped_non_numeric = 0;  // rows with x or y text that is not a number
  bool ties = false;                    // x or y has tied values among the n pairs
  stats::TestResult result;             // statistic, p_value, method, note
  stats::Interval interval;             // NaN bounds with a note when not formed
  std::string interval_method;          // "fisher_z", "percentile_bootstrap" or "none"
  double p_holm = stats::kNaN;
  double p_bh = stats::kNaN;
};

struct CorrelateReport {
  CorrelateOptions options;
  std::vector<CorrelationCell> cells;  // by method, then overall and each group, then x, y
  std::size_t rows = 0;
  std::size_t rows_missing_key = 0;  // rows with a `by` cell missing (in the overall cells only)
};

// The correlation table. Cells with fewer than 3 complete pairs, or with a constant column,
// have null statistic and p (and no interval) and a note saying why. Intervals: Pearson
// Fisher z, tanh(atanh(r) -+ z / sqrt(n - 3)), as scipy's pearsonr(...).confidence_interval
// (one-sided for a one-sided alternative: [-1, upper] for less, [lower, 1] for greater);
// Spearman and Kendall a percentile bootstrap over the complete pairs with `bootstrap`
// replicates, cell i seeded with derive_seed(seed, i) (the same for any thread count).
// InputError: unknown column, a column without any numeric cell; UsageError: empty x or y,
// level outside (0, 1) (or <= 0.5 one-sided).
CorrelateReport correlate_table(const Table& table, const CorrelateOptions& options);

}  // namespace vlbias
