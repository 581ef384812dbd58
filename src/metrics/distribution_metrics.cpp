// FID, KID and the Vendi score (include/vlbias/metrics/distribution_metrics.h).
#include "vlbias/metrics/distribution_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "distribution_internal.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Rows converted to double at a time when a product is accumulated over row chunks (fixed,
// so the summation order, hence the result, never depends on the thread count).
constexpr std::size_t kChunkRows = 2048;
// FID: rows per step of the chunked triangular factorisation (at least the dimension).
constexpr std::size_t kFactorChunkRows = 8192;
// KID: the stacked Gram matrix of all rows is computed once when it takes at most this many
// floats (1 GiB) and fewer flops than the per-subset products.
constexpr std::size_t kMaxGramFloats = std::size_t{1} << 28;

}  // namespace

namespace metrics_internal {

void check_finite(MatrixView x, const char* what, const char* metric) {
  for (std::size_t i = 0; i < x.rows; ++i) {
    const float* r = x.row(i);
    for (std::size_t k = 0; k < x.cols; ++k) {
      VLBIAS_CHECK(std::isfinite(r[k]), InputError,
                   "{}: {} row {}, column {} is {}; features must be finite numbers.", metric, what,
                   i, k, r[k]);
    }
  }
}

void check_pair(MatrixView a, MatrixView b, const char* metric, std::size_t min_rows) {
  VLBIAS_CHECK(a.cols == b.cols, InputError,
               "{}: the first set has {} columns but the second {}; both must come from the same "
               "feature extractor.",
               metric, a.cols, b.cols);
  VLBIAS_CHECK(a.cols > 0, InputError, "{}: the features have no columns.", metric);
  VLBIAS_CHECK(a.rows >= min_rows && b.rows >= min_rows, InputError,
               "{}: the sets have {} and {} rows; each needs at least {}.", metric, a.rows, b.rows,
               min_rows);
  check_finite(a, "first set", metric);
  check_finite(b, "second set", metric);
}

}  // namespace metrics_internal

namespace {

using metrics_internal::check_finite;
using metrics_internal::check_pair;

std::vector<double> column_means(MatrixView x) {
  std::vector<double> mean(x.cols, 0.0);
  for (std::size_t i = 0; i < x.rows; ++i) {
    const float* r = x.row(i);
    for (std::size_t k = 0; k < x.cols; ++k) mean[k] += r[k];
  }
  for (double& m : mean) m /= static_cast<double>(x.rows);
  return mean;
}

// Rows [r0, r1) of x as doubles, (x - mean) * scale, row-major with x.cols columns, at `out`.
void centred_rows(MatrixView x, const std::vector<double>& mean, double scale, std::size_t r0,
                  std::size_t r1, double* out) {
  const std::size_t d = x.cols;
  for (std::size_t i = r0; i < r1; ++i) {
    const float* r = x.row(i);
    double* o = out + (i - r0) * d;
    for (std::size_t k = 0; k < d; ++k) o[k] = (static_cast<double>(r[k]) - mean[k]) * scale;
  }
}

void symmetrize(std::vector<double>& m, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double v = 0.5 * (m[i * n + j] + m[j * n + i]);
      m[i * n + j] = m[j * n + i] = v;
    }
}

// F with F^T F = Sigma (see fid() in the header): the centred, scaled rows when n <= d,
// else the triangular factor, accumulated over chunks of rows (TSQR: R = qr([R; chunk])).
struct CovarianceFactor {
  std::vector<double> f;  // rows x d, row-major
  std::size_t rows = 0;
  double trace = 0.0;  // tr Sigma = sum of squares of the centred, scaled values
};

