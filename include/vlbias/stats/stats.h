#pragma once
// Statistics engine (src/stats). Every function here is checked against scipy /
// numpy reference values written by tools/make_stats_fixtures.py and
// tools/make_resampling_fixtures.py (see tests/stats).
//
// Conventions (docs/methods.md#conventions): sd uses the n-1 denominator; percentiles are numpy's
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
#include <string_view>
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
// linear interpolation. `sorted` must be non-empty and ascending (not checked:
// O(1) per call). Empty input or q outside [0, 100]: InputError.
double percentile_sorted(std::span<const double> sorted, double q);
// Percentile q of `values` by selection (std::nth_element; O(n), `values` is reordered): the
// same bits as percentile_sorted on the sorted values. Empty values: InputError.
double percentile_select(std::span<double> values, double q);
// Percentiles of unsorted values (copies and sorts once). Empty x -> NaNs.
// Matches numpy.percentile(x, qs) (numpy >= 1.22 "linear", bit for bit).
std::vector<double> percentiles(std::span<const double> x, std::span<const double> qs);
// n, mean, sd, min, quartiles, max. Empty x -> n = 0, NaNs and a note.
Summary describe(std::span<const double> x);
// Arithmetic mean, summed with Neumaier's compensation. Empty x -> NaN (callers that
// report it attach a note; describe() does).
double mean(std::span<const double> x);
// Sample variance (n-1). NaN when n < 2.
double variance(std::span<const double> x);

// ------------------------------------------------------------------- bootstrap

// Most resamples (bootstrap replicates, KID subsets) any procedure draws: each keeps one or a
// few doubles, so 10^6 is 8 MB per statistic and a p-value or interval resolution (1e-6) far
// beyond what a study needs. More is a mistake (`bootstrap: 1e12` allocated 8 TB, "out of
// memory"). Audit specs accept the same range (src/audits/audit_yaml.h).
inline constexpr std::size_t kMaxResamples = 1'000'000;
// UsageError "{what}: {count} resamples requested; expected 0 to 1000000" when count is
// larger. Called by every resampling procedure before it allocates; the CLI checks its
// options against the same bound when it parses them.
void check_resamples(std::size_t count, std::string_view what);

struct Interval {
  double lower = kNaN;
  double upper = kNaN;
  double level = 0.95;        // e.g. 0.95
  std::size_t resamples = 0;  // B
  std::uint64_t seed = 0;
  std::size_t undefined = 0;  // replicates whose statistic was NaN (dropped)
  std::string note;
};

// Percentile bootstrap CI. Resamples `n_units` independent units with
// replacement B times; replicate b draws from Rng(seed, b), so the result does
// not depend on the thread count. `statistic` receives the resampled unit
// indices (length n_units) and must be thread-safe. The interval is the type-7
// (1-level)/2 and (1+level)/2 percentiles of the defined replicates.
// Replicate b's indices are idx[i] = Rng(seed, b).uniform_index(n_units), i = 0, 1, ...
// B = 0, level outside (0, 1) or a missing statistic: InputError. Fewer than 2
// units, or no defined replicate: NaN bounds and a note.
Interval bootstrap_ci(std::size_t n_units,
                      const std::function<double(std::span<const std::uint32_t>)>& statistic,
                      std::size_t resamples, double level, std::uint64_t seed);
// Bootstrap CI of the mean of x (units = elements). Same replicates as bootstrap_ci
// with the statistic "sum of x[idx[i]] left to right, divided by n"; when every value
// is equal the interval is exactly [x0, x0].
Interval bootstrap_mean_ci(std::span<const double> x, std::size_t resamples, double level,
                           std::uint64_t seed);

// The percentile interval of replicate values computed elsewhere (several statistics per
// resample, stratified resampling): exactly the interval bootstrap_ci forms from its own
// replicates (NaN replicates dropped and counted; all NaN or none: NaN bounds and a note).
// `resamples` and `seed` are recorded in the result. level outside (0, 1): InputError.
Interval percentile_interval(std::vector<double> replicates, double level, std::uint64_t seed);

// ---------------------------------------------------------- resampling tests

enum class Alternative { TwoSided, Greater, Less };
const char* to_string(Alternative a);  // "two-sided", "greater", "less"

// How a resampling test draws its null distribution.
//   Auto:       exact enumeration of every distinct relabelling (permutation tests) or
//               sign vector (sign-flip test) when there are at most B of them, else
//               Monte Carlo with B replicates. The default.
//   MonteCarlo: always B random replicates.
enum class ResamplingMethod { Auto, MonteCarlo };
const char* to_string(ResamplingMethod m);  // "auto", "monte_carlo"

