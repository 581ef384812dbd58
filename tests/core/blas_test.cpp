// The BLAS wrapper against naive double loops.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"

namespace vlbias {
namespace {
namespace in_blas_test {

Matrix random_matrix(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  Matrix m(rows, cols);
  Rng rng(seed);
  for (float& v : m.data) v = static_cast<float>(rng.uniform_index(2001)) / 1000.0f - 1.0f;
  return m;
}

double naive_dot(const Matrix& a, std::size_t i, const Matrix& b, std::size_t j) {
  double s = 0.0;
  for (std::size_t k = 0; k < a.cols; ++k) s += static_cast<double>(a.at(i, k)) * b.at(j, k);
  return s;
}

void expect_gemm_matches(std::size_t m, std::size_t n, std::size_t k, std::size_t ldc) {
  const Matrix a = random_matrix(m, k, 1 + m);
  const Matrix b = random_matrix(n, k, 2 + n);
  std::vector<float> c(m * ldc, -7.0f);
  gemm_nt(a, b, c.data(), ldc);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      if (j < n) {
        EXPECT_NEAR(c[i * ldc + j], naive_dot(a, i, b, j), 1e-5 * static_cast<double>(k))
            << i << "," << j;
      } else {
        EXPECT_EQ(c[i * ldc + j], -7.0f) << "padding column " << j << " was written";
      }
    }
  }
}

TEST(Blas, GemmNtMatchesNaiveLoop) {
  expect_gemm_matches(3, 5, 8, 5);
  expect_gemm_matches(17, 9, 33, 9);
  expect_gemm_matches(1, 1, 1, 1);
}

TEST(Blas, GemmNtHonoursLeadingDimension) {
  expect_gemm_matches(4, 6, 10, 9);
}

TEST(Blas, GemmNtBigMultiThreadedMatchesNaive) {
  // m * n * k = 256 * 256 * 256 = 2^24 multiply-adds: the multi-threaded path.
  set_blas_threads(2);
  expect_gemm_matches(256, 256, 256, 256);
  set_blas_threads(0);
}

TEST(Blas, GemmNtInsideParallelRegionMatchesNaive) {
  const Matrix a = random_matrix(64, 32, 11);
  const Matrix b = random_matrix(48, 32, 12);
  std::vector<std::vector<float>> out(8, std::vector<float>(64 * 48));
  parallel_for(8, [&](std::size_t t) { gemm_nt(a, b, out[t].data(), 48); });
  for (std::size_t t = 0; t < 8; ++t) {
    for (std::size_t i = 0; i < 64; ++i) {
      for (std::size_t j = 0; j < 48; ++j) {
        EXPECT_NEAR(out[t][i * 48 + j], naive_dot(a, i, b, j), 1e-4) << t;
      }
    }
  }
}

TEST(Blas, GemmNtShapeErrors) {
  const Matrix a = random_matrix(2, 3, 1);
  const Matrix b = random_matrix(2, 4, 2);
  std::vector<float> c(16);
  EXPECT_THROW(gemm_nt(a, b, c.data(), 2), InternalError);
  EXPECT_THROW(gemm_nt(a, a, c.data(), 1), InternalError);
}

TEST(Blas, GemmNtZeroColumnsGivesZero) {
  const Matrix a(2, 0), b(3, 0);
  std::vector<float> c(6, 5.0f);
  gemm_nt(a, b, c.data(), 3);
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

// ---- sgemm: C = alpha op(A) op(B) + beta C against a double loop.

// op(X)(i, p) of a row-major matrix with leading dimension ld.
float op_at(const std::vector<float>& x, std::size_t ld, Transpose t, std::size_t i,
            std::size_t p) {
  return t == Transpose::No ? x[i * ld + p] : x[p * ld + i];
}

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  Rng rng(seed);
  for (float& x : v) x = static_cast<float>(rng.uniform_index(2001)) / 1000.0f - 1.0f;
  return v;
}

void expect_sgemm_matches(Transpose ta, Transpose tb, std::size_t m, std::size_t n, std::size_t k,
                          float alpha, float beta, std::size_t pad) {
  const std::size_t lda = (ta == Transpose::No ? k : m) + pad;
  const std::size_t ldb = (tb == Transpose::No ? n : k) + pad;
  const std::size_t ldc = n + pad;
  const std::vector<float> a = random_vector((ta == Transpose::No ? m : k) * lda, 1 + m);
  const std::vector<float> b = random_vector((tb == Transpose::No ? k : n) * ldb, 2 + n);
  std::vector<float> c = random_vector(m * ldc, 3 + k);
  const std::vector<float> c0 = c;
  sgemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      if (j >= n) {
        EXPECT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "padding column " << j << " was written";
        continue;
      }
      double s = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        s += static_cast<double>(op_at(a, lda, ta, i, p)) * op_at(b, ldb, tb, p, j);
      }
      const double want = alpha * s + beta * static_cast<double>(c0[i * ldc + j]);
      EXPECT_NEAR(c[i * ldc + j], want, 2e-6 * static_cast<double>(k + 1)) << i << "," << j;
    }
  }
}

