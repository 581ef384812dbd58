// Classical tests (stats.h, "classical tests") against scipy 1.10.1: fixtures from
// tools/make_stats_fixtures.py (statistic, p-value, df from scipy; effect sizes from
// numpy), then the documented degenerate cases, input errors and invariants.
//
// Tolerances: 1e-9 relative on statistics and effect sizes, 1e-6 relative on
// p-values (also in the far tail, p ~ 1e-30 and below); p = 0 exactly in the
// fixture must come back below 1e-15.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "classical_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_classical_test {

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr double kStatTol = 1e-9;
constexpr double kPTol = 1e-6;
constexpr double kPZero = 1e-15;

const json& fixture_cases() {
  static const json data = [] {
    std::ifstream in(VLBIAS_SOURCE_DIR "/tests/fixtures/stats/classical.json");
    EXPECT_TRUE(in.good()) << "missing tests/fixtures/stats/classical.json";
    return json::parse(in).at("cases");
  }();
  return data;
}

std::vector<const json*> cases_of(const std::string& test) {
  std::vector<const json*> out;
  for (const auto& c : fixture_cases()) {
    if (c.at("test") == test) out.push_back(&c);
  }
  return out;
}

// The fixture generator (see tools/make_stats_fixtures.py):
// h_i = (i * mult + add) mod 2^32, v_i = offset + scale * ((h_i mod mod) / mod),
// terms added elementwise left to right.
std::vector<double> eval_gen(const json& terms) {
  std::vector<double> out;
  for (std::size_t t = 0; t < terms.size(); ++t) {
    const json& term = terms[t];
    const auto n = term.at("n").get<std::size_t>();
    const auto mult = term.at("mult").get<std::uint64_t>();
    const auto add = term.at("add").get<std::uint64_t>();
    const auto mod = term.at("mod").get<std::uint64_t>();
    const double scale = term.at("scale").get<double>();
    const double offset = term.at("offset").get<double>();
    if (t == 0) out.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t h = (static_cast<std::uint64_t>(i) * mult + add) & 0xFFFFFFFFULL;
      const double u = static_cast<double>(h % mod) / static_cast<double>(mod);
      const double v = offset + scale * u;
      out[i] = t == 0 ? v : out[i] + v;
    }
  }
  return out;
}

std::vector<double> sample(const json& s) {
  if (s.is_array()) return s.get<std::vector<double>>();
  std::vector<double> v = eval_gen(s.at("gen"));
  EXPECT_EQ(v.size(), s.at("n").get<std::size_t>());
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  const double expected = s.at("sum").get<double>();
  EXPECT_NEAR(sum, expected, 1e-12 * std::fabs(expected) + 1e-12) << "generator mismatch";
  return v;
}

std::vector<std::vector<double>> samples(const json& list) {
  std::vector<std::vector<double>> out;
  for (const auto& s : list) out.push_back(sample(s));
  return out;
}

std::vector<std::span<const double>> spans(const std::vector<std::vector<double>>& groups) {
  return {groups.begin(), groups.end()};
}

// Interleaved GroupedValues holding the same groups (round-robin until each is used up).
struct Grouped {
  std::vector<double> values;
  std::vector<std::uint32_t> labels;
  GroupedValues view() const { return {values, labels, k}; }
  std::size_t k = 0;
};
Grouped interleave(const std::vector<std::vector<double>>& groups) {
  Grouped g;
  g.k = groups.size();
  std::vector<std::size_t> pos(groups.size(), 0);
  bool more = true;
  while (more) {
    more = false;
    for (std::size_t j = 0; j < groups.size(); ++j) {
      if (pos[j] < groups[j].size()) {
        g.values.push_back(groups[j][pos[j]++]);
        g.labels.push_back(static_cast<std::uint32_t>(j));
        more = true;
      }
    }
  }
  return g;
}

double rel_err(double got, double expected) {
  if (got == expected) return 0.0;
  return std::fabs(got - expected) / std::fabs(expected);
}

// Largest relative errors seen per test kind, printed by each fixture test.
struct MaxErr {
  double statistic = 0, p = 0, effect = 0;
  void print(const std::string& what) const {
    std::cout << "[ max rel err vs scipy ] " << what << ": statistic " << statistic << ", p " << p
              << ", effect size " << effect << "\n";
  }
};

