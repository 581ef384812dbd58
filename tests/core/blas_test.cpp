// The BLAS wrapper against naive double loops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "vlbias/blas.h"
#include "vlbias/error.h"
#include "vlbias/parallel.h"
#include "vlbias/rng.h"

namespace vlbias {
namespace {

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

}  // namespace
}  // namespace vlbias