TEST(Blas, SgemmAllTransposesLeadingDimensionsAlphaBeta) {
  for (Transpose ta : {Transpose::No, Transpose::Yes}) {
    for (Transpose tb : {Transpose::No, Transpose::Yes}) {
      expect_sgemm_matches(ta, tb, 5, 7, 9, 1.0f, 0.0f, 0);
      expect_sgemm_matches(ta, tb, 17, 3, 33, 0.5f, 1.0f, 3);
      expect_sgemm_matches(ta, tb, 1, 1, 1, -2.0f, 0.25f, 1);
    }
  }
}

TEST(Blas, SgemmPartitionedProductsMatchNaive) {
  // >= 2^24 multiply-adds: the fixed block partition, over rows (m >= n) and over columns.
  expect_sgemm_matches(Transpose::No, Transpose::Yes, 600, 130, 256, 1.0f, 1.0f, 2);
  expect_sgemm_matches(Transpose::Yes, Transpose::No, 70, 900, 300, 1.0f, 0.0f, 0);
}

TEST(Blas, SgemmBetaZeroIgnoresNaNInC) {
  std::vector<float> a = {1, 2, 3, 4}, b = {1, 0, 0, 1};
  std::vector<float> c(4, std::nanf(""));
  sgemm(Transpose::No, Transpose::No, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, a);
}

TEST(Blas, SgemmEmptyAndZeroK) {
  std::vector<float> c = {1, 2, 3, 4};
  sgemm(Transpose::No, Transpose::No, 0, 2, 3, 1.0f, nullptr, 3, nullptr, 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4}));
  sgemm(Transpose::No, Transpose::No, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 2.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8}));
  sgemm(Transpose::No, Transpose::No, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>(4, 0.0f)));
}

TEST(Blas, SgemmLeadingDimensionErrors) {
  std::vector<float> x(64);
  const float* p = x.data();
  EXPECT_THROW(sgemm(Transpose::No, Transpose::No, 2, 3, 4, 1, p, 3, p, 3, 0, x.data(), 3),
               InternalError);  // lda < k
  EXPECT_THROW(sgemm(Transpose::Yes, Transpose::No, 5, 3, 4, 1, p, 4, p, 3, 0, x.data(), 3),
               InternalError);  // lda < m when transposed
  EXPECT_THROW(sgemm(Transpose::No, Transpose::Yes, 2, 3, 4, 1, p, 4, p, 3, 0, x.data(), 3),
               InternalError);  // ldb < k when transposed
  EXPECT_THROW(sgemm(Transpose::No, Transpose::No, 2, 3, 4, 1, p, 4, p, 3, 0, x.data(), 2),
               InternalError);  // ldc < n
}