void expect_matches(const TestResult& r, const json& c, MaxErr& err, const std::string& form = "") {
  const std::string what =
      c.at("test").get<std::string>() + " '" + c.at("name").get<std::string>() + "'" + form;
  const double stat = c.at("statistic").get<double>();
  const double p = c.at("p_value").get<double>();
  const double eff = c.at("effect_size").get<double>();
  EXPECT_TRUE(r.note.empty()) << what << ": unexpected note " << r.note;
  EXPECT_LE(rel_err(r.statistic, stat), kStatTol)
      << what << " statistic " << r.statistic << " vs " << stat;
  err.statistic = std::max(err.statistic, rel_err(r.statistic, stat));
  if (p == 0.0) {
    EXPECT_LE(r.p_value, kPZero) << what;
  } else {
    EXPECT_LE(rel_err(r.p_value, p), kPTol) << what << " p " << r.p_value << " vs " << p;
    err.p = std::max(err.p, rel_err(r.p_value, p));
  }
  EXPECT_LE(rel_err(r.effect_size, eff), kStatTol)
      << what << " effect " << r.effect_size << " vs " << eff;
  err.effect = std::max(err.effect, rel_err(r.effect_size, eff));
  const auto df = c.at("df").get<std::vector<double>>();
  ASSERT_EQ(r.df.size(), df.size()) << what;
  for (std::size_t i = 0; i < df.size(); ++i) {
    EXPECT_LE(rel_err(r.df[i], df[i]), kStatTol) << what << " df[" << i << "]";
  }
}

bool all_nan(const TestResult& r) {
  return std::isnan(r.statistic) && std::isnan(r.p_value);
}

// ------------------------------------------------------------------ fixtures

TEST(AnovaFixture, MatchesScipyInBothForms) {
  const auto cases = cases_of("anova");
  ASSERT_GE(cases.size(), 10u);
  MaxErr err;
  for (const json* c : cases) {
    const auto groups = samples(c->at("groups"));
    const TestResult r = one_way_anova(spans(groups));
    EXPECT_EQ(r.test, "anova");
    EXPECT_EQ(r.effect_name, "eta_squared");
    expect_matches(r, *c, err, " (spans)");
    const Grouped g = interleave(groups);
    expect_matches(one_way_anova(g.view()), *c, err, " (grouped)");
  }
  err.print("anova");
}

TEST(TTestFixture, StudentMatchesScipy) {
  const auto cases = cases_of("student");
  ASSERT_GE(cases.size(), 8u);
  MaxErr err;
  for (const json* c : cases) {
    const TestResult r = student_t(sample(c->at("a")), sample(c->at("b")));
    EXPECT_EQ(r.test, "student");
    EXPECT_EQ(r.effect_name, "cohens_d");
    expect_matches(r, *c, err);
  }
  err.print("student");
}

TEST(TTestFixture, WelchMatchesScipy) {
  const auto cases = cases_of("welch");
  ASSERT_GE(cases.size(), 8u);
  MaxErr err;
  for (const json* c : cases) {
    const TestResult r = welch_t(sample(c->at("a")), sample(c->at("b")));
    EXPECT_EQ(r.test, "welch");
    EXPECT_EQ(r.effect_name, "cohens_d_av");
    expect_matches(r, *c, err);
  }
  err.print("welch");
}

TEST(TTestFixture, PairedMatchesScipy) {
  const auto cases = cases_of("paired_t");
  ASSERT_GE(cases.size(), 5u);
  MaxErr err;
  for (const json* c : cases) {
    const TestResult r = paired_t(sample(c->at("a")), sample(c->at("b")));
    EXPECT_EQ(r.test, "paired_t");
    EXPECT_EQ(r.effect_name, "cohens_dz");
    expect_matches(r, *c, err);
  }
  err.print("paired_t");
}

TEST(MannWhitneyFixture, MatchesScipyAndChoosesTheSameMethod) {
  const auto cases = cases_of("mannwhitney");
  ASSERT_GE(cases.size(), 15u);
  MaxErr err;
  std::size_t exact = 0;
  for (const json* c : cases) {
    const TestResult r = mann_whitney_u(sample(c->at("a")), sample(c->at("b")));
    EXPECT_EQ(r.test, "mannwhitney");
    EXPECT_EQ(r.effect_name, "rank_biserial");
    EXPECT_EQ(r.method, c->at("method").get<std::string>()) << c->at("name");
    exact += r.method == "exact";
    expect_matches(r, *c, err);
  }
  EXPECT_GE(exact, 8u);
  err.print("mannwhitney");
}

TEST(KruskalFixture, MatchesScipyInBothForms) {
  const auto cases = cases_of("kruskal");
  ASSERT_GE(cases.size(), 8u);
  MaxErr err;
  for (const json* c : cases) {
    const auto groups = samples(c->at("groups"));
    const TestResult r = kruskal_wallis(spans(groups));
    EXPECT_EQ(r.test, "kruskal");
    EXPECT_EQ(r.effect_name, "epsilon_squared");
    expect_matches(r, *c, err, " (spans)");
    // scipy's textbook formula cancels when H is small and N large (~1e-9 relative
    // on "k4 large heavy ties"); vlbias's centred form matches the exact value.
    const double exact = c->at("statistic_exact").get<double>();
    EXPECT_LE(rel_err(r.statistic, exact), 1e-12) << c->at("name") << " vs exact " << exact;
    const Grouped g = interleave(groups);
    expect_matches(kruskal_wallis(g.view()), *c, err, " (grouped)");
  }
  err.print("kruskal");
}