CovarianceFactor covariance_factor(MatrixView x, const std::vector<double>& mean) {
  const std::size_t n = x.rows, d = x.cols;
  const double scale = 1.0 / std::sqrt(static_cast<double>(n - 1));
  CovarianceFactor out;
  // The trace is summed from the centred data as it is converted (rows in order), not from F,
  // which carries the factorisation's rounding.
  const auto add_squares = [&](const double* v, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) out.trace += v[i] * v[i];
  };
  if (n <= d) {
    out.f.resize(n * d);
    centred_rows(x, mean, scale, 0, n, out.f.data());
    add_squares(out.f.data(), n * d);
    out.rows = n;
  } else {
    const std::size_t chunk = std::max(kFactorChunkRows, d);
    std::size_t have = 0;  // rows of R at the top of out.f
    for (std::size_t r0 = 0; r0 < n; r0 += chunk) {
      const std::size_t r1 = std::min(n, r0 + chunk);
      out.f.resize((have + r1 - r0) * d);
      centred_rows(x, mean, scale, r0, r1, out.f.data() + have * d);
      add_squares(out.f.data() + have * d, (r1 - r0) * d);
      triangular_factor(out.f, have + r1 - r0, d);  // first chunk: min(n, chunk) > d rows
      have = d;
    }
    out.rows = d;
  }
  return out;
}

}  // namespace

GaussianFit fit_gaussian(MatrixView x) {
  VLBIAS_CHECK(x.cols > 0, InputError, "FID: the features have no columns.");
  VLBIAS_CHECK(x.rows >= 2, InputError, "FID: a set has {} rows; each needs at least 2.", x.rows);
  check_finite(x, "set", "FID");
  GaussianFit g;
  g.n = x.rows;
  g.dim = x.cols;
  g.mean = column_means(x);
  CovarianceFactor f = covariance_factor(x, g.mean);
  g.factor = std::move(f.f);
  g.factor_rows = f.rows;
  g.triangular = x.rows > x.cols;
  g.trace = f.trace;
  return g;
}

FidResult fid(const GaussianFit& a, const GaussianFit& b) {
  VLBIAS_CHECK(a.dim == b.dim, InputError,
               "FID: the first set has {} columns but the second {}; both must come from the same "
               "feature extractor.",
               a.dim, b.dim);
  const std::size_t d = a.dim;
  FidResult out;
  out.n_a = a.n;
  out.n_b = b.n;
  out.dim = d;
  for (std::size_t k = 0; k < d; ++k) {
    out.mean_term += (a.mean[k] - b.mean[k]) * (a.mean[k] - b.mean[k]);
  }
  out.trace_a = a.trace;
  out.trace_b = b.trace;
  // K = F_a F_b^T; its transpose has the same singular values, so when one factor is
  // triangular the product is a triangular multiply of the other (half the flops).
  std::vector<double> k;
  std::size_t k_rows = 0, k_cols = 0;
  if (b.triangular || a.triangular) {
    const GaussianFit& tri = b.triangular ? b : a;
    const GaussianFit& other = b.triangular ? a : b;
    k = other.factor;
    k_rows = other.factor_rows;
    k_cols = d;
    trmm_right_upper_t(k_rows, d, tri.factor.data(), d, k.data(), d);
  } else {
    k.resize(a.factor_rows * b.factor_rows);
    k_rows = a.factor_rows;
    k_cols = b.factor_rows;
    dgemm(Transpose::No, Transpose::Yes, a.factor_rows, b.factor_rows, d, 1.0, a.factor.data(), d,
          b.factor.data(), d, 0.0, k.data(), b.factor_rows);
  }
  for (const double s : singular_values(k, k_rows, k_cols)) out.trace_sqrt += s;
  out.fid = out.mean_term + out.trace_a + out.trace_b - 2.0 * out.trace_sqrt;
  return out;
}

FidResult fid(MatrixView a, MatrixView b) {
  check_pair(a, b, "FID", 2);
  return fid(fit_gaussian(a), fit_gaussian(b));
}

// ------------------------------------------------------------------------------------ KID

