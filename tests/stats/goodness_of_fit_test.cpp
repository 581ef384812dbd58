// Goodness-of-fit tests and their power (include/vlbias/stats/goodness_of_fit.h) against
// scipy.stats.chisquare, power_divergence, binomtest, an itertools enumeration of every
// multinomial outcome and scipy.stats.ncx2 (tools/make_representation_fixtures.py,
// tests/fixtures/stats/goodness_of_fit.json); then the edge cases and the input errors.
#include "vlbias/stats/goodness_of_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"

namespace vlbias {
namespace {
namespace in_goodness_of_fit_test {

using json = nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("stats/goodness_of_fit.json");
}

// Relative closeness for p-values that span 300 orders of magnitude.
void expect_close(double got, double want, double rel) {
  EXPECT_NEAR(got, want, rel * std::max(std::fabs(want), 1e-300)) << "want " << want;
}

TEST(GoodnessOfFit, StatisticsAndPValuesEqualScipy) {
  for (const json& c : fixture().at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto counts = c.at("counts").get<std::vector<std::uint64_t>>();
    const auto shares = c.at("shares").get<std::vector<double>>();
    const stats::TestResult chi = stats::chi_square_gof(counts, shares);
    expect_close(chi.statistic, c.at("chi_square")[0].get<double>(), 1e-12);
    expect_close(chi.p_value, c.at("chi_square")[1].get<double>(), 1e-9);
    ASSERT_EQ(chi.df.size(), 1u);
    EXPECT_EQ(chi.df[0], c.at("df").get<double>());
    expect_close(chi.effect_size, c.at("cohens_w").get<double>(), 1e-12);
    const stats::TestResult g = stats::g_test_gof(counts, shares);
    EXPECT_NEAR(g.statistic, c.at("g_test")[0].get<double>(), 1e-12);
    expect_close(g.p_value, c.at("g_test")[1].get<double>(), 1e-9);
    const stats::TestResult exact = stats::exact_multinomial_gof(counts, shares);
    expect_close(exact.p_value, c.at("exact_p").get<double>(), 1e-9);
    EXPECT_EQ(exact.method, "exact");
  }
}

TEST(GoodnessOfFit, PowerAndMinimumDetectableEffectEqualScipysNoncentralChiSquare) {
  for (const json& c : fixture().at("power")) {
    SCOPED_TRACE(c.dump());
    expect_close(stats::gof_power(c.at("n"), c.at("df"), c.at("w"), c.at("alpha")),
                 c.at("power").get<double>(), 1e-9);
  }
  for (const json& c : fixture().at("mde")) {
    SCOPED_TRACE(c.dump());
    expect_close(
        stats::gof_minimum_detectable_w(c.at("n"), c.at("df"), c.at("alpha"), c.at("power")),
        c.at("w").get<double>(), 1e-8);
  }
}

TEST(GoodnessOfFit, AClassTheHypothesisRulesOutMakesTheSampleImpossible) {
  const std::vector<std::uint64_t> counts = {5, 5, 1};
  const std::vector<double> shares = {0.5, 0.5, 0.0};
  for (const stats::TestResult& r :
       {stats::chi_square_gof(counts, shares), stats::g_test_gof(counts, shares),
        stats::exact_multinomial_gof(counts, shares)}) {
    SCOPED_TRACE(r.test);
    EXPECT_TRUE(std::isinf(r.statistic));
    EXPECT_EQ(r.p_value, 0.0);
    EXPECT_FALSE(r.note.empty());
  }
}

TEST(GoodnessOfFit, OnePossibleClassFitsEverySample) {
  const stats::TestResult r =
      stats::chi_square_gof(std::vector<std::uint64_t>{0, 9}, std::vector<double>{0.0, 1.0});
  EXPECT_EQ(r.p_value, 1.0);
  EXPECT_FALSE(r.note.empty());
}

TEST(GoodnessOfFit, TooManyOutcomesLeaveTheExactPValueUndefinedWithANote) {
  // C(1009, 9) outcomes of 10 classes and n = 1000.
  EXPECT_GT(stats::multinomial_outcomes(1000, 10), std::size_t{1'000'000});
  EXPECT_EQ(stats::multinomial_outcomes(20, 2), 21u);
  EXPECT_EQ(stats::multinomial_outcomes(3, 3), 10u);
  const std::vector<std::uint64_t> counts(10, 100);
  const stats::TestResult r = stats::exact_multinomial_gof(counts, std::vector<double>(10, 0.1));
  EXPECT_TRUE(std::isnan(r.p_value));
  EXPECT_NE(r.note.find("outcomes"), std::string::npos);
}

TEST(GoodnessOfFit, MalformedInputIsAnInputError) {
  const std::vector<std::uint64_t> two = {3, 4};
  EXPECT_THROW(stats::chi_square_gof(std::vector<std::uint64_t>{3}, std::vector<double>{1.0}),
               InputError);
  EXPECT_THROW(stats::chi_square_gof(two, std::vector<double>{0.5}), InputError);
  EXPECT_THROW(stats::chi_square_gof(two, std::vector<double>{0.5, 0.6}), InputError);
  EXPECT_THROW(stats::g_test_gof(two, std::vector<double>{NAN, 0.5}), InputError);
  EXPECT_THROW(
      stats::exact_multinomial_gof(std::vector<std::uint64_t>{0, 0}, std::vector<double>{0.5, 0.5}),
      InputError);
  EXPECT_THROW(stats::gof_power(10, 1, -0.1, 0.05), InputError);
  EXPECT_THROW(stats::gof_minimum_detectable_w(10, 1, 0.05, 0.01), InputError);
}

}  // namespace in_goodness_of_fit_test
}  // namespace
}  // namespace vlbias