TEST(PearsonFixture, MatchesScipy) {
  const auto cases = cases_of("pearson");
  ASSERT_GE(cases.size(), 8u);
  MaxErr err;
  for (const json* c : cases) {
    const TestResult r = pearson(sample(c->at("x")), sample(c->at("y")));
    EXPECT_EQ(r.test, "pearson");
    EXPECT_EQ(r.effect_name, "r");
    expect_matches(r, *c, err);
  }
  err.print("pearson");
}

TEST(SpearmanFixture, MatchesScipy) {
  const auto cases = cases_of("spearman");
  ASSERT_GE(cases.size(), 7u);
  MaxErr err;
  for (const json* c : cases) {
    const TestResult r = spearman(sample(c->at("x")), sample(c->at("y")));
    EXPECT_EQ(r.test, "spearman");
    EXPECT_EQ(r.effect_name, "rho");
    expect_matches(r, *c, err);
  }
  err.print("spearman");
}

TEST(RankFixture, MatchesScipyRankdata) {
  const auto cases = cases_of("rank");
  ASSERT_GE(cases.size(), 4u);
  for (const json* c : cases) {
    const auto ranks = rank_average(sample(c->at("x")));
    EXPECT_EQ(ranks, c->at("ranks").get<std::vector<double>>()) << c->at("name");
  }
}

// --------------------------------------------------------------------- ANOVA

TEST(AnovaDegenerate, AllValuesIdenticalIsUndefined) {
  const std::vector<double> a{0.1, 0.1, 0.1}, b{0.1, 0.1};
  const TestResult r = one_way_anova({a, b});
  EXPECT_TRUE(all_nan(r));
  EXPECT_TRUE(std::isnan(r.effect_size));
  EXPECT_EQ(r.note, "all values are identical: F is undefined (0/0)");
  EXPECT_EQ(r.df, (std::vector<double>{1, 3}));
}

TEST(AnovaDegenerate, ConstantGroupsWithDifferentMeansAreUndefinedNotInfinite) {
  // scipy: F = inf, p = 0. vlbias: NaN statistic and p with a note; eta^2 = 1.
  const std::vector<double> a{0.1, 0.1, 0.1}, b{0.2, 0.2, 0.2}, c{0.3, 0.3};
  for (const TestResult& r :
       {one_way_anova({a, b, c}), one_way_anova(interleave({a, b, c}).view())}) {
    EXPECT_TRUE(all_nan(r));
    EXPECT_EQ(r.effect_size, 1.0);
    EXPECT_THAT(r.note, HasSubstr("zero variance within every group and the group means differ"));
    EXPECT_THAT(r.note, HasSubstr("scipy returns inf and p = 0"));
  }
}

TEST(AnovaDegenerate, ConstantGroupsAtScaleAreExactlyConstant) {
  // 0.1 repeated 200,000 times spans many blocks and chunks; its variance must be
  // exactly 0 in both forms, like scipy's (a == a[0]).all() test.
  const std::size_t n = 400000;
  std::vector<double> v(n);
  std::vector<std::uint32_t> g(n);
  Rng rng(31, 0);
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = static_cast<std::uint32_t>(i % 2);
    v[i] = g[i] == 0 ? 0.1 : 0.3;
  }
  const TestResult all_const = one_way_anova(GroupedValues{v, g, 2});
  EXPECT_TRUE(all_nan(all_const));
  EXPECT_EQ(all_const.effect_size, 1.0);
  EXPECT_THAT(all_const.note, HasSubstr("zero variance within every group"));
  for (std::size_t i = 1; i < n; i += 2) v[i] = rng.uniform01();
  std::vector<double> g0, g1;
  for (std::size_t i = 0; i < n; ++i) (g[i] == 0 ? g0 : g1).push_back(v[i]);
  const TestResult grouped = one_way_anova(GroupedValues{v, g, 2});
  const TestResult split = one_way_anova({g0, g1});
  EXPECT_TRUE(grouped.note.empty());
  EXPECT_LE(rel_err(grouped.statistic, split.statistic), 1e-12);
  // Within-group SS comes from group 1 only: F = ss_between / (ss_within / (N - 2)).
  EXPECT_LE(rel_err(split.statistic, student_t(g0, g1).statistic * student_t(g0, g1).statistic),
            1e-9);
}

TEST(AnovaDegenerate, EverySingleObservationIsUndefined) {
  const std::vector<double> a{1.0}, b{2.0}, c{4.0};
  const TestResult r = one_way_anova({a, b, c});
  EXPECT_TRUE(all_nan(r));
  EXPECT_EQ(r.df, (std::vector<double>{2, 0}));
  EXPECT_THAT(r.note, HasSubstr("every group has a single observation"));
}

