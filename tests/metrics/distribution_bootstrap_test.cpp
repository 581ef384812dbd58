// Bootstrap intervals of FID, KID and Vendi and FID_inf against
// tools/make_distribution_bootstrap_fixtures.py, which materialises every resample (scipy's
// sqrtm for FID, numpy kernels, eigvalsh) and fits FID_inf with numpy.polyfit; plus hand-worked
// degenerate cases and the errors.
#include "vlbias/metrics/distribution_bootstrap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_distribution_bootstrap_test {

const std::string kFixtures = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/";
const char* const kCases[] = {"tall", "wide"};

const nlohmann::json& reference() {
  return testing_util::fixture_json("metrics/distribution_bootstrap/reference.json");
}

Matrix load(const nlohmann::json& c, const char* which) {
  return read_npy_matrix(kFixtures + c[which].get<std::string>());
}

double rel(double got, double want) {
  return std::abs(got - want) / std::max(1.0, std::abs(want));
}

DistributionBootstrapOptions reference_options() {
  DistributionBootstrapOptions o;
  o.resamples = reference()["resamples"].get<std::size_t>();
  o.seed = reference()["seed"].get<std::uint64_t>();
  o.level = reference()["level"].get<double>();
  o.keep_replicates = true;
  return o;
}

KidOptions cubic_kernel() {
  KidOptions k;
  k.subsets = 0;
  return k;
}

// Every replicate and both bounds against the reference's materialised resamples.
void expect_matches(const DistributionBootstrap& got, const nlohmann::json& want, double tol) {
  ASSERT_EQ(got.replicates.size(), want["replicates"].size());
  for (std::size_t b = 0; b < got.replicates.size(); ++b) {
    EXPECT_LT(rel(got.replicates[b], want["replicates"][b].get<double>()), tol)
        << "replicate " << b << ": " << got.replicates[b];
  }
  EXPECT_LT(rel(got.raw.lower, want["lower"].get<double>()), tol);
  EXPECT_LT(rel(got.raw.upper, want["upper"].get<double>()), tol);
  EXPECT_LT(rel(got.shift, want["shift"].get<double>()), tol);
  EXPECT_LT(rel(got.ci.lower, want["recentred_lower"].get<double>()), tol);
  EXPECT_LT(rel(got.ci.upper, want["recentred_upper"].get<double>()), tol);
  EXPECT_EQ(got.ci.resamples, want["replicates"].size());
}

TEST(DistributionBootstrap, MultiplicitiesAreTheDrawsOfTheReference) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = reference()["cases"][name];
    const Matrix g = load(c, "generated");
    for (std::size_t b = 0; b < c["bootstrap"]["multiplicities"].size(); ++b) {
      EXPECT_EQ(bootstrap_multiplicities(g.rows, reference()["seed"].get<std::uint64_t>(), b),
                c["bootstrap"]["multiplicities"][b].get<std::vector<std::uint32_t>>());
    }
  }
}

TEST(DistributionBootstrap, FidKidAndVendiReplicatesMatchMaterialisedResamples) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = reference()["cases"][name];
    const nlohmann::json& want = c["bootstrap"];
    const Matrix real = load(c, "real"), gen = load(c, "generated");
    for (const unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(threads);
      set_thread_count(threads);
      const DistributionBootstrapOptions o = reference_options();
      const DistributionBootstrap f = fid_bootstrap(real, gen, o);
      // scipy's sqrtm loses ~sqrt(rounding) on the wide case's singular covariances.
      EXPECT_LT(rel(f.estimate, want["estimate"]["fid"].get<double>()), 1e-6);
      expect_matches(f, want["fid"], 1e-6);
      const DistributionBootstrap k = kid_bootstrap(real, gen, cubic_kernel(), o);
      EXPECT_LT(rel(k.estimate, want["estimate"]["kid"].get<double>()), 1e-6);
      expect_matches(k, want["kid"], 1e-6);
      const DistributionBootstrap v = vendi_bootstrap(gen, 1.0, o);
      EXPECT_LT(rel(v.estimate, want["estimate"]["vendi"].get<double>()), 1e-10);
      expect_matches(v, want["vendi"], 1e-10);
    }
    set_thread_count(0);
  }
}

