#pragma once
// Checks shared by distribution_metrics.cpp and distribution_bootstrap.cpp (private to the
// metrics stage).
#include <cstddef>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/metrics/distribution_metrics.h"

namespace vlbias::metrics_internal {

// InputError naming `metric`, `what` (the set), the row and column of the first non-finite value.
void check_finite(MatrixView x, const char* what, const char* metric);
// InputError: different column counts, no columns, fewer than `min_rows` rows, non-finite values.
void check_pair(MatrixView a, MatrixView b, const char* metric, std::size_t min_rows);
// InputError: degree outside 1..16, negative or non-finite gamma, non-finite coef0.
void check_kid_options(const KidOptions& o);
// InputError when the float32 dot products or the kernel sums over (2 rows_per_set)^2 pairs
// would overflow (see distribution_metrics.cpp).
void check_kid_scale(MatrixView a, MatrixView b, const KidOptions& o, double gamma,
                     std::size_t rows_per_set);
// (gamma dot + coef0)^degree.
double poly_kernel(double dot, const KidOptions& o, double gamma);
// The Vendi score of order q from the eigenvalues of K / n (positive ones only); `rank`
// receives how many were positive.
double vendi_of_eigenvalues(const std::vector<double>& w, double q, std::size_t& rank);

}  // namespace vlbias::metrics_internal