TEST(AnovaDegenerate, SingletonGroupNextToLargerOnesIsDefined) {
  // scipy.stats.f_oneway([1], [2, 3]) = (3.0, 0.33333333333333337).
  const std::vector<double> a{1.0}, b{2.0, 3.0};
  const TestResult r = one_way_anova({a, b});
  EXPECT_TRUE(r.note.empty());
  EXPECT_NEAR(r.statistic, 3.0, 1e-12);
  EXPECT_NEAR(r.p_value, 0.33333333333333337, 1e-12);
}

TEST(AnovaInput, RejectsEmptyGroupsFewGroupsBadLabelsAndNonFinite) {
  const std::vector<double> a{1, 2, 3}, empty;
  EXPECT_THAT(
      [&] {
        one_way_anova({a, empty});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("group 1 of 2 has no observations")));
  EXPECT_THROW(one_way_anova(std::vector<std::span<const double>>{a}), InputError);
  const std::vector<double> v{1, 2, 3, 4};
  const std::vector<std::uint32_t> labels{0, 0, 2, 2};
  EXPECT_THAT(
      [&] {
        one_way_anova(GroupedValues{v, labels, 3});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("group 1 of 3 has no observations")));
  const std::vector<std::uint32_t> bad{0, 1, 3, 1};
  EXPECT_THAT(
      [&] {
        one_way_anova(GroupedValues{v, bad, 2});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("label 3 at position 2")));
  const std::vector<std::uint32_t> short_labels{0, 1};
  EXPECT_THROW(one_way_anova(GroupedValues{v, short_labels, 2}), InputError);
  const std::vector<std::uint32_t> ok{0, 1, 0, 1};
  EXPECT_THROW(one_way_anova(GroupedValues{v, ok, 1}), InputError);
  const std::vector<double> with_nan{1, kNaN, 3, 4};
  EXPECT_THAT(
      [&] {
        one_way_anova(GroupedValues{with_nan, ok, 2});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("position 1")));
  const std::vector<double> with_inf{1, 2, 3, std::numeric_limits<double>::infinity()};
  EXPECT_THAT(
      [&] {
        one_way_anova({a, std::span<const double>(with_inf)});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("anova: group 1")));
}

// ------------------------------------------------------------------- t tests

TEST(TTestDegenerate, SingleObservationIsUndefinedAsInScipy) {
  const std::vector<double> one{1.0}, three{2.0, 3.0, 4.0};
  for (const TestResult& r : {student_t(one, three), welch_t(one, three), welch_t(three, one)}) {
    EXPECT_TRUE(all_nan(r));
    EXPECT_TRUE(std::isnan(r.effect_size));
    EXPECT_THAT(r.note, HasSubstr("has a single observation"));
  }
  EXPECT_THAT(student_t(three, one).note, HasSubstr("sample b"));
}

TEST(TTestDegenerate, ZeroVarianceBothSamples) {
  // Identical constants: 0/0 (scipy NaN). Different constants: scipy +-inf, p = 0
  // (or a huge finite t from a rounded mean); vlbias reports NaN with a note.
  const std::vector<double> a{0.1, 0.1, 0.1}, b{0.2, 0.2, 0.2}, a2{0.1, 0.1};
  for (auto* f : {&student_t, &welch_t}) {
    const TestResult same = (*f)(a, a2, Alternative::TwoSided);
    EXPECT_TRUE(all_nan(same));
    EXPECT_EQ(same.note, "all values are identical: t is undefined (0/0)");
    const TestResult differ = (*f)(a, b, Alternative::TwoSided);
    EXPECT_TRUE(all_nan(differ));
    EXPECT_TRUE(std::isnan(differ.effect_size));
    EXPECT_THAT(differ.note, HasSubstr("zero variance in both samples and the means differ"));
  }
  // scipy sets the Welch df to 1 when it is 0/0.
  EXPECT_EQ(welch_t(a, b).df, std::vector<double>{1.0});
}

TEST(TTestDegenerate, OneConstantSampleIsFine) {
  // scipy.stats.ttest_ind([1, 1, 1], [2, 3, 4], equal_var=False)
  const std::vector<double> a{1, 1, 1}, b{2, 3, 4};
  const TestResult r = welch_t(a, b);
  EXPECT_TRUE(r.note.empty());
  EXPECT_NEAR(r.statistic, -3.464101615137755, 1e-12);
  EXPECT_NEAR(r.p_value, 0.07417990022744853, 1e-9);
  EXPECT_NEAR(r.df[0], 2.0, 1e-12);
}

