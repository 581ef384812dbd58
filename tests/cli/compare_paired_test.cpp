// `vlbias compare --paired --pair-key` (paired t, Wilcoxon signed-rank) and one-sided
// alternatives of the two-group tests, against scipy 1.10 (tools/make_correlation_fixtures.py
// writes tests/fixtures/cli/paired_table.csv and the "paired" part of correlate_expected.json).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {
namespace in_compare_paired_test {

using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::write_temp_file;

const std::string kPaired =
    "compare --table tests/fixtures/cli/paired_table.csv --value score --by condition";

const json& expected() {
  return vlbias::testing_util::fixture_json("cli/correlate_expected.json")["paired"];
}

json run_json(const std::string& args) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

void expect_rel(const json& actual, const json& want, double tol, const std::string& what) {
  ASSERT_TRUE(actual.is_number()) << what << ": " << actual;
  const double w = want.get<double>();
  EXPECT_NEAR(actual.get<double>(), w, tol * std::max(1e-300, std::fabs(w))) << what;
}

TEST(CliComparePaired, PairedTAndWilcoxonMatchScipyForEveryAlternative) {
  for (const char* alt : {"two-sided", "greater", "less"}) {
    SCOPED_TRACE(alt);
    for (const char* test : {"paired-t", "wilcoxon"}) {
      SCOPED_TRACE(test);
      const json out =
          run_json(kPaired + " --paired --pair-key id --test " + test + " --alternative " + alt);
      ASSERT_EQ(out["comparisons"].size(), 1u);
      const json& c = out["comparisons"][0];
      const json& want = expected()[alt][test == std::string("paired-t") ? "paired_t" : "wilcoxon"];
      expect_rel(c["statistic"], want[0], 1e-9, "statistic");
      expect_rel(c["p_value"], want[1], test == std::string("wilcoxon") ? 1e-12 : 1e-9, "p");
      EXPECT_EQ(c["alternative"], alt);
      EXPECT_EQ(c["pairing"]["pairs"], expected()["pairs"]);
      EXPECT_EQ(c["groups"][0]["key"]["condition"], "biased");  // a = biased, b = neutral
      EXPECT_EQ(c["groups"][0]["n"], expected()["pairs"]);
    }
  }
}

TEST(CliComparePaired, UnmatchedKeysAreReportedAndLeftOut) {
  const json out = run_json(kPaired + " --paired --pair-key id");
  const json& c = out["comparisons"][0];
  EXPECT_EQ(c["test"], "paired_t");  // --paired defaults to the paired t test
  // p99 has no 'biased' row; p50's 'biased' score is missing, so its 'neutral' row is alone.
  EXPECT_EQ(c["pairing"]["unmatched"], (json{0, 2}));
  EXPECT_EQ(c["pairing"]["unmatched_keys"], (json{"p50", "p99"}));
  EXPECT_EQ(c["pairing"]["pair_key"], "id");
}

TEST(CliComparePaired, OneSidedAlternativesOfTheUnpairedTwoGroupTests) {
  const std::string table = "--table tests/fixtures/cli/confidence.csv --value confidence";
  for (const char* test : {"welch", "student", "mannwhitney"}) {
    SCOPED_TRACE(test);
    const std::string base = "compare " + table + " --by gender --test " + std::string(test);
    const json two = run_json(base);
    const json greater = run_json(base + " --alternative greater");
    const json less = run_json(base + " --alternative less");
    const double t = two["comparisons"][0]["p_value"], g = greater["comparisons"][0]["p_value"],
                 l = less["comparisons"][0]["p_value"];
    EXPECT_NEAR(std::min(g, l), t / 2.0, 1e-12);
    EXPECT_EQ(greater["comparisons"][0]["alternative"], "greater");
  }
}

TEST(CliComparePaired, BadPairingIsRefusedWithAClearMessage) {
  const std::string dup =
      write_temp_file("dup.csv", "id,cond,v\n1,a,1\n1,b,2\n2,a,3\n2,b,1\n2,a,5\n3,a,1\n3,b,0\n");
  const std::string three =
      write_temp_file("three.csv", "id,cond,v\n1,a,1\n1,b,2\n1,c,3\n2,a,1\n2,b,2\n2,c,3\n");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"compare --table " + dup + " --value v --by cond --paired --pair-key id",
       "pair key id = '2' appears more than once in group a"},
      {"compare --table " + three + " --value v --by cond --paired --pair-key id",
       "use --pairwise"},
      {kPaired + " --paired", "--paired and --pair-key go together"},
      {kPaired + " --pair-key id", "--paired and --pair-key go together"},
      {kPaired + " --test wilcoxon", "is paired: give --paired --pair-key"},
      {kPaired + " --paired --pair-key id --test welch", "need a paired test"},
      {kPaired + " --paired --pair-key nope", "nope"},
      {kPaired + " --paired --pair-key condition", "also a --by or --within column"},
      {kPaired + " --paired --pair-key id --test wilcoxon --zero-method drop",
       "unknown --zero-method 'drop'"},
      {kPaired + " --test anova --alternative less", "needs a two-group test"},
      {kPaired + " --test welch --alternative up", "unknown alternative 'up'"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
}

TEST(CliComparePaired, PairwiseLevelsAreMatchedPairByPair) {
  const std::string three =
      write_temp_file("three.csv",
                      "id,cond,v\n1,a,1\n1,b,2\n1,c,3.5\n2,a,1.5\n2,b,2\n2,c,3\n3,a,0\n3,b,4\n"
                      "3,c,2\n4,a,2\n4,c,5\n");
  const json out = run_json("compare --table " + three +
                            " --value v --by cond --paired --pair-key id --pairwise");
  ASSERT_EQ(out["comparisons"].size(), 3u);
  EXPECT_EQ(out["comparisons"][0]["pairing"]["pairs"], 3);  // a-b: id 4 has no b
  EXPECT_EQ(out["comparisons"][1]["pairing"]["pairs"], 4);  // a-c
  EXPECT_EQ(out["comparisons"][2]["pairing"]["pairs"], 3);  // b-c
  EXPECT_TRUE(out["comparisons"][0]["p_holm"].is_number());
}

// `compare --cluster`: the exact cluster permutation p of the two-group fixture
// (tools/make_cluster_permutation_fixtures.py), its JSON and its refusal of a crossed design.
TEST(CliCompareClustered, ClusterPermutationPValueAndItsRecordInTheJson) {
  const json& block =
      vlbias::testing_util::fixture_json("stats/cluster_permutation.json")["two_groups"];
  std::string csv = "group,cluster,value\n";
  for (const json& r : block["rows"]) {
    csv += r["group"].get<std::string>() + "," + r["cluster"].get<std::string>() + "," +
           r["value"].dump() + "\n";
  }
  const std::string table = write_temp_file("clustered.csv", csv);
  const json& want = block["cases"][0];  // welch, two-sided
  const json out = run_json("compare --table " + table +
                            " --value value --by group --test welch --cluster cluster");
  const json& cmp = out["comparisons"][0];
  EXPECT_DOUBLE_EQ(cmp["p_value"].get<double>(), want["p_value"].get<double>());
  expect_rel(cmp["cluster"]["p_unclustered"], want["p_unclustered"], 1e-9, "p_unclustered");
  EXPECT_EQ(cmp["cluster"]["method"], "exact");
  EXPECT_EQ(cmp["cluster"]["resamples"], 70);
  EXPECT_EQ(cmp["cluster"]["clusters_per_group"], json::array({4, 4}));
  EXPECT_EQ(cmp["cluster"]["columns"], json::array({"cluster"}));
  EXPECT_FALSE(cmp["cluster"].contains("seed"));  // exact: no draws
  EXPECT_EQ(out["provenance"]["parameters"]["cluster"], json::array({"cluster"}));

  const json mc = run_json("compare --table " + table +
                           " --value value --by group --test welch --cluster cluster "
                           "--permutations 50 --seed 3");
  EXPECT_EQ(mc["comparisons"][0]["cluster"]["method"], "monte_carlo");
  EXPECT_EQ(mc["comparisons"][0]["cluster"]["seed"].is_number(), true);

  const CliResult crossed = run_cli("compare --table " + table +
                                    " --value value --by cluster --test anova --cluster group");
  EXPECT_EQ(crossed.exit_code, 2) << crossed.err;
  EXPECT_NE(crossed.err.find("has rows in groups"), std::string::npos) << crossed.err;
}

}  // namespace in_compare_paired_test
}  // namespace
