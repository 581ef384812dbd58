// Kendall tau-b, the Wilcoxon signed-rank test and the one-sided alternatives of every
// correlation and two-sample test against scipy 1.10.1 (tools/make_correlation_fixtures.py
// writes tests/fixtures/stats/correlation.json), then degenerate cases and input errors.
//
// Tolerances: 1e-12 absolute on correlations, 1e-9 relative on t and z based statistics and
// on p-values, 1e-12 relative on exact p-values (both sides sum the same integer counts).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_correlation_test {

using ::testing::HasSubstr;
using json = nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("stats/correlation.json");
}

std::vector<double> doubles(const json& j) {
  return j.get<std::vector<double>>();
}

struct Alt {
  const char* name;
  Alternative alternative;
};
constexpr Alt kAlternatives[] = {{"two-sided", Alternative::TwoSided},
                                 {"greater", Alternative::Greater},
                                 {"less", Alternative::Less}};

void expect_rel(double actual, const json& want, double tol, const std::string& what) {
  if (want.is_null()) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": scipy gives NaN, vlbias " << actual;
    return;
  }
  const double w = want.get<double>();
  EXPECT_NEAR(actual, w, tol * std::max(std::fabs(w), 1e-300)) << what;
}

TEST(Correlation, PearsonSpearmanAndKendallMatchScipyForEveryAlternative) {
  for (const json& c : fixture().at("correlation")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::vector<double> x = doubles(c.at("x")), y = doubles(c.at("y"));
    for (const Alt& alt : kAlternatives) {
      SCOPED_TRACE(alt.name);
      const json& want = c.at(alt.name);
      const TestResult p = pearson(x, y, alt.alternative);
      const TestResult s = spearman(x, y, alt.alternative);
      const TestResult k = kendall_tau(x, y, alt.alternative);
      EXPECT_NEAR(p.statistic, want["pearson"][0].get<double>(), 1e-12);
      EXPECT_NEAR(s.statistic, want["spearman"][0].get<double>(), 1e-12);
      EXPECT_NEAR(k.statistic, want["kendall"][0].get<double>(), 1e-12);
      expect_rel(p.p_value, want["pearson"][1], 1e-9, "pearson p");
      if (std::fabs(s.statistic) == 1.0 && want["spearman"][1].get<double>() < 1e-15) {
        // scipy's corrcoef rounds a perfect rho to 1 - 1e-16 (t finite, p ~ 1e-24); vlbias
        // has rho = 1 exactly and p = 0 (stats.h).
        EXPECT_LT(s.p_value, 1e-15);
      } else {
        expect_rel(s.p_value, want["spearman"][1], 1e-9, "spearman p");
      }
      expect_rel(k.p_value, want["kendall"][1], 1e-9, "kendall p");
      EXPECT_EQ(k.method, c.at("kendall_method").get<std::string>());
    }
  }
}

TEST(Correlation, PearsonFisherIntervalMatchesScipyConfidenceInterval) {
  for (const json& c : fixture().at("correlation")) {
    if (!c.at("two-sided").contains("pearson_ci95")) continue;
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::vector<double> x = doubles(c.at("x")), y = doubles(c.at("y"));
    const TestResult p = pearson(x, y);
    const double se = 1.0 / std::sqrt(static_cast<double>(x.size()) - 3.0);
    const Interval ci = fisher_z_interval(p.statistic, se, 0.95);
    const json& want = c.at("two-sided").at("pearson_ci95");
    EXPECT_NEAR(ci.lower, want[0].get<double>(), 1e-12);
    EXPECT_NEAR(ci.upper, want[1].get<double>(), 1e-12);
  }
}

TEST(Correlation, KendallCountsDiscordantPairsLikeTheQuadraticDefinition) {
  // Random ties-heavy data: tau_b from the O(n^2) pair count must equal the merge-sort count.
  Rng rng(7, 0);
  std::vector<double> x(257), y(257);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(rng.uniform_index(9));
    y[i] = static_cast<double>(rng.uniform_index(13)) + (i % 3 == 0 ? x[i] : 0.0);
  }
  double con = 0, dis = 0, tx = 0, ty = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const double s = (x[i] - x[j]) * (y[i] - y[j]);
      con += s > 0;
      dis += s < 0;
      tx += x[i] == x[j];
      ty += y[i] == y[j];
    }
  }
  const double tot = static_cast<double>(x.size() * (x.size() - 1) / 2);
  const double want = (con - dis) / std::sqrt((tot - tx) * (tot - ty));
  EXPECT_NEAR(kendall_tau(x, y).statistic, want, 1e-14);
}

TEST(Correlation, KendallOfAConstantInputIsUndefinedWithANote) {
  const std::vector<double> x = {1, 1, 1, 1}, y = {1, 2, 3, 4};
  const TestResult k = kendall_tau(x, y);
  EXPECT_TRUE(std::isnan(k.statistic));
  EXPECT_TRUE(std::isnan(k.p_value));
  EXPECT_THAT(k.note, HasSubstr("constant"));
  EXPECT_THAT(kendall_tau(std::vector<double>{1}, std::vector<double>{2}).note,
              HasSubstr("single pair"));
  EXPECT_THROW(kendall_tau(x, std::vector<double>{1, 2}), InputError);
  EXPECT_THROW(kendall_tau(std::vector<double>{1, NAN}, std::vector<double>{1, 2}), InputError);
}

