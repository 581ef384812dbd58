// PRDC with exact nearest neighbours from GEMM distance tiles (include/vlbias/metrics/prdc.h).
//
// Every squared distance is first taken from a float32 GEMM tile as
// a = |x|^2 + |y|^2 - 2 fl(x.y) together with a bound e such that the exact value t lies in
// [a - e, a + e]; only comparisons the interval cannot settle, and the few candidates for a
// k-th nearest neighbour, are recomputed exactly in double. The bound (Higham, "Accuracy and
// Stability of Numerical Algorithms", eq. 3.5, for any summation order, with or without FMA):
//   |fl(x.y) - x.y| <= gamma_d sum_k |x_k y_k| <= gamma_d |x| |y|,  gamma_d = d u / (1 - d u),
// u = 2^-24, so the GEMM part of a is off by at most 2 gamma_d |x||y|. The squared norms are
// double sums of exact products (error <= (d - 1) 2^-53 |x|^2), the exact recomputation itself
// rounds by at most (d + 1) 2^-53 t <= (d + 1) 2^-52 (|x|^2 + |y|^2), and forming a, a - e and
// a + e adds a few roundings of 2^-53: all inside sum_coef (|x|^2 + |y|^2) below. Products in
// the subnormal range add at most 2^-150 each (abs_term).
#include "vlbias/metrics/prdc.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

