// PRDC against the exact numpy reference of tools/make_prdc_fixtures.py: random data, exact
// duplicates, integer grids with exact ties, and data whose float32 GEMM distances lose
// every digit (so the exact recomputation decides), at 1 and 2 threads.
#include "vlbias/metrics/prdc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_prdc_test {

const std::string kFixtures = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/";

const nlohmann::json& cases() {
  return testing_util::fixture_json("metrics/prdc.json")["cases"];
}

Matrix load(const nlohmann::json& c, const char* which) {
  return read_npy_matrix(kFixtures + c[which].get<std::string>());
}

void expect_case(const std::string& name) {
  SCOPED_TRACE(name);
  const nlohmann::json& c = cases()[name];
  const Matrix real = load(c, "real"), fake = load(c, "fake");
  for (const auto& want : c["results"]) {
    PrdcOptions o;
    o.k = want["k"].get<std::size_t>();
    o.rule = want["inclusive"].get<bool>() ? BallRule::Inclusive : BallRule::Strict;
    o.per_sample = true;
    SCOPED_TRACE("k = " + std::to_string(o.k) + (want["inclusive"].get<bool>() ? " <=" : " <"));
    const PrdcResult got = prdc(real, fake, o);
    // Shares of whole counts: exact equality with the reference.
    EXPECT_EQ(got.precision, want["precision"].get<double>());
    EXPECT_EQ(got.coverage, want["coverage"].get<double>());
    EXPECT_NEAR(got.density, want["density"].get<double>(), 1e-15);
    EXPECT_EQ(got.recall, want["recall"].get<double>());
    EXPECT_EQ(got.n_real, real.rows);
    EXPECT_EQ(got.n_fake, fake.rows);
    if (!want.contains("per_sample")) continue;
    const nlohmann::json& ps = want["per_sample"];
    ASSERT_EQ(got.real_radius.size(), real.rows);
    for (std::size_t i = 0; i < real.rows; ++i) {
      // The radius is the exact k-th squared distance: bit-identical, then square-rooted.
      ASSERT_EQ(got.real_radius[i], std::sqrt(ps["real_radius_sq"][i].get<double>())) << i;
      ASSERT_EQ(got.real_covered[i], ps["real_covered"][i].get<int>()) << i;
      ASSERT_EQ(got.real_in_fake_balls[i], ps["real_in_fake_balls"][i].get<int>()) << i;
    }
    ASSERT_EQ(got.fake_ball_count.size(), fake.rows);
    for (std::size_t j = 0; j < fake.rows; ++j) {
      ASSERT_EQ(got.fake_ball_count[j], ps["fake_ball_count"][j].get<unsigned>()) << j;
      ASSERT_EQ(got.fake_radius[j], std::sqrt(ps["fake_radius_sq"][j].get<double>())) << j;
    }
  }
}

TEST(Prdc, RandomDataMatchesReference) {
  expect_case("random");
}
TEST(Prdc, ExactDuplicatesGiveZeroRadiiAndFollowTheBallRule) {
  expect_case("duplicates");
}
TEST(Prdc, IntegerGridTiesAreExact) {
  expect_case("grid");
}
TEST(Prdc, LargeOffsetIsSettledByExactRecomputation) {
  expect_case("offset");
}

TEST(Prdc, ResultsDoNotDependOnThreadCount) {
  const nlohmann::json& c = cases()["offset"];
  const Matrix real = load(c, "real"), fake = load(c, "fake");
  PrdcOptions o;
  o.k = 3;
  o.per_sample = true;
  o.ball_members = true;
  set_thread_count(1);
  const PrdcResult one = prdc(real, fake, o);
  set_thread_count(2);
  const PrdcResult two = prdc(real, fake, o);
  set_thread_count(0);
  EXPECT_EQ(one.precision, two.precision);
  EXPECT_EQ(one.recall, two.recall);
  EXPECT_EQ(one.density, two.density);
  EXPECT_EQ(one.coverage, two.coverage);
  EXPECT_EQ(one.real_radius, two.real_radius);
  EXPECT_EQ(one.members_offsets, two.members_offsets);
  EXPECT_EQ(one.members, two.members);
}

