// The one BLAS wrapper: see include/vlbias/blas.h.
#include "vlbias/blas.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <mutex>

#include "vlbias/error.h"
#include "vlbias/parallel.h"

namespace vlbias {

namespace {

std::atomic<int> g_blas_threads{0};
std::once_flag g_init;

void init_single_threaded() {
  std::call_once(g_init, [] { openblas_set_num_threads(1); });
}

int checked_int(std::size_t v, const char* what, const char* fn = "gemm_nt") {
  VLBIAS_CHECK(v <= static_cast<std::size_t>(INT_MAX), InternalError,
               "{}: {} = {} exceeds the BLAS integer range", fn, what, v);
  return static_cast<int>(v);
}

// Edge e of a split of [0, size) into `blocks` nearly equal parts, inner edges rounded down to a
// multiple of 16 (whole micro-tiles for the usual kernels). Depends only on its arguments.
std::size_t block_edge(std::size_t size, std::size_t blocks, std::size_t e) {
  if (e >= blocks) return size;
  return (size * e / blocks) / 16 * 16;
}

}  // namespace

void set_blas_threads(int n) {
  g_blas_threads.store(n < 0 ? 0 : n);
}

int blas_threads() {
  const int n = g_blas_threads.load();
  return n > 0 ? n : static_cast<int>(thread_count());
}

void gemm_nt(MatrixView a, MatrixView b, float* c, std::size_t ldc) {
  VLBIAS_CHECK(a.cols == b.cols, InternalError,
               "gemm_nt: A has {} columns but B has {} (both must have the same dimension)", a.cols,
               b.cols);
  VLBIAS_CHECK(ldc >= b.rows, InternalError, "gemm_nt: ldc = {} is below B's {} rows", ldc, b.rows);
  if (a.rows == 0 || b.rows == 0) return;
  if (a.cols == 0) {
    for (std::size_t i = 0; i < a.rows; ++i)
      for (std::size_t j = 0; j < b.rows; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  // Through sgemm's fixed blocks: OpenBLAS's own threading changes the last bits
  // with the thread count, and results must not (DESIGN: determinism).
  sgemm(Transpose::No, Transpose::Yes, a.rows, b.rows, a.cols, 1.0f, a.data, a.cols, b.data, b.cols,
        0.0f, c, ldc);
}

void sgemm(Transpose ta, Transpose tb, std::size_t m, std::size_t n, std::size_t k, float alpha,
           const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
           std::size_t ldc) {
  const bool a_t = ta == Transpose::Yes, b_t = tb == Transpose::Yes;
  VLBIAS_CHECK(lda >= std::max<std::size_t>(1, a_t ? m : k), InternalError,
               "sgemm: lda = {} is below op(A)'s {} stored columns", lda, a_t ? m : k);
  VLBIAS_CHECK(ldb >= std::max<std::size_t>(1, b_t ? k : n), InternalError,
               "sgemm: ldb = {} is below op(B)'s {} stored columns", ldb, b_t ? k : n);
  VLBIAS_CHECK(ldc >= std::max<std::size_t>(1, n), InternalError,
               "sgemm: ldc = {} is below C's {} columns", ldc, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m; ++i) {
      float* r = c + i * ldc;
      for (std::size_t j = 0; j < n; ++j) r[j] = beta == 0.0f ? 0.0f : beta * r[j];
    }
    return;
  }
  init_single_threaded();
  checked_int(m, "m", "sgemm");
  checked_int(n, "n", "sgemm");
  checked_int(k, "k", "sgemm");
  checked_int(lda, "lda", "sgemm");
  checked_int(ldb, "ldb", "sgemm");
  checked_int(ldc, "ldc", "sgemm");
  const CBLAS_TRANSPOSE cta = a_t ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE ctb = b_t ? CblasTrans : CblasNoTrans;
  // One block: rows [i0, i1) x columns [j0, j1) of C, a whole-k product.
  auto block = [&](std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
    const float* ab = a_t ? a + i0 : a + i0 * lda;
    const float* bb = b_t ? b + j0 * ldb : b + j0;
    cblas_sgemm(CblasRowMajor, cta, ctb, static_cast<int>(i1 - i0), static_cast<int>(j1 - j0),
                static_cast<int>(k), alpha, ab, static_cast<int>(lda), bb, static_cast<int>(ldb),
                beta, c + i0 * ldc + j0, static_cast<int>(ldc));
  };
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool split_rows = m >= n;
  const std::size_t size = split_rows ? m : n;
  if (work < static_cast<double>(kBlasThreadedFlops) || size < 64) {
    block(0, m, 0, n);  // C code: cannot throw
    return;
  }
  std::size_t blocks = std::max<std::size_t>(2, size / kSgemmBlock);
  blocks += blocks % 2;
  auto run_block = [&](std::size_t t) {
    const std::size_t e0 = block_edge(size, blocks, t), e1 = block_edge(size, blocks, t + 1);
    if (split_rows) {
      block(e0, e1, 0, n);
    } else {
      block(0, m, e0, e1);
    }
  };
  if (in_parallel_region() || blas_threads() <= 1) {
    for (std::size_t t = 0; t < blocks; ++t) run_block(t);
  } else {
    parallel_for(blocks, run_block);
  }
}

std::vector<double> row_norms(MatrixView m) {
  std::vector<double> norms(m.rows);
  for (std::size_t i = 0; i < m.rows; ++i) {
    const float* r = m.row(i);
    double s = 0.0;
    for (std::size_t k = 0; k < m.cols; ++k) s += static_cast<double>(r[k]) * r[k];
    norms[i] = std::sqrt(s);
  }
  return norms;
}

std::vector<double> normalize_rows_in_place(Matrix& m) {
  std::vector<double> norms = row_norms(m);
  for (std::size_t i = 0; i < m.rows; ++i) {
    if (norms[i] == 0.0) continue;
    const double inv = 1.0 / norms[i];
    float* r = m.row(i);
    for (std::size_t k = 0; k < m.cols; ++k) r[k] = static_cast<float>(r[k] * inv);
  }
  return norms;
}

Matrix normalize_rows(MatrixView m) {
  Matrix out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.data.assign(m.data, m.data + m.rows * m.cols);
  normalize_rows_in_place(out);
  return out;
}

void scale_columns(float* c, std::size_t rows, std::size_t cols, std::size_t ldc,
                   const std::vector<double>& norms) {
  std::vector<float> inv(cols);
  for (std::size_t j = 0; j < cols; ++j)
    inv[j] = norms[j] == 0.0 ? 0.0f : static_cast<float>(1.0 / norms[j]);
  for (std::size_t i = 0; i < rows; ++i) {
    float* r = c + i * ldc;
    for (std::size_t j = 0; j < cols; ++j) r[j] *= inv[j];
  }
}

Matrix cosine_matrix(MatrixView a, MatrixView b) {
  VLBIAS_CHECK(a.cols == b.cols, InternalError,
               "cosine_matrix: A has {} columns but B has {} (both must have the same dimension)",
               a.cols, b.cols);
  // cos(a_i, b_j) = <a_i / |a_i|, b_j> / |b_j|: only A is copied (normalised).
  const Matrix an = normalize_rows(a);
  Matrix c(a.rows, b.rows);
  gemm_nt(an, b, c.data.data(), b.rows);
  scale_columns(c.data.data(), c.rows, c.cols, c.cols, row_norms(b));
  return c;
}

}  // namespace vlbias