TEST(TTestDegenerate, PairedConstantDifferences) {
  const std::vector<double> a{1, 2, 3}, b{0, 1, 2};
  const TestResult shifted = paired_t(a, b);
  EXPECT_TRUE(all_nan(shifted));
  EXPECT_THAT(shifted.note, HasSubstr("differences are constant and non-zero"));
  const TestResult same = paired_t(a, a);
  EXPECT_TRUE(all_nan(same));
  EXPECT_EQ(same.note, "every difference is zero: t is undefined (0/0)");
  const std::vector<double> one_a{1.0}, one_b{2.0};
  const TestResult single = paired_t(one_a, one_b);
  EXPECT_TRUE(all_nan(single));
  EXPECT_EQ(single.df, std::vector<double>{0.0});
  EXPECT_THAT(single.note, HasSubstr("a single pair"));
}

TEST(TTestInput, RejectsEmptyMismatchedAndNonFinite) {
  const std::vector<double> a{1, 2, 3}, b{1, 2}, empty;
  EXPECT_THAT([&] { welch_t(a, empty); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("welch: sample b is empty")));
  EXPECT_THROW(student_t(empty, a), InputError);
  EXPECT_THAT([&] { paired_t(a, b); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("equal length")));
  EXPECT_THROW(paired_t(empty, empty), InputError);
  const std::vector<double> bad{1, 2, kNaN};
  EXPECT_THAT([&] { student_t(a, bad); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("student: sample b")));
  const std::vector<double> inf{std::numeric_limits<double>::infinity(), 1, 2};
  EXPECT_THAT([&] { paired_t(inf, a); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("position 0")));
}

// -------------------------------------------------------------- Mann-Whitney

TEST(MannWhitneyDegenerate, AllTiedGivesPOneAsScipy) {
  const std::vector<double> a(9, 1.0), b(9, 1.0);
  const TestResult r = mann_whitney_u(a, b);
  EXPECT_EQ(r.statistic, 40.5);
  EXPECT_EQ(r.p_value, 1.0);
  EXPECT_EQ(r.effect_size, 0.0);
  EXPECT_EQ(r.method, "asymptotic");
  EXPECT_THAT(r.note, HasSubstr("all values are tied"));
  // Small all-tied samples: ties force the asymptotic method too.
  const std::vector<double> c{1, 1, 1}, d{1, 1};
  EXPECT_EQ(mann_whitney_u(c, d).p_value, 1.0);
}

TEST(MannWhitneyDegenerate, SignedZerosAreTied) {
  // scipy.stats.mannwhitneyu([0.0, 1], [-0.0, 2]) = (1.5, 1.0)
  const std::vector<double> a{0.0, 1.0}, b{-0.0, 2.0};
  const TestResult r = mann_whitney_u(a, b);
  EXPECT_EQ(r.statistic, 1.5);
  EXPECT_EQ(r.p_value, 1.0);
  EXPECT_EQ(r.method, "asymptotic");
}

TEST(MannWhitneyInput, RejectsEmptyAndNonFinite) {
  const std::vector<double> a{1, 2}, empty, bad{1, kNaN};
  EXPECT_THAT([&] { mann_whitney_u(empty, a); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("mannwhitney: sample a is empty")));
  EXPECT_THAT([&] { mann_whitney_u(a, bad); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("sample b has a non-finite value")));
}

TEST(MannWhitneyExact, CdfMatchesEnumeration) {
  // Every subset of positions of the first sample among m + n ranks, U counted directly.
  for (std::size_t m = 1; m <= 5; ++m) {
    for (std::size_t n = 1; n <= 7; ++n) {
      std::vector<double> count(m * n + 1, 0.0);
      const std::size_t total = m + n;
      double arrangements = 0;
      for (std::uint32_t mask = 0; mask < (1u << total); ++mask) {
        if (static_cast<std::size_t>(std::popcount(mask)) != m) continue;
        // U of the first sample = #{(x, y): x > y}: for each member, the number of
        // non-members below it.
        std::size_t u = 0, below = 0;
        for (std::size_t pos = 0; pos < total; ++pos) {
          if (mask & (1u << pos)) {
            u += below;
          } else {
            ++below;
          }
        }
        count[u] += 1;
        arrangements += 1;
      }
      double cum = 0;
      for (std::size_t k = 0; k <= m * n; ++k) {
        cum += count[k];
        EXPECT_NEAR(stats_internal::mwu_exact_cdf(k, m, n), cum / arrangements, 1e-14)
            << "m=" << m << " n=" << n << " k=" << k;
        EXPECT_NEAR(stats_internal::mwu_exact_cdf(k, n, m), cum / arrangements, 1e-14);
      }
    }
  }
}

