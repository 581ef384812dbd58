#pragma once
// Principal component analysis of a row-major matrix (row i = item i, `cols` features), as
// sklearn.decomposition.PCA(n_components=k, svd_solver="full") computes it:
//   1. centre each column on its mean;
//   2. thin SVD of the centred matrix, X - mean = U S V^T (Eigen's BDCSVD, double precision);
//   3. signs: each component is flipped so that the entry of largest magnitude in its column
//      of U is positive (sklearn 1.2's svd_flip with u_based_decision=True), which makes the
//      result deterministic;
//   4. scores = U S (the items' coordinates), explained variance S^2 / (rows - 1), and its
//      ratio to the total variance (the sum over every component, not only the k kept).
// Data convention: `x` holds rows * cols values, row-major; it is not modified. Shapes:
// scores rows * k (row i = item i), the variances k each. InputError for fewer than 2 rows,
// k = 0, k > min(rows, cols), or a non-finite value.
#include <cstddef>
#include <span>
#include <vector>

namespace vlbias::stats {

struct PcaResult {
  std::size_t rows = 0, components = 0;
  std::vector<double> scores;                    // rows x components, row-major
  std::vector<double> explained_variance;        // per component
  std::vector<double> explained_variance_ratio;  // per component, of the total variance
};

PcaResult pca(std::span<const double> x, std::size_t rows, std::size_t cols,
              std::size_t components);

}  // namespace vlbias::stats