TEST(DistributionBootstrap, TheEstimateIsTheMetricOfTheWholeSet) {
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real"), gen = load(c, "generated");
  DistributionBootstrapOptions o;
  o.resamples = 3;
  EXPECT_DOUBLE_EQ(fid_bootstrap(real, gen, o).estimate, fid(real, gen).fid);
  EXPECT_DOUBLE_EQ(vendi_bootstrap(gen, 2.0, o).estimate, vendi(gen, 2.0).score);
  EXPECT_NEAR(kid_bootstrap(real, gen, cubic_kernel(), o).estimate,
              kid(real, gen, cubic_kernel()).kid, 1e-12);
}

TEST(FidInf, PointsSlopeAndInterceptMatchNumpyPolyfit) {
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const nlohmann::json& c = reference()["cases"][name];
    const nlohmann::json& want = c["fid_inf"];
    const Matrix real = load(c, "real"), gen = load(c, "generated");
    FidInfOptions o;
    o.points = want["points"].get<std::size_t>();
    o.min_size = want["min_size"].get<std::size_t>();
    o.seed = want["seed"].get<std::uint64_t>();
    for (const unsigned threads : {1u, 2u}) {
      set_thread_count(threads);
      const FidInfResult r = fid_infinity(fit_gaussian(real), gen, o);
      EXPECT_EQ(r.sizes, want["sizes"].get<std::vector<std::size_t>>());
      ASSERT_EQ(r.fids.size(), r.sizes.size());
      for (std::size_t p = 0; p < r.fids.size(); ++p) {
        EXPECT_LT(rel(r.fids[p], want["fids"][p].get<double>()), 1e-6) << p;
      }
      EXPECT_LT(rel(r.slope, want["slope"].get<double>()), 1e-6) << r.slope;
      EXPECT_LT(rel(r.fid_inf, want["fid_inf"].get<double>()), 1e-6) << r.fid_inf;
    }
    set_thread_count(0);
  }
}

TEST(FidInf, TheLastPointIsTheWholeSetAndTheDefaultMinimumIsATenth) {
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real"), gen = load(c, "generated");
  const FidInfResult r = fid_infinity(fit_gaussian(real), gen, FidInfOptions{});
  EXPECT_EQ(r.min_size, 4u);  // 40 rows / 10
  EXPECT_EQ(r.sizes.front(), 4u);
  EXPECT_EQ(r.sizes.back(), 40u);
  EXPECT_EQ(r.sizes.size(), 15u);
  EXPECT_NEAR(r.fids.back(), fid(real, gen).fid, 1e-10);
}

// ------------------------------------------------------------------- degenerate cases

