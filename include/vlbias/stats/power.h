#pragma once
// Power and sample size by simulation (src/stats/power.cpp; docs/methods.md#power): how likely
// a study of a given design is to find a gap of a given size with its own test and its own
// multiple-comparison correction, how many units per cell it needs for a target power, and
// the smallest gap it can find (the minimum detectable effect, MDE).
//
// Design. G groups; group g has n_g units. Means tests (Anova, Welch, Student, Contrast) draw
// unit values N(mu_g, sd_g^2) with the pilot's per-group sd_g; the rate test (ChiSquare) draws
// each group's successes as Binomial(n_g, r_g). The planted effect delta sits on one group,
// `target`: mu_target = delta and every other mu_g = 0 (the tests are location invariant, so
// the pilot's means do not matter); for rates r_target = base_rate + delta and every other
// r_g = base_rate (the pilot's pooled rate). delta = 0 is the null.
//
// Set-blocked design (Friedman, the LVLM audit's group tests). Every block holds each of the
// G groups once; groups[g].n is the number of blocks B (the same for every g) and groups[g].sd
// the within-set residual sd sigma_e (the same for every g). Without clusters
// (sets_per_cluster <= 1) a block is one counterfactual set s and x_sg = a_s + mu_g + e_sg,
// a_s ~ N(0, set_sd^2), e_sg ~ N(0, sigma_e^2). With clusters (sets_per_cluster = m >= 2, the
// seeds of one image set) a block is one cluster c of m sets, x_csg = a_cs + mu_g + u_cg +
// e_csg with the group x cluster interaction u_cg ~ N(0, cluster_sd^2), and the test runs over
// the clusters' per-group means, as the audit's clustered Friedman does. The set effect a
// cancels in within-block ranks (it is drawn all the same); the effect sits on mu_target.
// n in sample_size is then the number of blocks (sets, or clusters of m sets).
//
// Test and correction. Each replicate runs the library's own test on the drawn data:
// stats::one_way_anova, welch_t, student_t, contrasts_vs_others (the target group against the
// unweighted mean of the others), chi_square_rates or friedman, and takes the target's p-value. The
// study corrected over a family of m >= 1 tests; the other m - 1 tests (m - G for contrasts,
// whose G p-values of one design are all simulated) are drawn as independent Uniform(0, 1)
// p-values, i.e. as true nulls, and the whole family goes through stats::holm or
// stats::benjamini_hochberg. A replicate rejects when the target's adjusted p <= alpha.
//
// Monte Carlo. power = rejections / R over R replicates; its binomial standard error
// se = sqrt(power (1 - power) / R) is reported with it (|estimate - true| < 2 se about 95% of
// the time; R = 1000 gives se <= 0.016). Replicate b draws group g from
// Rng(derive_seed(seed, g), b) and the null p-values from Rng(derive_seed(seed, G), b): the
// same noise at every delta and, for the first min(n, n') units, at every n (common random
// numbers), so the searches below see a power curve that is smooth in delta and n, and the
// result does not depend on the thread count.
//
// Searches. sample_size: the smallest common n per group (every group gets n) whose simulated
// power reaches the target: n doubles from the smallest valid n until the target is reached
// (at most kMaxPowerSampleSize), then integer bisection. minimum_detectable_effect: the
// smallest delta at the design's own n whose simulated power reaches the target: delta doubles
// from a start of max_g sd_g / sqrt(n_g) (rates: 1/16 of the room 1 - base_rate) until it is
// reached, then 10 bisection steps (the reported MDE is within 2^-10 of the bracket, far below
// its Monte Carlo error, which is about se / slope of the power curve).
//
// Analytic cross-check (analytic_power): the normal-theory power of the same test at
// alpha / m (Bonferroni: a close lower bound for Holm when the other tests are null; BH is
// more liberal): Student and Welch through the noncentral t (ncp = delta / se, Welch's df),
// Contrast likewise with the contrast's se and Welch-Satterthwaite df, Anova through the
// noncentral F (lambda = sum n_g (mu_g - mu_bar)^2 / sigma^2 with the pooled sigma^2), ChiSquare
// through the noncentral chi-square (lambda = sum n_g (r_g - r_bar)^2 / (r_bar (1 - r_bar))),
// Friedman through the noncentral chi-square of its large-B limit, lambda = ARE x B sum_g
// (mu_g - mu_bar)^2 / sigma_b^2 with sigma_b^2 = cluster_sd^2 + sigma_e^2 / m (m = 1 without
// clusters) and ARE = 3G / (pi (G + 1)), Friedman's efficiency against the F test under
// normality (an approximation, close for B >= 10). They assume normal data or large n; the
// simulation does not.
//
// Errors (UsageError unless said): alpha or the target power outside (0, 1); replicates 0 or
// above stats::kMaxResamples; family 0 or smaller than the number of p-values a design yields;
// target out of range; Welch/Student with other than 2 groups, Anova/Contrast/ChiSquare with
// fewer than 2, Friedman with fewer than 3 or with unequal n or sd across groups; a group with
// fewer than 2 units (means tests) or 1 (rates), or more than kMaxPowerSampleSize; an sd
// negative, not finite or above kMaxPowerValue (also set_sd, cluster_sd); every sd 0 (Friedman: sd
// and cluster_sd 0) (nothing to simulate: the test is undefined); base_rate outside (0, 1); an
// effect that is negative, not finite, above kMaxPowerValue or (rates) puts the target's rate above
// 1; sample_size with an effect <= 0.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vlbias::stats {