namespace metrics_internal {

double poly_kernel(double dot, const KidOptions& o, double gamma) {
  const double base = gamma * dot + o.coef0;
  double v = 1.0;
  for (int p = 0; p < o.degree; ++p) v *= base;
  return v;
}

void check_kid_options(const KidOptions& o) {
  VLBIAS_CHECK(o.degree >= 1 && o.degree <= 16, InputError,
               "KID: the kernel degree must be 1 to 16, got {}.", o.degree);
  VLBIAS_CHECK(std::isfinite(o.gamma) && o.gamma >= 0.0, InputError,
               "KID: gamma must be a finite number >= 0 (0 = 1 / dim), got {}.", o.gamma);
  VLBIAS_CHECK(std::isfinite(o.coef0), InputError, "KID: coef0 must be finite, got {}.", o.coef0);
}

}  // namespace metrics_internal

namespace {

using metrics_internal::check_kid_options;
using metrics_internal::check_kid_scale;
using metrics_internal::poly_kernel;

// Unbiased MMD^2 from the dot products of the stacked rows [x (nx); y (ny)]: dots(i, j) gives
// the dot product of stacked rows i and j.
template <typename Dots>
double mmd2_from_dots(std::size_t nx, std::size_t ny, const Dots& dots, const KidOptions& o,
                      double gamma) {
  double sxx = 0.0, syy = 0.0, sxy = 0.0;
  for (std::size_t i = 0; i < nx; ++i) {
    for (std::size_t j = 0; j < nx; ++j)
      if (j != i) sxx += poly_kernel(dots(i, j), o, gamma);
    for (std::size_t j = 0; j < ny; ++j) sxy += poly_kernel(dots(i, nx + j), o, gamma);
  }
  for (std::size_t i = 0; i < ny; ++i)
    for (std::size_t j = 0; j < ny; ++j)
      if (j != i) syy += poly_kernel(dots(nx + i, nx + j), o, gamma);
  const double fx = static_cast<double>(nx), fy = static_cast<double>(ny);
  return sxx / (fx * (fx - 1.0)) + syy / (fy * (fy - 1.0)) - 2.0 * sxy / (fx * fy);
}

// Floats of the dot-product block the stacked estimator holds at once (16 MiB): its memory does
// not grow with the square of the rows (subsets = 0 over 100,000 + 100,000 rows needed 160 GB).
constexpr std::size_t kMaxDotBlockFloats = std::size_t{1} << 22;

// mmd2_from_dots over the stacked rows a[ia] and b[ib], with their float32 dot products
// computed a block of rows at a time (the same sums, in the same order).
double mmd2_stacked(MatrixView a, const std::vector<std::uint32_t>& ia, MatrixView b,
                    const std::vector<std::uint32_t>& ib, const KidOptions& o, double gamma) {
  const std::size_t d = a.cols, nx = ia.size(), ny = ib.size(), n = nx + ny;
  Matrix w(n, d);
  for (std::size_t i = 0; i < nx; ++i) std::copy_n(a.row(ia[i]), d, w.row(i));
  for (std::size_t i = 0; i < ny; ++i) std::copy_n(b.row(ib[i]), d, w.row(nx + i));
  const std::size_t block = std::clamp<std::size_t>(kMaxDotBlockFloats / n, 1, n);
  std::vector<float> g(block * n);
  double sxx = 0.0, syy = 0.0, sxy = 0.0;
  for (std::size_t r0 = 0; r0 < n; r0 += block) {
    const std::size_t r1 = std::min(n, r0 + block);
    gemm_nt(MatrixView(w.row(r0), r1 - r0, d), w, g.data(), n);
    for (std::size_t i = r0; i < r1; ++i) {
      const float* dots = g.data() + (i - r0) * n;
      if (i < nx) {
        for (std::size_t j = 0; j < nx; ++j)
          if (j != i) sxx += poly_kernel(dots[j], o, gamma);
        for (std::size_t j = 0; j < ny; ++j) sxy += poly_kernel(dots[nx + j], o, gamma);
      } else {
        for (std::size_t j = 0; j < ny; ++j)
          if (j != i - nx) syy += poly_kernel(dots[nx + j], o, gamma);
      }
    }
  }
  const double fx = static_cast<double>(nx), fy = static_cast<double>(ny);
  return sxx / (fx * (fx - 1.0)) + syy / (fy * (fy - 1.0)) - 2.0 * sxy / (fx * fy);
}

}  // namespace

