#pragma once
// Internal building blocks of the classical tests (src/stats/classical_*.cpp,
// correlation.cpp, ranking.cpp): input checks, numerically careful moments, and
// the sort-once ranking engine. Not part of the public API.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vlbias/stats/stats.h"

namespace vlbias::stats_internal {

// The stage's private helpers speak the public statistics vocabulary (TestResult, ...).
using namespace vlbias::stats;  // NOLINT(build/namespaces)

// A TestResult with its test and effect names set (other fields at their defaults).
TestResult new_result(const char* test, const char* effect_name);

// ------------------------------------------------------------------ input checks

// Throws InputError "{what} has a non-finite value ... at position i" for the first
// NaN or +-inf in x.
void require_finite(std::span<const double> x, const std::string& what);
// Throws InputError when x is empty ("{test}: {what} is empty").
void require_nonempty(std::span<const double> x, const char* test, const std::string& what);
// Checks a GroupedValues: values and labels of equal length, k >= 2, every label
// < k and every group non-empty (finiteness is left to the caller, which finds
// it in its own pass). Returns the group sizes.
std::vector<std::size_t> check_grouped(const GroupedValues& data, const char* test);
// Same for a list of samples: at least 2, each non-empty (finiteness is left to
// the caller).
void check_groups(const std::vector<std::span<const double>>& groups, const char* test);

// ----------------------------------------------------------------------- moments

// Count, mean and sum of squared deviations from the mean (m2) of one sample, and
// whether every value equals the first one exactly (scipy's `(a == a[0]).all()`
// constant-input test; -0.0 == 0.0). Sums run over x - first, so the mean is kept
// as first + rel_mean with rel_mean at the precision of the spread of the data,
// not of its magnitude: differences of means of data with a large common offset
// stay exact to the last bits (scipy's f_oneway subtracts the grand mean likewise).
struct Moments {
  std::size_t n = 0;
  double first = 0.0;     // first value of the sample: the shift of every sum
  double rel_mean = 0.0;  // mean - first
  double m2 = 0.0;
  bool constant = true;

  // Sample variance (n - 1 denominator); exactly 0 for a constant sample.
  double variance() const { return constant ? 0.0 : m2 / static_cast<double>(n - 1); }
  // The mean rounded to a double (exactly `first` for a constant sample).
  double mean() const { return constant ? first : first + rel_mean; }
};

// Pairwise combination of two partial results (Chan, Golub & LeVeque 1979).
void merge(Moments& into, const Moments& other);

// Moments of x: blocks of 2048 shifted values x - x[0] are summed twice while in
// cache (mean, then squared deviations with the compensating term of the
// "corrected two-pass" algorithm, Chan, Golub & LeVeque 1983), blocks are combined
// pairwise, and chunks of 2^16 values run on the thread pool. The result depends only on x,
// never on the thread count. Non-finite values throw InputError naming `what`.
Moments sample_moments(std::span<const double> x, const std::string& what);
// Moments of the differences a[i] - b[i] (a and b of equal length).
Moments difference_moments(std::span<const double> a, std::span<const double> b);

// Per-group moments of a GroupedValues in one pass: within blocks of >= 1024 values,
// sums of x - c_g and (x - c_g)^2 with c_g the group's first value in the block
// ("shifted data", Chan, Golub & LeVeque 1983: exact to ~1e-13 because c_g is one
// of the values summed; two interleaved sets of sums, even and odd positions),
// merged pairwise into per-chunk and then global results.
// Validates the GroupedValues itself (lengths, k >= 2, labels < k, no empty group,
// finite values) with check_grouped's messages.
// `test` names the caller in error messages.
std::vector<Moments> grouped_moments(const GroupedValues& data, const char* test);

// Means, sums of squares and the cross product of centred pairs (x, y), computed
// like sample_moments (shifted by the first pair, blockwise two-pass, pairwise merge).
struct CoMoments {
  Moments x;
  Moments y;
  double cxy = 0.0;  // sum (x - mean_x)(y - mean_y)
};
CoMoments co_moments(std::span<const double> x, std::span<const double> y);

// ----------------------------------------------------------------------- ranking

// Result of ranking the pooled observations of k labelled samples with average
// ranks for ties (scipy.stats.rankdata(method="average") of the concatenation).
struct PooledRanks {
  std::vector<std::size_t> n;            // observations per label
  std::vector<std::uint64_t> twice_sum;  // per label: 2 * sum of its ranks (exact)
  double tie_term = 0.0;                 // sum over runs of tied values of t^3 - t
  bool any_ties = false;                 // some run has t > 1
  bool all_tied = false;                 // every value is equal (one run)
  bool finite = true;                    // false: some value was NaN or inf (nothing ranked)
};

// Sorts once (LSD radix sort of order-preserving 64-bit keys with the labels
// alongside, slices on the thread pool) and walks the runs of equal values. Labels
// must be checked (< k); a non-finite value returns early with finite = false. At
// most 2^32 - 2 values in total (InputError beyond).
PooledRanks pooled_ranks(const std::vector<std::span<const double>>& samples);
// `sizes`: the group sizes returned by check_grouped.
PooledRanks pooled_ranks(const GroupedValues& data, const std::vector<std::size_t>& sizes);

// P(U <= k) under the null for the Mann-Whitney U of samples of sizes m and n with
// no ties (the exact distribution of scipy's _mannwhitneyu._MWU); 1 when k >= m n.
double mwu_exact_cdf(std::size_t k, std::size_t m, std::size_t n);

}  // namespace vlbias::stats_internal
