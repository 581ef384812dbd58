// Bootstrap intervals for FID, KID and Vendi, and FID_inf
// (include/vlbias/metrics/distribution_bootstrap.h).
#include "vlbias/metrics/distribution_bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "distribution_internal.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"

namespace vlbias {

namespace {

// Rows per block when dot products are formed a block at a time (bounded memory).
constexpr std::size_t kBlockRows = 1024;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

void check_bootstrap_options(const DistributionBootstrapOptions& o, const char* metric) {
  VLBIAS_CHECK(o.resamples >= 1, UsageError, "{} bootstrap: at least 1 resample is needed, got 0.",
               metric);
  stats::check_resamples(o.resamples, metric);
  VLBIAS_CHECK(o.level > 0.0 && o.level < 1.0, UsageError,
               "{} bootstrap: the interval level must be in (0, 1), got {}.", metric, o.level);
}

void check_generated_rows(MatrixView g, const char* metric) {
  VLBIAS_CHECK(g.rows >= 2, InputError,
               "{} bootstrap: the generated set has {} row(s); resampling needs at least 2.",
               metric, g.rows);
}

// The rows a replicate holds: distinct row indices (ascending) and their multiplicities.
struct Weights {
  std::vector<std::uint32_t> rows;
  std::vector<double> count;
  std::size_t total = 0;  // sum of the counts (N)
};

Weights weights_of(const std::vector<std::uint32_t>& multiplicity) {
  Weights w;
  for (std::size_t i = 0; i < multiplicity.size(); ++i) {
    if (multiplicity[i] == 0) continue;
    w.rows.push_back(static_cast<std::uint32_t>(i));
    w.count.push_back(multiplicity[i]);
    w.total += multiplicity[i];
  }
  return w;
}

// The B replicates of `statistic` (thread-safe, given the multiplicities of replicate b), with
// the estimate and the raw and recentred percentile intervals (header: "Recentring"); recentred
// replicates are clipped to [lowest, highest], the statistic's range.
template <typename Statistic>
DistributionBootstrap run_bootstrap(std::size_t n, double estimate,
                                    const DistributionBootstrapOptions& o, double lowest,
                                    double highest, const Statistic& statistic) {
  std::vector<double> replicates(o.resamples, stats::kNaN);
  parallel_for(o.resamples, [&](std::size_t b) {
    replicates[b] = statistic(weights_of(bootstrap_multiplicities(n, o.seed, b)));
  });
  DistributionBootstrap out;
  out.estimate = estimate;
  std::vector<double> sorted = replicates;
  std::sort(sorted.begin(), sorted.end());
  out.shift = estimate - stats::percentile_sorted(sorted, 50.0);
  std::vector<double> shifted = replicates;
  for (double& v : shifted) v = std::clamp(v + out.shift, lowest, highest);
  out.raw = stats::percentile_interval(replicates, o.level, o.seed);
  out.ci = stats::percentile_interval(std::move(shifted), o.level, o.seed);
  if (o.keep_replicates) out.replicates = std::move(replicates);
  return out;
}

// FID of the real fit against generated rows weighted by counts (see the header): everything
// that does not depend on the weights is computed in the constructor.
class WeightedFid {
 public:
  WeightedFid(const GaussianFit& real, MatrixView g) : real_(real), n_(g.rows), d_(g.cols) {
    VLBIAS_CHECK(real.dim == g.cols, InputError,
                 "FID: the real set has {} columns but the generated set {}; both must come from "
                 "the same feature extractor.",
                 real.dim, g.cols);
    metrics_internal::check_finite(g, "generated set", "FID");
    std::vector<double> mean(d_, 0.0);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t k = 0; k < d_; ++k) mean[k] += g.row(i)[k];
    for (double& m : mean) m /= static_cast<double>(n_);
    y_.resize(n_ * d_);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t k = 0; k < d_; ++k) y_[i * d_ + k] = g.row(i)[k] - mean[k];
    e_.resize(d_);
    for (std::size_t k = 0; k < d_; ++k) e_[k] = real.mean[k] - mean[k];
    r_ = real.factor_rows;
    p_.assign(r_ * n_, 0.0);
    dgemm(Transpose::No, Transpose::Yes, r_, n_, d_, 1.0, real.factor.data(), d_, y_.data(), d_,
          0.0, p_.data(), n_);
  }

