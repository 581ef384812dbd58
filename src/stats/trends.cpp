// Trend fits and covariance ellipses of paper 001 (Hausladen et al., Fig. 3 and 4,
// S.2 and S.3; docs/methods.md#trends).
//
// polynomial_fit: ordinary least squares y = sum_k b_k x^k (as numpy.polyfit) solved
// by Householder QR of the Vandermonde design in z = (x - m) / s, m = mean(x),
// s = max |x - m|, so that |z| <= 1 and ages of 20..80 years stay well conditioned.
// The coefficients c of the z basis and their covariance sigma^2 (Z'Z)^-1 =
// sigma^2 R^-1 R^-T are mapped back to the raw-x basis exactly: b = T c and
// C_raw = T C_z T^T, with T[j][k] = binom(k, j) (-m)^(k-j) / s^k (binomial
// expansion of ((x - m) / s)^k).
//
// covariance_ellipse: the k-sigma ellipse of a 2x2 sample covariance, from its
// eigen-decomposition in closed form.
#include "vlbias/stats/trends.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "resampling_util.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"

namespace vlbias {

namespace {

using stats::kNaN;

// Number of distinct values of x. (Counted without std::unique: g++ 12 -O3 mistakes the
// vector's release after std::unique, inlined, for a delete at an offset.)
std::size_t distinct_count(std::span<const double> x) {
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  std::size_t distinct = sorted.empty() ? 0 : 1;
  for (std::size_t i = 1; i < sorted.size(); ++i) distinct += sorted[i] != sorted[i - 1];
  return distinct;
}

double compensated_mean(std::span<const double> x) {
  stats_internal::NeumaierSum sum;
  for (const double v : x) sum.add(v);
  return sum.value() / static_cast<double>(x.size());
}

// T[j][k] = binom(k, j) (-m)^(k-j) / s^k for k >= j, else 0: raw coefficient b_j =
// sum_k T[j][k] c_k where c are the coefficients of ((x - m) / s)^k. Row-major p x p.
std::vector<double> basis_change(int degree, double m, double s) {
  const auto p = static_cast<std::size_t>(degree) + 1;
  std::vector<double> t(p * p, 0.0);
  for (std::size_t k = 0; k < p; ++k) {
    const double inv_s_k = std::pow(s, -static_cast<double>(k));
    double binom = 1.0;  // binom(k, j), built up from j = 0
    for (std::size_t j = 0; j <= k; ++j) {
      t[j * p + k] = binom * std::pow(-m, static_cast<double>(k - j)) * inv_s_k;
      binom = binom * static_cast<double>(k - j) / static_cast<double>(j + 1);
    }
  }
  return t;
}

// Solves R v = b in place for the upper-triangular p x p row-major R (back substitution).
void solve_upper(const std::vector<double>& r, std::size_t p, std::vector<double>& b) {
  for (std::size_t i = p; i-- > 0;) {
    double v = b[i];
    for (std::size_t k = i + 1; k < p; ++k) v -= r[i * p + k] * b[k];
    b[i] = v / r[i * p + i];
  }
}

// Rows of each group (group ids of `grouping`, or one group of every row when `by`
// is empty).
struct Groups {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::string> labels;
  std::vector<std::vector<std::size_t>> rows;
};

Groups collect_groups(const Table& table, const std::vector<std::string>& by) {
  Groups out;
  if (by.empty()) {
    out.keys.emplace_back();
    out.labels.emplace_back("all rows");
    out.rows.emplace_back(table.rows);
    for (std::size_t r = 0; r < table.rows; ++r) out.rows[0][r] = r;
    return out;
  }
  const Grouping grouping = group_by(table, by);
  out.keys = grouping.keys;
  out.rows.resize(grouping.size());
  for (std::size_t g = 0; g < grouping.size(); ++g) {
    out.labels.push_back(grouping.label(g));
    out.rows[g].reserve(grouping.sizes[g]);
  }
  for (std::size_t r = 0; r < table.rows; ++r) {
    const std::uint32_t g = grouping.group_of_row[r];
    if (g != Grouping::kNoGroup) out.rows[g].push_back(r);
  }
  return out;
}

void check_values_shape(const Table& table, const std::vector<double>& values,
                        const std::vector<std::string>& dimensions) {
  VLBIAS_CHECK(values.size() == table.rows * dimensions.size(), InputError,
               "{}: the values hold {} numbers; expected rows x dimensions = {} x {} = {}.",
               table.source, values.size(), table.rows, dimensions.size(),
               table.rows * dimensions.size());
}

// values[row, d] must be finite for every row that is used.
double value_at(const Table& table, const std::vector<double>& values,
                const std::vector<std::string>& dimensions, std::size_t row, std::size_t d) {
  const double v = values[row * dimensions.size() + d];
  VLBIAS_CHECK(std::isfinite(v), InputError,
               "{}: line {} has no finite value for dimension '{}' (got {}); every row of a "
               "group needs one.",
               table.source, row < table.line_of_row.size() ? table.line_of_row[row] : row + 1,
               dimensions[d], v);
  return v;
}

std::size_t dimension_index(const std::vector<std::string>& dimensions, const std::string& name) {
  const auto it = std::find(dimensions.begin(), dimensions.end(), name);
  VLBIAS_CHECK(it != dimensions.end(), InputError,
               "plane dimension '{}' is not among the dimensions ({}).", name,
               fmt::join(dimensions, ", "));
  return static_cast<std::size_t>(it - dimensions.begin());
}

}  // namespace

PolynomialFit polynomial_fit(std::span<const double> x, std::span<const double> y, int degree) {
  VLBIAS_CHECK(x.size() == y.size(), InputError,
               "polynomial fit: x has {} values but y has {}; expected one y per x.", x.size(),
               y.size());
  VLBIAS_CHECK(degree >= 0, InputError, "polynomial fit: degree must be >= 0; got {}.", degree);
  stats_internal::check_finite(x, "polynomial fit x");
  stats_internal::check_finite(y, "polynomial fit y");
  const std::size_t n = x.size();
  const auto p = static_cast<std::size_t>(degree) + 1;
  PolynomialFit fit;
  fit.n = n;
  fit.coefficients.assign(p, kNaN);
  fit.standard_errors.assign(p, kNaN);
  const std::size_t distinct = distinct_count(x);
  if (distinct < p) {
    fit.note = fmt::format(
        "{} distinct x value(s) among {} point(s); a degree-{} polynomial needs at least {}, so "
        "the fit is undetermined.",
        distinct, n, degree, p);
    return fit;
  }

  // Centre and scale x: z = (x - m) / s with |z| <= 1.
  const double m = compensated_mean(x);
  double s = 0.0;
  for (const double v : x) s = std::max(s, std::fabs(v - m));
  if (!(s > 0.0)) s = 1.0;  // one distinct x (degree 0): z = 0

  // Least squares by Householder QR (core/blas.h triangular_factor): the triangular factor of
  // the augmented design [Z | y] is [[R, Q'y], [0, |residual|]], so R c = Q'y gives c without
  // forming Z'Z. A zero row (which changes no product A'A) keeps it tall when n = p. Distinct
  // x >= degree + 1 makes the Vandermonde design full rank.
  const std::size_t width = p + 1;
  const std::size_t tall = std::max(n, width);
  std::vector<double> augmented(tall * width, 0.0);
  std::vector<double> z(n * p);
  for (std::size_t i = 0; i < n; ++i) {
    const double zi = (x[i] - m) / s;
    double power = 1.0;
    for (std::size_t k = 0; k < p; ++k) {
      z[i * p + k] = augmented[i * width + k] = power;
      power *= zi;
    }
    augmented[i * width + p] = y[i];
  }
  triangular_factor(augmented, tall, width);
  std::vector<double> r(p * p);
  std::vector<double> c(p);
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t k = 0; k < p; ++k) r[i * p + k] = augmented[i * width + k];
    c[i] = augmented[i * width + p];
  }
  solve_upper(r, p, c);

  stats_internal::NeumaierSum rss_sum;
  for (std::size_t i = 0; i < n; ++i) {
    double fitted = 0.0;
    for (std::size_t k = 0; k < p; ++k) fitted += z[i * p + k] * c[k];
    rss_sum.add((y[i] - fitted) * (y[i] - fitted));
  }
  const double rss = rss_sum.value();
  const double y_mean = compensated_mean(y);
  stats_internal::NeumaierSum tss_sum;
  for (const double v : y) tss_sum.add((v - y_mean) * (v - y_mean));
  const double tss = tss_sum.value();

  const std::vector<double> t = basis_change(degree, m, s);
  for (std::size_t j = 0; j < p; ++j) {
    double b = 0.0;
    for (std::size_t k = 0; k < p; ++k) b += t[j * p + k] * c[k];
    fit.coefficients[j] = b;
  }

  std::vector<std::string> notes;
  // R^2 = 1 - RSS / TSS (coefficient of determination).
  if (tss > 0.0) {
    fit.r_squared = 1.0 - rss / tss;
  } else {
    notes.emplace_back("y is constant, so R^2 is undefined");
  }
  if (n > p) {
    // sigma^2 = RSS / (n - degree - 1); Cov(c) = sigma^2 (Z'Z)^-1 = sigma^2 R^-1 R^-T.
    const double sigma2 = rss / static_cast<double>(n - p);
    fit.residual_sd = std::sqrt(sigma2);
    // Column j of R^-1 solves R v = e_j; then Cov(b) = T R^-1 R^-T T^T sigma^2, so
    // Var(b_k) = sigma^2 |row k of T R^-1|^2.
    std::vector<double> r_inv(p * p, 0.0);  // row-major, column j = R^-1 e_j
    std::vector<double> column(p);
    for (std::size_t j = 0; j < p; ++j) {
      std::fill(column.begin(), column.end(), 0.0);
      column[j] = 1.0;
      solve_upper(r, p, column);
      for (std::size_t i = 0; i < p; ++i) r_inv[i * p + j] = column[i];
    }
    for (std::size_t k = 0; k < p; ++k) {
      double variance = 0.0;
      for (std::size_t j = 0; j < p; ++j) {
        double tr = 0.0;  // (T R^-1)[k][j]
        for (std::size_t a = 0; a < p; ++a) tr += t[k * p + a] * r_inv[a * p + j];
        variance += tr * tr;
      }
      fit.standard_errors[k] = std::sqrt(std::max(0.0, sigma2 * variance));
    }
  } else {
    notes.emplace_back(fmt::format(
        "{} point(s) for {} coefficient(s) leave no residual degrees of freedom, so the standard "
        "errors and residual sd are undefined",
        n, p));
  }
  if (!notes.empty()) fit.note = fmt::format("{}.", fmt::join(notes, "; "));
  return fit;
}

