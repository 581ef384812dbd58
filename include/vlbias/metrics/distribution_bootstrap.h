#pragma once
// Bootstrap intervals for FID, KID and the Vendi score, and FID_inf (docs/methods.md#fid, #kid,
// #vendi): issue 24's "intervals for every headline number".
//
// The bootstrap resamples the GENERATED rows only; the real (reference) set is fixed, as the
// question is "how much would this number move with another draw of generated images from the
// same model". Replicate b draws n indices Rng(seed, b).uniform_index(n) (exactly the draws of
// stats::bootstrap_ci) and keeps them as row multiplicities c_i (sum c_i = n, about 0.632 n of
// them non-zero); no row is copied. Results do not depend on the thread count.
//
// Recentring (the decision taken for PRDC coverage, docs/methods.md#geo-diversity): a resample
// holds only ~63% distinct generated rows, and all three statistics react to duplicates, not
// only to sampling variation: a duplicated row adds its self-similarity k(x, x) to KID's
// generated-generated sum, shrinks the spread FID sees, and lowers Vendi (copies are one item).
// On the reference's 40-row case (B = 1000) the replicates' median is 1.4x the FID estimate and
// 2.7x the KID one, and Vendi's 95% percentile interval excludes the estimate. So, as for
// coverage, the replicates are
// shifted by `estimate - median(replicates)` and `ci` is the percentile interval of the shifted
// replicates (clipped to FID >= 0 and 1 <= Vendi <= n): it has the replicates' spread around
// the estimate. `raw` keeps the plain percentile interval of the unshifted replicates.
// tools/simulate_distribution_bootstrap.py measures both intervals' coverage.
//
// What is computed once and what each replicate costs (n generated rows, d columns, m <= n the
// distinct rows a replicate draws, r = min(n_real, d) the rows of the real set's factor):
//   FID   once: the real set's Gaussian fit (mean, factor F with F^T F = Sigma_real), the
//         generated rows centred at their mean (Y, n x d doubles) and P = F Y^T (r x n).
//         Replicate: delta = sum c_i y_i / n and sum c_i |y_i - delta|^2 (O(m d)), the
//         r x m matrix K = (P[:, i] - P c / n) sqrt(c_i / (n - 1)) whose singular values sum to
//         tr (Sigma_real Sigma*)^(1/2) (O(r m) to form, O(r m min(r, m)) to decompose): the
//         resampled covariance is never formed, and singular values keep fid()'s accuracy for
//         singular covariances. Memory: n d + r n doubles.
//   KID   the all-rows unbiased MMD^2 (KidOptions::subsets = 0's estimator; subset KID estimates
//         the same quantity). Once: the real-real kernel sum, each generated row's kernel sum
//         against the real rows and the n x n generated kernel matrix (O((n_real + n)^2 d)).
//         Replicate: sum c_i c_j k_ij - sum c_i k_ii and sum c_i s_i, O(m^2), no dot product.
//         Memory: n^2 doubles (n <= 11,585 generated rows, else InputError).
//   Vendi once: the unit rows (n x d doubles) and, when n <= d, their n x n Gram G.
//         Replicate: the eigenvalues of (sqrt(c_i c_j) G_ij / n) over the m distinct rows
//         (O(m^3)) when n <= d, else of sum c_i u_i u_i^T / n (d x d, O(m d^2 + d^3)): the
//         non-zero eigenvalues of the materialised resample's K / n either way.
// Recomputing a replicate from scratch (copying the resampled rows and calling fid / kid /
// vendi) also refits the real set, factors n rows instead of m, and for KID recomputes every
// dot product: bench/bench_distribution_bootstrap.cpp measures the ratio.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The most generated rows kid_bootstrap takes (its n x n kernel matrix: 1 GiB of doubles).
inline constexpr std::size_t kKidBootstrapMaxRows = 11585;

struct DistributionBootstrapOptions {
  std::size_t resamples = 1000;  // B >= 1 (at most stats::kMaxResamples)
  double level = 0.95;           // in (0, 1)
  std::uint64_t seed = 0;        // replicate b draws from Rng(seed, b)
  bool keep_replicates = false;  // fill DistributionBootstrap::replicates
};

