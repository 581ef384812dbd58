// Holm and Benjamini-Hochberg adjustments against statsmodels' multipletests
// (fixtures from tools/make_resampling_fixtures.py) and their defining properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_multiple_testing_test {

const nlohmann::json& cases() {
  static const nlohmann::json data = [] {
    std::ifstream in(VLBIAS_SOURCE_DIR "/tests/fixtures/stats/resampling.json");
    EXPECT_TRUE(in.good()) << "missing tests/fixtures/stats/resampling.json";
    return nlohmann::json::parse(in).at("multiple_testing");
  }();
  return data;
}

// null in the fixture = NaN.
std::vector<double> with_nans(const nlohmann::json& j) {
  std::vector<double> out;
  for (const auto& v : j) out.push_back(v.is_null() ? kNaN : v.get<double>());
  return out;
}

void expect_matches(const std::vector<double>& got, const std::vector<double>& expected,
                    const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(got[i], expected[i], 1e-12 * std::max(expected[i], 1e-300))
          << what << " [" << i << "]";
    }
  }
}

TEST(HolmTest, MatchesStatsmodels) {
  ASSERT_GE(cases().size(), 6u);
  for (const auto& c : cases()) {
    expect_matches(holm(with_nans(c.at("p"))), with_nans(c.at("holm")),
                   c.at("name").get<std::string>());
  }
}

TEST(BenjaminiHochbergTest, MatchesStatsmodels) {
  ASSERT_GE(cases().size(), 6u);
  for (const auto& c : cases()) {
    expect_matches(benjamini_hochberg(with_nans(c.at("p"))), with_nans(c.at("bh")),
                   c.at("name").get<std::string>());
  }
}

TEST(HolmTest, HandComputedStepDown) {
  // Sorted p: 0.01 (x3 = 0.03), 0.02 (x2 = 0.04), 0.04 (x1); input order kept.
  const std::vector<double> p = {0.04, 0.01, 0.02};
  const auto adj = holm(p);
  EXPECT_DOUBLE_EQ(adj[0], 0.04);
  EXPECT_DOUBLE_EQ(adj[1], 0.03);
  EXPECT_DOUBLE_EQ(adj[2], 0.04);
}

TEST(BenjaminiHochbergTest, HandComputedStepUp) {
  // m = 4: 0.01*4/1 = 0.04, 0.02*4/2 = 0.04, 0.03*4/3 = 0.04, 0.5*4/4 = 0.5.
  const std::vector<double> p = {0.5, 0.03, 0.01, 0.02};
  const auto adj = benjamini_hochberg(p);
  EXPECT_DOUBLE_EQ(adj[0], 0.5);
  EXPECT_DOUBLE_EQ(adj[1], 0.04);
  EXPECT_DOUBLE_EQ(adj[2], 0.04);
  EXPECT_DOUBLE_EQ(adj[3], 0.04);
}

TEST(MultipleTestingTest, NaNsStayNaNAndAreNotCounted) {
  const std::vector<double> p = {kNaN, 0.01, kNaN, 0.02};
  const auto h = holm(p);
  const auto bh = benjamini_hochberg(p);
  EXPECT_TRUE(std::isnan(h[0]) && std::isnan(h[2]));
  EXPECT_TRUE(std::isnan(bh[0]) && std::isnan(bh[2]));
  // m = 2, not 4.
  EXPECT_DOUBLE_EQ(h[1], 0.02);
  EXPECT_DOUBLE_EQ(h[3], 0.02);
  EXPECT_DOUBLE_EQ(bh[1], 0.02);
  EXPECT_DOUBLE_EQ(bh[3], 0.02);
  const std::vector<double> all_nan = {kNaN, kNaN};
  EXPECT_TRUE(std::isnan(holm(all_nan)[1]));
  EXPECT_TRUE(std::isnan(benjamini_hochberg(all_nan)[0]));
}

TEST(MultipleTestingTest, EmptyInputGivesEmptyOutput) {
  EXPECT_TRUE(holm(std::vector<double>{}).empty());
  EXPECT_TRUE(benjamini_hochberg(std::vector<double>{}).empty());
}

TEST(MultipleTestingTest, OutOfRangePIsInputError) {
  EXPECT_THROW(holm(std::vector<double>{0.5, 1.5}), InputError);
  EXPECT_THROW(holm(std::vector<double>{-0.01}), InputError);
  EXPECT_THROW(benjamini_hochberg(std::vector<double>{0.2, -1.0}), InputError);
  EXPECT_THROW(benjamini_hochberg(std::vector<double>{std::numeric_limits<double>::infinity()}),
               InputError);
}

TEST(MultipleTestingTest, RandomInputsAreMonotoneCappedAndOrdered) {
  Rng rng(2024);
  for (int rep = 0; rep < 50; ++rep) {
    const std::size_t m = 1 + rng.uniform_index(40);
    std::vector<double> p(m);
    for (auto& v : p) {
      const double u = rng.uniform01();
      v = rng.uniform_index(5) == 0 ? std::round(u * 10) / 10 : u * u * u;  // some ties
    }
    const auto h = holm(p);
    const auto bh = benjamini_hochberg(p);
    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] < p[b]; });
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t i = order[k];
      EXPECT_GE(h[i], p[i]);
      // p * m / rank at rank m can round one ulp below p (statsmodels computes the same
      // expression and agrees bit for bit), hence the ulp of slack.
      EXPECT_GE(bh[i], p[i] * (1.0 - 0x1p-52));
      EXPECT_LE(h[i], 1.0);
      EXPECT_LE(bh[i], 1.0);
      EXPECT_GE(h[i], bh[i] - 1e-15);  // Holm is never less conservative than BH
      if (k > 0) {
        EXPECT_GE(h[i], h[order[k - 1]]);  // same order as the raw p-values
        EXPECT_GE(bh[i], bh[order[k - 1]]);
      }
    }
  }
}

}  // namespace in_multiple_testing_test
}  // namespace
}  // namespace vlbias::stats