// The operands of one shape, drawn once: drawing them again for every product took most of
// the next test's time in the tests' unoptimised code.
struct SgemmOperands {
  std::size_t m, n, k;
  std::vector<float> a, b, c;
  SgemmOperands(std::size_t m_, std::size_t n_, std::size_t k_)
      : m(m_),
        n(n_),
        k(k_),
        a(random_vector(m * k, 41)),
        b(random_vector(k * n, 42)),
        c(random_vector(m * n, 43)) {}
};

// Bits of C for one thread count.
std::vector<float> sgemm_bits(const SgemmOperands& o, Transpose tb, unsigned threads) {
  std::vector<float> c = o.c;
  set_thread_count(threads);
  sgemm(Transpose::No, tb, o.m, o.n, o.k, 1.0f, o.a.data(), o.k, o.b.data(),
        tb == Transpose::No ? o.n : o.k, 1.0f, c.data(), o.n);
  set_thread_count(0);
  return c;
}

TEST(Blas, SgemmBitwiseIndependentOfThreadCount) {
  // OpenBLAS's own threading changes last bits with the thread count; sgemm's fixed partition
  // must not. Shapes split over rows, over columns, and odd sizes.
  const SgemmOperands shapes[] = {{1600, 768, 768}, {50, 2304, 768}, {1003, 517, 129}};
  for (const SgemmOperands& s : shapes) {
    for (Transpose tb : {Transpose::No, Transpose::Yes}) {
      const std::vector<float> one = sgemm_bits(s, tb, 1);
      for (unsigned t : {2u, 3u, 4u}) {
        const std::vector<float> many = sgemm_bits(s, tb, t);
        EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0)
            << s.m << "x" << s.n << "x" << s.k << " threads " << t;
      }
    }
  }
  // Inside a parallel region the blocks run serially: the same bits.
  const SgemmOperands& first = shapes[0];
  const std::vector<float> one = sgemm_bits(first, Transpose::Yes, 1);
  std::vector<std::vector<float>> out(2, first.c);
  set_thread_count(2);
  parallel_for(2, [&](std::size_t i) {
    sgemm(Transpose::No, Transpose::Yes, 1600, 768, 768, 1.0f, first.a.data(), 768, first.b.data(),
          768, 1.0f, out[i].data(), 768);
  });
  set_thread_count(0);
  for (const auto& o : out) {
    EXPECT_EQ(std::memcmp(one.data(), o.data(), one.size() * sizeof(float)), 0);
  }
}

TEST(Blas, CosineMatrixMatchesNaive) {
  const Matrix a = random_matrix(5, 12, 21);
  Matrix b = random_matrix(7, 12, 22);
  for (std::size_t k = 0; k < b.cols; ++k) b.at(3, k) = 0.0f;  // a zero row
  const Matrix c = cosine_matrix(a, b);
  ASSERT_EQ(c.rows, 5u);
  ASSERT_EQ(c.cols, 7u);
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t j = 0; j < b.rows; ++j) {
      const double na = std::sqrt(naive_dot(a, i, a, i));
      const double nb = std::sqrt(naive_dot(b, j, b, j));
      const double want = nb == 0.0 ? 0.0 : naive_dot(a, i, b, j) / (na * nb);
      EXPECT_NEAR(c.at(i, j), want, 1e-6) << i << "," << j;
    }
  }
}

TEST(Blas, NormalizeRowsGivesUnitRows) {
  const Matrix m = random_matrix(4, 9, 31);
  const Matrix n = normalize_rows(m);
  const std::vector<double> norms = row_norms(n);
  for (double v : norms) EXPECT_NEAR(v, 1.0, 1e-6);
  EXPECT_NEAR(row_norms(m)[0], std::sqrt(naive_dot(m, 0, m, 0)), 1e-12);
}