  FidResult operator()(const Weights& w) const {
    const std::size_t m = w.rows.size();
    const double total = static_cast<double>(w.total);
    std::vector<double> delta(d_, 0.0);  // the weighted mean minus the full mean
    for (std::size_t j = 0; j < m; ++j) {
      const double* y = y_.data() + std::size_t{w.rows[j]} * d_;
      for (std::size_t k = 0; k < d_; ++k) delta[k] += w.count[j] * y[k];
    }
    for (double& v : delta) v /= total;
    FidResult out;
    out.n_a = real_.n;
    out.n_b = w.total;
    out.dim = d_;
    out.trace_a = real_.trace;
    for (std::size_t k = 0; k < d_; ++k) out.mean_term += (e_[k] - delta[k]) * (e_[k] - delta[k]);
    double squares = 0.0;  // sum c_i |y_i - delta|^2, summed directly (no cancellation)
    for (std::size_t j = 0; j < m; ++j) {
      const double* y = y_.data() + std::size_t{w.rows[j]} * d_;
      double s = 0.0;
      for (std::size_t k = 0; k < d_; ++k) s += (y[k] - delta[k]) * (y[k] - delta[k]);
      squares += w.count[j] * s;
    }
    out.trace_b = squares / (total - 1.0);
    // K = F (Y_S - delta)^T D^(1/2): F delta = P c / N, so only P's columns are read.
    std::vector<double> k(r_ * m);
    for (std::size_t a = 0; a < r_; ++a) {
      const double* p = p_.data() + a * n_;
      double q = 0.0;
      for (std::size_t j = 0; j < m; ++j) q += w.count[j] * p[w.rows[j]];
      q /= total;
      for (std::size_t j = 0; j < m; ++j) {
        k[a * m + j] = (p[w.rows[j]] - q) * std::sqrt(w.count[j] / (total - 1.0));
      }
    }
    for (const double s : singular_values(k, r_, m)) out.trace_sqrt += s;
    out.fid = out.mean_term + out.trace_a + out.trace_b - 2.0 * out.trace_sqrt;
    return out;
  }

  std::size_t rows() const { return n_; }

 private:
  const GaussianFit& real_;
  std::size_t n_, d_, r_ = 0;
  std::vector<double> y_;  // generated rows minus their mean, n x d
  std::vector<double> e_;  // real mean minus generated mean
  std::vector<double> p_;  // F Y^T, r x n
};

Weights all_rows(std::size_t n) {
  Weights w;
  w.rows.resize(n);
  std::iota(w.rows.begin(), w.rows.end(), 0u);
  w.count.assign(n, 1.0);
  w.total = n;
  return w;
}

}  // namespace

std::vector<std::uint32_t> bootstrap_multiplicities(std::size_t n, std::uint64_t seed,
                                                    std::size_t b) {
  std::vector<std::uint32_t> c(n, 0);
  Rng rng(seed, b);
  for (std::size_t t = 0; t < n; ++t) ++c[rng.uniform_index(n)];
  return c;
}

DistributionBootstrap fid_bootstrap(const GaussianFit& real, MatrixView generated,
                                    const DistributionBootstrapOptions& options) {
  check_bootstrap_options(options, "FID");
  check_generated_rows(generated, "FID");
  const WeightedFid fid_of(real, generated);
  const double estimate = fid(real, fit_gaussian(generated)).fid;
  return run_bootstrap(generated.rows, estimate, options, 0.0, kInfinity,
                       [&](const Weights& w) { return fid_of(w).fid; });
}

DistributionBootstrap fid_bootstrap(MatrixView real, MatrixView generated,
                                    const DistributionBootstrapOptions& options) {
  check_bootstrap_options(options, "FID");
  check_generated_rows(generated, "FID");
  metrics_internal::check_pair(real, generated, "FID", 2);
  return fid_bootstrap(fit_gaussian(real), generated, options);
}

// ------------------------------------------------------------------------------------ KID