TEST(Correlation, PerfectSpearmanIsSignificantOnlyInItsDirection) {
  const std::vector<double> x = {1, 2, 3, 4, 5}, y = {5, 4, 3, 2, 1};
  EXPECT_EQ(spearman(x, y, Alternative::TwoSided).p_value, 0.0);
  EXPECT_EQ(spearman(x, y, Alternative::Less).p_value, 0.0);
  EXPECT_EQ(spearman(x, y, Alternative::Greater).p_value, 1.0);
}

TEST(Wilcoxon, SignedRankMatchesScipyForEveryZeroMethodAndAlternative) {
  for (const json& c : fixture().at("wilcoxon")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::vector<double> a = doubles(c.at("a")), b = doubles(c.at("b"));
    const std::string zm = c.at("zero_method");
    const ZeroMethod zero = zm == "pratt"    ? ZeroMethod::Pratt
                            : zm == "zsplit" ? ZeroMethod::Zsplit
                                             : ZeroMethod::Wilcox;
    const bool exact = c.at("method") == "exact";
    for (const Alt& alt : kAlternatives) {
      SCOPED_TRACE(alt.name);
      const TestResult r = wilcoxon(a, b, alt.alternative, zero);
      EXPECT_EQ(r.method, exact ? "exact" : "asymptotic");
      EXPECT_EQ(r.statistic, c.at(alt.name)[0].get<double>());
      expect_rel(r.p_value, c.at(alt.name)[1], exact ? 1e-12 : 1e-9, "p");
    }
  }
}

TEST(Wilcoxon, EffectSizeIsTheMatchedPairsRankBiserial) {
  // d = 3, -1, 2, 5: ranks 3, 1, 2, 4; R+ = 9, R- = 1.
  const std::vector<double> a = {4, 0, 3, 6}, b = {1, 1, 1, 1};
  const TestResult r = wilcoxon(a, b);
  EXPECT_EQ(r.statistic, 1.0);
  EXPECT_DOUBLE_EQ(r.effect_size, 0.8);
  EXPECT_EQ(r.effect_name, "rank_biserial");
}

TEST(Wilcoxon, AllZeroDifferencesAreUndefinedUnlessSplit) {
  const std::vector<double> a = {1, 2, 3}, b = {1, 2, 3};
  for (const ZeroMethod zm : {ZeroMethod::Wilcox, ZeroMethod::Pratt}) {
    const TestResult r = wilcoxon(a, b, Alternative::TwoSided, zm);
    EXPECT_TRUE(std::isnan(r.p_value));
    EXPECT_THAT(r.note, HasSubstr("every difference is zero"));
  }
  const TestResult z = wilcoxon(a, b, Alternative::TwoSided, ZeroMethod::Zsplit);
  EXPECT_EQ(z.p_value, 1.0);  // R+ = R- = the null mean: z = 0
  EXPECT_EQ(z.effect_size, 0.0);
}

TEST(Wilcoxon, RefusesUnequalLengthsEmptyAndNonFiniteInput) {
  EXPECT_THROW(wilcoxon(std::vector<double>{1, 2}, std::vector<double>{1}), InputError);
  EXPECT_THROW(wilcoxon(std::vector<double>{}, std::vector<double>{}), InputError);
  EXPECT_THROW(wilcoxon(std::vector<double>{1, INFINITY}, std::vector<double>{1, 2}), InputError);
  EXPECT_THROW(wilcoxon(std::vector<double>{1.7e308}, std::vector<double>{-1.7e308}), InputError);
}

TEST(TwoSample, OneSidedTTestsAndMannWhitneyMatchScipy) {
  for (const json& c : fixture().at("two_sample")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const std::vector<double> a = doubles(c.at("a")), b = doubles(c.at("b"));
    for (const Alt& alt : kAlternatives) {
      SCOPED_TRACE(alt.name);
      const json& want = c.at(alt.name);
      auto check = [&](const char* test, const TestResult& r) {
        if (!want.contains(test)) return;
        SCOPED_TRACE(test);
        expect_rel(r.statistic, want[test][0], 1e-9, "statistic");
        expect_rel(r.p_value, want[test][1], 1e-9, "p");
      };
      if (want.contains("student")) {
        check("student", student_t(a, b, alt.alternative));
        check("welch", welch_t(a, b, alt.alternative));
        check("mannwhitney", mann_whitney_u(a, b, alt.alternative));
      }
      if (a.size() == b.size()) check("paired_t", paired_t(a, b, alt.alternative));
    }
  }
}

TEST(TwoSample, OneSidedPValuesOfOppositeDirectionsAddToOneForContinuousTests) {
  const std::vector<double> a = {1.2, 3.4, 2.2, 5.1, 0.3}, b = {0.1, 2.9, 1.0, 4.0, 0.5};
  for (auto test : {&paired_t, &student_t, &welch_t}) {
    const double g = test(a, b, Alternative::Greater).p_value;
    const double l = test(a, b, Alternative::Less).p_value;
    const double two = test(a, b, Alternative::TwoSided).p_value;
    EXPECT_NEAR(g + l, 1.0, 1e-14);
    EXPECT_NEAR(2.0 * std::min(g, l), two, 1e-14);
  }
}

}  // namespace in_correlation_test
}  // namespace
}  // namespace vlbias::stats