struct ResamplingResult {
  double observed = kNaN;
  double p_value = kNaN;      // monte_carlo: (1 + exceed) / (1 + resamples - undefined)
                              // exact:       exceed / resamples (the observed one included)
  std::size_t resamples = 0;  // B, or the number of enumerated relabellings when exact
  std::size_t exceed = 0;     // #{T* at least as extreme as T}
  std::uint64_t seed = 0;
  Alternative alternative = Alternative::TwoSided;
  std::string method;         // "monte_carlo" or "exact"
  std::size_t undefined = 0;  // replicates whose statistic was NaN (dropped, noted)
  std::string note;
};

// Generic permutation test. `labels` (length n) is the observed assignment of
// items to groups; each replicate b draws a relabelling with the same group sizes
// and calls statistic(permuted_labels). Two-sided compares |T*| >= |T|; Greater
// T* >= T; Less T* <= T; "at least as extreme" uses a relative tolerance of 1e-12
// (|T| * 1e-12) so that replicates equal to T up to rounding count. `statistic` must
// be thread-safe; a NaN replicate is dropped and counted in `undefined`.
//
// Relabelling scheme (shared with permutation_mean_difference): the groups are
// ordered by ascending size (ties: ascending label) and the observed label multiset
// is written in that order, L = [g1 x n1, g2 x n2, ..., gk x nk] with gk the largest
// group. Replicate b runs a forward Fisher-Yates shuffle of the item indices
// idx = [0, n) with Rng(seed, b) (step i swaps idx[i] with idx[i + uniform_index(n - i)])
// and gives item idx[i] the label L[i]. Only the first m = n - nk steps matter (the
// remaining positions all get gk), so only those are run: for two groups the
// smaller group is drawn as the first min(n0, n1) positions of the shuffle.
//
// With ResamplingMethod::Auto, when the number of distinct relabellings
// n! / (n1! ... nk!) is at most B they are all enumerated instead (method "exact",
// p = exceed / count; the seed is unused). n = 0 gives NaN and a note; a single
// group gives the one relabelling, p = 1 and a note. B = 0 is an InputError.
ResamplingResult permutation_test(
    std::span<const std::uint32_t> labels,
    const std::function<double(std::span<const std::uint32_t>)>& statistic, std::size_t resamples,
    std::uint64_t seed, Alternative alternative = Alternative::TwoSided);
ResamplingResult permutation_test(
    std::span<const std::uint32_t> labels,
    const std::function<double(std::span<const std::uint32_t>)>& statistic, std::size_t resamples,
    std::uint64_t seed, Alternative alternative, ResamplingMethod method);

// Permutation test of the difference in means between group 0 and group 1
// (labels 0/1), T = mean(x | 0) - mean(x | 1). Specialised fast path of
// permutation_test with identical results for the same seed: the same relabelling
// scheme, and the statistic computed in one pass from the sum S_s of the smaller
// group s (the total S is fixed): T = S0/n0 - (S - S0)/n1 or (S - S1)/n0 - S1/n1.
// Memory: one index buffer (4n bytes) per worker thread. An empty group gives NaN
// and a note; all values equal gives T = 0, p = 1 and a note.
ResamplingResult permutation_mean_difference(std::span<const double> values,
                                             std::span<const std::uint32_t> labels,
                                             std::size_t resamples, std::uint64_t seed,
                                             Alternative alternative = Alternative::TwoSided);
ResamplingResult permutation_mean_difference(std::span<const double> values,
                                             std::span<const std::uint32_t> labels,
                                             std::size_t resamples, std::uint64_t seed,
                                             Alternative alternative, ResamplingMethod method);

// permutation_mean_difference for every column of `values` (n rows x k columns,
// row-major: row i = item i) with the same relabellings: result c equals
// permutation_mean_difference(column c, labels, ...) exactly (the same replicates,
// the same sums in the same order), at the cost of one shuffle per replicate for all
// columns, and with the items' k values read together. Used where several
// statistics share one relabelling (SC-WEAT over several target sets).
// InputError: k = 0 or values.size() != n * k, and as permutation_mean_difference.
std::vector<ResamplingResult> permutation_mean_difference_columns(
    std::span<const double> values, std::size_t columns, std::span<const std::uint32_t> labels,
    std::size_t resamples, std::uint64_t seed, Alternative alternative = Alternative::TwoSided,
    ResamplingMethod method = ResamplingMethod::Auto);