CovarianceEllipse covariance_ellipse(std::span<const double> x, std::span<const double> y,
                                     double k_sigma) {
  VLBIAS_CHECK(x.size() == y.size(), InputError,
               "covariance ellipse: x has {} values but y has {}; expected one y per x.", x.size(),
               y.size());
  VLBIAS_CHECK(std::isfinite(k_sigma) && k_sigma > 0.0, InputError,
               "covariance ellipse: k_sigma must be a positive finite number; got {}.", k_sigma);
  stats_internal::check_finite(x, "covariance ellipse x");
  stats_internal::check_finite(y, "covariance ellipse y");
  CovarianceEllipse e;
  e.k_sigma = k_sigma;
  e.n = x.size();
  if (e.n == 0) {
    e.note = "no points, so the ellipse is undefined.";
    return e;
  }
  e.center_x = compensated_mean(x);
  e.center_y = compensated_mean(y);
  if (e.n < 2) {
    e.note = "1 point: the covariance (n-1 denominator) needs at least 2.";
    return e;
  }
  // Sample covariance with the n-1 denominator (as numpy.cov), two passes.
  stats_internal::NeumaierSum sxx, sxy, syy;
  for (std::size_t i = 0; i < e.n; ++i) {
    const double dx = x[i] - e.center_x;
    const double dy = y[i] - e.center_y;
    sxx.add(dx * dx);
    sxy.add(dx * dy);
    syy.add(dy * dy);
  }
  const double denom = static_cast<double>(e.n - 1);
  e.cov_xx = sxx.value() / denom;
  e.cov_xy = sxy.value() / denom + 0.0;  // + 0.0 turns -0 into +0 for the angle
  e.cov_yy = syy.value() / denom;
  // Eigenvalues of [[a, b], [b, c]]: (a + c) / 2 +- sqrt(((a - c) / 2)^2 + b^2); the
  // major axis is at 0.5 atan2(2b, a - c) from the x axis. Semi-axes are k sqrt(lambda)
  // (the k-sigma ellipse, Hausladen et al. Fig. 4 with k = 2).
  const double half_trace = 0.5 * (e.cov_xx + e.cov_yy);
  const double radius = std::hypot(0.5 * (e.cov_xx - e.cov_yy), e.cov_xy);
  const double major = half_trace + radius;
  const double minor = std::max(0.0, half_trace - radius);
  e.semi_major = k_sigma * std::sqrt(major);
  e.semi_minor = k_sigma * std::sqrt(minor);
  double angle = 0.5 * std::atan2(2.0 * e.cov_xy, e.cov_xx - e.cov_yy);
  if (angle <= -0.5 * std::numbers::pi) angle += std::numbers::pi;
  e.angle = angle;
  return e;
}

