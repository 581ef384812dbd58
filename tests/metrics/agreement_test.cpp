// Agreement of two scorers (docs/methods.md#agreement): every quantity against the
// numpy/scipy/sklearn reference of tools/make_agreement_fixtures.py (kappa's bootstrap
// reproduced draw for draw through tools/vlbias_rng.py), a 2x2 table worked by hand, the
// bootstrap's properties, and degenerate input.
#include "vlbias/metrics/agreement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_agreement_test {

using nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("metrics/agreement.json");
}

std::vector<double> numbers(const json& j) {
  return j.get<std::vector<double>>();
}

AgreementOptions options_of(const json& c) {
  AgreementOptions o;
  o.threshold_a = c["threshold_a"].get<double>();
  o.threshold_b = c["threshold_b"].get<double>();
  o.level = c["level"].get<double>();
  o.bootstrap = c["bootstrap"].get<std::size_t>();
  o.seed = c["seed"].get<std::uint64_t>();
  return o;
}

void expect_rel(double got, const json& want, double rel, const std::string& what) {
  ASSERT_TRUE(want.is_number()) << what;
  const double w = want.get<double>();
  EXPECT_NEAR(got, w, rel * std::max(std::fabs(w), 1e-300)) << what;
}

void expect_interval(const stats::Interval& got, const json& want, double abs,
                     const std::string& what) {
  EXPECT_NEAR(got.lower, want[0].get<double>(), abs) << what << " lower";
  EXPECT_NEAR(got.upper, want[1].get<double>(), abs) << what << " upper";
}

void expect_kappa(const KappaAgreement& k, const json& w, const std::string& what) {
  for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(k.cells[c], w["cells"][c].get<std::size_t>());
  expect_rel(k.kappa, w["kappa"], 1e-12, what + " kappa");
  expect_rel(k.se, w["se"], 1e-12, what + " se");
  expect_rel(k.se_null, w["se_null"], 1e-12, what + " se_null");
  expect_rel(k.z, w["z"], 1e-12, what + " z");
  expect_rel(k.p_value, w["p_value"], 1e-9, what + " p");
  expect_rel(k.observed, w["observed"], 1e-14, what + " po");
  expect_rel(k.expected, w["expected"], 1e-14, what + " pe");
  expect_interval(k.ci, w["ci"], 1e-13, what + " ci");
}

void expect_difference(const MeanDifference& d, const json& w, const std::string& what) {
  expect_rel(d.mean_a, w["mean_a"], 1e-13, what + " mean a");
  expect_rel(d.mean_b, w["mean_b"], 1e-13, what + " mean b");
  EXPECT_NEAR(d.estimate, w["estimate"].get<double>(), 1e-15) << what;
  expect_rel(d.sd, w["sd"], 1e-12, what + " sd");
  expect_interval(d.ci, w["ci"], 1e-13, what + " ci");
  expect_rel(d.t, w["t"], 1e-10, what + " t");
  expect_rel(d.p_value, w["p_value"], 1e-9, what + " p");
}

TEST(Agreement, MatchesScipyAndSklearnOnTwoNoisyScorers) {
  for (const json& c : fixture()["cases"]) {
    const std::string what =
        c["scores"][0].get<std::string>() + "/" + c["scores"][1].get<std::string>();
    SCOPED_TRACE(what);
    const std::vector<double> a = numbers(c["a"]), b = numbers(c["b"]);
    const AgreementSummary s = score_agreement(a, b, options_of(c));
    const json& w = c["summary"];
    EXPECT_EQ(s.n, w["n"].get<std::size_t>());
    expect_rel(s.pearson.estimate, w["pearson"]["r"], 1e-13, "r");
    expect_rel(s.pearson.p_value, w["pearson"]["p_value"], 1e-9, "r p");
    expect_interval(s.pearson.ci, w["pearson"]["ci"], 1e-13, "r ci");
    expect_rel(s.spearman.estimate, w["spearman"]["rho"], 1e-13, "rho");
    expect_rel(s.spearman.p_value, w["spearman"]["p_value"], 1e-9, "rho p");
    expect_interval(s.spearman.ci, w["spearman"]["ci"], 1e-13, "rho ci");
    expect_kappa(s.kappa, w["kappa"], "overall");
    // The same draws as the Python port of the streams: equal up to the rounding of kappa.
    expect_interval(s.kappa.bootstrap, w["kappa"]["bootstrap_ci"], 1e-13, "bootstrap");
    EXPECT_EQ(s.kappa.bootstrap.undefined, w["kappa"]["bootstrap_undefined"].get<std::size_t>());
    EXPECT_EQ(s.kappa.bootstrap.resamples, c["bootstrap"].get<std::size_t>());
    EXPECT_DOUBLE_EQ(s.percent_agreement, w["percent_agreement"].get<double>());
    EXPECT_DOUBLE_EQ(s.positive_rate_a, w["positive_rate_a"].get<double>());
    EXPECT_DOUBLE_EQ(s.positive_rate_b, w["positive_rate_b"].get<double>());
    expect_difference(s.difference, w["difference"], "difference");
    EXPECT_TRUE(s.notes.empty());
  }
}