TEST(MannWhitneyExact, LargeSecondSampleStaysAccurate) {
  // m = 8 against n = 3000: the distribution is symmetric, so
  // P(U <= k) + P(U <= mn - k - 1) = 1 for every k, and the lower tail is monotone.
  const std::size_t m = 8, n = 3000, mn = m * n;
  for (std::size_t k : {std::size_t{0}, std::size_t{5}, mn / 4, mn / 2 - 1, mn / 2}) {
    const double lo = stats_internal::mwu_exact_cdf(k, m, n);
    const double hi = stats_internal::mwu_exact_cdf(mn - k - 1, m, n);
    EXPECT_NEAR(lo + hi, 1.0, 1e-12) << k;
  }
  // P(U = 0) = 1 / binom(3008, 8).
  double binom = 1.0;
  for (std::size_t i = 1; i <= m; ++i) binom = binom * static_cast<double>(n + i) / i;
  EXPECT_NEAR(stats_internal::mwu_exact_cdf(0, m, n) * binom, 1.0, 1e-12);
  // Exact and asymptotic p agree loosely at this size.
  std::vector<double> a, b;
  for (std::size_t i = 0; i < m; ++i) a.push_back(0.37 * static_cast<double>(i) + 0.011);
  for (std::size_t i = 0; i < n; ++i) b.push_back(0.001 * static_cast<double>(i) + 0.0005);
  const TestResult r = mann_whitney_u(a, b);
  EXPECT_EQ(r.method, "exact");
  EXPECT_GT(r.p_value, 0.0);
  EXPECT_LE(r.p_value, 1.0);
}

// ---------------------------------------------------------------- Kruskal

TEST(KruskalDegenerate, AllValuesIdenticalIsUndefined) {
  // scipy raises "All numbers are identical in kruskal".
  const std::vector<double> a{2, 2, 2}, b{2, 2};
  const TestResult r = kruskal_wallis({a, b});
  EXPECT_TRUE(all_nan(r));
  EXPECT_TRUE(std::isnan(r.effect_size));
  EXPECT_EQ(r.note, "all values are identical: H is undefined (0/0)");
  EXPECT_EQ(r.df, std::vector<double>{1.0});
}

TEST(KruskalInput, RejectsEmptyGroupsFewGroupsAndNonFinite) {
  const std::vector<double> a{1, 2}, empty, bad{1, kNaN, 3};
  EXPECT_THAT(
      [&] {
        kruskal_wallis({a, a, empty});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("group 2 of 3 has no observations")));
  EXPECT_THROW(kruskal_wallis(std::vector<std::span<const double>>{a}), InputError);
  EXPECT_THAT(
      [&] {
        kruskal_wallis({a, bad});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("kruskal: group 1")));
  const std::vector<std::uint32_t> labels{0, 1, 1};
  EXPECT_THAT(
      [&] {
        kruskal_wallis(GroupedValues{bad, labels, 2});
      },
      ::testing::ThrowsMessage<InputError>(HasSubstr("position 1")));
}

// ------------------------------------------------------------- correlations

TEST(PearsonDegenerate, ConstantSinglePairAndTwoPairs) {
  const std::vector<double> c{1, 1, 1}, x{1, 2, 3};
  const TestResult r = pearson(c, x);
  EXPECT_TRUE(all_nan(r));
  EXPECT_EQ(r.note, "x is constant: the correlation is undefined");
  EXPECT_EQ(pearson(x, c).note, "y is constant: the correlation is undefined");
  const std::vector<double> one{1.0};
  const TestResult single = pearson(one, one);
  EXPECT_TRUE(all_nan(single));
  EXPECT_THAT(single.note, HasSubstr("a single pair"));
  // scipy: n = 2 gives r = sign(dx) sign(dy) and p = 1.
  const std::vector<double> x2{1, 2}, y2{3, 1};
  const TestResult two = pearson(x2, y2);
  EXPECT_EQ(two.statistic, -1.0);
  EXPECT_EQ(two.p_value, 1.0);
  EXPECT_TRUE(two.note.empty());
}

TEST(PearsonInput, RejectsMismatchEmptyAndNonFinite) {
  const std::vector<double> a{1, 2, 3}, b{1, 2}, empty, bad{1, 2, kNaN};
  EXPECT_THAT([&] { pearson(a, b); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("x has 3 values and y 2")));
  EXPECT_THROW(pearson(empty, empty), InputError);
  EXPECT_THAT([&] { spearman(a, bad); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("spearman: y")));
  EXPECT_THROW(spearman(a, b), InputError);
}

TEST(PearsonInvariants, AffineTransformGivesPlusOrMinusOne) {
  Rng rng(7, 0);
  std::vector<double> x(500), up(500), down(500);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = rng.uniform01() * 20.0 - 5.0;
    up[i] = 3.0 * x[i] + 2.0;
    down[i] = -0.25 * x[i] + 100.0;
  }
  const TestResult r = pearson(x, up);
  EXPECT_NEAR(r.statistic, 1.0, 1e-12);
  EXPECT_LE(r.p_value, 1e-15);
  EXPECT_NEAR(pearson(x, down).statistic, -1.0, 1e-12);
  // Huge magnitudes: the sums of squares overflow and are rescaled.
  std::vector<double> big(x.size()), big_up(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    big[i] = x[i] * 1e200;
    big_up[i] = up[i] * 1e200;
  }
  EXPECT_NEAR(pearson(big, big_up).statistic, 1.0, 1e-12);
  EXPECT_NEAR(pearson(big, big_up).statistic, r.statistic, 1e-12);
  // Tiny magnitudes: the squares underflow and are rescaled.
  std::vector<double> tiny(x.size()), tiny_y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    tiny[i] = x[i] * 1e-200;
    tiny_y[i] = down[i] * 1e-200;
  }
  EXPECT_NEAR(pearson(tiny, tiny_y).statistic, -1.0, 1e-12);
}