namespace metrics_internal {

double max_squared_norm(MatrixView x) {
  double most = 0.0;
  for (std::size_t i = 0; i < x.rows; ++i) {
    const float* r = x.row(i);
    double s = 0.0;
    for (std::size_t k = 0; k < x.cols; ++k) s += static_cast<double>(r[k]) * r[k];
    most = std::max(most, s);
  }
  return most;
}

// Features for which the estimator stays finite, else an InputError (as PRDC refuses features
// whose distances would overflow) instead of "kid": null. The Gram entries are float32 dot
// products, |x . y| <= |x| |y| (every partial sum too), so squared row norms below 1e37 keep
// them finite; the kernel values (gamma |x . y| + |coef0|)^degree, summed over at most
// pairs = (nx + ny)^2 of them, must stay below ~1e300 in double.
void check_kid_scale(MatrixView a, MatrixView b, const KidOptions& o, double gamma,
                     std::size_t rows_per_set) {
  const double s = std::max(max_squared_norm(a), max_squared_norm(b));
  VLBIAS_CHECK(s < 1e37, InputError,
               "KID: a feature row has squared norm {:.3g}; beyond 1e37 the float32 dot products "
               "overflow and no finite KID exists: rescale the features.",
               s);
  const double base = gamma * s + std::fabs(o.coef0);
  const double pairs = 4.0 * static_cast<double>(rows_per_set) * static_cast<double>(rows_per_set);
  const double log10_sum = o.degree * std::log10(std::max(base, 1.0)) + std::log10(pairs);
  VLBIAS_CHECK(log10_sum < 300.0, InputError,
               "KID: the polynomial kernel (gamma x.y + coef0)^{} reaches {:.3g}^{} on these "
               "features and its sums overflow: rescale the features or lower --degree/--coef0.",
               o.degree, base, o.degree);
}

}  // namespace metrics_internal

namespace {

// Subset s of kid(): m rows of each set drawn without replacement from Rng(seed, s) (a partial
// Fisher-Yates shuffle of a's indices, then of b's). Drawn when needed, so the subsets do not
// all live in memory at once.
std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>> draw_subset(
    std::size_t n_a, std::size_t n_b, std::size_t subset_size, std::uint64_t seed, std::size_t s) {
  const auto draw = [&](Rng& rng, std::size_t n) {
    std::vector<std::uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0u);
    for (std::size_t i = 0; i < subset_size; ++i) {
      std::swap(idx[i], idx[i + rng.uniform_index(n - i)]);
    }
    idx.resize(subset_size);
    return idx;
  };
  Rng rng(seed, s);
  std::vector<std::uint32_t> ia = draw(rng, n_a);
  std::vector<std::uint32_t> ib = draw(rng, n_b);
  return {std::move(ia), std::move(ib)};
}

}  // namespace

std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> kid_subsets(
    std::size_t n_a, std::size_t n_b, std::size_t subset_size, std::size_t subsets,
    std::uint64_t seed) {
  stats::check_resamples(subsets, "KID subsets");
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> out(subsets);
  for (std::size_t s = 0; s < subsets; ++s) out[s] = draw_subset(n_a, n_b, subset_size, seed, s);
  return out;
}

