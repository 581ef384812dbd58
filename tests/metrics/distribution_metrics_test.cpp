// FID, KID and Vendi against the float64 numpy/scipy references of
// tools/make_distribution_fixtures.py (random data, n < d, exact duplicates, integer grids).
#include "vlbias/metrics/distribution_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "test_util.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_distribution_metrics_test {

const std::string kFixtures = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/";
const char* const kCases[] = {"random", "wide", "duplicates", "grid"};

const nlohmann::json& cases() {
  return testing_util::fixture_json("metrics/distribution.json")["cases"];
}

Matrix load(const nlohmann::json& c, const char* which) {
  return read_npy_matrix(kFixtures + c[which].get<std::string>());
}

double rel(double got, double want) {
  return std::abs(got - want) / std::max(1.0, std::abs(want));
}

TEST(Fid, MatchesTheSingularValueReference) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = cases()[name];
    const Matrix a = load(c, "a"), b = load(c, "b");
    const nlohmann::json& want = c["fid"];
    for (const unsigned threads : {1u, 2u}) {
      set_thread_count(threads);
      const FidResult r = fid(a, b);
      EXPECT_LT(rel(r.fid, want["fid"].get<double>()), 1e-12) << r.fid;
      EXPECT_LT(rel(r.mean_term, want["mean_term"].get<double>()), 1e-13);
      EXPECT_LT(rel(r.trace_a, want["trace_a"].get<double>()), 1e-13);
      EXPECT_LT(rel(r.trace_b, want["trace_b"].get<double>()), 1e-13);
      EXPECT_LT(rel(r.trace_sqrt, want["trace_sqrt"].get<double>()), 1e-12);
      // The usual eigenvalue and sqrtm routes agree up to their sqrt(rounding) floor.
      EXPECT_LT(rel(r.fid, want["eigh_fid"].get<double>()), 1e-7);
      EXPECT_LT(rel(r.fid, want["sqrtm_fid"].get<double>()), 1e-7);
      EXPECT_EQ(r.n_a, a.rows);
      EXPECT_EQ(r.dim, a.cols);
    }
    set_thread_count(0);
  }
}

TEST(Fid, ChunkedFactorisationOfManyRows) {
  // 20,000 rows of 3 columns: the triangular factor is accumulated over three row chunks;
  // against the eigenvalue route on sample moments computed here in double (well
  // conditioned, so that route is accurate).
  const std::size_t n = 20000, d = 3;
  Matrix a(n, d), b(n, d);
  Rng rng(4);
  for (float& v : a.data) v = static_cast<float>(rng.uniform01());
  for (float& v : b.data) v = static_cast<float>(2.0 * rng.uniform01() + 0.5);
  const FidResult r = fid(a, b);
  auto moments = [&](const Matrix& x, std::vector<double>& mu, std::vector<double>& cov) {
    mu.assign(d, 0.0);
    cov.assign(d * d, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < d; ++k) mu[k] += x.at(i, k) / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t p = 0; p < d; ++p)
        for (std::size_t q = 0; q < d; ++q)
          cov[p * d + q] += (x.at(i, p) - mu[p]) * (x.at(i, q) - mu[q]) / (n - 1.0);
  };
  std::vector<double> ma, ca, mb, cb;
  moments(a, ma, ca);
  moments(b, mb, cb);
  std::vector<double> v = ca;
  const std::vector<double> w = symmetric_eigen(v, d, true);
  std::vector<double> m(d * d, 0.0);
  for (std::size_t i = 0; i < d; ++i)
    for (std::size_t j = 0; j < d; ++j)
      for (std::size_t p = 0; p < d; ++p)
        for (std::size_t q = 0; q < d; ++q)
          m[i * d + j] +=
              std::sqrt(w[i]) * v[p * d + i] * cb[p * d + q] * v[q * d + j] * std::sqrt(w[j]);
  double tr = 0.0, mean_term = 0.0;
  for (const double l : symmetric_eigen(m, d, false)) tr += std::sqrt(l);
  for (std::size_t k = 0; k < d; ++k) mean_term += (ma[k] - mb[k]) * (ma[k] - mb[k]);
  const double want = mean_term + ca[0] + ca[4] + ca[8] + cb[0] + cb[4] + cb[8] - 2.0 * tr;
  EXPECT_LT(rel(r.fid, want), 1e-10) << r.fid << " vs " << want;
}

TEST(Fid, IdenticalSetsGiveZero) {
  const Matrix a = load(cases()["random"], "a");
  const FidResult r = fid(a, a);
  EXPECT_NEAR(r.fid, 0.0, 1e-9 * r.trace_a);
}

TEST(Kid, FullSetEstimatorMatchesReference) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = cases()[name];
    const Matrix a = load(c, "a"), b = load(c, "b");
    KidOptions o;
    o.subsets = 0;
    const KidResult r = kid(a, b, o);
    EXPECT_LT(rel(r.kid, c["kid_full"].get<double>()), 1e-6) << r.kid;
    EXPECT_TRUE(std::isnan(r.sd));
  }
}