// Sign-flip test: each replicate multiplies every value by an independent random
// sign (Rng(seed, b)) and computes statistic(flipped). Default statistic (empty
// function): the mean, summed left to right and divided by n. `statistic` must be
// thread-safe.
//
// Sign scheme: value i is negated when bit (i mod 64) of the (i / 64)-th next_u64()
// of Rng(seed, b) is set. With ResamplingMethod::Auto and 2^n <= B, all 2^n sign
// vectors are enumerated instead (method "exact", vector v negates value i when bit
// i of v is set, p = exceed / 2^n; the seed is unused). n = 0 gives NaN and a note.
ResamplingResult sign_flip_test(std::span<const double> values,
                                const std::function<double(std::span<const double>)>& statistic,
                                std::size_t resamples, std::uint64_t seed,
                                Alternative alternative = Alternative::TwoSided);
ResamplingResult sign_flip_test(std::span<const double> values,
                                const std::function<double(std::span<const double>)>& statistic,
                                std::size_t resamples, std::uint64_t seed, Alternative alternative,
                                ResamplingMethod method);

// ----------------------------------------------------------- classical tests
//
// Implemented in src/stats/classical_*.cpp, correlation.cpp, ranking.cpp; checked
// against scipy 1.10.1 by tools/make_stats_fixtures.py (1e-9 relative on statistics
// and effect sizes, 1e-6 on p-values, also in the far tail).
//
// Input errors (InputError, one sentence naming the function, sample/group and
// position): an empty sample, or an empty group ("group 2 of 5 has no
// observations": a caller that built the groups must drop or report empty cells
// first); fewer than 2 groups; a label >= k; values and labels of different
// lengths; paired samples or correlation inputs of different lengths; any NaN or
// +-inf value; values so large that their sums of squares overflow a double
// (ANOVA, t tests; the correlations rescale instead); rank tests with 2^32 - 1 or
// more values.
//
// Degenerate data never throws: the undefined fields are NaN and `note` says why.
// Where scipy returns NaN for non-empty input, so does vlbias. Decisions where it
// differs from scipy:
//   * zero variance within every group / both samples / all paired differences,
//     with different means: scipy returns F or t = +-inf and p = 0; vlbias returns
//     statistic = NaN and p = NaN (JSON cannot hold inf) with a note ("zero variance
//     ... the means differ ..."); the effect size is NaN too, except eta squared,
//     which is exactly 1. Constancy is tested exactly (every value == the first),
//     so near-constant data that scipy turns into a huge finite t (its rounded mean
//     of n copies of c need not be c) is also reported this way.
//   * kruskal_wallis with every value identical (scipy raises): NaN and a note.
//   * pearson / spearman with a single pair (scipy: error / NaN): NaN and a note.
//   * mann_whitney_u with every value tied: U = n_a n_b / 2, p = 1 as scipy (z is
//     -0.5 / 0), effect 0, and a note saying so.
// Otherwise as scipy: a t test with a sample of size 1 is NaN (the n-1 variance of
// one value is undefined); ANOVA where every group has one value is NaN; an input
// of a correlation that is constant gives NaN; pearson with n = 2 gives r = +-1 and
// p = 1; spearman with n = 2 gives rho = +-1 and p = NaN (with a note); a perfect
// spearman rho = +-1 with n > 2 gives p = 0.
//
// Numerics: means and sums of squares are corrected two-pass sums of data shifted
// by their first value (so large common offsets cost no digits); results do not
// depend on the thread count. Rank tests sort once (radix sort of 64-bit keys) and
// take ties from the runs; -0.0 and 0.0 are tied, as in scipy.

// Values split into k groups: values[i] belongs to group[i] in [0, k).
struct GroupedValues {
  std::span<const double> values;
  std::span<const std::uint32_t> group;
  std::size_t k = 0;
};

struct TestResult {
  std::string test;         // "anova", "welch", "student", "paired_t", "mannwhitney",
                            // "kruskal", "pearson", "spearman", "kendall", "wilcoxon"
  double statistic = kNaN;  // F, t, U (of the first sample), H, r or rho
  std::vector<double> df;   // anova [between, within]; t [df]; kruskal [k-1]; r/rho [n-2]; MWU []
  double p_value = kNaN;    // for the alternative the test was called with (two-sided default)
  double effect_size = kNaN;
  std::string effect_name;  // "eta_squared", "cohens_d", "cohens_d_av", "cohens_dz",
                            // "rank_biserial", "epsilon_squared", "r", "rho"
  std::string method;       // e.g. "exact" / "asymptotic" for Mann-Whitney
  std::string note;         // non-empty when some field is undefined, saying why
};