TEST(SpearmanDegenerate, TwoPairsConstantAndPerfectMonotone) {
  const std::vector<double> x2{1, 2}, y2{3, 1};
  const TestResult two = spearman(x2, y2);
  EXPECT_EQ(two.statistic, -1.0);
  EXPECT_TRUE(std::isnan(two.p_value));
  EXPECT_THAT(two.note, HasSubstr("0 degrees of freedom"));
  const std::vector<double> c{5, 5, 5}, x{1, 2, 3};
  const TestResult constant = spearman(x, c);
  EXPECT_TRUE(all_nan(constant));
  EXPECT_EQ(constant.note, "y is constant: the correlation is undefined");
  // scipy.stats.spearmanr([1, 2, 3, 4], [1, 5, 6, 9]) = (1.0, 0.0).
  const std::vector<double> a{1, 2, 3, 4}, b{1, 5, 6, 9};
  const TestResult perfect = spearman(a, b);
  EXPECT_EQ(perfect.statistic, 1.0);
  EXPECT_EQ(perfect.p_value, 0.0);
  EXPECT_TRUE(perfect.note.empty());
}

TEST(SpearmanInvariants, MonotoneTransformKeepsRho) {
  Rng rng(11, 0);
  std::vector<double> x(300), y(300), ex(300);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = std::floor(rng.uniform01() * 40.0);  // ties
    y[i] = x[i] * 0.3 + rng.uniform01() * 5.0;
    ex[i] = std::exp(x[i] / 10.0);
  }
  const TestResult a = spearman(x, y), b = spearman(ex, y);
  EXPECT_EQ(a.statistic, b.statistic);
  EXPECT_EQ(a.p_value, b.p_value);
  EXPECT_EQ(spearman(x, ex).statistic, 1.0);
}

// --------------------------------------------------------------- ranking

// Reference ranks: std::sort of indices by value, average over runs.
std::vector<double> reference_ranks(const std::vector<double>& x) {
  std::vector<std::size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i + 1;
    while (j < idx.size() && x[idx[j]] == x[idx[i]]) ++j;
    for (std::size_t l = i; l < j; ++l) r[idx[l]] = (static_cast<double>(i + j) + 1.0) / 2.0;
    i = j;
  }
  return r;
}

TEST(RankAverage, RadixSortMatchesComparisonSortAcrossSignsAndExponents) {
  // 300,000 values spanning signs, many exponents, subnormals, zeros of both signs
  // and repeats: exercises every radix digit and the parallel slices.
  Rng rng(3, 0);
  std::vector<double> x(300000);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = rng.uniform01();
    const int e = static_cast<int>(rng.uniform_index(80)) - 40;
    double v = std::ldexp(u, e) * (rng.uniform01() < 0.5 ? -1.0 : 1.0);
    if (i % 97 == 0) v = (i % 2 ? -0.0 : 0.0);
    if (i % 89 == 0) v = 5e-324 * static_cast<double>(i % 5);
    if (i % 13 == 0) v = std::floor(u * 50.0);  // heavy ties
    x[i] = v;
  }
  EXPECT_EQ(rank_average(x), reference_ranks(x));
  EXPECT_TRUE(rank_average({}).empty());
  const std::vector<double> bad{1.0, kNaN};
  EXPECT_THAT([&] { rank_average(bad); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("position 1")));
}

// -------------------------------------------------------------- invariants

TEST(ClassicalInvariants, SwappingSamplesNegatesTAndEffect) {
  Rng rng(5, 0);
  std::vector<double> a(37), b(52);
  for (auto& v : a) v = rng.uniform01() * 3.0;
  for (auto& v : b) v = rng.uniform01() * 4.0 - 0.2;
  for (auto* f : {&student_t, &welch_t}) {
    const TestResult ab = (*f)(a, b, Alternative::TwoSided), ba = (*f)(b, a, Alternative::TwoSided);
    EXPECT_EQ(ab.statistic, -ba.statistic);
    EXPECT_EQ(ab.p_value, ba.p_value);
    EXPECT_EQ(ab.effect_size, -ba.effect_size);
    EXPECT_EQ(ab.df, ba.df);
  }
  std::vector<double> c(a.begin(), a.end()), d(a.size());
  for (auto& v : d) v = rng.uniform01();
  const TestResult cd = paired_t(c, d), dc = paired_t(d, c);
  EXPECT_NEAR(cd.statistic, -dc.statistic, 1e-12 * std::fabs(cd.statistic));
  EXPECT_NEAR(cd.p_value, dc.p_value, 1e-12);
}