TEST(Agreement, PerGroupResultsAndKruskalWallisMatchTheReferenceFromTheTable) {
  const json& c = fixture()["cases"][0];
  const Table table = parse_csv(fixture()["csv"].get<std::string>(), "agreement.csv");
  const AgreementReport r = agreement_analysis(table, "clf", "persp", {"dialect"}, options_of(c));
  EXPECT_EQ(r.rows, c["rows"].get<std::size_t>());
  EXPECT_EQ(r.excluded, c["excluded"].get<std::size_t>());
  EXPECT_EQ(r.rows_without_group, c["rows_without_group"].get<std::size_t>());
  EXPECT_EQ(r.overall.n, c["summary"]["n"].get<std::size_t>());
  expect_rel(r.overall.kappa.kappa, c["summary"]["kappa"]["kappa"], 1e-12, "kappa");
  ASSERT_EQ(r.groups.size(), c["groups"].size());
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const json& w = c["groups"][g];
    const GroupAgreement& got = r.groups[g];
    SCOPED_TRACE(w["key"].get<std::string>());
    ASSERT_EQ(got.key.size(), 1u);
    EXPECT_EQ(got.key[0], w["key"].get<std::string>());
    EXPECT_EQ(got.n, w["n"].get<std::size_t>());
    expect_difference(got.difference, w["difference"], "group difference");
    EXPECT_DOUBLE_EQ(got.positive_rate_a, w["positive_rate_a"].get<double>());
    EXPECT_DOUBLE_EQ(got.positive_rate_b, w["positive_rate_b"].get<double>());
    EXPECT_EQ(got.disagreements, w["disagreements"].get<std::size_t>());
    EXPECT_DOUBLE_EQ(got.disagreement_rate, w["disagreement_rate"].get<double>());
    expect_interval(got.disagreement_ci, w["disagreement_ci"], 1e-14, "wilson");
    expect_kappa(got.kappa, w["kappa"], "group");
    EXPECT_EQ(got.kappa.bootstrap.resamples, 0u);  // no bootstrap per group
  }
  EXPECT_EQ(r.group_test.test, "kruskal");
  expect_rel(r.group_test.statistic, c["group_test"]["statistic"], 1e-12, "H");
  expect_rel(r.group_test.p_value, c["group_test"]["p_value"], 1e-9, "H p");
  expect_rel(r.group_test.effect_size, c["group_test"]["epsilon_squared"], 1e-12, "eps2");
}

// Labels (A, B) of 50 texts: 15 (-,-), 10 (-,+), 5 (+,-), 20 (+,+).
//   p00 = .3, p01 = .2, p10 = .1, p11 = .4; A's margins a0 = a1 = .5; B's b0 = .4, b1 = .6.
//   po = .3 + .4 = .7, pe = .5 * .4 + .5 * .6 = .5, kappa = (.7 - .5) / (1 - .5) = .4.
//   Fleiss-Cohen-Everitt, u = 1 - kappa = .6:
//     term a = .3 (1 - (.5 + .4) .6)^2 + .4 (1 - (.5 + .6) .6)^2 = .06348 + .04624 = .10972
//     term b = .6^2 (.2 (b0 + a1)^2 + .1 (b1 + a0)^2) = .36 (.162 + .121) = .10188
//     term c = (.4 - .5 * .6)^2 = .01
//     var = (.10972 + .10188 - .01) / ((1 - .5)^2 50) = .2016 / 12.5 = .016128
//     var0 = (.5 + .25 - (.5 .4 .9 + .5 .6 1.1)) / 12.5 = (.75 - .51) / 12.5 = .0192
//   z = .4 / sqrt(.0192) = 2.886751..., CI95 = .4 -+ 1.959963984540054 sqrt(.016128).
TEST(Agreement, KappaOfAHandWorkedTwoByTwoTable) {
  std::vector<double> a, b;
  const auto add = [&](int count, double x, double y) {
    for (int i = 0; i < count; ++i) {
      a.push_back(x);
      b.push_back(y);
    }
  };
  add(15, 0.1, 0.2);
  add(10, 0.3, 0.9);
  add(5, 0.7, 0.4);
  add(20, 0.8, 0.6);
  AgreementOptions o;
  o.bootstrap = 0;
  const KappaAgreement k = cohen_kappa(a, b, o, false);
  EXPECT_EQ(k.cells[0], 15u);
  EXPECT_EQ(k.cells[1], 10u);
  EXPECT_EQ(k.cells[2], 5u);
  EXPECT_EQ(k.cells[3], 20u);
  EXPECT_NEAR(k.observed, 0.7, 1e-15);
  EXPECT_NEAR(k.expected, 0.5, 1e-15);
  EXPECT_NEAR(k.kappa, 0.4, 1e-15);
  EXPECT_NEAR(k.se, std::sqrt(0.016128), 1e-15);
  EXPECT_NEAR(k.se_null, std::sqrt(0.0192), 1e-15);
  EXPECT_NEAR(k.z, 0.4 / std::sqrt(0.0192), 1e-14);
  EXPECT_NEAR(k.ci.lower, 0.4 - 1.959963984540054 * std::sqrt(0.016128), 1e-14);
  EXPECT_NEAR(k.ci.upper, 0.4 + 1.959963984540054 * std::sqrt(0.016128), 1e-14);
  EXPECT_EQ(k.bootstrap.resamples, 0u);
  EXPECT_TRUE(std::isnan(k.bootstrap.lower));
  // The threshold is inclusive: a score equal to it is positive.
  o.threshold_a = 0.3;
  EXPECT_EQ(cohen_kappa(a, b, o, false).cells[3], 30u);
}