TEST(Prdc, LibraryStyleAgreesOnRandomData) {
  // prdc's own approach (sklearn distances, k + 1 smallest including self) on the same data.
  const nlohmann::json& c = cases()["random"];
  const Matrix real = load(c, "real"), fake = load(c, "fake");
  for (const auto& [k, want] : c["library_style"].items()) {
    PrdcOptions o;
    o.k = std::stoul(k);
    const PrdcResult got = prdc(real, fake, o);
    EXPECT_EQ(got.precision, want["precision"].get<double>());
    EXPECT_EQ(got.recall, want["recall"].get<double>());
    EXPECT_NEAR(got.density, want["density"].get<double>(), 1e-15);
    EXPECT_EQ(got.coverage, want["coverage"].get<double>());
  }
}

TEST(Prdc, BallMembersListTheFakesInsideEachBall) {
  const nlohmann::json& c = cases()["duplicates"];
  const Matrix real = load(c, "real"), fake = load(c, "fake");
  PrdcOptions o;
  o.k = 3;
  o.per_sample = true;
  o.ball_members = true;
  const PrdcResult r = prdc(real, fake, o);
  ASSERT_EQ(r.members_offsets.size(), real.rows + 1);
  std::vector<std::uint32_t> count(fake.rows, 0);
  for (std::size_t i = 0; i < real.rows; ++i) {
    const std::size_t n = r.members_offsets[i + 1] - r.members_offsets[i];
    EXPECT_EQ(n > 0, r.real_covered[i] == 1) << i;
    for (std::size_t m = r.members_offsets[i]; m < r.members_offsets[i + 1]; ++m) {
      if (m > r.members_offsets[i]) {
        EXPECT_LT(r.members[m - 1], r.members[m]);
      }
      ++count[r.members[m]];
    }
  }
  EXPECT_EQ(count, r.fake_ball_count);
}

TEST(Prdc, KnnRadiiMatchReference) {
  const nlohmann::json& c = cases()["grid"];
  const Matrix real = load(c, "real");
  for (const auto& want : c["results"]) {
    const std::size_t k = want["k"].get<std::size_t>();
    const std::vector<double> r = knn_radii_squared(real, k);
    for (std::size_t i = 0; i < real.rows; ++i) {
      ASSERT_EQ(r[i], want["per_sample"]["real_radius_sq"][i].get<double>()) << k << " " << i;
    }
  }
}

TEST(Prdc, RecallIsUndefinedWithTooFewFakes) {
  const Matrix real = load(cases()["grid"], "real");
  Matrix fake(3, 3);
  PrdcOptions o;
  o.k = 3;
  const PrdcResult r = prdc(real, fake, o);
  EXPECT_TRUE(std::isnan(r.recall));
  EXPECT_NE(r.note.find("recall is undefined"), std::string::npos) << r.note;
  EXPECT_GE(r.precision, 0.0);
}

TEST(Prdc, BadInputIsAClearError) {
  using testing_util::error_of;
  Matrix real(10, 4), fake(5, 4), narrow(5, 3);
  for (std::size_t i = 0; i < real.data.size(); ++i) real.data[i] = static_cast<float>(i % 7);
  PrdcOptions o;
  o.k = 0;
  EXPECT_NE(error_of<InputError>([&] { prdc(real, fake, o); }).find("k must be at least 1"),
            std::string::npos);
  o.k = 10;
  EXPECT_NE(error_of<InputError>([&] { prdc(real, fake, o); }).find("needs at least 11 rows"),
            std::string::npos);
  o.k = 3;
  EXPECT_NE(error_of<InputError>([&] { prdc(real, narrow, o); }).find("4 columns"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([&] { prdc(real, Matrix(0, 4), o); }).find("no rows"),
            std::string::npos);
  Matrix bad = fake;
  bad.at(2, 1) = std::nanf("");
  EXPECT_NE(error_of<InputError>([&] { prdc(real, bad, o); }).find("row 2, column 1"),
            std::string::npos);
  bad.at(2, 1) = 3e18f;
  EXPECT_NE(error_of<InputError>([&] { prdc(real, bad, o); }).find("rescale"), std::string::npos);
}

}  // namespace in_prdc_test
}  // namespace
}  // namespace vlbias
