// Percentiles, describe(), mean() and variance() against numpy (fixtures from
// tools/make_resampling_fixtures.py) and on degenerate input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_descriptives_test {

const nlohmann::json& fixtures() {
  return testing_util::fixture_json("stats/resampling.json");
}

std::vector<double> doubles(const nlohmann::json& j) {
  return j.get<std::vector<double>>();
}

// |actual - expected| <= 1e-12 * max(|expected|, 1e-300): relative, as the brief asks.
void expect_close(double actual, double expected, const std::string& what) {
  const double tol = 1e-12 * std::max(std::fabs(expected), 1e-300);
  EXPECT_NEAR(actual, expected, tol) << what;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PercentileTest, MatchesNumpyType7) {
  const auto& cases = fixtures().at("percentiles");
  ASSERT_GE(cases.size(), 8u);
  for (const auto& c : cases) {
    const auto x = doubles(c.at("x"));
    const auto qs = doubles(c.at("q"));
    const auto expected = doubles(c.at("expected"));
    const auto got = percentiles(x, qs);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      // Same operations as numpy's _quantile/_lerp: equal bit for bit, which is
      // stricter than the 1e-12 relative tolerance of the brief.
      EXPECT_EQ(got[i], expected[i]) << c.at("name").get<std::string>() << " q=" << qs[i];
    }
  }
}

TEST(PercentileTest, SortedVariantAgreesAndInterpolatesFromNearerEnd) {
  std::vector<double> sorted = {-3.0, -1.0, 0.5, 2.0, 10.0};
  EXPECT_EQ(percentile_sorted(sorted, 0.0), -3.0);
  EXPECT_EQ(percentile_sorted(sorted, 100.0), 10.0);
  EXPECT_EQ(percentile_sorted(sorted, 50.0), 0.5);
  // (n - 1) q = 4 * 0.25 = 1 exactly: the order statistic itself.
  EXPECT_EQ(percentile_sorted(sorted, 25.0), -1.0);
  // index 3.5: gamma = 0.5 takes numpy's "from the upper end" branch, 10 - 8 * 0.5.
  EXPECT_EQ(percentile_sorted(sorted, 87.5), 6.0);
  // index 0.4: -3 + 2 * 0.4.
  EXPECT_DOUBLE_EQ(percentile_sorted(sorted, 10.0), -2.2);
  std::vector<double> shuffled = {2.0, 10.0, -3.0, 0.5, -1.0};
  const std::vector<double> qs = {10.0, 37.0, 87.5};
  const auto got = percentiles(shuffled, qs);
  for (std::size_t i = 0; i < qs.size(); ++i) EXPECT_EQ(got[i], percentile_sorted(sorted, qs[i]));
}

TEST(PercentileTest, SingleValueIsEveryPercentile) {
  const std::vector<double> one = {-7.25};
  for (const double q : {0.0, 13.0, 50.0, 99.9, 100.0}) EXPECT_EQ(percentile_sorted(one, q), -7.25);
}

TEST(PercentileTest, EmptySampleGivesNaNsOrError) {
  const std::vector<double> none;
  const std::vector<double> qs = {5.0, 50.0};
  const auto got = percentiles(none, qs);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_THROW(percentile_sorted(none, 50.0), InputError);
}

TEST(PercentileTest, InvalidQuantileOrNonFiniteInputIsInputError) {
  const std::vector<double> x = {1.0, 2.0, 3.0};
  EXPECT_THROW(percentile_sorted(x, -0.1), InputError);
  EXPECT_THROW(percentile_sorted(x, 100.5), InputError);
  EXPECT_THROW(percentile_sorted(x, std::nan("")), InputError);
  const std::vector<double> bad_q = {50.0, 101.0};
  EXPECT_THROW(percentiles(x, bad_q), InputError);
  const std::vector<double> qs = {50.0};
  const std::vector<double> with_nan = {1.0, std::nan(""), 3.0};
  const std::vector<double> with_inf = {1.0, kInf};
  EXPECT_THROW(percentiles(with_nan, qs), InputError);
  EXPECT_THROW(percentiles(with_inf, qs), InputError);
}