TEST(Blas, DgemmMatchesNaiveLoopAllTransposes) {
  // 70 x 90 x 40 doubles: small enough for one call; 300 x 260 x 256 exercises the
  // partitioned multi-threaded path, which must give the same bits with 1 or 2 threads.
  for (const auto& [m, n, k] :
       std::vector<std::array<std::size_t, 3>>{{70, 90, 40}, {300, 260, 256}}) {
    for (const Transpose ta : {Transpose::No, Transpose::Yes}) {
      for (const Transpose tb : {Transpose::No, Transpose::Yes}) {
        Rng rng(m * 7 + n);
        std::vector<double> a(m * k), b(k * n), c(m * n, 3.0), c1(m * n, 3.0);
        for (double& v : a) v = rng.uniform01() - 0.5;
        for (double& v : b) v = rng.uniform01() - 0.5;
        const std::size_t lda = ta == Transpose::No ? k : m, ldb = tb == Transpose::No ? n : k;
        // Strides of op(a) and op(b) over raw pointers: the naive loop is the tests' unoptimised
        // code, where a call per element took most of this test's time.
        const double* ap = a.data();
        const double* bp = b.data();
        const std::size_t a_row = ta == Transpose::No ? lda : 1,
                          a_col = ta == Transpose::No ? 1 : lda;
        const std::size_t b_row = tb == Transpose::No ? ldb : 1,
                          b_col = tb == Transpose::No ? 1 : ldb;
        set_blas_threads(2);
        dgemm(ta, tb, m, n, k, 2.0, a.data(), lda, b.data(), ldb, 0.5, c.data(), n);
        set_blas_threads(1);
        dgemm(ta, tb, m, n, k, 2.0, a.data(), lda, b.data(), ldb, 0.5, c1.data(), n);
        set_blas_threads(0);
        for (std::size_t i = 0; i < m; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            double want = 1.5;  // 0.5 * 3
            for (std::size_t p = 0; p < k; ++p) {
              want += 2.0 * ap[i * a_row + p * a_col] * bp[p * b_row + j * b_col];
            }
            ASSERT_NEAR(c[i * n + j], want, 1e-12) << i << "," << j;
            ASSERT_EQ(c[i * n + j], c1[i * n + j]) << "thread count changed the bits";
          }
        }
      }
    }
  }
}

TEST(Blas, SymmetricEigenHandWorked) {
  // [[2, 1], [1, 2]]: eigenvalues 1 and 3 with vectors (1, -1)/sqrt2 and (1, 1)/sqrt2.
  std::vector<double> a = {2, 1, 1, 2};
  const std::vector<double> w = symmetric_eigen(a, 2, true);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0], 1.0, 1e-15);
  EXPECT_NEAR(w[1], 3.0, 1e-15);
  // Columns are the vectors (up to sign).
  EXPECT_NEAR(std::abs(a[0 * 2 + 0]), std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(a[0 * 2 + 0], -a[1 * 2 + 0], 1e-15);
  EXPECT_NEAR(a[0 * 2 + 1], a[1 * 2 + 1], 1e-15);
  std::vector<double> empty;
  EXPECT_TRUE(symmetric_eigen(empty, 0, false).empty());
}

TEST(Blas, SymmetricEigenReconstructsRandomMatrix) {
  // A = V diag(w) V^T and V^T V = I for a random symmetric 120 x 120 matrix.
  const std::size_t n = 120;
  Rng rng(5);
  std::vector<double> a(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = rng.uniform01() - 0.5;
  std::vector<double> v = a;
  const std::vector<double> w = symmetric_eigen(v, n, true);
  std::vector<double> values_only = a;
  const std::vector<double> w2 = symmetric_eigen(values_only, n, false);
  for (std::size_t j = 0; j < n; ++j) {
    EXPECT_NEAR(w[j], w2[j], 1e-12);
    if (j > 0) {
      EXPECT_LE(w[j - 1], w[j]);
    }
  }
  double max_err = 0.0, max_orth = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0.0, o = 0.0;
      for (std::size_t p = 0; p < n; ++p) {
        s += v[i * n + p] * w[p] * v[j * n + p];
        o += v[p * n + i] * v[p * n + j];
      }
      max_err = std::max(max_err, std::abs(s - a[i * n + j]));
      max_orth = std::max(max_orth, std::abs(o - (i == j ? 1.0 : 0.0)));
    }
  }
  EXPECT_LT(max_err, 1e-12);
  EXPECT_LT(max_orth, 1e-12);
}

