// The Inception Score of logits: see include/vlbias/metrics/distribution_metrics.h.
#include <algorithm>
#include <cmath>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/metrics/distribution_metrics.h"

namespace vlbias {

InceptionScoreResult inception_score(MatrixView logits, std::size_t splits) {
  VLBIAS_CHECK(splits >= 1, UsageError, "the Inception Score needs at least 1 split");
  VLBIAS_CHECK(logits.rows >= splits && logits.cols >= 2, InputError,
               "the Inception Score of {} images with {} classes in {} splits: expected at least "
               "one image per split and two classes",
               logits.rows, logits.cols, splits);
  const std::size_t n = logits.rows, c = logits.cols;
  // p(y|x) per row, in double.
  std::vector<double> p(n * c);
  for (std::size_t i = 0; i < n; ++i) {
    const float* row = logits.row(i);
    double top = -INFINITY;
    for (std::size_t k = 0; k < c; ++k) {
      VLBIAS_CHECK(std::isfinite(row[k]), InputError,
                   "logit {} of image {} is {}; the Inception Score needs finite logits", k, i,
                   row[k]);
      top = std::max(top, double{row[k]});
    }
    double sum = 0.0;
    for (std::size_t k = 0; k < c; ++k) sum += p[i * c + k] = std::exp(row[k] - top);
    for (std::size_t k = 0; k < c; ++k) p[i * c + k] /= sum;
  }
  InceptionScoreResult r;
  r.n = n;
  r.classes = c;
  std::size_t begin = 0;
  for (std::size_t s = 0; s < splits; ++s) {
    const std::size_t end = begin + n / splits + (s < n % splits ? 1 : 0);
    const auto rows = static_cast<double>(end - begin);
    std::vector<double> py(c, 0.0);
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t k = 0; k < c; ++k) py[k] += p[i * c + k];
    }
    for (double& v : py) v /= rows;
    double kl = 0.0;
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t k = 0; k < c; ++k) {
        const double q = p[i * c + k];
        if (q > 0.0) kl += q * (std::log(q) - std::log(py[k]));
      }
    }
    r.splits.push_back(std::exp(kl / rows));
    begin = end;
  }
  double mean = 0.0;
  for (double v : r.splits) mean += v;
  mean /= static_cast<double>(splits);
  double var = 0.0;
  for (double v : r.splits) var += (v - mean) * (v - mean);
  r.mean = mean;
  r.sd = std::sqrt(var / static_cast<double>(splits));
  return r;
}

}  // namespace vlbias
