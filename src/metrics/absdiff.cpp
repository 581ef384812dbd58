// AbsDiff (docs/methods.md#absdiff; Hausladen et al. section 2.3): valid image pairs per
// factor, |Delta cos(i1, D) - Delta cos(i2, D)|, and Mann-Whitney U between factors.
// See include/vlbias/metrics/absdiff.h for the definitions.
//
// Exact uniform sampling without rejection: for factor X the rows are split into
// strata that agree on every other factor, and each stratum is sorted by X (ties
// by row index). The valid partners of sorted position p are then a suffix of its
// stratum, positions [lo(p), end): for a categorical X everything after p's run of
// equal values, for an ordinal X every q with x_q - x_p > threshold (lo(p) moves
// forward with p). count(p) = end - lo(p); the prefix sums of the counts number the
// valid pairs 0 .. total-1, and pair r is found by binary search.
#include "vlbias/metrics/absdiff.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>
#include <utility>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"

namespace vlbias {

namespace {

// Checks every factor (all of them shape the strata) and returns its column.
std::vector<const Column*> factor_columns(const Table& table,
                                          const std::vector<AbsDiffFactor>& factors) {
  VLBIAS_CHECK(!factors.empty(), UsageError,
               "AbsDiff on '{}' needs at least one factor; none was given.", table.source);
  std::vector<const Column*> cols;
  std::unordered_set<std::string> seen;
  for (const AbsDiffFactor& f : factors) {
    const Column& col = table.column(f.column);  // InputError naming the columns that exist
    VLBIAS_CHECK(seen.insert(f.column).second, InputError,
                 "AbsDiff on '{}': factor column '{}' is listed twice; expected each factor once.",
                 table.source, f.column);
    if (f.ordinal) {
      VLBIAS_CHECK(col.type == ColumnType::Numeric, InputError,
                   "AbsDiff on '{}': ordinal factor '{}' is a text column; an ordinal factor "
                   "needs numbers (use it as a categorical factor instead).",
                   table.source, f.column);
      VLBIAS_CHECK(std::isfinite(f.threshold) && f.threshold >= 0.0, InputError,
                   "AbsDiff on '{}': ordinal factor '{}' has threshold {}; expected a finite "
                   "number >= 0.",
                   table.source, f.column, f.threshold);
    }
    cols.push_back(&col);
  }
  return cols;
}

// True for rows whose every factor cell is present.
std::vector<bool> complete_rows(const Table& table, const std::vector<const Column*>& cols) {
  std::vector<bool> mask(table.rows, true);
  for (std::size_t row = 0; row < table.rows; ++row) {
    for (const Column* c : cols) {
      if (c->missing(row)) {
        mask[row] = false;
        break;
      }
    }
  }
  return mask;
}

// The valid pairs of one factor, indexed 0 .. total-1 (see the file comment).
struct PairIndex {
  std::vector<std::uint32_t> order;  // rows, stratum after stratum, each sorted by X
  std::vector<std::size_t> lo;       // first valid partner position of each position
  std::vector<std::size_t> end;      // end of the stratum of each position
  std::vector<std::uint64_t> cum;    // cum[p] = valid pairs of positions < p; size + 1
  std::uint64_t total() const { return cum.back(); }
};

PairIndex build_pair_index(const Table& table, const std::vector<AbsDiffFactor>& factors,
                           std::size_t factor_index) {
  VLBIAS_CHECK(factor_index < factors.size(), InternalError,
               "AbsDiff: factor index {} out of range ({} factors).", factor_index, factors.size());
  const std::vector<const Column*> cols = factor_columns(table, factors);
  const std::vector<bool> mask = complete_rows(table, cols);
  const AbsDiffFactor& factor = factors[factor_index];
  const Column& x = *cols[factor_index];

  // Strata: rows grouped by every other factor (one stratum when X is alone).
  std::vector<std::vector<std::uint32_t>> strata;
  std::vector<std::string> others;
  for (std::size_t f = 0; f < factors.size(); ++f) {
    if (f != factor_index) others.push_back(factors[f].column);
  }
  if (others.empty()) {
    strata.emplace_back();
    for (std::size_t row = 0; row < table.rows; ++row) {
      if (mask[row]) strata.back().push_back(static_cast<std::uint32_t>(row));
    }
  } else {
    const Grouping g = group_by(table, others, mask);
    strata.resize(g.size());
    for (std::size_t row = 0; row < table.rows; ++row) {
      if (g.group_of_row[row] != Grouping::kNoGroup) {
        strata[g.group_of_row[row]].push_back(static_cast<std::uint32_t>(row));
      }
    }
  }

  // Sort key of a row: the number, or the level code of a text column (categorical
  // factors only compare for equality, so any total order of the codes works).
  const bool numeric = x.type == ColumnType::Numeric;
  const auto key = [&x, numeric](std::uint32_t row) {
    return numeric ? x.numbers[row] : static_cast<double>(x.codes[row]);
  };
  PairIndex idx;
  idx.order.reserve(table.rows);
  for (auto& s : strata) {
    std::sort(s.begin(), s.end(), [&key](std::uint32_t a, std::uint32_t b) {
      const double ka = key(a), kb = key(b);
      return ka < kb || (ka == kb && a < b);
    });
    const std::size_t begin = idx.order.size();
    idx.order.insert(idx.order.end(), s.begin(), s.end());
    const std::size_t stop = idx.order.size();
    std::size_t q = begin;
    for (std::size_t p = begin; p < stop; ++p) {
      const double kp = key(idx.order[p]);
      if (q < p + 1) q = p + 1;
      if (factor.ordinal) {
        // Ordinal: |x_q - x_p| > threshold, strictly (x_q >= x_p after sorting).
        while (q < stop && !(key(idx.order[q]) - kp > factor.threshold)) ++q;
      } else {
        // Categorical: the values differ, i.e. q is past p's run of equal values.
        while (q < stop && key(idx.order[q]) == kp) ++q;
      }
      idx.lo.push_back(q);
      idx.end.push_back(stop);
    }
  }
  idx.cum.assign(idx.order.size() + 1, 0);
  for (std::size_t p = 0; p < idx.order.size(); ++p) {
    idx.cum[p + 1] = idx.cum[p] + static_cast<std::uint64_t>(idx.end[p] - idx.lo[p]);
  }
  return idx;
}

FactorPairs draw_pairs(const PairIndex& idx, std::size_t pairs, std::uint64_t seed) {
  FactorPairs out;
  out.valid_pairs = idx.total();
  if (out.valid_pairs == 0) return out;  // no valid pair: empty, not "enumerated"
  if (out.valid_pairs <= pairs) {
    out.enumerated = true;
    out.first.reserve(out.valid_pairs);
    out.second.reserve(out.valid_pairs);
    for (std::size_t p = 0; p < idx.order.size(); ++p) {
      for (std::size_t q = idx.lo[p]; q < idx.end[p]; ++q) {
        out.first.push_back(idx.order[p]);
        out.second.push_back(idx.order[q]);
      }
    }
    return out;
  }
  Rng rng(seed);
  out.first.reserve(pairs);
  out.second.reserve(pairs);
  for (std::size_t i = 0; i < pairs; ++i) {
    const std::uint64_t r = rng.uniform_index(out.valid_pairs);
    // The position p with cum[p] <= r < cum[p + 1]; its count is > 0.
    const auto it = std::upper_bound(idx.cum.begin(), idx.cum.end(), r);
    const auto p = static_cast<std::size_t>(it - idx.cum.begin()) - 1;
    const auto q = idx.lo[p] + static_cast<std::size_t>(r - idx.cum[p]);
    out.first.push_back(idx.order[p]);
    out.second.push_back(idx.order[q]);
  }
  return out;
}

AbsDiffCell make_cell(const std::string& factor, const std::string& dimension,
                      const FactorPairs& fp, const std::vector<double>& v) {
  AbsDiffCell c;
  c.factor = factor;
  c.dimension = dimension;
  c.n = v.size();
  c.valid_pairs = fp.valid_pairs;
  c.enumerated = fp.enumerated;
  if (!v.empty()) {
    const stats::Summary s = stats::describe(v);
    c.mean = s.mean;
    c.sd = s.sd;
    c.median = s.median;
    c.q25 = s.p25;
    c.q75 = s.p75;
    const double iqr = c.q75 - c.q25;
    c.whisker_low = c.q75;
    c.whisker_high = c.q25;
    for (double x : v) {
      if (x >= c.q25 - 1.5 * iqr) c.whisker_low = std::min(c.whisker_low, x);
      if (x <= c.q75 + 1.5 * iqr) c.whisker_high = std::max(c.whisker_high, x);
    }
  }
  return c;
}

AbsDiffComparison compare(const std::string& dimension, const std::string& a,
                          const std::vector<double>& va, const std::string& b,
                          const std::vector<double>& vb) {
  AbsDiffComparison c;
  c.dimension = dimension;
  c.factor_a = a;
  c.factor_b = b;
  if (va.empty() || vb.empty()) {
    c.result.test = "mannwhitney";
    c.result.effect_name = "rank_biserial";
    c.result.note = fmt::format("factor '{}' has no valid pairs, so there is nothing to compare",
                                va.empty() ? a : b);
  } else {
    c.result = stats::mann_whitney_u(va, vb);
  }
  return c;
}

}  // namespace

FactorPairs sample_factor_pairs(const Table& table, const std::vector<AbsDiffFactor>& factors,
                                std::size_t factor_index, std::size_t pairs, std::uint64_t seed) {
  VLBIAS_CHECK(pairs > 0, UsageError,
               "AbsDiff on '{}': the number of pairs must be at least 1; got 0.", table.source);
  return draw_pairs(build_pair_index(table, factors, factor_index), pairs, seed);
}

AbsDiffReport absdiff_analysis(const Table& table, const std::vector<double>& values,
                               const std::vector<std::string>& dimensions,
                               const AbsDiffOptions& options) {
  const std::size_t dims = dimensions.size();
  VLBIAS_CHECK(dims > 0, UsageError,
               "AbsDiff on '{}' needs at least one dimension of Delta cos values; none was given.",
               table.source);
  VLBIAS_CHECK(values.size() == table.rows * dims, InputError,
               "AbsDiff on '{}': {} Delta cos values for {} images x {} dimensions; expected {}.",
               table.source, values.size(), table.rows, dims, table.rows * dims);
  VLBIAS_CHECK(options.pairs > 0, UsageError,
               "AbsDiff on '{}': the number of pairs must be at least 1; got 0.", table.source);
  for (std::size_t i = 0; i < table.rows; ++i) {
    for (std::size_t d = 0; d < dims; ++d) {
      VLBIAS_CHECK(std::isfinite(values[i * dims + d]), InputError,
                   "AbsDiff on '{}': image row {}{} has a non-finite Delta cos ({}) in dimension "
                   "'{}'; expected a finite number.",
                   table.source, i,
                   i < table.line_of_row.size() ? fmt::format(" (line {})", table.line_of_row[i])
                                                : std::string(),
                   values[i * dims + d], dimensions[d]);
    }
  }
  const std::vector<AbsDiffFactor>& factors = options.factors;
  const std::vector<const Column*> cols = factor_columns(table, factors);

  AbsDiffReport report;
  const std::vector<bool> mask = complete_rows(table, cols);
  report.rows_missing = static_cast<std::size_t>(std::count(mask.begin(), mask.end(), false));
  if (report.rows_missing > 0) {
    report.notes.push_back(fmt::format(
        "{} row(s) lack a value in some factor column and are left out of every factor's pairs",
        report.rows_missing));
  }

  // abs_diff[f][d]: the AbsDiff values of factor f in dimension d; d = dims is pooled.
  std::vector<std::vector<std::vector<double>>> abs_diff(factors.size());
  for (std::size_t f = 0; f < factors.size(); ++f) {
    const std::string& name = factors[f].column;
    const PairIndex idx = build_pair_index(table, factors, f);
    if (idx.total() == 0) {
      report.notes.push_back(fmt::format(
          "factor '{}' has no valid pair (two images equal on every other factor and {} on "
          "'{}'); its cells have n = 0",
          name,
          factors[f].ordinal ? fmt::format("differing by more than {}", factors[f].threshold)
                             : std::string("different"),
          name));
    }
    abs_diff[f].resize(dims + 1);
    std::vector<double>& pooled = abs_diff[f][dims];
    FactorPairs last;
    for (std::size_t d = 0; d < dims; ++d) {
      // One stream per (factor, dimension): derive_seed(seed, f * dims + d).
      FactorPairs fp = draw_pairs(idx, options.pairs, derive_seed(options.seed, f * dims + d));
      std::vector<double>& v = abs_diff[f][d];
      v.reserve(fp.first.size());
      // AbsDiff = |Delta cos(i1, D) - Delta cos(i2, D)| (Hausladen et al. section 2.3).
      for (std::size_t k = 0; k < fp.first.size(); ++k) {
        v.push_back(std::fabs(values[fp.first[k] * dims + d] - values[fp.second[k] * dims + d]));
      }
      pooled.insert(pooled.end(), v.begin(), v.end());
      report.cells.push_back(make_cell(name, dimensions[d], fp, v));
      last = std::move(fp);  // same valid_pairs / enumerated in every dimension
    }
    report.cells.push_back(make_cell(name, "", last, pooled));
  }

  // Per dimension, then pooled; factor pairs a < b in factor order.
  for (std::size_t d = 0; d <= dims; ++d) {
    const std::string dim = d < dims ? dimensions[d] : std::string();
    for (std::size_t a = 0; a < factors.size(); ++a) {
      for (std::size_t b = a + 1; b < factors.size(); ++b) {
        report.comparisons.push_back(
            compare(dim, factors[a].column, abs_diff[a][d], factors[b].column, abs_diff[b][d]));
      }
    }
  }
  std::vector<double> p;
  p.reserve(report.comparisons.size());
  for (const AbsDiffComparison& c : report.comparisons) p.push_back(c.result.p_value);
  const std::vector<double> holm = stats::holm(p);
  const std::vector<double> bh = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < report.comparisons.size(); ++i) {
    report.comparisons[i].p_holm = holm[i];
    report.comparisons[i].p_bh = bh[i];
  }
  return report;
}

}  // namespace vlbias