TEST(ClassicalInvariants, MannWhitneyUSumIsProductOfSizes) {
  Rng rng(9, 0);
  for (std::size_t na : {3u, 8u, 40u}) {
    std::vector<double> a(na), b(29);
    for (auto& v : a) v = std::floor(rng.uniform01() * 10.0);  // ties
    for (auto& v : b) v = std::floor(rng.uniform01() * 12.0);
    const TestResult ab = mann_whitney_u(a, b), ba = mann_whitney_u(b, a);
    EXPECT_EQ(ab.statistic + ba.statistic, static_cast<double>(a.size() * b.size()));
    EXPECT_EQ(ab.p_value, ba.p_value);
    EXPECT_NEAR(ab.effect_size, -ba.effect_size, 1e-15);
  }
}

TEST(ClassicalInvariants, ResultsDoNotDependOnTheThreadCount) {
  // Large enough for several moment chunks and radix slices.
  Rng rng(21, 0);
  const std::size_t n = 400000;
  std::vector<double> v(n);
  std::vector<std::uint32_t> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = static_cast<std::uint32_t>(rng.uniform_index(4));
    v[i] = rng.uniform01() * 10.0 + 0.01 * g[i];
  }
  v[0] = 1e4;  // far-off first value of group g[0]: exercises the second pass
  const GroupedValues data{v, g, 4};
  const std::span<const double> a(v.data(), n / 2), b(v.data() + n / 2, n / 2);
  const auto run = [&] {
    return std::vector<TestResult>{one_way_anova(data), kruskal_wallis(data), welch_t(a, b),
                                   student_t(a, b),     paired_t(a, b),       mann_whitney_u(a, b),
                                   pearson(a, b),       spearman(a, b)};
  };
  set_thread_count(1);
  const auto serial = run();
  set_thread_count(2);
  const auto parallel = run();
  set_thread_count(0);
  ASSERT_EQ(serial.size(), parallel.size());
  for (std::size_t i = 0; i < serial.size(); ++i) {
    EXPECT_EQ(serial[i].statistic, parallel[i].statistic) << serial[i].test;
    EXPECT_EQ(serial[i].p_value, parallel[i].p_value) << serial[i].test;
    EXPECT_EQ(serial[i].effect_size, parallel[i].effect_size) << serial[i].test;
    EXPECT_TRUE(serial[i].note.empty()) << serial[i].test;
  }
}

TEST(ClassicalInvariants, GroupedAndSpanFormsAgreeAtScale) {
  Rng rng(23, 0);
  const std::size_t n = 300000;
  std::vector<double> v(n);
  std::vector<std::uint32_t> g(n);
  std::vector<std::vector<double>> groups(3);
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = static_cast<std::uint32_t>(rng.uniform_index(3));
    v[i] = std::floor(rng.uniform01() * 1000.0) / 7.0 + 0.05 * g[i];
    if (i == 0) v[i] = 5e3;  // outlier first value: the grouped path refines its group
    groups[g[i]].push_back(v[i]);
  }
  // Reference in long double (64-bit mantissa): group means, then sums of squares.
  long double sum[3] = {0, 0, 0}, total = 0, cnt[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    sum[g[i]] += v[i];
    total += v[i];
    cnt[g[i]] += 1;
  }
  long double ssb = 0, ssw = 0;
  const long double grand = total / static_cast<long double>(n);
  for (int j = 0; j < 3; ++j) ssb += cnt[j] * (sum[j] / cnt[j] - grand) * (sum[j] / cnt[j] - grand);
  for (std::size_t i = 0; i < n; ++i) {
    const long double d = v[i] - sum[g[i]] / cnt[g[i]];
    ssw += d * d;
  }
  const double f_ref = static_cast<double>((ssb / 2) / (ssw / static_cast<long double>(n - 3)));
  // eta^2 ~ 1e-6: the between-group sum of squares is a tiny difference of means, so
  // this checks the means to ~1e-16 of the data's spread in both code paths.
  const GroupedValues data{v, g, 3};
  const TestResult ga = one_way_anova(data), sa = one_way_anova(spans(groups));
  EXPECT_LE(rel_err(ga.statistic, f_ref), 1e-10);
  EXPECT_LE(rel_err(sa.statistic, f_ref), 1e-10);
  EXPECT_LE(rel_err(ga.effect_size, sa.effect_size), 1e-10);
  const TestResult gk = kruskal_wallis(data), sk = kruskal_wallis(spans(groups));
  EXPECT_EQ(gk.statistic, sk.statistic);
  EXPECT_EQ(gk.p_value, sk.p_value);
}

}  // namespace in_classical_test
}  // namespace
}  // namespace vlbias::stats
