// Clustered comparisons (compare.h, ClusterTest; `vlbias compare --cluster`): the exact cluster
// permutation p-values against an enumeration with scipy's tests
// (tools/make_cluster_permutation_fixtures.py writes tests/fixtures/stats/
// cluster_permutation.json), Monte Carlo against exact, the rate at which a clustered test
// rejects a true null hypothesis, and the errors of designs it cannot test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/compare.h"

namespace vlbias {
namespace {
namespace in_compare_cluster_test {

using nlohmann::json;

const json& fixture() {
  return testing_util::fixture_json("stats/cluster_permutation.json");
}

// The rows of a fixture block as a table: group, cluster, pair (when present), value.
Table table_of(const json& rows) {
  Table t;
  t.source = "<fixture>";
  t.rows = rows.size();
  std::vector<std::string> group, cluster, pair;
  std::vector<double> value;
  for (const json& r : rows) {
    group.push_back(r["group"]);
    cluster.push_back(r["cluster"]);
    if (r.contains("pair")) pair.push_back(r["pair"]);
    value.push_back(r["value"]);
  }
  add_string_column(t, "group", group);
  add_string_column(t, "cluster", cluster);
  if (!pair.empty()) add_string_column(t, "pair", pair);
  add_numeric_column(t, "value", std::move(value));
  return t;
}

CompareOptions clustered(const json& c) {
  CompareOptions o;
  o.value = "value";
  o.by = {"group"};
  o.test = parse_group_test(c["test"]);
  const std::string alt = c["alternative"];
  o.alternative = alt == "less"      ? stats::Alternative::Less
                  : alt == "greater" ? stats::Alternative::Greater
                                     : stats::Alternative::TwoSided;
  if (is_paired_test(o.test)) o.pair_key = "pair";
  o.cluster = {"cluster"};
  return o;
}

TEST(ClusteredCompare, ExactClusterPermutationPValuesMatchAnEnumerationWithScipy) {
  for (const char* block : {"two_groups", "three_groups", "paired"}) {
    const Table table = table_of(fixture()[block]["rows"]);
    for (const json& c : fixture()[block]["cases"]) {
      SCOPED_TRACE(std::string(block) + " " + c["test"].get<std::string>() + " " +
                   c["alternative"].get<std::string>());
      const CompareReport report = compare_groups(table, clustered(c));
      ASSERT_EQ(report.comparisons.size(), 1u);
      const Comparison& cmp = report.comparisons[0];
      EXPECT_EQ(cmp.cluster.permutation.method, "exact");
      EXPECT_EQ(cmp.cluster.permutation.resamples, c["arrangements"].get<std::size_t>());
      EXPECT_EQ(cmp.cluster.permutation.exceed, c["exceed"].get<std::size_t>());
      EXPECT_DOUBLE_EQ(cmp.result.p_value, c["p_value"].get<double>());
      EXPECT_DOUBLE_EQ(cmp.p_holm, c["p_value"].get<double>());  // one comparison
      const double flat = c["p_unclustered"];
      EXPECT_NEAR(cmp.cluster.p_unclustered, flat, 1e-9 * flat);
      if (c.contains("clusters_per_group")) {
        EXPECT_EQ(cmp.cluster.clusters_per_group,
                  c["clusters_per_group"].get<std::vector<std::size_t>>());
      } else {
        EXPECT_EQ(cmp.cluster.clusters, c["clusters"].get<std::size_t>());
      }
    }
  }
}

TEST(ClusteredCompare, MonteCarloPValueIsWithinItsErrorOfTheExactOneAndRepeatsForASeed) {
  const Table table = table_of(fixture()["three_groups"]["rows"]);
  const json& c = fixture()["three_groups"]["cases"][0];  // anova, 560 arrangements
  CompareOptions o = clustered(c);
  o.permutations = 500;
  o.seed = 7;
  const CompareReport a = compare_groups(table, o), b = compare_groups(table, o);
  const ClusterTest& t = a.comparisons[0].cluster;
  EXPECT_EQ(t.permutation.method, "monte_carlo");
  EXPECT_EQ(t.permutation.resamples, 500u);
  const double exact = c["p_value"];
  EXPECT_NEAR(a.comparisons[0].result.p_value, exact,
              4.0 * std::sqrt(exact * (1.0 - exact) / 500.0));
  EXPECT_EQ(a.comparisons[0].result.p_value, b.comparisons[0].result.p_value);
  EXPECT_EQ(t.permutation.exceed, b.comparisons[0].cluster.permutation.exceed);
}

// Null studies: 2 groups x 6 clusters x 5 rows, a cluster effect (sd 1) much larger than the
// rows' noise (sd 0.3) and no group effect. Rows of a cluster are nearly copies, so the flat
// Welch test, taking 30 rows per group as independent, rejects far more often than 5%; the
// cluster permutation test (924 arrangements, exact) holds its level.
TEST(ClusteredCompare, ClusteredTestHoldsItsLevelWhereTheFlatTestDoesNot) {
  constexpr int kStudies = 300;
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  int flat_rejections = 0, clustered_rejections = 0;
  for (int s = 0; s < kStudies; ++s) {
    Table t;
    t.source = "<simulated>";
    std::vector<std::string> group, cluster;
    std::vector<double> value;
    for (int c = 0; c < 12; ++c) {
      const double effect = normal(gen);
      for (int r = 0; r < 5; ++r) {
        group.push_back(c < 6 ? "a" : "b");
        cluster.push_back(std::to_string(c));
        value.push_back(effect + 0.3 * normal(gen));
      }
    }
    t.rows = value.size();
    add_string_column(t, "group", group);
    add_string_column(t, "cluster", cluster);
    add_numeric_column(t, "value", std::move(value));
    CompareOptions o;
    o.value = "value";
    o.by = {"group"};
    o.test = GroupTest::Welch;
    o.cluster = {"cluster"};
    const Comparison cmp = compare_groups(t, o).comparisons.at(0);
    flat_rejections += cmp.cluster.p_unclustered < 0.05;
    clustered_rejections += cmp.result.p_value < 0.05;
  }
  const double flat = flat_rejections / double(kStudies);
  const double clustered = clustered_rejections / double(kStudies);
  // Binomial SE of a 5% rate over 300 studies: 0.0126; 4 SE either side. (Here 0.077 and
  // flat 0.43; 3000 studies gave 0.051.)
  EXPECT_LT(clustered, 0.05 + 4 * 0.0126) << "clustered rejection rate " << clustered;
  EXPECT_GT(clustered, 0.05 - 3 * 0.0126) << "clustered rejection rate " << clustered;
  EXPECT_GT(flat, 0.3) << "flat rejection rate " << flat;
}

TEST(ClusteredCompare, FewClustersSayHowSmallAPValueTheyAllow) {
  Table t = table_of(json::parse(R"([
    {"group": "a", "cluster": "x", "value": 1}, {"group": "a", "cluster": "x", "value": 1.1},
    {"group": "b", "cluster": "y", "value": 5}, {"group": "b", "cluster": "y", "value": 5.2}])"));
  CompareOptions o;
  o.value = "value";
  o.by = {"group"};
  o.test = GroupTest::Welch;
  o.cluster = {"cluster"};
  const Comparison cmp = compare_groups(t, o).comparisons.at(0);
  EXPECT_EQ(cmp.cluster.permutation.resamples, 2u);
  EXPECT_DOUBLE_EQ(cmp.result.p_value, 1.0);  // the swap is as extreme as the observed
  EXPECT_NE(cmp.cluster.permutation.note.find("no p-value below 0.5 is possible"),
            std::string::npos)
      << cmp.cluster.permutation.note;
}

TEST(ClusteredCompare, RowsWithoutAClusterAreLeftOutAndCounted) {
  json rows = fixture()["two_groups"]["rows"];
  rows[0]["cluster"] = "";
  const Table table = table_of(rows);
  CompareOptions o = clustered(fixture()["two_groups"]["cases"][0]);
  const CompareReport report = compare_groups(table, o);
  EXPECT_EQ(report.rows_missing_key, 1u);
  EXPECT_EQ(report.rows_used, rows.size() - 1);
}

TEST(ClusteredCompare, DesignsItCannotTestAreRefusedWithAClearMessage) {
  json crossing = fixture()["two_groups"]["rows"];
  crossing[0]["cluster"] = "B0";  // a cluster of group B now also has a row in group A
  const Table cross = table_of(crossing);
  CompareOptions o = clustered(fixture()["two_groups"]["cases"][0]);
  EXPECT_THAT(testing_util::error_of<InputError>([&] { compare_groups(cross, o); }),
              ::testing::HasSubstr("cluster cluster=B0 has rows in groups"));
  json split_pair = fixture()["paired"]["rows"];
  split_pair[1]["cluster"] = "s5";  // pair p0's B row moves to another cluster
  const Table paired = table_of(split_pair);
  EXPECT_THAT(testing_util::error_of<InputError>(
                  [&] { compare_groups(paired, clustered(fixture()["paired"]["cases"][0])); }),
              ::testing::HasSubstr("the two rows of pair pair = 'p0' are in different clusters"));
  const Table two = table_of(fixture()["two_groups"]["rows"]);
  o.cluster = {"group"};
  EXPECT_THAT(testing_util::error_of<UsageError>([&] { compare_groups(two, o); }),
              ::testing::HasSubstr("given both in --cluster and in --by"));
  o.cluster = {"cluster"};
  o.permutations = 0;
  EXPECT_THAT(testing_util::error_of<UsageError>([&] { compare_groups(two, o); }),
              ::testing::HasSubstr("--permutations must be at least 1"));
  o.permutations = 10;
  o.cluster = {"nope"};
  EXPECT_THAT(testing_util::error_of<InputError>([&] { compare_groups(two, o); }),
              ::testing::HasSubstr("nope"));
}

}  // namespace in_compare_cluster_test
}  // namespace
}  // namespace vlbias
