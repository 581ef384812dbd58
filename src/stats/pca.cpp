// Principal components (include/vlbias/stats/pca.h): centring, a thin SVD, sklearn's signs.
#include "vlbias/stats/pca.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

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
  const auto n = static_cast<Eigen::Index>(rows), d = static_cast<Eigen::Index>(cols);
  Eigen::MatrixXd m(n, d);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < d; ++j) m(i, j) = x[static_cast<std::size_t>(i * d + j)];
  }
  m.rowwise() -= m.colwise().mean();
  const Eigen::BDCSVD<Eigen::MatrixXd> svd(m, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const Eigen::MatrixXd& u = svd.matrixU();
  const Eigen::VectorXd& s = svd.singularValues();
  const double total = (s.array() * s.array()).sum() / static_cast<double>(rows - 1);
  VLBIAS_CHECK(total > 0, InputError, "PCA input has no variance: all {} rows are the same point",
               rows);
  PcaResult r;
  r.rows = rows;
  r.components = components;
  r.scores.assign(rows * components, 0.0);
  for (std::size_t c = 0; c < components; ++c) {
    const auto k = static_cast<Eigen::Index>(c);
    Eigen::Index largest = 0;
    u.col(k).cwiseAbs().maxCoeff(&largest);
    const double sign = u(largest, k) < 0 ? -1.0 : 1.0;
    for (std::size_t i = 0; i < rows; ++i)
      r.scores[i * components + c] = sign * u(static_cast<Eigen::Index>(i), k) * s(k);
    const double variance = s(k) * s(k) / static_cast<double>(rows - 1);
    r.explained_variance.push_back(variance);
    r.explained_variance_ratio.push_back(variance / total);
  }
  return r;
}

}  // namespace vlbias::stats