struct DistributionBootstrap {
  double estimate = stats::kNaN;   // the statistic on the observed sets (c_i = 1)
  stats::Interval ci;              // percentile interval of the recentred replicates
  stats::Interval raw;             // percentile interval of the replicates as drawn
  double shift = stats::kNaN;      // estimate - median(replicates), added before `ci`
  std::vector<double> replicates;  // options.keep_replicates: replicate b's value as drawn
};

// The multiplicities of replicate b: c[i] = #{t < n : Rng(seed, b).uniform_index(n) == i}.
std::vector<std::uint32_t> bootstrap_multiplicities(std::size_t n, std::uint64_t seed,
                                                    std::size_t b);

// FID of `real` against resamples of `generated`. The estimate equals fid(real, generated).fid.
// InputError: fewer than 2 rows on a side, different column counts, non-finite values;
// UsageError: resamples 0 or above 10^6, level outside (0, 1).
DistributionBootstrap fid_bootstrap(const GaussianFit& real, MatrixView generated,
                                    const DistributionBootstrapOptions& options);
DistributionBootstrap fid_bootstrap(MatrixView real, MatrixView generated,
                                    const DistributionBootstrapOptions& options);

// The all-rows unbiased MMD^2 (the kernel of `kernel`; its subsets, subset_size and seed are not
// used) of `real` against resamples of `generated`. A resample holding a row c times counts its
// c (c - 1) pairs with itself, as the materialised resample would. Errors as fid_bootstrap, plus
// kid()'s kernel and scale checks and more than 11,585 generated rows.
DistributionBootstrap kid_bootstrap(MatrixView real, MatrixView generated, const KidOptions& kernel,
                                    const DistributionBootstrapOptions& options);

// The Vendi score of order q of resamples of `x` (vendi(x, q) for the estimate). Errors as
// vendi(), plus fewer than 2 rows and the option checks.
DistributionBootstrap vendi_bootstrap(MatrixView x, double q,
                                      const DistributionBootstrapOptions& options);

// ---------------------------------------------------------------------------------- FID_inf

// FID_inf (Chong & Forsyth 2020, "Effectively Unbiased FID and Inception Score and where to find
// them", CVPR, Sec. 3 and Eq. 4): FID_N computed on N generated rows is biased upwards by a term
// ~ 1/N, so FID_N is fitted by least squares as FID_inf + slope / N over `points` sizes and the
// intercept FID_inf estimates the FID of infinitely many generated images. As the authors' code
// (mchong6/FID_IS_infinity): the sizes are evenly spaced in N from min_size to n and truncated
// (numpy's linspace(...).astype(int)), and each point draws its N rows without replacement
// (point p: the first N of a partial Fisher-Yates shuffle from Rng(seed, p)). The real set stays
// whole.
struct FidInfOptions {
  std::size_t points = 15;   // >= 2
  std::size_t min_size = 0;  // smallest N; 0: max(2, n / 10) (the authors' 5,000 of 50,000)
  std::uint64_t seed = 0;
};

struct FidInfResult {
  double fid_inf = stats::kNaN;    // the intercept at 1 / N = 0
  double slope = stats::kNaN;      // FID_N ~ fid_inf + slope / N
  std::vector<std::size_t> sizes;  // N per point
  std::vector<double> fids;        // FID_N per point
  std::size_t points = 0, min_size = 0;
  std::uint64_t seed = 0;
};

// UsageError: points < 2, min_size (when given) < 2 or > n, fewer than 2 distinct sizes;
// InputError: as fid().
FidInfResult fid_infinity(const GaussianFit& real, MatrixView generated,
                          const FidInfOptions& options);
// The rows point p draws (ascending): exposed for the references.
std::vector<std::uint32_t> fid_inf_subset(std::size_t n, std::size_t size, std::uint64_t seed,
                                          std::size_t p);

}  // namespace vlbias