TEST(Kid, SubsetsAreTheOnesTheReferenceDraws) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = cases()[name];
    const Matrix a = load(c, "a"), b = load(c, "b");
    const nlohmann::json& want = c["kid"];
    KidOptions o;
    o.subsets = want["subsets"].get<std::size_t>();
    o.subset_size = want["subset_size"].get<std::size_t>();
    o.seed = want["seed"].get<std::uint64_t>();
    for (const unsigned threads : {1u, 2u}) {
      set_thread_count(threads);
      const KidResult r = kid(a, b, o);
      ASSERT_EQ(r.per_subset.size(), o.subsets);
      for (std::size_t s = 0; s < o.subsets; ++s) {
        EXPECT_LT(rel(r.per_subset[s], want["per_subset"][s].get<double>()), 1e-6) << s;
      }
      EXPECT_LT(rel(r.kid, want["kid"].get<double>()), 1e-6);
      EXPECT_LT(rel(r.sd, want["sd"].get<double>()), 1e-5);
    }
    set_thread_count(0);
  }
}

TEST(Kid, BothKernelRoutesGiveEachSubsetsEstimator) {
  // 750 rows in all: two subsets of 300 take the one Gram matrix of every row (fewer flops),
  // one subset takes its own products. Either way each value is its subset's estimator (up
  // to float32 dot products summed in a different GEMM shape).
  const nlohmann::json& c = cases()["random"];
  const Matrix a = load(c, "a"), b = load(c, "b");
  for (const std::size_t subsets : {std::size_t{1}, std::size_t{2}}) {
    KidOptions o;
    o.subsets = subsets;
    o.subset_size = 300;
    o.seed = 9;
    const KidResult r = kid(a, b, o);
    const auto drawn = kid_subsets(a.rows, b.rows, 300, subsets, 9);
    for (std::size_t s = 0; s < subsets; ++s) {
      const double want = mmd2_unbiased(a, drawn[s].first, b, drawn[s].second, o);
      EXPECT_LT(rel(r.per_subset[s], want), 1e-7) << subsets << " " << s;
    }
  }
}

TEST(Kid, SubsetSizeIsReducedToTheSmallerSet) {
  const Matrix a = load(cases()["wide"], "a"), b = load(cases()["wide"], "b");
  KidOptions o;
  o.subsets = 3;
  const KidResult r = kid(a, b, o);
  EXPECT_EQ(r.subset_size, 30u);
  EXPECT_NE(r.note.find("reduced from 1000 to 30"), std::string::npos) << r.note;
}

TEST(Vendi, MatchesTheReferenceThroughEitherGram) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = cases()[name];
    for (const char* which : {"a", "b"}) {
      const Matrix x = load(c, which);
      const nlohmann::json& want = c[std::string("vendi_") + which];
      const VendiResult r = vendi(x);
      EXPECT_EQ(r.gram, x.rows <= x.cols ? "n x n" : "d x d");
      EXPECT_LT(rel(r.score, want["q1"].get<double>()), 1e-9) << r.score;
      EXPECT_LT(rel(vendi(x, 2.0).score, want["q2"].get<double>()), 1e-9);
      EXPECT_LT(
          rel(vendi(x, std::numeric_limits<double>::infinity()).score, want["qinf"].get<double>()),
          1e-9);
    }
  }
}

TEST(Vendi, HandWorked) {
  // Two orthogonal unit directions, two copies each: K / n has eigenvalues 1/2, 1/2: VS = 2.
  Matrix x(4, 3);
  x.at(0, 0) = x.at(1, 0) = 3.0f;
  x.at(2, 1) = x.at(3, 1) = 0.5f;
  EXPECT_NEAR(vendi(x).score, 2.0, 1e-12);
  // All rows parallel: VS = 1.
  Matrix y(5, 2);
  for (std::size_t i = 0; i < 5; ++i) y.at(i, 0) = static_cast<float>(i + 1);
  EXPECT_NEAR(vendi(y).score, 1.0, 1e-12);
}

TEST(DistributionMetrics, BadInputIsAClearError) {
  using testing_util::error_of;
  Matrix a(5, 3), b(4, 3), narrow(4, 2), one(1, 3);
  for (float& v : a.data) v = 1.0f;
  for (float& v : b.data) v = 2.0f;
  EXPECT_NE(error_of<InputError>([&] { fid(a, narrow); }).find("3 columns but the second 2"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { fid(a, one); }).find("at least 2"), std::string::npos);
  Matrix bad = b;
  bad.at(1, 2) = std::numeric_limits<float>::infinity();
  EXPECT_NE(error_of<InputError>([&] { kid(a, bad, {}); }).find("row 1, column 2"),
            std::string::npos);
  KidOptions o;
  o.degree = 0;
  EXPECT_NE(error_of<InputError>([&] { kid(a, b, o); }).find("degree"), std::string::npos);
  Matrix zero(3, 3);
  zero.at(0, 0) = 1.0f;
  EXPECT_NE(error_of<InputError>([&] { vendi(zero); }).find("row 1 is all zeros"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { vendi(a, -1.0); }).find("order q"), std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { vendi(Matrix(0, 3)); }).find("no rows"), std::string::npos);
}

}  // namespace in_distribution_metrics_test
}  // namespace
}  // namespace vlbias