const char* to_string(BallRule rule) {
  return rule == BallRule::Strict ? "strict (d < r)" : "inclusive (d <= r)";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Edge of the square tiles of the k-NN pass (a 512 x 512 float tile is 1 MiB: it stays in L2
// while its columns are read for the second row set).
constexpr std::size_t kKnnTile = 512;
// Tiles of the real x fake pass: real rows per task and fake columns per GEMM.
constexpr std::size_t kCrossRows = 256;
constexpr std::size_t kCrossCols = 1024;
// |value| above which d * value^2 could overflow float32 in the GEMM.
constexpr double kMaxAbsValue = 1e17;

// A point set and the per-row quantities the tile bounds need.
struct Points {
  MatrixView x;
  std::vector<double> sq;    // |x_i|^2
  std::vector<double> norm;  // |x_i|
};

Points prepare(MatrixView x, const std::string& what) {
  Points p;
  p.x = x;
  p.sq.resize(x.rows);
  p.norm.resize(x.rows);
  for (std::size_t i = 0; i < x.rows; ++i) {
    const float* r = x.row(i);
    double s = 0.0;
    for (std::size_t k = 0; k < x.cols; ++k) {
      const double v = r[k];
      if (!(std::abs(v) <= kMaxAbsValue)) [[unlikely]] {
        VLBIAS_CHECK(std::isfinite(v), InputError,
                     "{}: row {}, column {} is {}; features must be finite numbers.", what, i, k,
                     v);
        VLBIAS_FAIL(InputError,
                    "{}: row {}, column {} is {}; feature values beyond +-1e17 are not supported "
                    "(float32 squared distances would overflow): rescale the features.",
                    what, i, k, v);
      }
      s += v * v;
    }
    p.sq[i] = s;
    p.norm[i] = std::sqrt(s);
  }
  return p;
}

struct ErrorModel {
  double dot_coef = 0.0;  // multiplies |x| |y|
  double sum_coef = 0.0;  // multiplies |x|^2 + |y|^2
  double abs_term = 0.0;

  ErrorModel(std::size_t d, const std::string& what) {
    const double du = static_cast<double>(d) * 0x1p-24;
    VLBIAS_CHECK(du < 0.25, InputError,
                 "{}: {} columns; exact float32 distance bounds need fewer than 4,194,304.", what,
                 d);
    dot_coef = 2.0 * (du / (1.0 - du)) * (1.0 + 1e-9) + 0x1p-48;
    sum_coef = (static_cast<double>(d) + 16.0) * 0x1p-52;
    abs_term = std::ldexp(static_cast<double>(d) + 4.0, -147);
  }
};

// Exact (double) squared distance.
inline double exact_sq(const float* a, const float* b, std::size_t d) {
  double s = 0.0;
  for (std::size_t k = 0; k < d; ++k) {
    const double t = static_cast<double>(a[k]) - static_cast<double>(b[k]);
    s += t * t;
  }
  return s;
}

// Row i of a tile c (n values): lo[j] = a - e and width[j] = 2 e, so the exact squared
// distance lies in [lo[j], lo[j] + width[j]]. A branch-free loop the compiler vectorises.
inline void tile_row_bounds(const float* c, std::size_t n, double sx, double nx, const double* sy,
                            const double* ny, const ErrorModel& em, double* lo, double* width) {
  const double cx = em.dot_coef * nx;
  for (std::size_t j = 0; j < n; ++j) {
    const double a = sx + sy[j] - 2.0 * static_cast<double>(c[j]);
    const double e = cx * ny[j] + em.sum_coef * (sx + sy[j]) + em.abs_term;
    lo[j] = a - e;
    width[j] = 2.0 * e;
  }
}

// Whether the exact squared distance t in [lo, hi] is inside squared radius r2: t < r2
// (strict) or t <= r2; `exact` computes t when the interval straddles r2.
template <typename Exact>
inline bool inside(double lo, double hi, double r2, bool strict, const Exact& exact) {
  if (strict) {
    if (hi < r2) return true;
    if (lo >= r2) return false;
    return exact() < r2;
  }
  if (hi <= r2) return true;
  if (lo > r2) return false;
  return exact() <= r2;
}

// Streaming k-th smallest exact squared distance of one row.
//
// Candidates are offered with their interval [lo, hi]. `bound` is a valid upper bound of the
// row's k-th smallest exact value: the k-th smallest hi offered (k distinct points lie at or
// below it) or the k-th smallest exact value refined so far. A point with lo >= bound cannot
// lower the k-th value (k points already lie at or below it), so it is not offered. Pending
// candidates are refined exactly in batches; the exact max-heap keeps the k smallest. When it
// holds k zeros nothing can lower the answer (duplicates), and the row stops taking offers.
struct KnnRow {
  std::vector<double> hi_heap;     // max-heap: the k smallest hi offered
  std::vector<double> exact_heap;  // max-heap: the k smallest exact values refined
  std::vector<std::uint32_t> pending;
};

class KnnRows {
 public:
  KnnRows(std::size_t n, std::size_t k) : rows_(n), bound_(n, kInf), k_(k), cap_(4 * k + 60) {}

  double bound(std::size_t i) const { return bound_[i]; }

  // Offers point j to row i. `exact(j)` gives the exact squared distance d(i, j).
  template <typename Exact>
  void offer(std::size_t i, std::uint32_t j, double hi, const Exact& exact) {
    KnnRow& r = rows_[i];
    r.pending.push_back(j);
    keep_smallest(r.hi_heap, hi);
    if (r.pending.size() >= cap_) refine(r, exact);
    update_bound(i);
  }

  // Refines what is pending; returns the row's k-th smallest exact squared distance.
  template <typename Exact>
  double finish(std::size_t i, const Exact& exact) {
    KnnRow& r = rows_[i];
    refine(r, exact);
    assert(r.exact_heap.size() == k_);
    const double v = r.exact_heap.front();
    r = KnnRow();  // free the row's memory
    return v;
  }

 private:
  // Keeps the k smallest values seen in the max-heap `heap`.
  void keep_smallest(std::vector<double>& heap, double v) const {
    if (heap.size() < k_) {
      heap.push_back(v);
      std::push_heap(heap.begin(), heap.end());
    } else if (v < heap.front()) {
      std::pop_heap(heap.begin(), heap.end());
      heap.back() = v;
      std::push_heap(heap.begin(), heap.end());
    }
  }

  template <typename Exact>
  void refine(KnnRow& r, const Exact& exact) {
    for (const std::uint32_t j : r.pending) keep_smallest(r.exact_heap, exact(j));
    r.pending.clear();
  }

  void update_bound(std::size_t i) {
    const KnnRow& r = rows_[i];
    double b = kInf;
    if (r.hi_heap.size() == k_) b = r.hi_heap.front();
    if (r.exact_heap.size() == k_) {
      // k exact zeros: no distance can be smaller, so no offer is needed any more.
      b = r.exact_heap.front() == 0.0 ? -kInf : std::min(b, r.exact_heap.front());
    }
    bound_[i] = b;
  }

  std::vector<KnnRow> rows_;
  std::vector<double> bound_;
  std::size_t k_;
  std::size_t cap_;
};

std::vector<double> knn_radii(const Points& p, std::size_t k, const ErrorModel& em,
                              const char* progress_label = nullptr) {
  const std::size_t n = p.x.rows, d = p.x.cols;
  const float* x = p.x.data;
  const std::size_t blocks = (n + kKnnTile - 1) / kKnnTile;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> tiles;
  for (std::size_t a = 0; a < blocks; ++a)
    for (std::size_t b = a; b < blocks; ++b)
      tiles.emplace_back(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
  KnnRows rows(n, k);
  std::vector<std::mutex> locks(blocks);
  std::unique_ptr<Progress> progress;
  if (progress_label != nullptr)
    progress = std::make_unique<Progress>(progress_label, tiles.size());
  // Tile (A, B) with B >= A: the distances of rows of block A to rows of block B, offered to
  // the rows of A and (off the diagonal) to the rows of B. Each row's state is guarded by its
  // block's lock; the answer does not depend on the order of offers (see KnnRow).
  parallel_for(tiles.size(), [&](std::size_t t) {
    const auto [a, b] = tiles[t];
    const std::size_t i0 = a * kKnnTile, i1 = std::min(n, i0 + kKnnTile);
    const std::size_t j0 = b * kKnnTile, j1 = std::min(n, j0 + kKnnTile);
    const std::size_t rows_n = i1 - i0, cols_n = j1 - j0;
    std::vector<float> c(rows_n * cols_n);
    std::vector<double> lo(cols_n), width(cols_n);
    sgemm(Transpose::No, Transpose::Yes, rows_n, cols_n, d, 1.0f, x + i0 * d, d, x + j0 * d, d,
          0.0f, c.data(), cols_n);
    std::unique_lock<std::mutex> lock_a(locks[a], std::defer_lock), lock_b;
    if (a == b) {
      lock_a.lock();
    } else {
      lock_b = std::unique_lock<std::mutex>(locks[b], std::defer_lock);
      std::lock(lock_a, lock_b);
    }
    for (std::size_t i = i0; i < i1; ++i) {
      tile_row_bounds(c.data() + (i - i0) * cols_n, cols_n, p.sq[i], p.norm[i], p.sq.data() + j0,
                      p.norm.data() + j0, em, lo.data(), width.data());
      const float* xi = x + i * d;
      for (std::size_t jj = 0; jj < cols_n; ++jj) {
        const std::size_t j = j0 + jj;
        const double l = lo[jj];
        if (l < rows.bound(i) && j != i) {
          rows.offer(i, static_cast<std::uint32_t>(j), l + width[jj],
                     [&](std::uint32_t q) { return exact_sq(xi, x + std::size_t{q} * d, d); });
        }
        if (a != b && l < rows.bound(j)) {
          const float* xj = x + j * d;
          rows.offer(j, static_cast<std::uint32_t>(i), l + width[jj],
                     [&](std::uint32_t q) { return exact_sq(xj, x + std::size_t{q} * d, d); });
        }
      }
    }
    if (progress) progress->advance();
  });
  if (progress) progress->finish();
  std::vector<double> radii(n);
  parallel_chunks(n, 256, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const float* xi = x + i * d;
      radii[i] =
          rows.finish(i, [&](std::uint32_t q) { return exact_sq(xi, x + std::size_t{q} * d, d); });
    }
  });
  return radii;
}

void check_k(std::size_t k, std::size_t rows, const std::string& what) {
  VLBIAS_CHECK(k > 0, InputError, "PRDC: k must be at least 1.");
  VLBIAS_CHECK(rows > k, InputError,
               "{}: {} rows; the k-th nearest neighbour (k = {}) needs at least {} rows.", what,
               rows, k, k + 1);
}

PrdcResult measure(const Points& pr, std::span<const double> real_radius_squared, MatrixView fake,
                   const PrdcOptions& options);

}  // namespace

