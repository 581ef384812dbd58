#pragma once
// Statistics engine (src/stats). Every function here is checked against scipy /
// numpy reference values written by tools/make_stats_fixtures.py and
// tools/make_resampling_fixtures.py (see tests/stats).
//
// Conventions (METHODS.md): sd uses the n-1 denominator; percentiles are numpy's
// default linear interpolation ("type 7"); sums are accumulated in double;
// Monte Carlo p-values are (1 + #{T* >= T}) / (1 + B).
//
// Degenerate input never crashes and never returns a silent NaN: a result that
// cannot be computed has NaN fields *and* a non-empty `note` saying why
// (e.g. "fewer than 2 observations in group 'x'", "zero variance in every group").
// JSON writers emit such NaNs as null next to the note. Inputs containing NaN
// are refused by the callers (tables, matrices) before they reach these functions;
// the functions themselves throw InputError on NaN/inf input.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace vlbias::stats {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- descriptives

struct Summary {
  std::size_t n = 0;
  double mean = kNaN;
  double sd = kNaN;  // n-1 denominator; NaN with a note when n < 2
  double min = kNaN;
  double p25 = kNaN;
  double median = kNaN;
  double p75 = kNaN;
  double max = kNaN;
  std::string note;
};

// Percentile q in [0, 100] of already-sorted values, numpy's default (type 7)
// linear interpolation. `sorted` must be non-empty and ascending.
double percentile_sorted(std::span<const double> sorted, double q);
// Percentiles of unsorted values (copies and sorts once). Empty x -> NaNs.
std::vector<double> percentiles(std::span<const double> x, std::span<const double> qs);
// n, mean, sd, min, quartiles, max. Empty x -> n = 0, NaNs and a note.
Summary describe(std::span<const double> x);
double mean(std::span<const double> x);
// Sample variance (n-1). NaN when n < 2.
double variance(std::span<const double> x);

// ------------------------------------------------------------------- bootstrap

struct Interval {
  double lower = kNaN;
  double upper = kNaN;
  double level = 0.95;           // e.g. 0.95
  std::size_t resamples = 0;     // B
  std::uint64_t seed = 0;
  std::size_t undefined = 0;     // replicates whose statistic was NaN (dropped)
  std::string note;
};

// Percentile bootstrap CI. Resamples `n_units` independent units with
// replacement B times; replicate b draws from Rng(seed, b), so the result does
// not depend on the thread count. `statistic` receives the resampled unit
// indices (length n_units) and must be thread-safe. The interval is the type-7
// (1-level)/2 and (1+level)/2 percentiles of the defined replicates.
Interval bootstrap_ci(std::size_t n_units,
                      const std::function<double(std::span<const std::uint32_t>)>& statistic,
                      std::size_t resamples, double level, std::uint64_t seed);
// Bootstrap CI of the mean of x (units = elements).
Interval bootstrap_mean_ci(std::span<const double> x, std::size_t resamples, double level,
                           std::uint64_t seed);

// ---------------------------------------------------------- resampling tests

enum class Alternative { TwoSided, Greater, Less };
const char* to_string(Alternative a);

struct ResamplingResult {
  double observed = kNaN;
  double p_value = kNaN;          // (1 + exceed) / (1 + resamples)
  std::size_t resamples = 0;      // B
  std::size_t exceed = 0;         // #{T* at least as extreme as T}
  std::uint64_t seed = 0;
  Alternative alternative = Alternative::TwoSided;
  std::string note;
};

// Generic permutation test. `labels` (length n) is the observed assignment of
// items to groups; each replicate b shuffles a copy of it (Fisher-Yates with
// Rng(seed, b)) and calls statistic(permuted_labels). Two-sided compares
// |T*| >= |T|; "at least as extreme" uses a relative tolerance of 1e-12 so that
// replicates equal to T up to rounding count. `statistic` must be thread-safe.
ResamplingResult permutation_test(
    std::span<const std::uint32_t> labels,
    const std::function<double(std::span<const std::uint32_t>)>& statistic,
    std::size_t resamples, std::uint64_t seed, Alternative alternative = Alternative::TwoSided);

