// Skew@k, MaxSkew@k and NDKL against the numpy reference of
// tools/make_ranking_fixtures.py (paper 001; Geyik et al. 2019).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/metrics/ranking_metrics.h"

namespace {
namespace in_ranking_metrics_test {

using nlohmann::json;
using namespace vlbias;

const json& fixture() {
  return vlbias::testing_util::fixture_json("metrics/ranking.json");
}

RankedItems items_of(const json& c) {
  RankedItems items;
  items.scores = c["scores"].get<std::vector<double>>();
  items.labels = c["labels"].get<std::vector<std::uint32_t>>();
  items.class_names = c["classes"].get<std::vector<std::string>>();
  return items;
}

// 1e-12 relative, with an absolute floor of 1e-14 for values that are 0 in
// exact arithmetic (a proportional top k).
void expect_value(double actual, const json& want, const std::string& what) {
  if (want.is_string()) {
    ASSERT_EQ(want.get<std::string>(), "-inf") << what;
    EXPECT_TRUE(std::isinf(actual) && actual < 0) << what << ": got " << actual;
    return;
  }
  const double w = want.get<double>();
  EXPECT_NEAR(actual, w, std::max(1e-14, 1e-12 * std::fabs(w))) << what;
}

TEST(RankingMetrics, FixtureCoversTheCases) {
  const json& cases = fixture()["cases"];
  ASSERT_EQ(cases.size(), 6u);
  std::size_t neg_inf = 0, zero_absent = 0, k1 = 0, kn = 0;
  for (const json& c : cases) {
    for (const json& s : c["skew"]) {
      for (const json& v : s["skew"]) neg_inf += v.is_string();
      for (const json& n : s["counts"]) zero_absent += n == 0 && s["absent"] == "zero";
      k1 += s["k"] == 1;
      kn += s["k"] == c["scores"].size();
    }
  }
  EXPECT_GT(neg_inf, 0u);
  EXPECT_GT(zero_absent, 0u);
  EXPECT_GT(k1, 0u);
  EXPECT_GT(kn, 0u);
}

TEST(RankingMetrics, SkewMatchesNumpy) {
  for (const json& c : fixture()["cases"]) {
    const RankedItems items = items_of(c);
    for (const json& s : c["skew"]) {
      SkewOptions o;
      o.k = s["k"].get<std::size_t>();
      o.desired = parse_desired_distribution(s["desired"].get<std::string>());
      o.absent = parse_absent_class(s["absent"].get<std::string>());
      const std::string what = c["name"].get<std::string>() + " k=" + std::to_string(o.k) + " " +
                               to_string(o.desired) + " absent=" + to_string(o.absent);
      const SkewResult r = skew_at_k(items, o);
      EXPECT_EQ(r.k, o.k);
      EXPECT_EQ(r.n, items.scores.size());
      ASSERT_EQ(r.skew.size(), items.class_names.size()) << what;
      for (std::size_t cl = 0; cl < r.skew.size(); ++cl) {
        expect_value(r.skew[cl], s["skew"][cl], what + " skew[" + std::to_string(cl) + "]");
        EXPECT_EQ(r.topk_counts[cl], s["counts"][cl].get<std::size_t>()) << what;
        expect_value(r.desired[cl], s["desired_p"][cl], what + " desired");
      }
      expect_value(r.max_skew, s["max_skew"], what + " max_skew");
    }
  }
}

TEST(RankingMetrics, NdklMatchesNumpy) {
  for (const json& c : fixture()["cases"]) {
    const RankedItems items = items_of(c);
    for (const auto& [kind, want] : c["ndkl"].items()) {
      const NdklResult r = ndkl(items, parse_desired_distribution(kind));
      expect_value(r.ndkl, want, c["name"].get<std::string>() + " ndkl " + kind);
      EXPECT_GT(r.ndkl, 0.0);
      EXPECT_EQ(r.n, items.scores.size());
    }
  }
}

TEST(RankingMetrics, TiesFollowInputOrder) {
  // Same multiset of (score, class) pairs; only the order of the tied items differs,
  // and with it the answer.
  const json& cases = fixture()["cases"];
  const json* ties = nullptr;
  const json* reversed = nullptr;
  for (const json& c : cases) {
    if (c["name"] == "ties") ties = &c;
    if (c["name"] == "ties_reversed") reversed = &c;
  }
  ASSERT_NE(ties, nullptr);
  ASSERT_NE(reversed, nullptr);
  SkewOptions o;
  o.k = 2;
  const SkewResult a = skew_at_k(items_of(*ties), o);
  const SkewResult b = skew_at_k(items_of(*reversed), o);
  EXPECT_NE(a.max_skew, b.max_skew);
  EXPECT_EQ(a.topk_counts, (std::vector<std::size_t>{2, 0, 0}));
  EXPECT_EQ(b.topk_counts, (std::vector<std::size_t>{0, 1, 1}));
  EXPECT_EQ(rank_order({1.0, 2.0, 1.0, 2.0}), (std::vector<std::size_t>{1, 3, 0, 2}));
  EXPECT_STREQ(kTieRule, "stable: input order");
}

TEST(RankingMetrics, ProportionalTopKHasZeroSkew) {
  RankedItems items;
  items.scores = {6, 5, 4, 3, 2, 1};
  items.labels = {0, 1, 2, 0, 1, 2};
  items.class_names = {"a", "b", "c"};
  SkewOptions o;
  o.k = 3;
  const SkewResult r = skew_at_k(items, o);
  EXPECT_EQ(r.max_skew, 0.0);
  for (double v : r.skew) EXPECT_EQ(v, 0.0);
}

TEST(RankingMetrics, InfiniteScoresRankAtTheEnds) {
  RankedItems items;
  const double inf = std::numeric_limits<double>::infinity();
  items.scores = {0.0, inf, -inf, 1.0};
  items.labels = {0, 1, 0, 1};
  items.class_names = {"a", "b"};
  EXPECT_EQ(rank_order(items.scores), (std::vector<std::size_t>{1, 3, 0, 2}));
  SkewOptions o;
  o.k = 2;
  EXPECT_EQ(skew_at_k(items, o).topk_counts, (std::vector<std::size_t>{0, 2}));
}

RankedItems small_items() {
  RankedItems items;
  items.scores = {0.3, 0.2, 0.1};
  items.labels = {0, 1, 0};
  items.class_names = {"a", "b"};
  return items;
}

template <class E, class F>
void expect_error(F f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(RankingMetrics, KOutOfRangeIsUsageError) {
  SkewOptions o;
  o.k = 0;
  expect_error<vlbias::UsageError>([&] { skew_at_k(small_items(), o); }, "between 1 and 3");
  o.k = 4;
  expect_error<vlbias::UsageError>([&] { skew_at_k(small_items(), o); }, "got k = 4");
}

TEST(RankingMetrics, BadInputsAreInputErrors) {
  SkewOptions o;
  o.k = 1;
  RankedItems nan = small_items();
  nan.scores[1] = std::nan("");
  expect_error<vlbias::InputError>([&] { skew_at_k(nan, o); }, "item 1 has a NaN score");
  expect_error<vlbias::InputError>([&] { ndkl(nan, DesiredDistribution::Uniform); }, "NaN");

  RankedItems empty;
  empty.class_names = {"a", "b"};
  expect_error<vlbias::InputError>([&] { ndkl(empty, DesiredDistribution::Uniform); }, "no items");

  RankedItems one = small_items();
  one.labels = {0, 0, 0};
  one.class_names = {"a"};
  expect_error<vlbias::InputError>([&] { skew_at_k(one, o); }, "at least two classes");

  RankedItems unused = small_items();
  unused.class_names = {"a", "b", "c"};
  expect_error<vlbias::InputError>([&] { skew_at_k(unused, o); }, "class 'c' has no item");

  RankedItems bad_label = small_items();
  bad_label.labels[2] = 7;
  expect_error<vlbias::InputError>([&] { skew_at_k(bad_label, o); }, "class code 7");

  RankedItems ragged = small_items();
  ragged.labels.pop_back();
  expect_error<vlbias::InputError>([&] { skew_at_k(ragged, o); }, "3 scores but 2");
}

TEST(RankingMetrics, OptionNamesRoundTrip) {
  for (const char* s : {"uniform", "base-rate"}) {
    EXPECT_EQ(to_string(parse_desired_distribution(s)), s);
  }
  for (const char* s : {"-inf", "zero"}) EXPECT_EQ(to_string(parse_absent_class(s)), s);
  expect_error<vlbias::UsageError>([] { parse_desired_distribution("flat"); }, "'flat'");
  expect_error<vlbias::UsageError>([] { parse_absent_class("nan"); }, "'-inf' or 'zero'");
}

}  // namespace in_ranking_metrics_test
}  // namespace