std::vector<TrendFit> trend_fits(const Table& table, const std::vector<double>& values,
                                 const std::vector<std::string>& dimensions,
                                 const TrendOptions& options) {
  check_values_shape(table, values, dimensions);
  VLBIAS_CHECK(options.degree >= 0, InputError, "trend fits: degree must be >= 0; got {}.",
               options.degree);
  const std::vector<double>& xs = table.numeric(options.x, /*allow_missing=*/true);
  const Groups groups = collect_groups(table, options.by);
  const std::size_t dims = dimensions.size();
  std::vector<TrendFit> out;
  out.reserve(groups.rows.size() * dims);
  for (std::size_t g = 0; g < groups.rows.size(); ++g) {
    // Rows of the group with an x, and each row's level.
    std::vector<std::size_t> rows;
    std::map<double, std::size_t> level_of_value;
    for (const std::size_t r : groups.rows[g]) {
      if (std::isnan(xs[r])) continue;
      rows.push_back(r);
      level_of_value.emplace(xs[r], 0);
    }
    std::vector<double> levels;
    for (auto& [value, id] : level_of_value) {
      id = levels.size();
      levels.push_back(value);
    }
    std::vector<std::size_t> level_of_row(rows.size());
    std::vector<std::size_t> level_n(levels.size(), 0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      level_of_row[i] = level_of_value.at(xs[rows[i]]);
      ++level_n[level_of_row[i]];
    }
    for (std::size_t d = 0; d < dims; ++d) {
      TrendFit tf;
      tf.key = groups.keys[g];
      tf.dimension = dimensions[d];
      tf.levels = levels;
      tf.level_n = level_n;
      std::vector<stats_internal::NeumaierSum> sums(levels.size());
      std::vector<double> row_x, row_y;
      if (!options.fit_to_means) {
        row_x.reserve(rows.size());
        row_y.reserve(rows.size());
      }
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const double v = value_at(table, values, dimensions, rows[i], d);
        sums[level_of_row[i]].add(v);
        if (!options.fit_to_means) {
          row_x.push_back(xs[rows[i]]);
          row_y.push_back(v);
        }
      }
      tf.level_means.resize(levels.size());
      for (std::size_t l = 0; l < levels.size(); ++l) {
        tf.level_means[l] = sums[l].value() / static_cast<double>(level_n[l]);
      }
      tf.fit = options.fit_to_means ? polynomial_fit(levels, tf.level_means, options.degree)
                                    : polynomial_fit(row_x, row_y, options.degree);
      if (!tf.fit.note.empty()) {
        tf.fit.note = fmt::format("{}, {}: {}", groups.labels[g], dimensions[d], tf.fit.note);
      }
      out.push_back(std::move(tf));
    }
  }
  return out;
}

