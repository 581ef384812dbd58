// Refusal / safety-filter rates by group: Pearson's chi-square test of equal rates
// (chi_square_rates) and Wilson intervals against scipy (tools/make_rates_fixtures.py) and a
// hand-worked table.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/core/error.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_rates_test {

using json = nlohmann::json;

json fixture() {
  std::ifstream in(VLBIAS_SOURCE_DIR "/tests/fixtures/stats/rates.json");
  EXPECT_TRUE(in.good()) << "missing tests/fixtures/stats/rates.json";
  return json::parse(in);
}

TEST(ChiSquareRates, AHandWorkedTwoByTwoTable) {
  // 10 of 50 and 20 of 50 refused: rate 0.3, expected 15 / 35 in each group, so
  // X^2 = 2 (25/15 + 25/35) = 100/21, df 1, V = sqrt(X^2 / 100).
  const std::vector<std::size_t> x = {10, 20}, n = {50, 50};
  const TestResult r = chi_square_rates(x, n);
  EXPECT_EQ(r.test, "chi_square");
  EXPECT_NEAR(r.statistic, 100.0 / 21, 1e-12);
  ASSERT_EQ(r.df.size(), 1u);
  EXPECT_EQ(r.df[0], 1);
  EXPECT_NEAR(r.effect_size, std::sqrt(1.0 / 21), 1e-12);
  EXPECT_NEAR(r.p_value, std::erfc(std::sqrt(100.0 / 21 / 2)), 1e-12);  // chi2(1) tail
  EXPECT_TRUE(r.note.empty()) << r.note;
}

TEST(ChiSquareRates, MatchesScipyChi2ContingencyAndBinomtestWilson) {
  const json cases = fixture();
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const auto x = c["successes"].get<std::vector<std::size_t>>();
    const auto n = c["totals"].get<std::vector<std::size_t>>();
    const TestResult r = chi_square_rates(x, n);
    EXPECT_NEAR(r.statistic, c["statistic"].get<double>(), 1e-10 * c["statistic"].get<double>());
    EXPECT_EQ(r.df.at(0), c["df"].get<double>());
    EXPECT_NEAR(r.p_value, c["p_value"].get<double>(), 1e-9 * c["p_value"].get<double>() + 1e-15);
    EXPECT_NEAR(r.effect_size, c["cramers_v"].get<double>(), 1e-12);
    EXPECT_EQ(r.note.empty(), c["min_expected"].get<double>() >= 5) << r.note;
    for (std::size_t g = 0; g < x.size(); ++g) {
      SCOPED_TRACE(g);
      if (n[g] == 0) continue;
      const Interval w = wilson_interval(x[g], n[g], 0.95);
      EXPECT_NEAR(w.lower, c["wilson95"][g][0].get<double>(), 1e-12);
      EXPECT_NEAR(w.upper, c["wilson95"][g][1].get<double>(), 1e-12);
    }
  }
}

TEST(ChiSquareRates, NoTestWhenEveryRateIsZeroOrThereIsOneGroup) {
  const std::vector<std::size_t> zero = {0, 0}, n = {5, 7};
  EXPECT_TRUE(std::isnan(chi_square_rates(zero, n).p_value));
  EXPECT_NE(chi_square_rates(zero, n).note.find("same rate"), std::string::npos);
  const std::vector<std::size_t> one = {2, 0}, one_n = {5, 0};
  EXPECT_NE(chi_square_rates(one, one_n).note.find("fewer than 2"), std::string::npos);
  const std::vector<std::size_t> bad = {6, 0};
  EXPECT_THROW(chi_square_rates(bad, n), InputError);
}

}  // namespace in_rates_test
}  // namespace
}  // namespace vlbias::stats