DistributionBootstrap kid_bootstrap(MatrixView real, MatrixView generated, const KidOptions& kernel,
                                    const DistributionBootstrapOptions& options) {
  check_bootstrap_options(options, "KID");
  check_generated_rows(generated, "KID");
  metrics_internal::check_kid_options(kernel);
  metrics_internal::check_pair(real, generated, "KID", 2);
  const std::size_t na = real.rows, n = generated.rows, d = real.cols;
  VLBIAS_CHECK(n <= kKidBootstrapMaxRows, InputError,
               "KID bootstrap: the generated set has {} rows; the kernel matrix it keeps allows at "
               "most {} (draw a subset of the generated rows first).",
               n, kKidBootstrapMaxRows);
  const double gamma = kernel.gamma > 0.0 ? kernel.gamma : 1.0 / static_cast<double>(d);
  metrics_internal::check_kid_scale(real, generated, kernel, gamma, std::max(na, n));
  const auto k_of = [&](float dot) { return metrics_internal::poly_kernel(dot, kernel, gamma); };
  // Real-real off-diagonal sum and each generated row's sum against the real rows.
  double sxx = 0.0;
  std::vector<double> cross(n, 0.0);
  std::vector<float> dots;
  for (std::size_t r0 = 0; r0 < na; r0 += kBlockRows) {
    const std::size_t r1 = std::min(na, r0 + kBlockRows);
    const MatrixView block(real.row(r0), r1 - r0, d);
    dots.resize((r1 - r0) * std::max(na, n));
    gemm_nt(block, real, dots.data(), na);
    for (std::size_t i = r0; i < r1; ++i)
      for (std::size_t j = 0; j < na; ++j)
        if (j != i) sxx += k_of(dots[(i - r0) * na + j]);
    gemm_nt(block, generated, dots.data(), n);
    for (std::size_t i = r0; i < r1; ++i)
      for (std::size_t j = 0; j < n; ++j) cross[j] += k_of(dots[(i - r0) * n + j]);
  }
  std::vector<double> kgg(n * n);
  dots.resize(kBlockRows * n);
  for (std::size_t r0 = 0; r0 < n; r0 += kBlockRows) {
    const std::size_t r1 = std::min(n, r0 + kBlockRows);
    gemm_nt(MatrixView(generated.row(r0), r1 - r0, d), generated, dots.data(), n);
    for (std::size_t i = r0 * n; i < r1 * n; ++i) kgg[i] = k_of(dots[i - r0 * n]);
  }
  const double fa = static_cast<double>(na);
  const auto mmd2 = [&](const Weights& w) {
    const std::size_t m = w.rows.size();
    double syy = 0.0, sxy = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      const double* row = kgg.data() + std::size_t{w.rows[i]} * n;
      double s = 0.0;
      for (std::size_t j = 0; j < m; ++j) s += w.count[j] * row[w.rows[j]];
      // Pairs of distinct positions: a row drawn c times meets itself c (c - 1) times.
      syy += w.count[i] * (s - row[w.rows[i]]);
      sxy += w.count[i] * cross[w.rows[i]];
    }
    const double fy = static_cast<double>(w.total);
    return sxx / (fa * (fa - 1.0)) + syy / (fy * (fy - 1.0)) - 2.0 * sxy / (fa * fy);
  };
  return run_bootstrap(n, mmd2(all_rows(n)), options, -kInfinity, kInfinity, mmd2);
}

// ---------------------------------------------------------------------------------- Vendi

DistributionBootstrap vendi_bootstrap(MatrixView x, double q,
                                      const DistributionBootstrapOptions& options) {
  check_bootstrap_options(options, "Vendi");
  check_generated_rows(x, "Vendi");
  const double estimate = vendi(x, q).score;  // also checks q, zero rows and finiteness
  const std::size_t n = x.rows, d = x.cols;
  std::vector<double> u(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const float* r = x.row(i);
    double s = 0.0;
    for (std::size_t k = 0; k < d; ++k) s += static_cast<double>(r[k]) * r[k];
    const double inv = 1.0 / std::sqrt(s);
    for (std::size_t k = 0; k < d; ++k) u[i * d + k] = r[k] * inv;
  }
  const bool gram_route = n <= d;
  std::vector<double> gram;
  if (gram_route) {
    gram.assign(n * n, 0.0);
    dgemm(Transpose::No, Transpose::Yes, n, n, d, 1.0, u.data(), d, u.data(), d, 0.0, gram.data(),
          n);
  }
  const double inv_n = 1.0 / static_cast<double>(n);
  const auto score = [&](const Weights& w) {
    const std::size_t m = w.rows.size();
    std::vector<double> k;
    std::size_t size = 0;
    if (gram_route) {
      // D^(1/2) G_S D^(1/2) / n shares its non-zero eigenvalues with the resample's K / n.
      size = m;
      k.resize(m * m);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j)
          k[i * m + j] = std::sqrt(w.count[i] * w.count[j]) *
                         gram[std::size_t{w.rows[i]} * n + w.rows[j]] * inv_n;
    } else {
      size = d;
      std::vector<double> scaled(m * d);
      for (std::size_t j = 0; j < m; ++j) {
        const double s = std::sqrt(w.count[j]);
        const double* r = u.data() + std::size_t{w.rows[j]} * d;
        for (std::size_t c = 0; c < d; ++c) scaled[j * d + c] = r[c] * s;
      }
      k.assign(d * d, 0.0);
      syrk_tn(d, m, inv_n, scaled.data(), d, 0.0, k.data(), d);
    }
    for (std::size_t i = 0; i < size; ++i)
      for (std::size_t j = i + 1; j < size; ++j)
        k[i * size + j] = k[j * size + i] = 0.5 * (k[i * size + j] + k[j * size + i]);
    std::size_t rank = 0;
    return metrics_internal::vendi_of_eigenvalues(symmetric_eigen(k, size, false), q, rank);
  };
  return run_bootstrap(n, estimate, options, 1.0, static_cast<double>(n), score);
}