std::vector<double> knn_radii_squared(MatrixView x, std::size_t k, const std::string& what) {
  check_k(k, x.rows, what);
  const Points p = prepare(x, what);
  return knn_radii(p, k, ErrorModel(x.cols, what));
}

PrdcResult prdc(MatrixView real, MatrixView fake, const PrdcOptions& options) {
  check_k(options.k, real.rows, "real features");
  VLBIAS_CHECK(real.cols == fake.cols, InputError,
               "PRDC: real features have {} columns but generated features {}; both must come "
               "from the same feature extractor.",
               real.cols, fake.cols);
  VLBIAS_CHECK(fake.rows > 0, InputError, "PRDC: the generated features have no rows.");
  const Points pr = prepare(real, "real features");  // once, for the radii and the rest
  const std::vector<double> radii = knn_radii(pr, options.k, ErrorModel(real.cols, "features"),
                                              options.progress ? "prdc: real radii" : nullptr);
  return measure(pr, radii, fake, options);
}

PrdcResult prdc_with_real_radii(MatrixView real, std::span<const double> real_radius_squared,
                                MatrixView fake, const PrdcOptions& options) {
  const std::size_t k = options.k;
  check_k(k, real.rows, "real features");
  VLBIAS_CHECK(real_radius_squared.size() == real.rows, InternalError,
               "prdc_with_real_radii: {} radii for {} real rows", real_radius_squared.size(),
               real.rows);
  VLBIAS_CHECK(fake.rows > 0, InputError, "PRDC: the generated features have no rows.");
  VLBIAS_CHECK(real.cols == fake.cols, InputError,
               "PRDC: real features have {} columns but generated features {}; both must come "
               "from the same feature extractor.",
               real.cols, fake.cols);
  return measure(prepare(real, "real features"), real_radius_squared, fake, options);
}

