// The clustered (two-stage) bootstrap of MaxGap and of paired MaxGap differences: `metric
// maxgap|paired --cluster` and `analyses.maxgap|paired.cluster`, and the clustered group tests
// (`analyses.group_tests.cluster`), against the values that
// tools/make_cluster_bootstrap_fixtures.py computes from the formulas with vlbias's random
// streams ported to Python (tests/fixtures/lvlm/cluster/).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "test_util.h"

namespace vlbias {
namespace {
namespace in_cluster_bootstrap_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using cli_util::write_temp_file;
using PlainJson = nlohmann::json;

const std::string kTable = "tests/fixtures/lvlm/cluster/generations.jsonl";
const std::string kArgs = " --table " + kTable +
                          " --set-key filename,rank,seed --group race --by mitigation"
                          " --score toxicity --bootstrap 200 --seed 3";

const PlainJson& expected() {
  return testing_util::fixture_json("lvlm/cluster/expected.json");
}

// Bounds agree to rounding: the sums run in the same order, the scores' max - min differ in
// the last bit at most.
void expect_interval(const PlainJson& got, const PlainJson& want) {
  SCOPED_TRACE(got.dump() + " vs " + want.dump());
  for (const char* b : {"lower", "upper"}) {
    EXPECT_NEAR(got[b].get<double>(), want[b].get<double>(), 1e-12) << b;
  }
}

TEST(ClusterBootstrap, MaxGapIntervalsMatchTheReferenceFlatAndClustered) {
  for (const bool clustered : {false, true}) {
    SCOPED_TRACE(clustered ? "clustered" : "flat");
    const auto r =
        run_cli("--quiet metric maxgap" + kArgs + (clustered ? " --cluster filename,rank" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const PlainJson j = PlainJson::parse(r.out);
    ASSERT_EQ(j["results"].size(), 2u);
    for (const PlainJson& res : j["results"]) {
      const std::string level = res["by"]["mitigation"];
      SCOPED_TRACE(level);
      const PlainJson& want = expected()["maxgap"][level][clustered ? "clustered" : "flat"];
      expect_interval(res["ci"]["maxgap_mean"], want["maxgap_mean"]);
      expect_interval(res["ci"]["maxgap_p90"], want["maxgap_p90"]);
      if (clustered) {
        EXPECT_EQ(res["ci"]["clusters"], 8);
        EXPECT_EQ(res["ci"]["unit"], "cluster (filename, rank), then counterfactual set within it");
      } else {
        EXPECT_FALSE(res["ci"].contains("clusters"));
      }
    }
  }
  // Eight image sets of three seeds each: resampling image sets widens the mean's interval.
  const PlainJson& m = expected()["maxgap"]["none"];
  EXPECT_GT(m["clustered"]["maxgap_mean"]["upper"].get<double>() -
                m["clustered"]["maxgap_mean"]["lower"].get<double>(),
            m["flat"]["maxgap_mean"]["upper"].get<double>() -
                m["flat"]["maxgap_mean"]["lower"].get<double>());
}

TEST(ClusterBootstrap, PairedDifferencesResampleMatchedSetsWithinImageSets) {
  for (const bool clustered : {false, true}) {
    SCOPED_TRACE(clustered ? "clustered" : "flat");
    const auto r =
        run_cli("--quiet metric paired" + kArgs + " --compare mitigation --baseline none" +
                (clustered ? " --cluster filename,rank" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const PlainJson res = PlainJson::parse(r.out)["results"][0];
    const PlainJson& want = expected()["paired"][clustered ? "clustered" : "flat"];
    expect_interval(res["ci"]["diff_mean"], want["diff_mean"]);
    expect_interval(res["ci"]["diff_p90"], want["diff_p90"]);
    // Pearson's r of the matched MaxGaps with its Fisher z interval, by hand:
    // tanh(atanh(r) -+ 1.959964 / sqrt(n - 3)).
    const double rho = res["pearson"]["statistic"].get<double>();
    const double n = res["matched_sets"].get<double>();
    const double half = 1.959963984540054 / std::sqrt(n - 3.0);
    EXPECT_NEAR(res["pearson"]["ci"]["lower"].get<double>(), std::tanh(std::atanh(rho) - half),
                1e-12);
    EXPECT_NEAR(res["pearson"]["ci"]["upper"].get<double>(), std::tanh(std::atanh(rho) + half),
                1e-12);
  }
}

// The paired t and Wilcoxon of M1 - none over matched sets, flat (scipy) and clustered (the
// enumeration of every way the 8 image sets can swap arms together, with scipy's tests).
TEST(ClusterBootstrap, PairedTestsOfTheMitigationAreClusterSignFlipTestsWhenClustered) {
  for (const char* alternative : {"two-sided", "less"}) {
    for (const bool clustered : {false, true}) {
      SCOPED_TRACE(std::string(alternative) + (clustered ? " clustered" : " flat"));
      const auto r = run_cli("--quiet metric paired" + kArgs +
                             " --compare mitigation --baseline none --alternative " + alternative +
                             (clustered ? " --cluster filename,rank" : ""));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const PlainJson tests = PlainJson::parse(r.out)["results"][0]["tests"];
      const PlainJson& want = expected()["paired"]["tests"][alternative];
      EXPECT_NEAR(tests["paired_t"]["statistic"].get<double>(), want["t"].get<double>(), 1e-9);
      for (const char* test : {"paired_t", "wilcoxon"}) {
        SCOPED_TRACE(test);
        const double p = tests[test]["p_value"].get<double>();
        EXPECT_EQ(tests[test]["alternative"], alternative);
        if (clustered) {
          EXPECT_DOUBLE_EQ(p, want["clustered"][test].get<double>());
          EXPECT_EQ(tests[test]["permutation"], "exact");  // 2^8 sign vectors <= 9999
          EXPECT_NEAR(tests[test]["p_unclustered"].get<double>(), want["flat"][test].get<double>(),
                      1e-9);
        } else {
          EXPECT_NEAR(p, want["flat"][test].get<double>(), 1e-9);
          EXPECT_FALSE(tests[test].contains("permutation"));
        }
      }
    }
  }
}

TEST(ClusterBootstrap, TheAuditKeyGivesTheSameIntervalsAsTheOption) {
  const std::string spec = write_temp_file(
      "spec.yaml", std::string("version: 1\nkind: lvlm-counterfactual\nseed: 3\ngenerations: ") +
                       VLBIAS_SOURCE_DIR + "/" + kTable +
                       "\ncolumns: {set_key: [filename, rank, seed], group: race, "
                       "by: mitigation, scores: [toxicity]}\n"
                       "analyses: {maxgap: {bootstrap: 200, cluster: [filename, rank]}, "
                       "group_tests: false}\n");
  const std::string out = (temp_dir() / "run").string();
  const auto r = run_cli("--quiet audit " + spec + " --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const PlainJson res = PlainJson::parse(read_file(out + "/results.json"));
  EXPECT_EQ(res["spec"]["analyses"]["maxgap"]["cluster"], PlainJson::array({"filename", "rank"}));
  for (const PlainJson& x : res["analyses"]["maxgap"]["results"]) {
    const std::string level = x["by"]["mitigation"];
    SCOPED_TRACE(level);
    expect_interval(x["ci"]["maxgap_mean"],
                    expected()["maxgap"][level]["clustered"]["maxgap_mean"]);
  }
}

// analyses.group_tests with and without `cluster`: Friedman over sets or over the image sets'
// means, and the within-set permutation p of each race's gap to the others, drawn per set or
// once per image set.
TEST(ClusterBootstrap, GroupTestsRelabelAnImageSetsSeedsAlikeWhenClustered) {
  for (const bool clustered : {false, true}) {
    SCOPED_TRACE(clustered ? "clustered" : "flat");
    const std::string spec = write_temp_file(
        "spec.yaml", std::string("version: 1\nkind: lvlm-counterfactual\nseed: 3\ngenerations: ") +
                         VLBIAS_SOURCE_DIR + "/" + kTable +
                         "\ncolumns: {set_key: [filename, rank, seed], group: race, "
                         "by: mitigation, scores: [toxicity]}\n"
                         "analyses: {maxgap: false, group_tests: {permutations: 200" +
                         (clustered ? ", cluster: [filename, rank]" : "") + "}}\n");
    const std::string out = (temp_dir() / "run").string();
    const auto r = run_cli("--quiet audit " + spec + " --out '" + out + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const PlainJson res = PlainJson::parse(read_file(out + "/results.json"));
    const PlainJson& section = res["analyses"]["group_tests"];
    EXPECT_EQ(section.contains("cluster"), clustered);
    for (const PlainJson& x : section["results"]) {
      const std::string level = x["by"]["mitigation"];
      SCOPED_TRACE(level);
      const PlainJson& want = expected()["group_tests"][level][clustered ? "clustered" : "flat"];
      EXPECT_NEAR(x["friedman"]["statistic"].get<double>(), want["friedman_chi2"].get<double>(),
                  1e-9);
      EXPECT_NEAR(x["friedman"]["p_value"].get<double>(), want["friedman_p"].get<double>(), 1e-9);
      if (clustered) {
        EXPECT_EQ(x["clusters"], 8);
      }
      ASSERT_EQ(x["groups"].size(), 3u);
      for (std::size_t g = 0; g < 3; ++g) {
        EXPECT_NEAR(x["groups"][g]["gap_to_others"].get<double>(),
                    want["gap_to_others"][g].get<double>(), 1e-12);
        EXPECT_DOUBLE_EQ(x["groups"][g]["p"].get<double>(), want["p"][g].get<double>());
      }
    }
  }
}

TEST(ClusterBootstrap, AClusterColumnOutsideTheSetKeyIsRefused) {
  const auto r = run_cli("--quiet metric maxgap" + kArgs + " --cluster filename,race");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cluster column 'race' is not a set-key column (filename, rank, seed)"),
            std::string::npos)
      << r.err;
  const std::string spec = write_temp_file(
      "spec.yaml", std::string("version: 1\nkind: lvlm-counterfactual\ngenerations: ") +
                       VLBIAS_SOURCE_DIR + "/" + kTable +
                       "\ncolumns: {set_key: [filename, rank, seed], group: race, "
                       "scores: [toxicity]}\nanalyses: {maxgap: {cluster: [image]}}\n");
  const auto c = run_cli("audit --check " + spec);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("analyses.maxgap.cluster"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("'image' is not one of columns.set_key"), std::string::npos) << c.err;
}

}  // namespace in_cluster_bootstrap_test
}  // namespace
}  // namespace vlbias