TEST(Blas, SymmetricEigenRefusesBadInput) {
  std::vector<double> a = {1, 2, 3};
  EXPECT_THROW(symmetric_eigen(a, 2, false), InternalError);
  std::vector<double> nan = {1, std::nan(""), std::nan(""), 1};
  EXPECT_THROW(symmetric_eigen(nan, 2, false), InternalError);
}

TEST(Blas, SingularValuesHandWorkedAndRandom) {
  // [[3, 0], [4, 5]] has singular values sqrt(45) and sqrt(5) (A^T A = [[25, 20], [20, 25]]).
  std::vector<double> a = {3, 0, 4, 5};
  const std::vector<double> s = singular_values(a, 2, 2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0], std::sqrt(45.0), 1e-14);
  EXPECT_NEAR(s[1], std::sqrt(5.0), 1e-14);
  // A wide random matrix: squares equal the eigenvalues of A A^T.
  const std::size_t m = 7, n = 19;
  Rng rng(9);
  std::vector<double> w(m * n);
  for (double& v : w) v = rng.uniform01() - 0.5;
  std::vector<double> g(m * m, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t k = 0; k < n; ++k) g[i * m + j] += w[i * n + k] * w[j * n + k];
  std::vector<double> copy = w;
  const std::vector<double> sv = singular_values(copy, m, n);
  const std::vector<double> ev = symmetric_eigen(g, m, false);
  ASSERT_EQ(sv.size(), m);
  for (std::size_t i = 0; i < m; ++i) EXPECT_NEAR(sv[i] * sv[i], ev[m - 1 - i], 1e-13);
}

TEST(Blas, TriangularFactorGivesRtREqualXtX) {
  const std::size_t rows = 50, cols = 6;
  Rng rng(10);
  std::vector<double> x(rows * cols);
  for (double& v : x) v = rng.uniform01() - 0.3;
  std::vector<double> r = x;
  triangular_factor(r, rows, cols);
  ASSERT_EQ(r.size(), cols * cols);
  for (std::size_t i = 0; i < cols; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (j < i) {
        EXPECT_EQ(r[i * cols + j], 0.0);
      }
      double rtr = 0.0, xtx = 0.0;
      for (std::size_t k = 0; k < cols; ++k) rtr += r[k * cols + i] * r[k * cols + j];
      for (std::size_t k = 0; k < rows; ++k) xtx += x[k * cols + i] * x[k * cols + j];
      EXPECT_NEAR(rtr, xtx, 1e-12) << i << "," << j;
    }
  }
  std::vector<double> wide(4 * 6);
  EXPECT_THROW(triangular_factor(wide, 4, 6), InternalError);
}

TEST(Blas, SyrkAndTrmmMatchNaiveLoops) {
  const std::size_t n = 9, k = 13, m = 5;
  Rng rng(12);
  std::vector<double> a(k * n), c(n * n, 2.0), r(n * n), b(m * n);
  for (double& v : a) v = rng.uniform01() - 0.5;
  for (double& v : r) v = rng.uniform01() - 0.5;
  for (double& v : b) v = rng.uniform01() - 0.5;
  syrk_tn(n, k, 3.0, a.data(), n, 0.5, c.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double want = 1.0;  // 0.5 * 2
      for (std::size_t p = 0; p < k; ++p) want += 3.0 * a[p * n + i] * a[p * n + j];
      EXPECT_NEAR(c[i * n + j], want, 1e-13) << i << "," << j;
    }
  }
  std::vector<double> got = b;
  trmm_right_upper_t(m, n, r.data(), n, got.data(), n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double want = 0.0;  // sum_p b(i, p) R(j, p) over p >= j (R upper triangular)
      for (std::size_t p = j; p < n; ++p) want += b[i * n + p] * r[j * n + p];
      EXPECT_NEAR(got[i * n + j], want, 1e-13) << i << "," << j;
    }
  }
}

}  // namespace in_blas_test
}  // namespace
}  // namespace vlbias