double mmd2_unbiased(MatrixView a, const std::vector<std::uint32_t>& ia, MatrixView b,
                     const std::vector<std::uint32_t>& ib, const KidOptions& options) {
  check_kid_options(options);
  VLBIAS_CHECK(ia.size() >= 2 && ib.size() >= 2, InputError,
               "KID: the unbiased MMD^2 needs at least 2 rows per set, got {} and {}.", ia.size(),
               ib.size());
  const double gamma = options.gamma > 0.0 ? options.gamma : 1.0 / static_cast<double>(a.cols);
  return mmd2_stacked(a, ia, b, ib, options, gamma);
}

KidResult kid(MatrixView a, MatrixView b, const KidOptions& options) {
  check_kid_options(options);
  stats::check_resamples(options.subsets, "KID subsets");
  check_pair(a, b, "KID", 2);
  KidResult out;
  out.n_a = a.rows;
  out.n_b = b.rows;
  out.dim = a.cols;
  const double gamma = options.gamma > 0.0 ? options.gamma : 1.0 / static_cast<double>(a.cols);
  if (options.subsets == 0) {
    check_kid_scale(a, b, options, gamma, std::max(a.rows, b.rows));
    std::vector<std::uint32_t> ia(a.rows), ib(b.rows);
    std::iota(ia.begin(), ia.end(), 0u);
    std::iota(ib.begin(), ib.end(), 0u);
    out.kid = mmd2_unbiased(a, ia, b, ib, options);
    out.per_subset = {out.kid};
    out.sd = kNaN;
    out.note = "one unbiased MMD^2 over all rows (subsets = 0)";
    VLBIAS_CHECK(std::isfinite(out.kid), InternalError, "KID over all rows is {}", out.kid);
    return out;
  }
  std::size_t m = options.subset_size;
  VLBIAS_CHECK(m >= 2, InputError, "KID: the subset size must be at least 2, got {}.", m);
  if (m > std::min(a.rows, b.rows)) {
    m = std::min(a.rows, b.rows);
    out.note = fmt::format("subset size reduced from {} to {}, the size of the smaller set",
                           options.subset_size, m);
  }
  check_kid_scale(a, b, options, gamma, m);
  out.subsets = options.subsets;
  out.subset_size = m;
  out.per_subset.resize(options.subsets);
  const std::size_t nz = a.rows + b.rows;
  const double full_flops = static_cast<double>(nz) * static_cast<double>(nz);
  const double subset_flops =
      static_cast<double>(options.subsets) * 4.0 * static_cast<double>(m) * static_cast<double>(m);
  if (nz * nz <= kMaxGramFloats && full_flops < subset_flops) {
    // One Gram matrix of every row, indexed by each subset.
    Matrix z(nz, a.cols);
    std::copy_n(a.data, a.rows * a.cols, z.data.data());
    std::copy_n(b.data, b.rows * b.cols, z.data.data() + a.rows * a.cols);
    std::vector<float> g(nz * nz);
    gemm_nt(z, z, g.data(), nz);
    parallel_for(options.subsets, [&](std::size_t s) {
      const auto drawn = draw_subset(a.rows, b.rows, m, options.seed, s);
      // Named references, not structured bindings: clang 14 cannot capture those.
      const std::vector<std::uint32_t>& ia = drawn.first;
      const std::vector<std::uint32_t>& ib = drawn.second;
      out.per_subset[s] = mmd2_from_dots(
          m, m,
          [&](std::size_t i, std::size_t j) {
            const std::size_t zi = i < m ? ia[i] : a.rows + ib[i - m];
            const std::size_t zj = j < m ? ia[j] : a.rows + ib[j - m];
            return double{g[zi * nz + zj]};
          },
          options, gamma);
    });
  } else {
    parallel_for(options.subsets, [&](std::size_t s) {
      const auto drawn = draw_subset(a.rows, b.rows, m, options.seed, s);
      out.per_subset[s] = mmd2_stacked(a, drawn.first, b, drawn.second, options, gamma);
    });
  }
  double sum = 0.0;
  for (const double v : out.per_subset) sum += v;
  out.kid = sum / static_cast<double>(out.per_subset.size());
  if (out.per_subset.size() > 1) {
    double ss = 0.0;
    for (const double v : out.per_subset) ss += (v - out.kid) * (v - out.kid);
    out.sd = std::sqrt(ss / static_cast<double>(out.per_subset.size() - 1));
  } else {
    out.sd = kNaN;
  }
  // check_kid_scale bounds every kernel sum, so this cannot fail.
  VLBIAS_CHECK(std::isfinite(out.kid), InternalError, "KID over {} subsets is {}", out.subsets,
               out.kid);
  return out;
}

