// The one BLAS wrapper: see include/vlbias/core/blas.h.
#include "vlbias/core/blas.h"

#include <cblas.h>

#include <functional>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <mutex>
#include <string>

#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

// LAPACK's symmetric divide-and-conquer eigensolver, which OpenBLAS ships (no lapacke header
// is needed for one routine). The trailing arguments are Fortran's hidden string lengths.
extern "C" void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                        double* w, double* work, const int* lwork, int* iwork, const int* liwork,
                        int* info, std::size_t jobz_len, std::size_t uplo_len);

extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                        double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                        double* work, const int* lwork, int* iwork, int* info,
                        std::size_t jobz_len);
extern "C" void dgelqf_(const int* m, const int* n, double* a, const int* lda, double* tau,
                        double* work, const int* lwork, int* info);

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

std::string blas_library() {
  // The core is built against OpenBLAS (it calls openblas_set_num_threads), so the library
  // linked is OpenBLAS; its own string names the version, the build options and the kernel
  // chosen for this CPU.
  const char* config = openblas_get_config();
  std::string text = config != nullptr ? config : "OpenBLAS";
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  return text;
}

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
  // with the thread count, and results must not (docs/design.md#blas-determinism).
  sgemm(Transpose::No, Transpose::Yes, a.rows, b.rows, a.cols, 1.0f, a.data, a.cols, b.data, b.cols,
        0.0f, c, ldc);
}

namespace {

// The fixed partition shared by sgemm and dgemm (see blas.h): `block(i0, i1, j0, j1)` computes
// rows [i0, i1) x columns [j0, j1) of C with one single-threaded BLAS call.
void run_partitioned(
    std::size_t m, std::size_t n, std::size_t k,
    const std::function<void(std::size_t, std::size_t, std::size_t, std::size_t)>& block) {
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

// Shape checks shared by sgemm and dgemm; returns true when there is a product to compute
// (m, n, k > 0); otherwise C has been set as BLAS would.
template <typename T>
bool check_gemm(const char* fn, bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k,
                std::size_t lda, std::size_t ldb, T beta, T* c, std::size_t ldc) {
  VLBIAS_CHECK(lda >= std::max<std::size_t>(1, a_t ? m : k), InternalError,
               "{}: lda = {} is below op(A)'s {} stored columns", fn, lda, a_t ? m : k);
  VLBIAS_CHECK(ldb >= std::max<std::size_t>(1, b_t ? k : n), InternalError,
               "{}: ldb = {} is below op(B)'s {} stored columns", fn, ldb, b_t ? k : n);
  VLBIAS_CHECK(ldc >= std::max<std::size_t>(1, n), InternalError,
               "{}: ldc = {} is below C's {} columns", fn, ldc, n);
  if (m == 0 || n == 0) return false;
  if (k == 0) {
    for (std::size_t i = 0; i < m; ++i) {
      T* r = c + i * ldc;
      for (std::size_t j = 0; j < n; ++j) r[j] = beta == T(0) ? T(0) : beta * r[j];
    }
    return false;
  }
  init_single_threaded();
  checked_int(m, "m", fn);
  checked_int(n, "n", fn);
  checked_int(k, "k", fn);
  checked_int(lda, "lda", fn);
  checked_int(ldb, "ldb", fn);
  checked_int(ldc, "ldc", fn);
  return true;
}

}  // namespace

namespace {

// sgemm and dgemm: the shape checks, then one single-threaded cblas call per block of the
// fixed partition. `cblas` is cblas_sgemm or cblas_dgemm.
template <typename T, typename Cblas>
void partitioned_gemm(const char* fn, Transpose ta, Transpose tb, std::size_t m, std::size_t n,
                      std::size_t k, T alpha, const T* a, std::size_t lda, const T* b,
                      std::size_t ldb, T beta, T* c, std::size_t ldc, Cblas cblas) {
  const bool a_t = ta == Transpose::Yes, b_t = tb == Transpose::Yes;
  if (!check_gemm(fn, a_t, b_t, m, n, k, lda, ldb, beta, c, ldc)) return;
  const CBLAS_TRANSPOSE cta = a_t ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE ctb = b_t ? CblasTrans : CblasNoTrans;
  run_partitioned(m, n, k, [&](std::size_t i0, std::size_t i1, std::size_t j0, std::size_t j1) {
    const T* ab = a_t ? a + i0 : a + i0 * lda;
    const T* bb = b_t ? b + j0 * ldb : b + j0;
    cblas(CblasRowMajor, cta, ctb, static_cast<int>(i1 - i0), static_cast<int>(j1 - j0),
          static_cast<int>(k), alpha, ab, static_cast<int>(lda), bb, static_cast<int>(ldb), beta,
          c + i0 * ldc + j0, static_cast<int>(ldc));
  });
}

}  // namespace

void sgemm(Transpose ta, Transpose tb, std::size_t m, std::size_t n, std::size_t k, float alpha,
           const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
           std::size_t ldc) {
  partitioned_gemm("sgemm", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cblas_sgemm);
}

void dgemm(Transpose ta, Transpose tb, std::size_t m, std::size_t n, std::size_t k, double alpha,
           const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta,
           double* c, std::size_t ldc) {
  partitioned_gemm("dgemm", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cblas_dgemm);
}

void syrk_tn(std::size_t n, std::size_t k, double alpha, const double* a, std::size_t lda,
             double beta, double* c, std::size_t ldc) {
  VLBIAS_CHECK(lda >= std::max<std::size_t>(1, n) && ldc >= std::max<std::size_t>(1, n),
               InternalError, "syrk_tn: lda = {} or ldc = {} is below n = {}", lda, ldc, n);
  if (n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  init_single_threaded();
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, checked_int(n, "n", "syrk_tn"),
              checked_int(k, "k", "syrk_tn"), alpha, a, checked_int(lda, "lda", "syrk_tn"), beta, c,
              checked_int(ldc, "ldc", "syrk_tn"));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) c[i * ldc + j] = c[j * ldc + i];
}

