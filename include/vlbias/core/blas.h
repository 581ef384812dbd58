#pragma once
// The one BLAS wrapper (OpenBLAS behind it; nothing else includes cblas.h).
//
// Threads (docs/design.md#threads): OpenBLAS itself always runs single-threaded.
// A GEMM of at least kBlasThreadedFlops multiply-adds called outside a parallel
// region is split into fixed blocks (their edges depend only on the shape) that
// run on the project's pool, so results are bit-identical for any thread count
// (OpenBLAS's own threading is not: it changes the last bits). Inside a pool task
// the blocks run serially, so a task never starts threads of its own.
#include <cstddef>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"

namespace vlbias {

// Multiply-adds (m * n * k) from which a GEMM outside a parallel region is run
// multi-threaded.
inline constexpr std::size_t kBlasThreadedFlops = std::size_t{1} << 24;

// The BLAS library in use, as it describes itself (for `vlbias --version`): OpenBLAS's
// configuration string, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64".
std::string blas_library();

// Sets the number of threads big GEMMs outside parallel regions may use; 1 runs
// them serially, anything else uses the pool (0 = the pool's thread_count()). Default: 0.
void set_blas_threads(int n);
// The number of threads a big GEMM outside a parallel region would use (>= 1).
int blas_threads();

// C = A * B^T in float32, through sgemm (so the same for every thread count).
// c[i * ldc + j] = sum_k a(i, k) * b(j, k),
// i.e. every row of `a` against every row of `b`. Requires a.cols == b.cols and
// ldc >= b.rows (InternalError otherwise: callers check shapes against their
// inputs first). Empty a or b is a no-op; zero columns give C = 0.
void gemm_nt(MatrixView a, MatrixView b, float* c, std::size_t ldc);

// Whether sgemm reads an operand as stored or transposed.
enum class Transpose { No, Yes };

// Target block edge (elements) of sgemm's fixed partition; see sgemm. Each block re-packs the
// operand that is not split, so blocks are kept large (on 2 cores, 229-row blocks of a
// 3200 x 2304 x 768 product run ~5% slower than 800-row ones).
inline constexpr std::size_t kSgemmBlock = 768;

// General float32 GEMM (cblas_sgemm, row-major): C = alpha * op(A) * op(B) + beta * C, with
// op(A) m x k and op(B) k x n:
//   op(A)(i, p) = ta == No ? a[i * lda + p] : a[p * lda + i]   (likewise op(B)(p, j) with ldb)
//   c(i, j) = c[i * ldc + j]
// Requires lda >= (ta == No ? k : m), ldb >= (tb == No ? n : k) and ldc >= n (InternalError
// otherwise). m == 0 or n == 0 is a no-op; k == 0 gives C = beta * C (zeros when beta == 0; as in
// BLAS, beta == 0 never reads C).
//
// Determinism: OpenBLAS's own threading is NOT thread-count stable (an element's last bits
// depend on where its micro-tile falls, which moves with the thread split). So a product with at
// least kBlasThreadedFlops multiply-adds is cut into a fixed partition that depends only on
// (m, n, k): the larger of m and n is split into max(2, size / kSgemmBlock) blocks (rounded down,
// then up to an even count) of nearly equal size (inner edges at multiples of 16), each computed
// by one single-threaded cblas_sgemm (the other dimension is not split). Outside
// parallel regions the blocks are spread over the pool (when blas_threads() > 1); inside one, or
// with one thread, they run in order on the calling thread. Either way every element comes from
// the same call, so C is bitwise independent of the thread count. Smaller products are one call.
void sgemm(Transpose ta, Transpose tb, std::size_t m, std::size_t n, std::size_t k, float alpha,
           const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
           std::size_t ldc);

// The same for float64 (cblas_dgemm), with the same fixed partition and determinism.
void dgemm(Transpose ta, Transpose tb, std::size_t m, std::size_t n, std::size_t k, double alpha,
           const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta,
           double* c, std::size_t ldc);

// C = alpha * A^T A + beta * C for the k x n row-major A (cblas_dsyrk on the upper triangle,
// then mirrored, so all of the n x n C is written): half the flops of dgemm. One
// single-threaded call (deterministic; callers parallelise over independent products).
void syrk_tn(std::size_t n, std::size_t k, double alpha, const double* a, std::size_t lda,
             double beta, double* c, std::size_t ldc);

// B = B * R^T in place for the m x n row-major B and the n x n upper-triangular row-major R
// (cblas_dtrmm; R's strictly lower part is not read): half the flops of dgemm.
// Single-threaded.
void trmm_right_upper_t(std::size_t m, std::size_t n, const double* r, std::size_t ldr, double* b,
                        std::size_t ldb);

// Eigen-decomposition of the symmetric n x n row-major matrix `a` (LAPACK dsyevd,
// divide and conquer, single-threaded so results do not depend on the thread count).
// Returns the n eigenvalues in ascending order. With `vectors`, `a` is overwritten with
// the orthonormal eigenvectors as columns (a[r * n + j] = component r of eigenvector j);
// otherwise its contents are destroyed. Only symmetric input is meaningful (not checked);
// a.size() != n * n, a non-finite entry, or a failure to converge is an InternalError
// (callers check their inputs for NaN/inf first).
std::vector<double> symmetric_eigen(std::vector<double>& a, std::size_t n, bool vectors);

// Singular values, descending, of the rows x cols row-major matrix `a` (LAPACK dgesdd without
// vectors; its contents are destroyed). Single-threaded. a.size() != rows * cols, a
// non-finite entry or a failure to converge is an InternalError.
std::vector<double> singular_values(std::vector<double>& a, std::size_t rows, std::size_t cols);

// Thin SVD of the rows x cols row-major matrix `a` = U diag(s) V^T (LAPACK dgesdd, divide and
// conquer; `a` is destroyed). Returns the k = min(rows, cols) singular values, descending, and
// sets `u` to the rows x k row-major left singular vectors (u[i * k + j] = U(i, j); each
// column's sign is LAPACK's). Single-threaded. Same errors as singular_values.
std::vector<double> thin_svd(std::vector<double>& a, std::size_t rows, std::size_t cols,
                             std::vector<double>& u);

// The triangular factor of a tall matrix: given the rows x cols row-major matrix X in `a`
// (rows >= cols), replaces `a` with the cols x cols upper-triangular R (row-major, zeros
// below the diagonal) of X = Q R, Q with orthonormal columns, so R^T R = X^T X without
// forming X^T X (LAPACK dgelqf of X^T, Householder: backward stable). Single-threaded.
// rows < cols or a size mismatch is an InternalError.
void triangular_factor(std::vector<double>& a, std::size_t rows, std::size_t cols);

// Rows of `m` scaled to unit L2 norm (norm accumulated in double). A zero row
// stays zero (its cosines are then 0; callers that must refuse it check the norms).
Matrix normalize_rows(MatrixView m);
// The same in place; returns the norms the rows had before scaling.
std::vector<double> normalize_rows_in_place(Matrix& m);
// L2 norm of each row, accumulated in double.
std::vector<double> row_norms(MatrixView m);

// Multiplies column j of the rows x cols block at `c` (row stride ldc) by
// 1 / norms[j] (by 0 where norms[j] == 0): turns <a_i / |a_i|, b_j> into cosines.
void scale_columns(float* c, std::size_t rows, std::size_t cols, std::size_t ldc,
                   const std::vector<double>& norms);

// Cosine similarity of every row of `a` with every row of `b`:
// result(i, j) = cos(a_i, b_j) = <a_i, b_j> / (|a_i| |b_j|) (a_i or b_j zero gives 0),
// one GEMM of the row-normalised `a` against `b`, then columns scaled by 1 / |b_j|.
// Only `a` is copied, so pass the larger matrix (e.g. the images) as `b`.
// Shape a.rows x b.rows.
Matrix cosine_matrix(MatrixView a, MatrixView b);

}  // namespace vlbias
