// SC-WEAT (src/metrics/association.cpp) against numpy references computed in float64
// from the same float32 embeddings (tools/make_scweat_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/association.h"

namespace vlbias {
namespace {
namespace in_association_test {

using nlohmann::json;

struct Inputs {
  Matrix t, a, b;
};

Inputs load(const std::string& name) {
  const std::string dir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/metrics/scweat_";
  return {read_npy_matrix(dir + name + "_targets.npy"), read_npy_matrix(dir + name + "_a.npy"),
          read_npy_matrix(dir + name + "_b.npy")};
}

const json& expected(const std::string& name) {
  return testing_util::fixture_json("metrics/scweat.json")[name];
}

// float32 inputs: 1e-6 relative, with an absolute floor for values near zero.
void expect_close(double actual, double want, const std::string& what) {
  EXPECT_NEAR(actual, want, 1e-6 * std::fabs(want) + 1e-7) << what;
}

void expect_values(const ScweatResult& r, const json& want) {
  ASSERT_EQ(r.per_target.size(), want["difference"].size());
  for (std::size_t t = 0; t < r.per_target.size(); ++t) {
    expect_close(r.per_target[t].difference, want["difference"][t].get<double>(),
                 "difference " + std::to_string(t));
    expect_close(r.per_target[t].effect_size, want["effect_size"][t].get<double>(),
                 "effect size " + std::to_string(t));
  }
  expect_close(r.mean_difference, want["mean_difference"].get<double>(), "mean difference");
  expect_close(r.effect_size, want["mean_effect_size"].get<double>(), "effect size");
}

TEST(ScWeat, SmallExactPermutationMatchesEnumeration) {
  const Inputs in = load("small");
  const json& want = expected("small");
  ScweatOptions o;
  o.permutations = 1000;
  const ScweatResult r = sc_weat(in.t, in.a, in.b, o);
  expect_values(r, want);
  EXPECT_EQ(r.n_a, 5u);
  EXPECT_EQ(r.n_b, 4u);
  EXPECT_EQ(r.test.method, "exact");
  EXPECT_EQ(r.test.resamples, want["permutation_count"].get<std::size_t>());
  EXPECT_EQ(r.test.exceed, want["permutation_exceed"].get<std::size_t>());
  EXPECT_DOUBLE_EQ(r.test.p_value, want["permutation_p"].get<double>());
  // The permutation statistic is mean_t es_t, written as a difference of means of w.
  expect_close(r.test.observed, want["mean_effect_size"].get<double>(), "observed statistic");
  EXPECT_TRUE(r.note.empty()) << r.note;
}

TEST(ScWeat, SmallExactSignFlipMatchesEnumeration) {
  const Inputs in = load("small");
  const json& want = expected("small");
  ScweatOptions o;
  o.p_test = ScweatPTest::SignFlip;
  o.permutations = 1000;
  const ScweatResult r = sc_weat(in.t, in.a, in.b, o);
  expect_values(r, want);
  EXPECT_EQ(r.test.method, "exact");
  EXPECT_EQ(r.test.resamples, want["sign_flip_count"].get<std::size_t>());
  EXPECT_EQ(r.test.exceed, want["sign_flip_exceed"].get<std::size_t>());
  EXPECT_DOUBLE_EQ(r.test.p_value, want["sign_flip_p"].get<double>());
  expect_close(r.test.observed, want["mean_difference"].get<double>(), "observed statistic");
}

// |p - p_ref| within 4 binomial standard errors of both estimates, plus 1/B.
void expect_p_near(double p, std::size_t b, double ref, double ref_draws) {
  const double se = std::sqrt(ref * (1.0 - ref) * (1.0 / static_cast<double>(b) + 1.0 / ref_draws));
  EXPECT_NEAR(p, ref, 4.0 * se + 1.0 / static_cast<double>(b));
}

TEST(ScWeat, LargeMonteCarloPermutationWithinBinomialTolerance) {
  const Inputs in = load("large");
  const json& want = expected("large");
  ScweatOptions o;
  o.permutations = 20000;
  o.seed = 7;
  const ScweatResult r = sc_weat(in.t, in.a, in.b, o);
  expect_values(r, want);
  EXPECT_EQ(r.test.method, "monte_carlo");
  EXPECT_EQ(r.test.resamples, 20000u);
  EXPECT_EQ(r.test.seed, 7u);
  expect_p_near(r.test.p_value, 20000, want["permutation_p_mc"].get<double>(),
                want["permutation_p_mc_draws"].get<double>());
  // Same seed, same answer.
  EXPECT_EQ(sc_weat(in.t, in.a, in.b, o).test.p_value, r.test.p_value);
}

TEST(ScWeat, LargeMonteCarloSignFlipWithinBinomialToleranceOfExact) {
  const Inputs in = load("large");
  const json& want = expected("large");
  ScweatOptions o;
  o.p_test = ScweatPTest::SignFlip;
  o.permutations = 20000;  // < 2^20: Monte Carlo
  o.seed = 3;
  const ScweatResult r = sc_weat(in.t, in.a, in.b, o);
  EXPECT_EQ(r.test.method, "monte_carlo");
  expect_p_near(r.test.p_value, 20000, want["sign_flip_p"].get<double>(), 1e300);
}

TEST(ScWeat, CosinesAreScaleInvariant) {
  Inputs in = load("small");
  const ScweatResult base = sc_weat(in.t, in.a, in.b);
  for (float& v : in.a.data) v *= 3.5f;
  for (float& v : in.t.data) v *= 0.25f;
  const ScweatResult scaled = sc_weat(in.t, in.a, in.b);
  EXPECT_NEAR(scaled.effect_size, base.effect_size, 1e-6);
  EXPECT_NEAR(scaled.mean_difference, base.mean_difference, 1e-6);
}

TEST(ScWeat, InputErrors) {
  const Inputs in = load("small");
  ScweatOptions o;
  o.a_name = "a.npy";
  o.targets_name = "t.npy";
  EXPECT_THROW(sc_weat(in.t, Matrix(0, 8), in.b, o), InputError);
  EXPECT_THROW(sc_weat(in.t, in.a, Matrix(0, 8), o), InputError);
  EXPECT_THROW(sc_weat(Matrix(0, 8), in.a, in.b, o), InputError);
  try {
    sc_weat(in.t, Matrix(2, 4), in.b, o);
    FAIL() << "dimension mismatch accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.npy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("a.npy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(3, 8)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2, 4)"), std::string::npos) << msg;
  }
  Matrix zero_row = in.b;
  for (std::size_t k = 0; k < zero_row.cols; ++k) zero_row.at(1, k) = 0.0f;
  EXPECT_THROW(sc_weat(in.t, in.a, zero_row, o), InputError);
  o.permutations = 0;
  EXPECT_THROW(sc_weat(in.t, in.a, in.b, o), UsageError);
}

TEST(ScWeat, ConstantCosinesGiveNaNEffectSizeWithNote) {
  // Every image is the same vector, with products exact in float: each target's
  // cosines are all equal (1 and 0), sd_t = 0.
  Matrix t(2, 3), a(2, 3), b(3, 3);
  t.at(0, 0) = 1.0f;
  t.at(1, 1) = 1.0f;
  for (Matrix* m : {&a, &b})
    for (std::size_t i = 0; i < m->rows; ++i) m->at(i, 0) = 1.0f;
  const ScweatResult r = sc_weat(t, a, b);
  EXPECT_TRUE(std::isnan(r.effect_size));
  EXPECT_TRUE(std::isnan(r.per_target[0].effect_size));
  EXPECT_EQ(r.per_target[0].difference, 0.0);
  EXPECT_TRUE(std::isnan(r.test.p_value));
  EXPECT_NE(r.note.find("sd 0"), std::string::npos) << r.note;
  ScweatOptions o;
  o.p_test = ScweatPTest::SignFlip;
  const ScweatResult s = sc_weat(t, a, b, o);
  EXPECT_FALSE(std::isnan(s.test.p_value));
}

TEST(ScWeat, PTestNames) {
  EXPECT_EQ(parse_scweat_p_test("permutation"), ScweatPTest::Permutation);
  EXPECT_EQ(parse_scweat_p_test("sign-flip"), ScweatPTest::SignFlip);
  EXPECT_STREQ(to_string(ScweatPTest::SignFlip), "sign-flip");
  EXPECT_THROW(parse_scweat_p_test("bootstrap"), UsageError);
}

}  // namespace in_association_test
}  // namespace
}  // namespace vlbias