namespace {

// What the real x fake pass finds.
struct CrossCounts {
  std::vector<std::uint32_t> ball_count;  // per fake row: real balls holding it
  std::vector<std::uint8_t> covered;      // per real row: its ball holds a fake row
  std::vector<std::uint8_t> in_fake;      // per real row: inside a fake ball (recall)
  // Per task (kCrossRows real rows): the (real, fake) pairs of ball members.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> members;
};

// The real x fake pass, in tiles: an sgemm per tile, the error bounds, and an exact distance
// only for pairs the bounds cannot decide. `fake_radii` empty: no recall.
CrossCounts cross_pass(const Points& pr, const Points& pf,
                       std::span<const double> real_radius_squared,
                       const std::vector<double>& fake_radii, const ErrorModel& em,
                       const PrdcOptions& options) {
  const MatrixView real = pr.x, fake = pf.x;
  const std::size_t nr = real.rows, nf = fake.rows, d = real.cols;
  const bool strict = options.rule == BallRule::Strict;
  const bool with_recall = !fake_radii.empty();
  std::vector<std::atomic<std::uint32_t>> ball_count(nf);
  for (auto& v : ball_count) v.store(0, std::memory_order_relaxed);
  CrossCounts out;
  out.covered.assign(nr, 0);
  out.in_fake.assign(nr, 0);
  std::vector<std::uint8_t>& covered = out.covered;
  std::vector<std::uint8_t>& in_fake = out.in_fake;
  const std::size_t tasks = (nr + kCrossRows - 1) / kCrossRows;
  out.members.resize(options.ball_members ? tasks : 0);
  const float* xr = real.data;
  const float* xf = fake.data;
  std::unique_ptr<Progress> progress;
  if (options.progress) progress = std::make_unique<Progress>("prdc: real x generated", tasks);
  parallel_for(tasks, [&](std::size_t t) {
    const std::size_t i0 = t * kCrossRows, i1 = std::min(nr, i0 + kCrossRows);
    const std::size_t rows_n = i1 - i0;
    const std::size_t cols_max = std::min(nf, kCrossCols);
    std::vector<float> c(rows_n * cols_max);
    std::vector<double> lo(cols_max), width(cols_max);
    for (std::size_t j0 = 0; j0 < nf; j0 += kCrossCols) {
      const std::size_t j1 = std::min(nf, j0 + kCrossCols), cols_n = j1 - j0;
      sgemm(Transpose::No, Transpose::Yes, rows_n, cols_n, d, 1.0f, xr + i0 * d, d, xf + j0 * d, d,
            0.0f, c.data(), cols_n);
      for (std::size_t i = i0; i < i1; ++i) {
        tile_row_bounds(c.data() + (i - i0) * cols_n, cols_n, pr.sq[i], pr.norm[i],
                        pf.sq.data() + j0, pf.norm.data() + j0, em, lo.data(), width.data());
        const double ri = real_radius_squared[i];
        const float* xi = xr + i * d;
        for (std::size_t jj = 0; jj < cols_n; ++jj) {
          const std::size_t j = j0 + jj;
          const double l = lo[jj];
          const float* xj = xf + j * d;
          double exact_value = -1.0;  // computed at most once per pair
          const auto exact = [&] {
            if (exact_value < 0.0) exact_value = exact_sq(xi, xj, d);
            return exact_value;
          };
          if (l <= ri && inside(l, l + width[jj], ri, strict, exact)) {
            ball_count[j].fetch_add(1, std::memory_order_relaxed);
            covered[i] = 1;
            if (options.ball_members) {
              out.members[t].emplace_back(static_cast<std::uint32_t>(i),
                                          static_cast<std::uint32_t>(j));
            }
          }
          if (with_recall && !in_fake[i] && l <= fake_radii[j] &&
              inside(l, l + width[jj], fake_radii[j], strict, exact)) {
            in_fake[i] = 1;
          }
        }
      }
    }
    if (progress) progress->advance();
  });
  if (progress) progress->finish();
  out.ball_count.resize(nf);
  for (std::size_t j = 0; j < nf; ++j) {
    out.ball_count[j] = ball_count[j].load(std::memory_order_relaxed);
  }
  return out;
}

// The ball members as CSR: members_offsets[i]..[i + 1] index the fake rows in real row i's
// ball, in order.
void add_ball_members(PrdcResult& out, std::size_t nr,
                      std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>& members) {
  out.members_offsets.assign(nr + 1, 0);
  std::size_t total = 0;
  for (auto& m : members) {
    std::sort(m.begin(), m.end());
    total += m.size();
    for (const auto& [i, j] : m) ++out.members_offsets[std::size_t{i} + 1];
  }
  for (std::size_t i = 0; i < nr; ++i) out.members_offsets[i + 1] += out.members_offsets[i];
  out.members.reserve(total);
  for (const auto& m : members)
    for (const auto& [i, j] : m) out.members.push_back(j);  // tasks are in row order
}

// Everything after the real radii: the fake radii, then the real x fake pass. Inputs checked.
PrdcResult measure(const Points& pr, std::span<const double> real_radius_squared, MatrixView fake,
                   const PrdcOptions& options) {
  const MatrixView real = pr.x;
  const std::size_t k = options.k;
  const std::size_t nr = real.rows, nf = fake.rows, d = real.cols;
  const Points pf = prepare(fake, "generated features");
  const ErrorModel em(d, "features");

  PrdcResult out;
  out.k = k;
  out.n_real = nr;
  out.n_fake = nf;
  out.rule = options.rule;
  std::vector<double> fake_radii;
  if (options.recall && nf > k) {
    fake_radii = knn_radii(pf, k, em, options.progress ? "prdc: generated radii" : nullptr);
  } else if (options.recall) {
    out.note = fmt::format(
        "recall is undefined: {} generated rows, the k-th nearest neighbour (k = {}) needs at "
        "least {}",
        nf, k, k + 1);
  }
  const bool with_recall = !fake_radii.empty();
  CrossCounts cross = cross_pass(pr, pf, real_radius_squared, fake_radii, em, options);

  std::size_t inside_any = 0, total_inside = 0, covered_n = 0, recalled = 0;
  for (std::size_t j = 0; j < nf; ++j) {
    inside_any += cross.ball_count[j] > 0 ? 1 : 0;
    total_inside += cross.ball_count[j];
  }
  for (std::size_t i = 0; i < nr; ++i) {
    covered_n += cross.covered[i];
    recalled += cross.in_fake[i];
  }
  out.precision = static_cast<double>(inside_any) / static_cast<double>(nf);
  out.density =
      static_cast<double>(total_inside) / (static_cast<double>(k) * static_cast<double>(nf));
  out.coverage = static_cast<double>(covered_n) / static_cast<double>(nr);
  out.recall = with_recall ? static_cast<double>(recalled) / static_cast<double>(nr)
                           : std::numeric_limits<double>::quiet_NaN();
  if (!options.recall && out.note.empty()) out.note = "recall not computed";

  if (options.per_sample) {
    out.real_radius.resize(nr);
    for (std::size_t i = 0; i < nr; ++i) out.real_radius[i] = std::sqrt(real_radius_squared[i]);
    out.fake_radius.resize(fake_radii.size());
    for (std::size_t j = 0; j < fake_radii.size(); ++j)
      out.fake_radius[j] = std::sqrt(fake_radii[j]);
    out.fake_ball_count = cross.ball_count;
    out.real_covered = cross.covered;
    if (with_recall) out.real_in_fake_balls = cross.in_fake;
  }
  if (options.ball_members) add_ball_members(out, nr, cross.members);
  return out;
}

}  // namespace

}  // namespace vlbias
