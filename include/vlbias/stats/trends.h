#pragma once
// Trend fits and covariance ellipses (src/stats/trends.cpp; docs/methods.md#trends): per race x
// gender group, a quadratic fit of Delta cos against an ordinal factor (age, smiling), fitted to
// the group's means per factor level as Hausladen et al. Fig. 3 does (or to every image, as an
// option); and the 2-sigma covariance ellipse of a group's points in a plane of two dimensions
// (Fig. 4: Delta cos of positive vs negative agency, one point per age level).
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// Least-squares polynomial y = sum_k b_k x^k, k = 0..degree (as numpy.polyfit, with
// coefficients in ascending order here). Standard errors from sigma^2 (X'X)^-1 with
// sigma^2 = RSS / (n - degree - 1). Solved by QR of the centred and scaled design
// (Eigen), so large x (years of age) stay well conditioned.
struct PolynomialFit {
  std::vector<double> coefficients;     // b_0..b_degree
  std::vector<double> standard_errors;  // NaN when n <= degree + 1
  double r_squared = stats::kNaN;       // NaN when y is constant
  double residual_sd = stats::kNaN;     // sqrt(RSS / (n - degree - 1))
  std::size_t n = 0;
  std::string note;  // set when the fit is underdetermined or a value undefined
};

// InputError: x and y of different length, non-finite values, degree < 0. Fewer
// than degree + 1 distinct x values: NaN coefficients and a note.
PolynomialFit polynomial_fit(std::span<const double> x, std::span<const double> y, int degree = 2);

// The k-sigma covariance ellipse of points (x, y): centre = means, covariance with
// the n-1 denominator, semi-axes k * sqrt(eigenvalues) (major first), angle of the
// major axis from the x axis in radians, in (-pi/2, pi/2].
struct CovarianceEllipse {
  double center_x = stats::kNaN, center_y = stats::kNaN;
  double cov_xx = stats::kNaN, cov_xy = stats::kNaN, cov_yy = stats::kNaN;
  double semi_major = stats::kNaN, semi_minor = stats::kNaN;
  double angle = stats::kNaN;
  double k_sigma = 2.0;
  std::size_t n = 0;
  std::string note;  // n < 2
};

CovarianceEllipse covariance_ellipse(std::span<const double> x, std::span<const double> y,
                                     double k_sigma = 2.0);

struct TrendOptions {
  std::string x;                // ordinal Numeric column (age, smiling)
  std::vector<std::string> by;  // groups (race, gender)
  int degree = 2;
  bool fit_to_means = true;  // fit the per-level means (the paper) or every image
};

struct TrendFit {
  std::vector<std::string> key;  // values of the `by` columns
  std::string dimension;
  std::vector<double> levels;       // distinct x values, ascending
  std::vector<double> level_means;  // mean value per level
  std::vector<std::size_t> level_n;
  PolynomialFit fit;
};

// One fit per group x dimension (group key order, then dimension order). `values`
// is images x dimensions row-major (table row i = image i). Rows with a missing x
// or key are skipped. InputError: unknown or non-Numeric x, size mismatch.
std::vector<TrendFit> trend_fits(const Table& table, const std::vector<double>& values,
                                 const std::vector<std::string>& dimensions,
                                 const TrendOptions& options);

struct EllipseOptions {
  std::vector<std::string> by;  // groups
  std::string points_by;        // "" = one point per image; else one point (mean) per level
  double k_sigma = 2.0;
  // Dimension pairs (x, y); empty = every "name+" with its "name-".
  std::vector<std::pair<std::string, std::string>> planes;
};

struct GroupEllipse {
  std::vector<std::string> key;
  std::string x_dimension, y_dimension;
  CovarianceEllipse ellipse;
};

std::vector<GroupEllipse> group_ellipses(const Table& table, const std::vector<double>& values,
                                         const std::vector<std::string>& dimensions,
                                         const EllipseOptions& options);

}  // namespace vlbias