// ---------------------------------------------------------------------------------- Vendi

namespace metrics_internal {

double vendi_of_eigenvalues(const std::vector<double>& w, double q, std::size_t& rank) {
  double entropy = 0.0, power_sum = 0.0, max_w = 0.0;
  rank = 0;
  for (const double v : w) {
    if (!(v > 0.0)) continue;
    ++rank;
    max_w = std::max(max_w, v);
    if (q == 1.0) {
      entropy -= v * std::log(v);
    } else if (std::isfinite(q)) {
      power_sum += std::pow(v, q);
    }
  }
  if (q == 1.0) return std::exp(entropy);
  if (std::isinf(q)) return 1.0 / max_w;
  return std::exp(std::log(power_sum) / (1.0 - q));
}

}  // namespace metrics_internal

VendiResult vendi(MatrixView x, double q) {
  VLBIAS_CHECK(x.rows > 0, InputError, "Vendi: the features have no rows.");
  VLBIAS_CHECK(x.cols > 0, InputError, "Vendi: the features have no columns.");
  VLBIAS_CHECK(q >= 0.0, InputError, "Vendi: the order q must be >= 0 (or inf), got {}.", q);
  check_finite(x, "the set", "Vendi");
  const std::size_t n = x.rows, d = x.cols;
  std::vector<double> inv_norm(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* r = x.row(i);
    double s = 0.0;
    for (std::size_t k = 0; k < d; ++k) s += static_cast<double>(r[k]) * r[k];
    VLBIAS_CHECK(s > 0.0, InputError,
                 "Vendi: row {} is all zeros; its cosine similarity is undefined.", i);
    inv_norm[i] = 1.0 / std::sqrt(s);
  }
  const auto unit_rows = [&](std::size_t r0, std::size_t r1, std::vector<double>& out) {
    out.resize((r1 - r0) * d);
    for (std::size_t i = r0; i < r1; ++i) {
      const float* r = x.row(i);
      for (std::size_t k = 0; k < d; ++k) out[(i - r0) * d + k] = r[k] * inv_norm[i];
    }
  };
  VendiResult out;
  out.q = q;
  out.n = n;
  out.dim = d;
  std::vector<double> k_matrix, rows;
  std::size_t size = 0;
  const double inv_n = 1.0 / static_cast<double>(n);
  if (n <= d) {
    out.gram = "n x n";
    size = n;
    unit_rows(0, n, rows);
    k_matrix.assign(n * n, 0.0);
    dgemm(Transpose::No, Transpose::Yes, n, n, d, inv_n, rows.data(), d, rows.data(), d, 0.0,
          k_matrix.data(), n);
  } else {
    out.gram = "d x d";
    size = d;
    k_matrix.assign(d * d, 0.0);
    for (std::size_t r0 = 0; r0 < n; r0 += kChunkRows) {
      const std::size_t r1 = std::min(n, r0 + kChunkRows);
      unit_rows(r0, r1, rows);
      syrk_tn(d, r1 - r0, inv_n, rows.data(), d, 1.0, k_matrix.data(), d);
    }
  }
  symmetrize(k_matrix, size);
  const std::vector<double> w = symmetric_eigen(k_matrix, size, false);
  out.score = metrics_internal::vendi_of_eigenvalues(w, q, out.rank);
  return out;
}

}  // namespace vlbias