TEST(DescribeTest, MatchesNumpy) {
  const auto& cases = fixtures().at("describe");
  ASSERT_GE(cases.size(), 8u);
  for (const auto& c : cases) {
    const auto name = c.at("name").get<std::string>();
    const auto x = doubles(c.at("x"));
    const Summary s = describe(x);
    EXPECT_EQ(s.n, c.at("n").get<std::size_t>()) << name;
    expect_close(s.mean, c.at("mean").get<double>(), name + " mean");
    if (c.at("sd").is_null()) {
      EXPECT_TRUE(std::isnan(s.sd)) << name;
      EXPECT_FALSE(s.note.empty()) << name;
    } else {
      expect_close(s.sd, c.at("sd").get<double>(), name + " sd");
      EXPECT_TRUE(s.note.empty()) << name << ": " << s.note;
    }
    expect_close(s.min, c.at("min").get<double>(), name + " min");
    expect_close(s.p25, c.at("p25").get<double>(), name + " p25");
    expect_close(s.median, c.at("median").get<double>(), name + " median");
    expect_close(s.p75, c.at("p75").get<double>(), name + " p75");
    expect_close(s.max, c.at("max").get<double>(), name + " max");
  }
}

TEST(DescribeTest, EmptyGivesNaNsAndNote) {
  const Summary s = describe(std::vector<double>{});
  EXPECT_EQ(s.n, 0u);
  for (const double v : {s.mean, s.sd, s.min, s.p25, s.median, s.p75, s.max}) {
    EXPECT_TRUE(std::isnan(v));
  }
  EXPECT_FALSE(s.note.empty());
}

TEST(DescribeTest, SingleValueHasUndefinedSdWithNote) {
  const Summary s = describe(std::vector<double>{2.5});
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.min, 2.5);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.max, 2.5);
  EXPECT_TRUE(std::isnan(s.sd));
  EXPECT_NE(s.note.find("standard deviation"), std::string::npos) << s.note;
}

TEST(DescribeTest, ZeroVarianceIsExactlyZero) {
  // 0.1 * 7 is not exactly representable: a plain mean would be off by an ulp and the
  // sd would be tiny instead of 0.
  const std::vector<double> x(7, 0.1);
  const Summary s = describe(x);
  EXPECT_EQ(s.mean, 0.1);
  EXPECT_EQ(s.sd, 0.0);
  EXPECT_TRUE(s.note.empty());
}

TEST(DescribeTest, NonFiniteInputIsInputError) {
  EXPECT_THROW(describe(std::vector<double>{1.0, std::nan("")}), InputError);
  EXPECT_THROW(describe(std::vector<double>{-kInf, 1.0}), InputError);
  EXPECT_THROW(mean(std::vector<double>{kInf}), InputError);
  EXPECT_THROW(variance(std::vector<double>{1.0, std::nan("")}), InputError);
}

TEST(DescribeTest, MeanAndVarianceDegenerateCases) {
  EXPECT_TRUE(std::isnan(mean(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(variance(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(variance(std::vector<double>{3.0})));
  EXPECT_EQ(mean(std::vector<double>{3.0}), 3.0);
  EXPECT_EQ(variance(std::vector<double>{1.0, 3.0}), 2.0);
}

TEST(DescribeTest, VarianceIsAccurateUnderALargeOffset) {
  // A one-pass sum of squares loses every digit here; the exact answer is 5/3.
  const std::vector<double> x = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4};
  EXPECT_NEAR(variance(x), 5.0 / 3.0, 1e-12 * 5.0 / 3.0);
  EXPECT_EQ(mean(x), 1e9 + 2.5);
}

TEST(DescribeTest, MeanIsCompensated) {
  // 1 + 1e-16 * 10 summed naively stays 1; the compensated sum keeps the tail.
  std::vector<double> x = {1.0};
  x.insert(x.end(), 10, 1e-16);
  EXPECT_DOUBLE_EQ(mean(x), (1.0 + 1e-15) / 11.0);
  EXPECT_GT(mean(x), 1.0 / 11.0);
}

TEST(PercentileTest, SelectionGivesTheSortedBits) {
  // Random data with ties, every integer percentile and some awkward ones.
  Rng rng(3);
  for (const std::size_t n : {1u, 2u, 7u, 100u, 1001u}) {
    std::vector<double> x(n);
    for (double& v : x) v = static_cast<double>(rng.uniform_index(50)) / 7.0;
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    for (double q = 0.0; q <= 100.0; q += 0.5) {
      std::vector<double> work = x;
      EXPECT_EQ(percentile_select(work, q), percentile_sorted(sorted, q)) << n << " " << q;
    }
    std::vector<double> work = x;
    EXPECT_EQ(percentile_select(work, 100.0 / 3.0), percentile_sorted(sorted, 100.0 / 3.0));
  }
  std::vector<double> empty;
  EXPECT_THROW(percentile_select(empty, 10.0), InputError);
}

}  // namespace in_descriptives_test
}  // namespace
}  // namespace vlbias::stats