TEST(Agreement, KappaBootstrapIsSeededContainsTheEstimateAndNarrowsWithMoreTexts) {
  const json& c = fixture()["cases"][0];
  const std::vector<double> a = numbers(c["a"]), b = numbers(c["b"]);
  AgreementOptions o = options_of(c);
  o.bootstrap = 500;
  const KappaAgreement k = cohen_kappa(a, b, o, true);
  EXPECT_LT(k.bootstrap.lower, k.kappa);
  EXPECT_GT(k.bootstrap.upper, k.kappa);
  const KappaAgreement again = cohen_kappa(a, b, o, true);
  EXPECT_EQ(again.bootstrap.lower, k.bootstrap.lower);
  EXPECT_EQ(again.bootstrap.upper, k.bootstrap.upper);
  o.seed += 1;
  const KappaAgreement other = cohen_kappa(a, b, o, true);
  EXPECT_NE(other.bootstrap.lower, k.bootstrap.lower);
  // The same texts four times over: the same kappa, a narrower interval (about half).
  std::vector<double> a4, b4;
  for (int r = 0; r < 4; ++r) {
    a4.insert(a4.end(), a.begin(), a.end());
    b4.insert(b4.end(), b.begin(), b.end());
  }
  const KappaAgreement k4 = cohen_kappa(a4, b4, o, true);
  EXPECT_NEAR(k4.kappa, k.kappa, 1e-12);
  const double width = k.bootstrap.upper - k.bootstrap.lower;
  const double width4 = k4.bootstrap.upper - k4.bootstrap.lower;
  EXPECT_LT(width4, 0.65 * width);
  EXPECT_GT(width4, 0.35 * width);
  EXPECT_NEAR(k4.se, k.se / 2, 1e-12);
}

TEST(Agreement, KappaIsUndefinedWhenBothScorersGiveEveryTextOneLabel) {
  const std::vector<double> a = {0.1, 0.2, 0.3, 0.05}, b = {0.4, 0.0, 0.1, 0.2};
  const AgreementSummary s = score_agreement(a, b, AgreementOptions{});
  EXPECT_TRUE(std::isnan(s.kappa.kappa));
  EXPECT_NE(s.kappa.note.find("undefined"), std::string::npos);
  EXPECT_TRUE(std::isnan(s.kappa.ci.lower));
  EXPECT_TRUE(std::isnan(s.kappa.bootstrap.lower));
  EXPECT_EQ(s.percent_agreement, 1.0);
  ASSERT_EQ(s.notes.size(), 2u);  // each scorer is all negative
  EXPECT_NE(s.notes[0].find("every score of 'a' is below its threshold 0.5"), std::string::npos);
  // One scorer with one label: kappa is 0 (sklearn agrees), the note still says why.
  const std::vector<double> mixed = {0.9, 0.2, 0.7, 0.05};
  const AgreementSummary m = score_agreement(a, mixed, AgreementOptions{});
  EXPECT_EQ(m.kappa.kappa, 0.0);
  EXPECT_EQ(m.kappa.se, 0.0);
  EXPECT_TRUE(std::isnan(m.kappa.p_value));
  EXPECT_NE(m.kappa.note.find("kappa is 0 by construction"), std::string::npos);
  ASSERT_EQ(m.notes.size(), 1u);
}