TEST(DistributionBootstrap, TwoGeneratedRowsGiveTheThreeHandWorkedResamples) {
  // Generated rows g0 = (1, 0), g1 = (0, 1); a resample is {g0, g0}, {g1, g1} or {g0, g1}.
  // Vendi (cosine kernel): identical rows score 1, the orthogonal pair 2.
  Matrix gen(2, 2);
  gen.at(0, 0) = 1.0f;
  gen.at(1, 1) = 1.0f;
  DistributionBootstrapOptions o;
  o.resamples = 50;
  o.keep_replicates = true;
  const DistributionBootstrap v = vendi_bootstrap(gen, 1.0, o);
  EXPECT_DOUBLE_EQ(v.estimate, 2.0);
  for (std::size_t b = 0; b < o.resamples; ++b) {
    SCOPED_TRACE(b);
    const std::vector<std::uint32_t> c = bootstrap_multiplicities(2, o.seed, b);
    EXPECT_NEAR(v.replicates[b], c[0] == 1 ? 2.0 : 1.0, 1e-12);
  }
  // FID against the real rows (0, 0), (2, 2): mu_r = (1, 1), Sigma_r = [[2, 2], [2, 2]].
  // {g0, g0}: Sigma* = 0, mean term |(1, 1) - (1, 0)|^2 = 1, FID = 1 + tr Sigma_r = 5.
  // {g0, g1}: mu* = (.5, .5), Sigma* = [[.5, -.5], [-.5, .5]], Sigma_r Sigma* = 0: FID = 0.5 +
  // 4 + 1 = 5.5.
  Matrix real(2, 2);
  real.at(1, 0) = real.at(1, 1) = 2.0f;
  const DistributionBootstrap f = fid_bootstrap(real, gen, o);
  EXPECT_NEAR(f.estimate, 5.5, 1e-12);
  for (std::size_t b = 0; b < o.resamples; ++b) {
    SCOPED_TRACE(b);
    const std::vector<std::uint32_t> c = bootstrap_multiplicities(2, o.seed, b);
    EXPECT_NEAR(f.replicates[b], c[0] == 1 ? 5.5 : 5.0, 1e-12);
  }
  EXPECT_NEAR(f.raw.lower, 5.0, 1e-12);
  EXPECT_NEAR(f.raw.upper, 5.5, 1e-12);
}

TEST(DistributionBootstrap, ConstantGeneratedRowsGiveAZeroWidthInterval) {
  // Every resample of identical rows is the same set: FID = |mu_r - x|^2 + tr Sigma_r.
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real");
  Matrix gen(7, real.cols);
  for (std::size_t i = 0; i < gen.rows; ++i)
    for (std::size_t k = 0; k < gen.cols; ++k) gen.at(i, k) = 0.25f * static_cast<float>(k);
  DistributionBootstrapOptions o;
  o.resamples = 20;
  const DistributionBootstrap f = fid_bootstrap(real, gen, o);
  const GaussianFit rf = fit_gaussian(real);
  double want = rf.trace;
  for (std::size_t k = 0; k < gen.cols; ++k) want += std::pow(rf.mean[k] - 0.25 * k, 2);
  EXPECT_NEAR(f.estimate, want, 1e-12 * want);
  EXPECT_NEAR(f.ci.lower, want, 1e-12 * want);
  EXPECT_NEAR(f.ci.upper, want, 1e-12 * want);
  // Vendi: every row points the same way, one eigenvalue 1, a score of 1.
  const DistributionBootstrap v = vendi_bootstrap(gen, 1.0, o);
  EXPECT_NEAR(v.ci.lower, 1.0, 1e-12);
  EXPECT_NEAR(v.ci.upper, 1.0, 1e-12);
}

TEST(DistributionBootstrap, OneResampleGivesItsValueAsBothBounds) {
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real"), gen = load(c, "generated");
  DistributionBootstrapOptions o = reference_options();
  o.resamples = 1;
  const DistributionBootstrap f = fid_bootstrap(real, gen, o);
  EXPECT_DOUBLE_EQ(f.raw.lower, f.replicates[0]);
  EXPECT_DOUBLE_EQ(f.raw.upper, f.replicates[0]);
  // Recentred on the estimate, the one replicate is the estimate itself.
  EXPECT_DOUBLE_EQ(f.ci.lower, f.estimate);
  EXPECT_DOUBLE_EQ(f.ci.upper, f.estimate);
  EXPECT_LT(rel(f.replicates[0], c["bootstrap"]["fid"]["replicates"][0].get<double>()), 1e-6);
}

