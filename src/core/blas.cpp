// The one BLAS wrapper: see include/vlbias/blas.h.
#include "vlbias/blas.h"

#include <cblas.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <mutex>

#include "vlbias/error.h"
#include "vlbias/parallel.h"

namespace vlbias {

namespace {

std::atomic<int> g_blas_threads{0};
// Serialises big multi-threaded GEMMs, which raise OpenBLAS's global thread
// count for their duration and set it back to 1 afterwards.
std::mutex g_threaded_mutex;
std::once_flag g_init;

void init_single_threaded() {
  std::call_once(g_init, [] { openblas_set_num_threads(1); });
}

int checked_int(std::size_t v, const char* what) {
  VLBIAS_CHECK(v <= static_cast<std::size_t>(INT_MAX), InternalError,
               "gemm_nt: {} = {} exceeds the BLAS integer range", what, v);
  return static_cast<int>(v);
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
  init_single_threaded();
  const int m = checked_int(a.rows, "rows of A");
  const int n = checked_int(b.rows, "rows of B");
  const int k = checked_int(a.cols, "columns");
  const int ld = checked_int(ldc, "ldc");
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a.data, k, b.data, k, 0.0f,
                c, ld);
  };
  const std::size_t work = a.rows * b.rows * a.cols;
  const int threads = blas_threads();
  if (in_parallel_region() || threads <= 1 || work < kBlasThreadedFlops) {
    run();
    return;
  }
  std::lock_guard<std::mutex> lock(g_threaded_mutex);
  openblas_set_num_threads(threads);
  run();  // C code: cannot throw
  openblas_set_num_threads(1);
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