// Permutation test of the difference in means between group 0 and group 1
// (labels 0/1), T = mean(x | 0) - mean(x | 1). Specialised fast path of
// permutation_test with identical results for the same seed.
ResamplingResult permutation_mean_difference(std::span<const double> values,
                                             std::span<const std::uint32_t> labels,
                                             std::size_t resamples, std::uint64_t seed,
                                             Alternative alternative = Alternative::TwoSided);

// Sign-flip test: each replicate multiplies every value by an independent random
// sign (Rng(seed, b)) and computes statistic(flipped). Default statistic (empty
// function): the mean. `statistic` must be thread-safe.
ResamplingResult sign_flip_test(std::span<const double> values,
                                const std::function<double(std::span<const double>)>& statistic,
                                std::size_t resamples, std::uint64_t seed,
                                Alternative alternative = Alternative::TwoSided);

// ----------------------------------------------------------- classical tests

// Values split into k groups: values[i] belongs to group[i] in [0, k).
struct GroupedValues {
  std::span<const double> values;
  std::span<const std::uint32_t> group;
  std::size_t k = 0;
};

struct TestResult {
  std::string test;            // "anova", "welch", "student", "paired_t", "mannwhitney",
                               // "kruskal", "pearson", "spearman"
  double statistic = kNaN;     // F, t, U (of the first sample), H, r or rho
  std::vector<double> df;      // anova [between, within]; t [df]; kruskal [k-1]; r/rho [n-2]; MWU []
  double p_value = kNaN;       // two-sided
  double effect_size = kNaN;
  std::string effect_name;     // "eta_squared", "cohens_d", "cohens_d_av", "cohens_dz",
                               // "rank_biserial", "epsilon_squared", "r", "rho"
  std::string method;          // e.g. "exact" / "asymptotic" for Mann-Whitney
  std::string note;            // non-empty when some field is undefined, saying why
};

// One-way ANOVA with unequal n: F = MS_between / MS_within, df = [k-1, N-k],
// eta squared = SS_between / SS_total. Matches scipy.stats.f_oneway.
TestResult one_way_anova(const GroupedValues& data);
TestResult one_way_anova(const std::vector<std::span<const double>>& groups);

// Two-sample t tests (scipy.stats.ttest_ind, equal_var true/false), a minus b.
// Student: Cohen's d with the pooled sd. Welch: d_av = diff / sqrt((s_a^2 + s_b^2)/2).
TestResult student_t(std::span<const double> a, std::span<const double> b);
TestResult welch_t(std::span<const double> a, std::span<const double> b);
// Paired t (scipy.stats.ttest_rel) on a - b; Cohen's d_z = mean(diff) / sd(diff).
TestResult paired_t(std::span<const double> a, std::span<const double> b);

// Mann-Whitney U, two-sided, as scipy.stats.mannwhitneyu(method="auto",
// use_continuity=True) in scipy 1.10: exact null distribution when n_a <= 8 or
// n_b <= 8 and there are no ties, else the normal approximation with tie and
// continuity correction; `method` says which. statistic = U of sample a. Rank-biserial
// r = 2 U_a / (n_a n_b) - 1 (positive when a tends to be larger).
TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// Kruskal-Wallis H with tie correction (scipy.stats.kruskal), df = [k-1];
// epsilon squared = H / (N - 1).
TestResult kruskal_wallis(const GroupedValues& data);
TestResult kruskal_wallis(const std::vector<std::span<const double>>& groups);

// Pearson r with the two-sided p of scipy.stats.pearsonr; Spearman rho (average
// ranks for ties) with scipy.stats.spearmanr's t-distribution p.
TestResult pearson(std::span<const double> x, std::span<const double> y);
TestResult spearman(std::span<const double> x, std::span<const double> y);

// Average ranks (1-based, ties get the mean rank), as scipy.stats.rankdata.
std::vector<double> rank_average(std::span<const double> x);

// --------------------------------------------------------- multiple testing

// Holm step-down and Benjamini-Hochberg step-up adjusted p-values, in input
// order, monotone and capped at 1. NaN entries stay NaN and are not counted in m.
std::vector<double> holm(std::span<const double> p);
std::vector<double> benjamini_hochberg(std::span<const double> p);

}  // namespace vlbias::stats