void trmm_right_upper_t(std::size_t m, std::size_t n, const double* r, std::size_t ldr, double* b,
                        std::size_t ldb) {
  VLBIAS_CHECK(ldr >= std::max<std::size_t>(1, n) && ldb >= std::max<std::size_t>(1, n),
               InternalError, "trmm_right_upper_t: ldr = {} or ldb = {} is below n = {}", ldr, ldb,
               n);
  if (m == 0 || n == 0) return;
  init_single_threaded();
  cblas_dtrmm(CblasRowMajor, CblasRight, CblasUpper, CblasTrans, CblasNonUnit,
              checked_int(m, "m", "trmm_right_upper_t"), checked_int(n, "n", "trmm_right_upper_t"),
              1.0, r, checked_int(ldr, "ldr", "trmm_right_upper_t"), b,
              checked_int(ldb, "ldb", "trmm_right_upper_t"));
}

std::vector<double> symmetric_eigen(std::vector<double>& a, std::size_t n, bool vectors) {
  VLBIAS_CHECK(a.size() == n * n, InternalError,
               "symmetric_eigen: the matrix holds {} values, expected {} x {}", a.size(), n, n);
  std::vector<double> w(n);
  if (n == 0) return w;
  for (const double v : a) {
    VLBIAS_CHECK(std::isfinite(v), InternalError,
                 "symmetric_eigen: the {} x {} matrix holds a non-finite value", n, n);
  }
  init_single_threaded();
  const int ni = checked_int(n, "n", "symmetric_eigen");
  // Row-major symmetric = column-major symmetric; with the upper triangle named for LAPACK's
  // column-major view we pass the lower triangle of the row-major matrix, which holds the same
  // values. Eigenvector j comes back in LAPACK column j = row j of the row-major array, so it is
  // transposed below into columns.
  char jobz = vectors ? 'V' : 'N', uplo = 'U';
  int lda = ni, info = 0, lwork = -1, liwork = -1, iwork_query = 0;
  double work_query = 0.0;
  dsyevd_(&jobz, &uplo, &ni, a.data(), &lda, w.data(), &work_query, &lwork, &iwork_query, &liwork,
          &info, 1, 1);
  VLBIAS_CHECK(info == 0, InternalError, "symmetric_eigen: dsyevd workspace query failed ({})",
               info);
  lwork = static_cast<int>(work_query) + 1;
  liwork = std::max(iwork_query, 1);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  dsyevd_(&jobz, &uplo, &ni, a.data(), &lda, w.data(), work.data(), &lwork, iwork.data(), &liwork,
          &info, 1, 1);
  VLBIAS_CHECK(info == 0, InternalError,
               "symmetric_eigen: dsyevd did not converge on the {} x {} matrix (info {})", n, n,
               info);
  if (vectors) {
    // a[j * n + r] = component r of eigenvector j; make it a[r * n + j].
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t j = r + 1; j < n; ++j) std::swap(a[r * n + j], a[j * n + r]);
  }
  return w;
}