// One-way ANOVA with unequal n: F = MS_between / MS_within, df = [k-1, N-k],
// eta squared = SS_between / SS_total. Matches scipy.stats.f_oneway. The two forms
// give the same result up to rounding (the GroupedValues form makes two passes over
// values and labels; the span form one pass per group).
TestResult one_way_anova(const GroupedValues& data);
TestResult one_way_anova(const std::vector<std::span<const double>>& groups);

// Two-sample t tests (scipy.stats.ttest_ind, equal_var true/false), a minus b.
// Student: Cohen's d with the pooled sd. Welch: d_av = diff / sqrt((s_a^2 + s_b^2)/2);
// df = [Welch-Satterthwaite df] (scipy's value 1 when both variances are 0).
// `alternative` as scipy's (_ttest_finish): greater tests mean(a) > mean(b), p = P(T >= t);
// less p = P(T <= t); two-sided 2 P(T >= |t|). The same for paired_t and mann_whitney_u.
TestResult student_t(std::span<const double> a, std::span<const double> b,
                     Alternative alternative = Alternative::TwoSided);
TestResult welch_t(std::span<const double> a, std::span<const double> b,
                   Alternative alternative = Alternative::TwoSided);
// Paired t (scipy.stats.ttest_rel) on a - b; Cohen's d_z = mean(diff) / sd(diff).
TestResult paired_t(std::span<const double> a, std::span<const double> b,
                    Alternative alternative = Alternative::TwoSided);

// How the Wilcoxon signed-rank test treats zero differences (scipy.stats.wilcoxon's
// zero_method): Wilcox drops them; Pratt ranks them with the others and then drops their
// ranks (Cureton's adjusted normal approximation); Zsplit ranks them and splits their rank sum
// between the positive and the negative side.
enum class ZeroMethod { Wilcox, Pratt, Zsplit };
const char* to_string(ZeroMethod m);  // "wilcox", "pratt", "zsplit"

// Wilcoxon signed-rank test of the paired differences d = a - b (src/stats/wilcoxon.cpp), as
// scipy.stats.wilcoxon(a, b, zero_method, correction=False, alternative, method="auto") in
// scipy 1.10, with one documented difference. statistic: min(R+, R-) two-sided, R+ (the rank
// sum of the positive differences) one-sided. method "exact" (the null distribution of R+,
// 2^n equally likely sign vectors, counted by dynamic programming) when n <= 50 and no
// difference is zero or tied with another in |d|; otherwise "asymptotic":
//   z = (T - mu) / se, mu = n'(n'+1)/4, se^2 = [n'(n'+1)(2n'+1) - sum_ties t(t^2-1)/2] / 24
// over the n' ranked differences (Pratt: minus the zeros' terms, Cureton 1967), without
// continuity correction. The difference: scipy 1.10's "auto" keeps the exact distribution
// when |d| has ties (it truncates a half-integer R+ and reads the untied table), which is not
// the null distribution of tied ranks; vlbias uses the tie-corrected normal approximation
// there (scipy's method="approx"). Effect size: the matched-pairs rank-biserial correlation
// (R+ - R-) / (R+ + R-) (Kerby 2014). Every difference zero with Wilcox or Pratt (scipy
// raises): NaN and a note; lengths differ, empty input, NaN or inf: InputError.
TestResult wilcoxon(std::span<const double> a, std::span<const double> b,
                    Alternative alternative = Alternative::TwoSided,
                    ZeroMethod zero_method = ZeroMethod::Wilcox);

// One group against the others: the linear contrast "this group's mean minus the
// unweighted mean of the other groups' means" (each group counts once, whatever its n),
// with a Welch-Satterthwaite t test. For G groups with means m_j, sample variances s_j^2
// (n - 1) and sizes n_j, group g:
//   estimate = m_g - (1/(G-1)) sum_{j!=g} m_j
//   se^2     = s_g^2/n_g + (1/(G-1))^2 sum_{j!=g} s_j^2/n_j
//   df       = se^4 / [ (s_g^2/n_g)^2/(n_g-1) + sum_{j!=g} (s_j^2/(n_j (G-1)^2))^2/(n_j-1) ]
//   t = estimate / se, two-sided p from t(df), CI = estimate -+ t_{(1+level)/2, df} se.
// With two groups it is Welch's t test. Needs G >= 2 and n_j >= 2 for every group
// (InputError otherwise); se = 0 gives NaN t, p and df with a note.
struct GroupMoments {
  double mean = kNaN;
  double variance = kNaN;  // sample variance (n - 1)
  std::size_t n = 0;
};
struct ContrastResult {
  double estimate = kNaN;
  double se = kNaN;
  double df = kNaN;
  double t = kNaN;
  double p_value = kNaN;
  double lower = kNaN;  // confidence interval of the estimate
  double upper = kNaN;
  double level = 0.95;
  std::string note;
};
ContrastResult contrast_vs_others(std::span<const GroupMoments> groups, std::size_t g,
                                  double level = 0.95);