std::vector<GroupEllipse> group_ellipses(const Table& table, const std::vector<double>& values,
                                         const std::vector<std::string>& dimensions,
                                         const EllipseOptions& options) {
  check_values_shape(table, values, dimensions);
  std::vector<std::pair<std::size_t, std::size_t>> planes;
  for (const auto& [px, py] : options.planes) {
    planes.emplace_back(dimension_index(dimensions, px), dimension_index(dimensions, py));
  }
  if (options.planes.empty()) {
    // Every "name+" with its "name-" (x = positive, y = negative pole).
    for (std::size_t d = 0; d < dimensions.size(); ++d) {
      const std::string& name = dimensions[d];
      if (name.size() < 2 || name.back() != '+') continue;
      const std::string minus = name.substr(0, name.size() - 1) + "-";
      const auto it = std::find(dimensions.begin(), dimensions.end(), minus);
      if (it != dimensions.end()) {
        planes.emplace_back(d, static_cast<std::size_t>(it - dimensions.begin()));
      }
    }
  }
  const Column* level_column = nullptr;
  if (!options.points_by.empty()) level_column = &table.column(options.points_by);
  const Groups groups = collect_groups(table, options.by);
  std::vector<GroupEllipse> out;
  out.reserve(groups.rows.size() * planes.size());
  for (std::size_t g = 0; g < groups.rows.size(); ++g) {
    // Points: the group's rows, or one per level of points_by (rows without one skipped).
    std::vector<std::size_t> rows;
    std::vector<std::size_t> point_of_row;
    std::size_t points = 0;
    if (level_column == nullptr) {
      rows = groups.rows[g];
      point_of_row.resize(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) point_of_row[i] = i;
      points = rows.size();
    } else {
      std::map<double, std::size_t> numeric_level;
      std::unordered_map<std::uint32_t, std::size_t> code_level;
      for (const std::size_t r : groups.rows[g]) {
        if (level_column->missing(r)) continue;
        rows.push_back(r);
        bool added = false;
        if (level_column->type == ColumnType::Numeric) {
          const auto it = numeric_level.emplace(level_column->numbers[r], points);
          point_of_row.push_back(it.first->second);
          added = it.second;
        } else {
          const auto it = code_level.emplace(level_column->codes[r], points);
          point_of_row.push_back(it.first->second);
          added = it.second;
        }
        if (added) ++points;
      }
    }
    std::vector<std::size_t> count(points, 0);
    for (const std::size_t p : point_of_row) ++count[p];
    for (const auto& [dx, dy] : planes) {
      std::vector<stats_internal::NeumaierSum> sx(points), sy(points);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        sx[point_of_row[i]].add(value_at(table, values, dimensions, rows[i], dx));
        sy[point_of_row[i]].add(value_at(table, values, dimensions, rows[i], dy));
      }
      std::vector<double> px(points), py(points);
      for (std::size_t p = 0; p < points; ++p) {
        px[p] = sx[p].value() / static_cast<double>(count[p]);
        py[p] = sy[p].value() / static_cast<double>(count[p]);
      }
      GroupEllipse ge;
      ge.key = groups.keys[g];
      ge.x_dimension = dimensions[dx];
      ge.y_dimension = dimensions[dy];
      ge.ellipse = covariance_ellipse(px, py, options.k_sigma);
      if (!ge.ellipse.note.empty()) {
        ge.ellipse.note = fmt::format("{}, {} vs {}: {}", groups.labels[g], ge.x_dimension,
                                      ge.y_dimension, ge.ellipse.note);
      }
      out.push_back(std::move(ge));
    }
  }
  return out;
}

}  // namespace vlbias
