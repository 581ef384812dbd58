#pragma once
// The one BLAS wrapper (OpenBLAS behind it; nothing else includes cblas.h).
//
// Threads (DESIGN.md "Threads"): OpenBLAS runs single-threaded by default and
// always inside parallel regions (in_parallel_region()); only a GEMM called
// outside them with at least kBlasThreadedFlops multiply-adds uses the threads set
// by set_blas_threads. So a pool task never starts BLAS threads of its own.
#include <cstddef>
#include <vector>

#include "vlbias/matrix.h"

namespace vlbias {

// Multiply-adds (m * n * k) from which a GEMM outside a parallel region is run
// multi-threaded.
inline constexpr std::size_t kBlasThreadedFlops = std::size_t{1} << 24;

// Sets the number of BLAS threads used by big GEMMs outside parallel regions
// (0 = the pool's thread_count()). Default: 0.
void set_blas_threads(int n);
// The number of threads a big GEMM outside a parallel region would use (>= 1).
int blas_threads();

// C = A * B^T in float32 (cblas_sgemm): c[i * ldc + j] = sum_k a(i, k) * b(j, k),
// i.e. every row of `a` against every row of `b`. Requires a.cols == b.cols and
// ldc >= b.rows (InternalError otherwise: callers check shapes against their
// inputs first). Empty a or b is a no-op; zero columns give C = 0.
void gemm_nt(MatrixView a, MatrixView b, float* c, std::size_t ldc);

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