TEST(DistributionBootstrap, DuplicateRowsAreResampledAsTheirMaterialisedCopies) {
  // Generated set = the tall case's first 10 rows, each twice: every replicate against a
  // from-scratch fid / kid / vendi of its materialised rows.
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real"), base = load(c, "generated");
  Matrix gen(20, base.cols);
  for (std::size_t i = 0; i < 20; ++i)
    for (std::size_t k = 0; k < base.cols; ++k) gen.at(i, k) = base.at(i / 2, k);
  DistributionBootstrapOptions o;
  o.resamples = 8;
  o.keep_replicates = true;
  const DistributionBootstrap f = fid_bootstrap(real, gen, o);
  const DistributionBootstrap k = kid_bootstrap(real, gen, cubic_kernel(), o);
  const DistributionBootstrap v = vendi_bootstrap(gen, 1.0, o);
  for (std::size_t b = 0; b < o.resamples; ++b) {
    SCOPED_TRACE(b);
    Rng rng(o.seed, b);
    Matrix m(20, gen.cols);
    for (std::size_t t = 0; t < 20; ++t) {
      const std::size_t i = rng.uniform_index(20);
      for (std::size_t j = 0; j < gen.cols; ++j) m.at(t, j) = gen.at(i, j);
    }
    EXPECT_LT(rel(f.replicates[b], fid(real, m).fid), 1e-10);
    EXPECT_LT(rel(k.replicates[b], kid(real, m, cubic_kernel()).kid), 1e-10);
    EXPECT_LT(rel(v.replicates[b], vendi(m).score), 1e-10);
  }
}

// ----------------------------------------------------------------------------- errors

TEST(DistributionBootstrap, RefusesOneGeneratedRowABadLevelAndNoResamples) {
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real");
  const Matrix one(1, real.cols);
  DistributionBootstrapOptions o;
  EXPECT_THROW(fid_bootstrap(real, one, o), InputError);
  EXPECT_THROW(kid_bootstrap(real, one, cubic_kernel(), o), InputError);
  EXPECT_THROW(vendi_bootstrap(one, 1.0, o), InputError);
  const Matrix gen = load(c, "generated");
  for (const double level : {0.0, 1.0, -0.5, 1.5, std::nan("")}) {
    SCOPED_TRACE(level);
    o.level = level;
    EXPECT_THROW(fid_bootstrap(real, gen, o), UsageError);
  }
  o.level = 0.95;
  o.resamples = 0;
  EXPECT_THROW(vendi_bootstrap(gen, 1.0, o), UsageError);
}

TEST(DistributionBootstrap, RefusesNonFiniteFeatures) {
  const nlohmann::json& c = reference()["cases"]["tall"];
  const Matrix real = load(c, "real");
  Matrix gen = load(c, "generated");
  gen.at(3, 2) = std::nanf("");
  DistributionBootstrapOptions o;
  EXPECT_THROW(fid_bootstrap(real, gen, o), InputError);
  EXPECT_THROW(fid_bootstrap(fit_gaussian(real), gen, o), InputError);
  EXPECT_THROW(kid_bootstrap(real, gen, cubic_kernel(), o), InputError);
  EXPECT_THROW(vendi_bootstrap(gen, 1.0, o), InputError);
  EXPECT_THROW(fid_infinity(fit_gaussian(real), gen, FidInfOptions{}), InputError);
}

TEST(FidInf, RefusesAMinimumBelowTwoOrNotBelowTheSetAndFewerThanTwoPoints) {
  const nlohmann::json& c = reference()["cases"]["tall"];
  const GaussianFit real = fit_gaussian(load(c, "real"));
  const Matrix gen = load(c, "generated");
  for (const std::size_t lo : {1u, 40u, 41u}) {
    SCOPED_TRACE(lo);
    FidInfOptions o;
    o.min_size = lo;
    EXPECT_THROW(fid_infinity(real, gen, o), UsageError);
  }
  FidInfOptions o;
  o.points = 1;
  EXPECT_THROW(fid_infinity(real, gen, o), UsageError);
  EXPECT_THROW(fid_infinity(real, MatrixView(gen.data.data(), 2, gen.cols), FidInfOptions{}),
               InputError);
}

}  // namespace in_distribution_bootstrap_test
}  // namespace
}  // namespace vlbias