TEST(Agreement, CorrelationIntervalsNeedFourPairsAndAVaryingScore) {
  const std::vector<double> a = {0.1, 0.5, 0.9}, b = {0.2, 0.4, 0.8};
  const AgreementSummary s = score_agreement(a, b, AgreementOptions{});
  EXPECT_FALSE(std::isnan(s.pearson.estimate));
  EXPECT_TRUE(std::isnan(s.pearson.ci.lower));
  EXPECT_NE(s.pearson.ci.note.find("at least 4"), std::string::npos);
  const std::vector<double> flat = {0.3, 0.3, 0.3, 0.3}, d = {0.1, 0.5, 0.9, 0.7};
  const AgreementSummary c = score_agreement(flat, d, AgreementOptions{});
  EXPECT_TRUE(std::isnan(c.pearson.estimate));
  EXPECT_FALSE(c.pearson.note.empty());
  EXPECT_TRUE(std::isnan(c.spearman.ci.upper));
  EXPECT_FALSE(c.spearman.ci.note.empty());
}

TEST(Agreement, RefusesNonFiniteScoresNamingTheScorerAndPosition) {
  const std::vector<double> a = {0.1, 0.5, 0.9, 0.3}, b = {0.2, std::nan(""), 0.8, 0.1};
  try {
    score_agreement(a, b, AgreementOptions{}, true, "clf", "persp");
    FAIL() << "NaN accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'persp' at position 1"), std::string::npos) << e.what();
  }
  const std::vector<double> shorter = {0.1};
  EXPECT_THROW(score_agreement(a, shorter, AgreementOptions{}), InputError);
  EXPECT_THROW(score_agreement({}, {}, AgreementOptions{}), InputError);
}

TEST(Agreement, TableAnalysisExcludesMissingScoresAndReportsSingleRowGroups) {
  const Table t = parse_csv(
      "a,b,g\n0.1,0.2,x\n0.7,0.6,x\n0.4,,x\n0.9,0.8,x\n0.2,0.6,y\n,0.3,x\n0.6,0.4,x\n", "t.csv");
  AgreementOptions o;
  o.bootstrap = 100;
  const AgreementReport r = agreement_analysis(t, "a", "b", {"g"}, o);
  EXPECT_EQ(r.excluded, 2u);
  EXPECT_EQ(r.overall.n, 5u);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[1].key[0], "y");
  EXPECT_EQ(r.groups[1].n, 1u);
  EXPECT_TRUE(std::isnan(r.groups[1].disagreement_ci.lower));
  EXPECT_TRUE(std::isnan(r.groups[1].difference.ci.lower));
  EXPECT_TRUE(std::isnan(r.groups[1].kappa.ci.lower));
  EXPECT_NE(r.groups[1].note.find("1 row"), std::string::npos);
  EXPECT_FALSE(std::isnan(r.group_test.statistic));
  // One group only: the per-group table, no test, a note.
  const Table single = parse_csv("a,b,g\n0.1,0.2,x\n0.7,0.6,x\n0.4,0.5,x\n", "s.csv");
  const AgreementReport s = agreement_analysis(single, "a", "b", {"g"}, o);
  EXPECT_EQ(s.groups.size(), 1u);
  EXPECT_TRUE(std::isnan(s.group_test.statistic));
  EXPECT_NE(s.group_test.note.find("1 group(s)"), std::string::npos);
}

TEST(Agreement, TableAnalysisRefusesTooFewRowsTheSameColumnTwiceAndBadOptions) {
  const Table t = parse_csv("a,b\n0.1,0.2\n0.7,\n,0.6\n0.3,0.3\n", "t.csv");
  try {
    agreement_analysis(t, "a", "b", {}, AgreementOptions{});
    FAIL() << "2 complete rows accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 row(s) with both 'a' and 'b' present (2 of 4"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(agreement_analysis(t, "a", "a", {}, AgreementOptions{}), InputError);
  EXPECT_THROW(agreement_analysis(t, "a", "c", {}, AgreementOptions{}), InputError);
  AgreementOptions o;
  o.threshold_b = std::nan("");
  EXPECT_THROW(agreement_analysis(t, "a", "b", {}, o), InputError);
  o = AgreementOptions{};
  o.level = 1.0;
  EXPECT_THROW(agreement_analysis(t, "a", "b", {}, o), InputError);
  Table inf = parse_csv("a,b\n0.1,0.2\n0.7,0.1\n0.5,0.6\n", "inf.csv");
  inf.columns[1].numbers[2] = INFINITY;
  try {
    agreement_analysis(inf, "a", "b", {}, AgreementOptions{});
    FAIL() << "inf accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 4 holds inf in column 'b'"), std::string::npos)
        << e.what();
  }
}

}  // namespace in_agreement_test
}  // namespace
}  // namespace vlbias
