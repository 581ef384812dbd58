#pragma once
// AbsDiff (src/metrics/absdiff.cpp; docs/methods.md#absdiff, Hausladen et al. section 2.3):
// how much one factor of an image (age, smiling, lighting, pose, gender, race,
// "seed" = pseudo-identity) moves its social perception, holding the others fixed.
//
// For factor X, a valid pair is two images equal on every other listed factor and
// different on X: for a categorical factor its values differ, for an ordinal one
// |x1 - x2| > threshold (1.1 for age and smiling in the paper). The value of a pair
// for dimension D is AbsDiff = |Delta cos(i1, D) - Delta cos(i2, D)|.
//
// Sampling: the valid pairs (unordered, i1 != i2) are counted exactly. When there
// are at most `pairs` of them every one is used once ("enumerated"); otherwise
// `pairs` pairs are drawn uniformly from all valid pairs, with replacement, stream
// derive_seed(seed, factor_index * dims + dimension) per (factor, dimension), so
// each dimension gets its own draw (the paper repeats 1,000 draws per dimension).
// Rows with a missing cell in any factor column are left out and counted.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

struct AbsDiffFactor {
  std::string column;
  bool ordinal = false;  // Numeric column, pairs must differ by more than threshold
  double threshold = 0.0;
};

struct FactorPairs {
  std::vector<std::uint32_t> first, second;  // table rows of each sampled pair
  std::uint64_t valid_pairs = 0;             // number of valid unordered pairs
  bool enumerated = false;                   // all valid pairs used once
};

// Draws the pairs for factors[factor_index]. `pairs` > 0. InputError: unknown
// column, an ordinal factor on a String column, a negative or non-finite threshold.
// No valid pair gives empty vectors (callers report it).
FactorPairs sample_factor_pairs(const Table& table, const std::vector<AbsDiffFactor>& factors,
                                std::size_t factor_index, std::size_t pairs, std::uint64_t seed);

struct AbsDiffOptions {
  std::vector<AbsDiffFactor> factors;
  std::size_t pairs = 1000;  // per factor and dimension
  std::uint64_t seed = 0;
};

struct AbsDiffCell {
  std::string factor;
  std::string dimension;  // "" for the pooled cell (all dimensions together)
  std::size_t n = 0;      // AbsDiff values
  std::uint64_t valid_pairs = 0;
  bool enumerated = false;
  double mean = stats::kNaN, sd = stats::kNaN, median = stats::kNaN;
  double q25 = stats::kNaN, q75 = stats::kNaN;
  // Tukey's whiskers (the box plots of paper 001 Fig. 2): the most extreme values within
  // [q25 - 1.5 IQR, q75 + 1.5 IQR].
  double whisker_low = stats::kNaN, whisker_high = stats::kNaN;
};

struct AbsDiffComparison {
  std::string dimension;  // "" = pooled over dimensions
  std::string factor_a, factor_b;
  stats::TestResult result;                         // two-sided Mann-Whitney U, a vs b
  double p_holm = stats::kNaN, p_bh = stats::kNaN;  // over every comparison in the report
};

struct AbsDiffReport {
  std::vector<AbsDiffCell> cells;              // per factor: each dimension, then the pooled cell
  std::vector<AbsDiffComparison> comparisons;  // per dimension then pooled; factor pairs in order
  std::size_t rows_missing = 0;
  std::vector<std::string> notes;  // e.g. a factor without valid pairs
};

// `values` holds Delta cos, images x dimensions row-major (table row i = image i).
// Per dimension, every pair of factors is compared with the two-sided Mann-Whitney
// U test on their AbsDiff values; pooled, the values of every dimension together
// (the paper's 8,000 per factor). InputError when values.size() != rows * dims.
AbsDiffReport absdiff_analysis(const Table& table, const std::vector<double>& values,
                               const std::vector<std::string>& dimensions,
                               const AbsDiffOptions& options);

}  // namespace vlbias
