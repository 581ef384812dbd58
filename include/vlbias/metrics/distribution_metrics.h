#pragma once
// Distances and diversity of feature distributions beyond DIG-In's indicators (docs/methods.md#fid,
// #kid, #vendi, "Beyond the paper"): FID, KID and the Vendi score, on any features (Inception
// pool3, CLIP image embeddings, ...).
//
// Data convention: row-major float32 matrices, row i = item i; both sets of a comparison
// have the same number of columns. Everything is accumulated in double; big products go
// through the BLAS wrapper (float32 only for KID's kernel dot products) and eigenvalues
// through LAPACK's symmetric solver. Results do not depend on the thread count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"

namespace vlbias {

// ------------------------------------------------------------------------------------ FID

struct FidResult {
  double fid = 0.0;         // mean_term + trace_a + trace_b - 2 trace_sqrt
  double mean_term = 0.0;   // |mu_a - mu_b|^2
  double trace_a = 0.0;     // tr Sigma_a
  double trace_b = 0.0;     // tr Sigma_b
  double trace_sqrt = 0.0;  // tr sqrt(Sigma_a Sigma_b)
  std::size_t n_a = 0, n_b = 0, dim = 0;
};

// Frechet distance between Gaussians fitted to `a` and `b` (Heusel et al. 2017):
// |mu_a - mu_b|^2 + tr(Sigma_a + Sigma_b - 2 (Sigma_a Sigma_b)^(1/2)), Sigma with n - 1.
//
// The trace of the square root is computed without any matrix square root. With
// X_a = (rows of a - mu_a) / sqrt(n_a - 1), Sigma_a = X_a^T X_a, and the eigenvalues of
// Sigma_a Sigma_b are the squared singular values of X_a X_b^T, so
//   tr (Sigma_a Sigma_b)^(1/2) = sum of the singular values of F_a F_b^T,
// where F = X itself when n <= d and otherwise the d x d triangular factor of X = Q R
// (Householder, accumulated over row chunks: F^T F = Sigma without forming Sigma). The matrix
// decomposed is min(n_a, d) x min(n_b, d), and singular values are accurate to rounding times
// the largest, so rank-deficient covariances (n < d, duplicates, constant features) cost no
// digits, unlike the eigenvalues of sqrt(Sigma_a) Sigma_b sqrt(Sigma_a) or scipy's sqrtm,
// whose near-zero eigenvalues turn into sqrt(rounding) errors. InputError: fewer than 2 rows
// in a set, different column counts, no columns, non-finite values.
FidResult fid(MatrixView a, MatrixView b);

// The Gaussian fit of one set that fid() uses: the mean, tr Sigma and the factor F
// (F^T F = Sigma, min(n, d) x d). Fit a reference set once and compare it with many:
// fid(fit_gaussian(a), fit_gaussian(b)) == fid(a, b). InputError: fewer than 2 rows, no
// columns, non-finite values.
struct GaussianFit {
  std::vector<double> mean;
  std::vector<double> factor;  // factor_rows x dim, row-major
  std::size_t factor_rows = 0;
  bool triangular = false;  // factor is the d x d upper-triangular R (n > d)
  double trace = 0.0;
  std::size_t n = 0, dim = 0;
};
GaussianFit fit_gaussian(MatrixView x);
// InputError when the dimensions differ.
FidResult fid(const GaussianFit& a, const GaussianFit& b);

// ------------------------------------------------------------------------------------ KID

struct KidOptions {
  std::size_t subsets = 100;       // 0: one unbiased estimate over all rows, no sampling
  std::size_t subset_size = 1000;  // m; reduced to min(n_a, n_b) when larger (noted)
  std::uint64_t seed = 0;
  int degree = 3;      // polynomial kernel k(x, y) = (gamma x.y + coef0)^degree
  double gamma = 0.0;  // 0: 1 / dim
  double coef0 = 1.0;
};

struct KidResult {
  double kid = 0.0;  // mean of the per-subset unbiased MMD^2
  double sd = 0.0;   // their standard deviation (n - 1; NaN with one subset)
  std::size_t subsets = 0, subset_size = 0;
  std::size_t n_a = 0, n_b = 0, dim = 0;
  std::vector<double> per_subset;
  std::string note;
};

// Kernel Inception Distance (Binkowski et al. 2018), as clean-fid and torch-fidelity compute
// it: for each of `subsets` subsets, m rows of `a` and m rows of `b` drawn without
// replacement (subset s from Rng(seed, s): a partial Fisher-Yates shuffle of a's indices,
// then of b's), the unbiased MMD^2 with the polynomial kernel:
//   sum_{i != j} k(a_i, a_j) / (m (m - 1)) + sum_{i != j} k(b_i, b_j) / (m (m - 1))
//   - 2 sum_{i, j} k(a_i, b_j) / m^2.
// With subsets = 0 the same estimator over all rows (n_a and n_b in place of m).
// InputError: fewer than 2 rows, different column counts, degree < 1, non-finite values.
KidResult kid(MatrixView a, MatrixView b, const KidOptions& options);
// The unbiased MMD^2 of rows `ia` of a against rows `ib` of b (the estimator above with
// |ia| and |ib| in place of m); exposed so tests can check each subset.
double mmd2_unbiased(MatrixView a, const std::vector<std::uint32_t>& ia, MatrixView b,
                     const std::vector<std::uint32_t>& ib, const KidOptions& options);
// The subsets kid() draws: subset s is (rows of a, rows of b).
std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> kid_subsets(
    std::size_t n_a, std::size_t n_b, std::size_t subset_size, std::size_t subsets,
    std::uint64_t seed);

// ---------------------------------------------------------------------------------- Vendi

struct VendiResult {
  double score = 0.0;  // exp(entropy of the eigenvalues of K / n)
  double q = 1.0;      // order (1: Shannon; +inf allowed)
  std::size_t n = 0, dim = 0;
  std::string gram;      // "n x n" or "d x d": the matrix whose eigenvalues were taken
  std::size_t rank = 0;  // eigenvalues > 0 entering the entropy
};

// The Vendi score (Friedman & Dieng 2023) with the cosine kernel K_ij = cos(x_i, x_j):
// exp(-sum_i lambda_i log lambda_i) over the positive eigenvalues of K / n (as the vendi_score
// package: eigenvalues <= 0 left out), or of order q: exp(log(sum lambda^q) / (1 - q)),
// q = inf: 1 / max lambda. K / n = X^ X^T / n (n x n) shares its non-zero eigenvalues with
// X^T X^ / n (d x d), X^ the row-normalised features: the smaller one is decomposed, so the
// cost grows with min(n, d)^3. InputError: no rows, an all-zero row (its cosine is
// undefined), non-finite values, q < 0 or NaN.
VendiResult vendi(MatrixView x, double q = 1.0);

// ------------------------------------------------------------------------ Inception Score

struct InceptionScoreResult {
  double mean = 0.0;  // mean over splits of exp(E_x KL(p(y|x) || p(y)))
  double sd = 0.0;    // their standard deviation (numpy's np.std: divided by splits)
  std::vector<double> splits;
  std::size_t n = 0, classes = 0;
};

// Inception Score (Salimans et al. 2016, "Improved Techniques for Training GANs", Sec. 4) of the
// n x classes logits (row i = image i): p(y|x) = softmax of each row (in double), the rows cut
// into `splits` consecutive parts of n / splits rows (the first n % splits parts one row
// longer: np.array_split), and per part exp(mean_x sum_y p(y|x) (log p(y|x) - log p(y))) with
// p(y) the part's mean; 0 log 0 = 0. OpenAI's reference and torch-fidelity feed it the FID
// Inception's 1008 logits WITHOUT the fc bias ("logits_unbiased"): `vlbias features --output
// logits-unbiased`. InputError: fewer rows than splits, non-finite logits; UsageError: splits 0.
InceptionScoreResult inception_score(MatrixView logits, std::size_t splits = 10);

}  // namespace vlbias