// -------------------------------------------------------------------------------- FID_inf

std::vector<std::uint32_t> fid_inf_subset(std::size_t n, std::size_t size, std::uint64_t seed,
                                          std::size_t p) {
  std::vector<std::uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  Rng rng(seed, p);
  for (std::size_t i = 0; i < size; ++i) std::swap(idx[i], idx[i + rng.uniform_index(n - i)]);
  idx.resize(size);
  std::sort(idx.begin(), idx.end());
  return idx;
}

FidInfResult fid_infinity(const GaussianFit& real, MatrixView generated,
                          const FidInfOptions& options) {
  const std::size_t n = generated.rows;
  VLBIAS_CHECK(options.points >= 2, UsageError,
               "FID_inf: at least 2 sizes are needed to fit a line, got {}.", options.points);
  stats::check_resamples(options.points, "FID_inf points");
  VLBIAS_CHECK(n >= 3, InputError,
               "FID_inf: the generated set has {} rows; extrapolating needs at least 3 (two "
               "subset sizes of at least 2 rows).",
               n);
  const std::size_t lo =
      options.min_size == 0 ? std::max<std::size_t>(2, n / 10) : options.min_size;
  VLBIAS_CHECK(lo >= 2 && lo < n, UsageError,
               "FID_inf: the smallest size must be at least 2 and below the {} generated rows, "
               "got {}.",
               n, lo);
  FidInfResult out;
  out.points = options.points;
  out.min_size = lo;
  out.seed = options.seed;
  out.sizes.resize(options.points);
  // numpy.linspace(lo, n, points).astype(int): start + p * step, the last one n, truncated.
  const double step = static_cast<double>(n - lo) / static_cast<double>(options.points - 1);
  for (std::size_t p = 0; p < options.points; ++p) {
    const double v = p + 1 == options.points
                         ? static_cast<double>(n)
                         : static_cast<double>(p) * step + static_cast<double>(lo);
    out.sizes[p] = static_cast<std::size_t>(v);
  }
  const WeightedFid fid_of(real, generated);
  out.fids.resize(options.points);
  parallel_for(options.points, [&](std::size_t p) {
    Weights w;
    w.rows = fid_inf_subset(n, out.sizes[p], options.seed, p);
    w.count.assign(w.rows.size(), 1.0);
    w.total = w.rows.size();
    out.fids[p] = fid_of(w).fid;
  });
  // Least squares of FID_N on 1 / N (Chong & Forsyth 2020, Eq. 4's linear fit).
  const double np = static_cast<double>(options.points);
  double mx = 0.0, my = 0.0;
  for (std::size_t p = 0; p < options.points; ++p) {
    mx += 1.0 / static_cast<double>(out.sizes[p]);
    my += out.fids[p];
  }
  mx /= np;
  my /= np;
  double sxx = 0.0, sxy = 0.0;
  for (std::size_t p = 0; p < options.points; ++p) {
    const double dx = 1.0 / static_cast<double>(out.sizes[p]) - mx;
    sxx += dx * dx;
    sxy += dx * (out.fids[p] - my);
  }
  VLBIAS_CHECK(sxx > 0.0, UsageError,
               "FID_inf: every point has the same size N = {}; use a smaller minimum size.",
               out.sizes[0]);
  out.slope = sxy / sxx;
  out.fid_inf = my - out.slope * mx;
  return out;
}

}  // namespace vlbias
