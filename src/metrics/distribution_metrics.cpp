// FID, KID and the Vendi score (include/vlbias/distribution_metrics.h).
#include "vlbias/distribution_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "vlbias/blas.h"
#include "vlbias/error.h"
#include "vlbias/parallel.h"
#include "vlbias/rng.h"

namespace vlbias::metrics {

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

namespace {

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

// Dot products of the stacked rows a[ia] and b[ib], (|ia| + |ib|)^2 floats.
std::vector<float> stacked_dots(MatrixView a, const std::vector<std::uint32_t>& ia, MatrixView b,
                                const std::vector<std::uint32_t>& ib) {
  const std::size_t d = a.cols, n = ia.size() + ib.size();
  Matrix w(n, d);
  for (std::size_t i = 0; i < ia.size(); ++i) std::copy_n(a.row(ia[i]), d, w.row(i));
  for (std::size_t i = 0; i < ib.size(); ++i) std::copy_n(b.row(ib[i]), d, w.row(ia.size() + i));
  std::vector<float> g(n * n);
  gemm_nt(w, w, g.data(), n);
  return g;
}

}  // namespace

std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> kid_subsets(
    std::size_t n_a, std::size_t n_b, std::size_t subset_size, std::size_t subsets,
    std::uint64_t seed) {
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> out(subsets);
  const auto draw = [&](Rng& rng, std::size_t n) {
    std::vector<std::uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0u);
    for (std::size_t i = 0; i < subset_size; ++i) {
      std::swap(idx[i], idx[i + rng.uniform_index(n - i)]);
    }
    idx.resize(subset_size);
    return idx;
  };
  for (std::size_t s = 0; s < subsets; ++s) {
    Rng rng(seed, s);
    out[s].first = draw(rng, n_a);
    out[s].second = draw(rng, n_b);
  }
  return out;
}

double mmd2_unbiased(MatrixView a, const std::vector<std::uint32_t>& ia, MatrixView b,
                     const std::vector<std::uint32_t>& ib, const KidOptions& options) {
  check_kid_options(options);
  VLBIAS_CHECK(ia.size() >= 2 && ib.size() >= 2, InputError,
               "KID: the unbiased MMD^2 needs at least 2 rows per set, got {} and {}.", ia.size(),
               ib.size());
  const double gamma = options.gamma > 0.0 ? options.gamma : 1.0 / static_cast<double>(a.cols);
  const std::vector<float> g = stacked_dots(a, ia, b, ib);
  const std::size_t n = ia.size() + ib.size();
  return mmd2_from_dots(
      ia.size(), ib.size(), [&](std::size_t i, std::size_t j) { return double{g[i * n + j]}; },
      options, gamma);
}

KidResult kid(MatrixView a, MatrixView b, const KidOptions& options) {
  check_kid_options(options);
  check_pair(a, b, "KID", 2);
  KidResult out;
  out.n_a = a.rows;
  out.n_b = b.rows;
  out.dim = a.cols;
  const double gamma = options.gamma > 0.0 ? options.gamma : 1.0 / static_cast<double>(a.cols);
  if (options.subsets == 0) {
    std::vector<std::uint32_t> ia(a.rows), ib(b.rows);
    std::iota(ia.begin(), ia.end(), 0u);
    std::iota(ib.begin(), ib.end(), 0u);
    out.kid = mmd2_unbiased(a, ia, b, ib, options);
    out.per_subset = {out.kid};
    out.sd = kNaN;
    out.note = "one unbiased MMD^2 over all rows (subsets = 0)";
    return out;
  }
  std::size_t m = options.subset_size;
  VLBIAS_CHECK(m >= 2, InputError, "KID: the subset size must be at least 2, got {}.", m);
  if (m > std::min(a.rows, b.rows)) {
    m = std::min(a.rows, b.rows);
    out.note = fmt::format("subset size reduced from {} to {}, the size of the smaller set",
                           options.subset_size, m);
  }
  out.subsets = options.subsets;
  out.subset_size = m;
  const auto subsets = kid_subsets(a.rows, b.rows, m, options.subsets, options.seed);
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
      // Named references, not structured bindings: clang 14 cannot capture those.
      const std::vector<std::uint32_t>& ia = subsets[s].first;
      const std::vector<std::uint32_t>& ib = subsets[s].second;
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
      const auto& [ia, ib] = subsets[s];
      const std::vector<float> g = stacked_dots(a, ia, b, ib);
      out.per_subset[s] = mmd2_from_dots(
          m, m, [&](std::size_t i, std::size_t j) { return double{g[i * 2 * m + j]}; }, options,
          gamma);
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
  return out;
}

// ---------------------------------------------------------------------------------- Vendi

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
  double entropy = 0.0, power_sum = 0.0, max_w = 0.0;
  for (const double v : w) {
    if (!(v > 0.0)) continue;
    ++out.rank;
    max_w = std::max(max_w, v);
    if (q == 1.0) {
      entropy -= v * std::log(v);
    } else if (std::isfinite(q)) {
      power_sum += std::pow(v, q);
    }
  }
  if (q == 1.0) {
    out.score = std::exp(entropy);
  } else if (std::isinf(q)) {
    out.score = 1.0 / max_w;
  } else {
    out.score = std::exp(std::log(power_sum) / (1.0 - q));
  }
  return out;
}

}  // namespace vlbias::metrics