enum class PowerTest { Anova, Welch, Student, Contrast, ChiSquare, Friedman };
// "anova", "welch", "student", "contrast", "chi_square", "friedman"
const char* to_string(PowerTest t);
enum class Correction { None, Holm, BenjaminiHochberg };
const char* to_string(Correction c);  // "none", "holm", "bh"

// Most units per group sample_size tries before giving up (the study would need more), and the
// most a design may have: each replicate draws every unit.
inline constexpr std::size_t kMaxPowerSampleSize = 10'000'000;
// The largest effect and sd (in the test's units) power simulates: squares of larger values
// overflow the tests' sums of squares (an effect of 1e308 gave NaN p-values).
inline constexpr double kMaxPowerValue = 1e12;

struct PowerGroup {
  std::size_t n = 0;
  double sd = 0;  // means tests: the pilot's sample sd of the group (unused by ChiSquare)
};

struct PowerDesign {
  PowerTest test = PowerTest::Welch;
  std::vector<PowerGroup> groups;
  std::size_t target = 0;  // the group that carries the effect
  double base_rate = 0;    // ChiSquare: every group's rate under the null
  // Friedman (set-blocked design above): sets per cluster (<= 1: no clusters), the sd of the
  // set effect and of the group x cluster interaction.
  std::size_t sets_per_cluster = 0;
  double set_sd = 0;
  double cluster_sd = 0;
  std::size_t family = 1;  // m: tests corrected together
  Correction correction = Correction::Holm;
  double alpha = 0.05;
};

struct PowerEstimate {
  double effect = 0;
  double power = 0;  // rejections / replicates
  double se = 0;     // sqrt(power (1 - power) / replicates)
  std::size_t rejections = 0;
  std::size_t replicates = 0;
  std::uint64_t seed = 0;
};

// The simulated power of `design` at `effect`, as above.
PowerEstimate simulate_power(const PowerDesign& design, double effect, std::size_t replicates,
                             std::uint64_t seed);

struct SampleSizeResult {
  std::size_t n_per_group = 0;  // 0 when not reached by kMaxPowerSampleSize
  PowerEstimate at;             // the simulated power at that n
  std::string note;             // why n is 0
};
SampleSizeResult sample_size(const PowerDesign& design, double effect, double target_power,
                             std::size_t replicates, std::uint64_t seed);

struct MdeResult {
  double effect = 0;  // NaN when no effect the design allows reaches the target
  PowerEstimate at;   // the simulated power at that effect
  std::string note;
};
MdeResult minimum_detectable_effect(const PowerDesign& design, double target_power,
                                    std::size_t replicates, std::uint64_t seed);

// The normal-theory power at alpha / family, as above.
double analytic_power(const PowerDesign& design, double effect);

// Checks a design as simulate_power does (the errors above), for callers that build one from
// a pilot and want the error before any simulation.
void check_power_design(const PowerDesign& design);

}  // namespace vlbias::stats
