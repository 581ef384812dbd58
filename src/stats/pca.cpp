// Principal components (include/vlbias/stats/pca.h): centring, a thin SVD, sklearn's signs.
#include "vlbias/stats/pca.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

PcaResult pca(std::span<const double> x, std::size_t rows, std::size_t cols,
              std::size_t components) {
  VLBIAS_CHECK(rows >= 2, InputError, "PCA needs at least 2 rows; got {}", rows);
  VLBIAS_CHECK(components >= 1 && components <= std::min(rows, cols), InputError,
               "PCA of a {} x {} matrix can keep 1 to {} components; asked for {}", rows, cols,
               std::min(rows, cols), components);
  VLBIAS_CHECK(x.size() == rows * cols, InternalError, "PCA input holds {} values, not {} x {}",
               x.size(), rows, cols);
  VLBIAS_CHECK(std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }),
               InputError, "PCA input holds a NaN or infinite value");
  // Centre each column (sums in double, then the mean subtracted), then a thin SVD (LAPACK
  // dgesdd through core/blas.h, as scipy.linalg.svd and sklearn's PCA(svd_solver="full")).
  std::vector<double> m(x.begin(), x.end());
  for (std::size_t j = 0; j < cols; ++j) {
    double sum = 0.0;
    for (std::size_t i = 0; i < rows; ++i) sum += m[i * cols + j];
    const double mean = sum / static_cast<double>(rows);
    for (std::size_t i = 0; i < rows; ++i) m[i * cols + j] -= mean;
  }
  std::vector<double> u;
  const std::vector<double> s = thin_svd(m, rows, cols, u);
  const std::size_t k = s.size();
  double sum_squares = 0.0;
  for (const double v : s) sum_squares += v * v;
  const double total = sum_squares / static_cast<double>(rows - 1);
  VLBIAS_CHECK(total > 0, InputError, "PCA input has no variance: all {} rows are the same point",
               rows);
  PcaResult r;
  r.rows = rows;
  r.components = components;
  r.scores.assign(rows * components, 0.0);
  for (std::size_t c = 0; c < components; ++c) {
    // sklearn's svd_flip: the entry of largest magnitude in each column of U is positive.
    std::size_t largest = 0;
    for (std::size_t i = 1; i < rows; ++i) {
      if (std::fabs(u[i * k + c]) > std::fabs(u[largest * k + c])) largest = i;
    }
    const double sign = u[largest * k + c] < 0 ? -1.0 : 1.0;
    for (std::size_t i = 0; i < rows; ++i)
      r.scores[i * components + c] = sign * u[i * k + c] * s[c];
    const double variance = s[c] * s[c] / static_cast<double>(rows - 1);
    r.explained_variance.push_back(variance);
    r.explained_variance_ratio.push_back(variance / total);
  }
  return r;
}

}  // namespace vlbias::stats