// contrast_vs_others for every group at once, in O(G) instead of O(G^2): the sums over the
// other groups come from sums of the groups before and after each one (equal to one-at-a-time
// up to rounding). The same errors.
std::vector<ContrastResult> contrasts_vs_others(std::span<const GroupMoments> groups,
                                                double level = 0.95);

// Mann-Whitney U, two-sided, as scipy.stats.mannwhitneyu(method="auto",
// use_continuity=True) in scipy 1.10: exact null distribution when n_a <= 8 or
// n_b <= 8 and there are no ties, else the normal approximation with tie and
// continuity correction; `method` says which. statistic = U of sample a. Rank-biserial
// r = 2 U_a / (n_a n_b) - 1 (positive when a tends to be larger). The exact p uses
// the Gaussian-binomial generating function (O(min(n) * U) time, 8 (U + 1) bytes),
// so it also works where scipy's recursion is impractical (n_b in the millions).
// One-sided: greater uses the SF of U_a, less the SF of U_b (scipy 1.10), factor 1.
TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b,
                          Alternative alternative = Alternative::TwoSided);

// Kruskal-Wallis H with tie correction (scipy.stats.kruskal), df = [k-1];
// epsilon squared = H / (N - 1). H is computed in the centred form
// sum_g (R_g - n_g (N+1)/2)^2 / n_g, exact where scipy's textbook form cancels
// (small H at large N: scipy is off by up to ~1e-9 relative there).
TestResult kruskal_wallis(const GroupedValues& data);
TestResult kruskal_wallis(const std::vector<std::span<const double>>& groups);

// Pearson's chi-square test that k groups share one rate (a 2 x k table of successes and
// failures; scipy.stats.chi2_contingency(correction=False)): X^2 = sum (O - E)^2 / E over
// both rows, df = [k-1], effect size Cramer's V = sqrt(X^2 / N). Groups with n = 0 are left
// out. Fewer than 2 groups, or a rate of 0 or 1 in every group (an expected count of 0), give
// NaN with a note; expected counts below 5 are named in the note (the approximation is rough
// there). `successes[g] <= totals[g]` (InputError otherwise).
TestResult chi_square_rates(std::span<const std::size_t> successes,
                            std::span<const std::size_t> totals);

// Pearson r with the p of scipy.stats.pearsonr (the exact beta distribution of r under the
// null); Spearman rho (average ranks for ties) with scipy.stats.spearmanr's t-distribution p.
// greater tests a positive association, less a negative one.
TestResult pearson(std::span<const double> x, std::span<const double> y,
                   Alternative alternative = Alternative::TwoSided);
TestResult spearman(std::span<const double> x, std::span<const double> y,
                    Alternative alternative = Alternative::TwoSided);
// Kendall's tau-b (scipy.stats.kendalltau(method="auto", variant="b") in scipy 1.10):
// tau_b = (C - D) / sqrt((N0 - N1)(N0 - N2)), N0 = n(n-1)/2, N1/N2 the pairs tied in x/y;
// the discordant pairs D are counted by merge sort, O(n log n). p: "exact" (the distribution
// of inversions of a random permutation, Kendall 1970) when there are no ties and n <= 33 or
// min(D, N0 - D) <= 1; otherwise "asymptotic", z = (C - D) / sqrt(var) with scipy's tie-
// corrected variance. A constant input, or a single pair: NaN and a note.
TestResult kendall_tau(std::span<const double> x, std::span<const double> y,
                       Alternative alternative = Alternative::TwoSided);

// Friedman test (scipy.stats.friedmanchisquare) of n blocks x k treatments given
// row-major (row b = block b, column j = treatment j), with scipy's tie
// correction; df = [k-1]; effect size Kendall's W = chi2 / (n (k - 1)). Fewer than
// 3 treatments (scipy raises), no block, or every block tied throughout: NaN and a note.
TestResult friedman(std::span<const double> values, std::size_t k);
// Average ranks (1-based, ties get the mean rank), as scipy.stats.rankdata.
// Empty x gives an empty vector; NaN or inf is an InputError.
std::vector<double> rank_average(std::span<const double> x);

// --------------------------------------------------------- multiple testing

// Holm step-down and Benjamini-Hochberg step-up adjusted p-values, in input
// order, monotone and capped at 1. NaN entries stay NaN and are not counted in m.
std::vector<double> holm(std::span<const double> p);
std::vector<double> benjamini_hochberg(std::span<const double> p);

}  // namespace vlbias::stats