namespace {

// LAPACK dgesdd on the row-major rows x cols `a` (destroyed), which LAPACK reads as its
// column-major transpose (cols x rows): same singular values, descending. With `u`, jobz 'S':
// the transpose's right singular vectors VT (k x rows, column-major, k = min(rows, cols)) are
// the left singular vectors of `a`, and VT's column-major buffer is U row-major (rows x k).
std::vector<double> run_dgesdd(std::vector<double>& a, std::size_t rows, std::size_t cols,
                               std::vector<double>* u, const char* fn) {
  VLBIAS_CHECK(a.size() == rows * cols, InternalError,
               "{}: the matrix holds {} values, expected {} x {}", fn, a.size(), rows, cols);
  if (rows == 0 || cols == 0) return {};
  for (const double v : a) {
    VLBIAS_CHECK(std::isfinite(v), InternalError, "{}: the {} x {} matrix holds a non-finite value",
                 fn, rows, cols);
  }
  init_single_threaded();
  const int m = checked_int(cols, "cols", fn);
  const int n = checked_int(rows, "rows", fn);
  const std::size_t k = std::min(rows, cols);
  std::vector<double> s(k);
  std::vector<int> iwork(8 * k);
  char jobz = u != nullptr ? 'S' : 'N';
  std::vector<double> left, right;  // the transpose's U (unused) and VT (= our U)
  int ldu = 1, ldvt = 1;
  if (u != nullptr) {
    left.resize(cols * k);
    right.resize(k * rows);
    ldu = m;
    ldvt = checked_int(k, "min(rows, cols)", fn);
  }
  double unused = 0.0;
  double* left_data = u != nullptr ? left.data() : &unused;
  double* right_data = u != nullptr ? right.data() : &unused;
  int info = 0, lwork = -1;
  double work_query = 0.0;
  dgesdd_(&jobz, &m, &n, a.data(), &m, s.data(), left_data, &ldu, right_data, &ldvt, &work_query,
          &lwork, iwork.data(), &info, 1);
  VLBIAS_CHECK(info == 0, InternalError, "{}: dgesdd workspace query failed ({})", fn, info);
  lwork = static_cast<int>(work_query) + 1;
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgesdd_(&jobz, &m, &n, a.data(), &m, s.data(), left_data, &ldu, right_data, &ldvt, work.data(),
          &lwork, iwork.data(), &info, 1);
  VLBIAS_CHECK(info == 0, InternalError,
               "{}: dgesdd did not converge on the {} x {} matrix (info {})", fn, rows, cols, info);
  if (u != nullptr) *u = std::move(right);
  return s;
}

}  // namespace

std::vector<double> singular_values(std::vector<double>& a, std::size_t rows, std::size_t cols) {
  return run_dgesdd(a, rows, cols, nullptr, "singular_values");
}

std::vector<double> thin_svd(std::vector<double>& a, std::size_t rows, std::size_t cols,
                             std::vector<double>& u) {
  return run_dgesdd(a, rows, cols, &u, "thin_svd");
}

void triangular_factor(std::vector<double>& a, std::size_t rows, std::size_t cols) {
  VLBIAS_CHECK(a.size() == rows * cols && rows >= cols, InternalError,
               "triangular_factor: {} values for a {} x {} matrix (rows must be >= cols)", a.size(),
               rows, cols);
  if (cols == 0) return;
  init_single_threaded();
  // Row-major X (rows x cols) is column-major X^T (cols x rows); X^T = L Q gives X = Q^T L^T,
  // so R = L^T: L's lower triangle in the first cols x cols column-major block, read row-major,
  // is R's upper triangle.
  const int m = checked_int(cols, "cols", "triangular_factor");
  const int n = checked_int(rows, "rows", "triangular_factor");
  std::vector<double> tau(cols);
  int info = 0, lwork = -1;
  double work_query = 0.0;
  dgelqf_(&m, &n, a.data(), &m, tau.data(), &work_query, &lwork, &info);
  VLBIAS_CHECK(info == 0, InternalError, "triangular_factor: dgelqf workspace query failed ({})",
               info);
  lwork = std::max(static_cast<int>(work_query) + 1, m);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgelqf_(&m, &n, a.data(), &m, tau.data(), work.data(), &lwork, &info);
  VLBIAS_CHECK(info == 0, InternalError, "triangular_factor: dgelqf failed ({})", info);
  a.resize(cols * cols);
  for (std::size_t r = 0; r < cols; ++r)
    for (std::size_t c = 0; c < r; ++c) a[r * cols + c] = 0.0;
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
