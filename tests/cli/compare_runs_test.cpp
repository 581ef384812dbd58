// `vlbias compare-runs` end to end on the fixture runs of tools/make_compare_runs_fixtures.py:
// the output folder, the report (well-formed XML, every number equal to results.json, the
// findings sentence), `vlbias report` on a comparison, and errors at the command line.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "audit_run.h"
#include "cli_util.h"
#include "report_checks.h"

namespace vlbias {
namespace {
namespace in_compare_runs_test {

using cli_util::read_file;
using cli_util::run_cli;
using cli_util::shell_quote;
using cli_util::temp_dir;

std::string fixture_runs(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) {
    std::string path = VLBIAS_SOURCE_DIR;  // built in steps: GCC 12 -Wrestrict misfires on "x" + s
    path += "/tests/fixtures/compare_runs/";
    path += n;
    s += ' ';
    s += shell_quote(path);
  }
  return s;
}

TEST(CompareRunsCommand, WritesResultsTablesAndAReportWhoseNumbersAreTheResults) {
  const std::string out = (temp_dir() / "cmp").string();
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_cli("--quiet compare-runs" + fixture_runs({"run_a", "run_b", "run_c"}) +
                         " --out " + shell_quote(out) + " --bootstrap 2000 --seed 7");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::cout << "[ timing ] compare-runs of 3 fixture runs, B = 2000: " << seconds << " s\n";
  for (const char* f : {"results.json", "report.html", "tables/estimates.csv",
                        "tables/differences.csv", "tables/ranks.csv"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  }
  const report_checks::ReportSummary s = report_checks::check_report(out);
  EXPECT_GT(s.numbers, 50u);
  EXPECT_EQ(s.charts, 1u);  // the forest plot of differences
  const std::string html = read_file(out + "/report.html");
  // The significant paired difference (warmth, B - A; p_holm 0.035 in the reference), in words.
  EXPECT_NE(html.find("run B's <strong>mean Delta cos of warmth (all)</strong> is 0.004424 higher "
                      "than run A's"),
            std::string::npos)
      << html.substr(html.find("<ol class=\"findings\">"), 1500);
  EXPECT_NE(html.find("the runs&#39; stimuli differ (images.table sha256"), std::string::npos);
  const auto results = nlohmann::json::parse(read_file(out + "/results.json"));
  EXPECT_EQ(results["kind"], "comparison");
  const std::string csv = read_file(out + "/tables/differences.csv");
  EXPECT_NE(csv.find("warmth,mean Delta cos of warmth,A,B,0.004424333333333"), std::string::npos)
      << csv;

  // `vlbias report` re-renders a comparison from its results.json alone, identically.
  const std::string before = html;
  ASSERT_EQ(run_cli("--quiet report " + shell_quote(out)).exit_code, 0);
  EXPECT_EQ(read_file(out + "/report.html"), before);
}

TEST(CompareRunsCommand, BadInputsAndOptionsExitWithTheirMessage) {
  const std::string out = shell_quote((temp_dir() / "cmp").string());
  auto expect_error = [&](const std::string& args, const std::string& message) {
    SCOPED_TRACE(args);
    const auto r = run_cli("compare-runs " + args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  };
  const auto empty_run = temp_dir() / "empty_run";
  std::filesystem::create_directories(empty_run);
  expect_error(fixture_runs({"run_a"}) + " " + shell_quote(empty_run.string()) + " --out " + out,
               "summary.json: missing");
  expect_error(fixture_runs({"run_a", "run_a"}) + " --out " + out, "given twice");
  expect_error(fixture_runs({"run_a", "run_b"}) + " --out " + out + " --correction bonferroni",
               "--correction");
  expect_error(fixture_runs({"run_a", "run_b"}) + " --out " + out + " --level 1.5",
               "--level must lie in (0, 1)");
  expect_error(fixture_runs({"run_a"}) + " --out " + out, "runs");
}

TEST(CompareRunsCommand, StimuliNoneMatchesUnitsByKeyAndBhIsUsedWhenAsked) {
  const std::string out = (temp_dir() / "cmp").string();
  const auto r = run_cli("--quiet compare-runs" + fixture_runs({"run_a", "run_c"}) + " --out " +
                         shell_quote(out) + " --stimuli none --correction bh --bootstrap 200");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = nlohmann::json::parse(read_file(out + "/results.json"));
  const auto& d = results["quantities"][0]["differences"][0];
  EXPECT_EQ(d["method"], "paired");
  EXPECT_NE(d["reason"].get<std::string>().find("units matched by key"), std::string::npos);
  EXPECT_EQ(d["p_adjusted"], d["p_bh"]);
  report_checks::check_report(out);
}

TEST(CompareRunsCommand, TheExampleComparisonPairsTheMitigationHalvesByCounterfactualSet) {
  // examples/run.sh's comparison: the same sets answered without mitigation and with M1.
  const auto out = cli_util::run_example_comparison(temp_dir() / "example_comparison");
  const report_checks::ReportSummary s = report_checks::check_report(out);
  EXPECT_GT(s.numbers, 50u);
  const auto results = nlohmann::json::parse(read_file(out / "results.json"));
  std::size_t maxgaps = 0;
  for (const auto& q : results["quantities"]) {
    if (q["id"].get<std::string>().rfind("maxgap/", 0) != 0) continue;
    SCOPED_TRACE(q["id"].get<std::string>());
    ++maxgaps;
    ASSERT_EQ(q["differences"].size(), 1u);
    const auto& d = q["differences"][0];
    // Both runs hold every set of the example: a bootstrap over all of them, none dropped.
    EXPECT_EQ(d["method"], "paired");
    EXPECT_GT(d["units"]["shared"].get<std::size_t>(), 20u);
    EXPECT_EQ(d["units"]["only_a"], 0);
    EXPECT_EQ(d["units"]["only_b"], 0);
    EXPECT_TRUE(d["p_holm"].is_number());
  }
  EXPECT_GE(maxgaps, 2u) << "toxicity and insult per prompt";
}

}  // namespace in_compare_runs_test
}  // namespace
}  // namespace vlbias
