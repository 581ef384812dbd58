// The scorers of an LVLM study's scores (lvlm.h LvlmConfig::scorers, lvlm_audit.h
// columns.scorer): counted per value through scans, merges and state files, shown in the
// audit's results and report, and a mix of scorers flagged.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "test_util.h"
#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias {
namespace {
namespace in_lvlm_scorers_test {

using testing_util::error_of;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path scratch() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vlbias_lvlm_scorers_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// A tiny study: 4 sets of 2 groups; rows of sets 0-1 scored by `first`, 2-3 by `second`
// ("" = no scorer column at all).
std::string study(const std::string& name, const std::string& first, const std::string& second) {
  const auto path = scratch() / name;
  std::ofstream out(path);
  for (int set = 0; set < 4; ++set) {
    for (const char* group : {"a", "b"}) {
      const std::string& scorer = set < 2 ? first : second;
      out << fmt::format(R"({{"set": {}, "group": "{}", "toxicity": {}{}}})", set, group,
                         0.1 * set + (group[0] == 'a' ? 0.05 : 0.0),
                         scorer.empty() ? "" : fmt::format(R"(, "scorer": "{}")", scorer))
          << "\n";
    }
  }
  return path.string();
}

LvlmConfig config(bool optional = true) {
  LvlmConfig c;
  c.set_key = {"set"};
  c.group = {"group"};
  c.scores = {"toxicity"};
  c.scorers = {"scorer"};
  c.scorers_optional = optional;
  return c;
}

TEST(LvlmScorers, RowsAreCountedPerScorerAndSurviveMergesAndStateFiles) {
  LvlmState a, b;
  lvlm_scan(study("one.jsonl", "classifier X sha256:01", "classifier X sha256:01"), config(), a,
            false);
  lvlm_scan(study("two.jsonl", "classifier X sha256:01", "judge Y"), config(), b, false);
  EXPECT_EQ(a.scorers.size(), 1u);
  EXPECT_EQ(a.scorers.at("scorer\x1f"
                         "classifier X sha256:01"),
            8u);
  const std::string path = (scratch() / "b.state").string();
  save_lvlm_state(b, path);
  lvlm_merge(a, load_lvlm_state(path));
  canonicalize(a);
  ASSERT_EQ(a.scorers.size(), 2u);
  EXPECT_EQ(a.scorers.at("scorer\x1f"
                         "classifier X sha256:01"),
            12u);
  EXPECT_EQ(a.scorers.at("scorer\x1fjudge Y"), 4u);
}

TEST(LvlmScorers, AFileWithoutTheDefaultColumnReadsNotRecordedButAGivenColumnMustExist) {
  const std::string plain = study("plain.jsonl", "", "");
  LvlmState s;
  lvlm_scan(plain, config(/*optional=*/true), s, false);
  ASSERT_EQ(s.scorers.size(), 1u);
  EXPECT_EQ(s.scorers.at("scorer\x1f"), 8u);  // "" = not recorded
  LvlmState t;
  EXPECT_NE(error_of<InputError>([&] { lvlm_scan(plain, config(false), t, false); }).find("scorer"),
            std::string::npos);
}

TEST(LvlmScorers, AColumnWithTooManyDistinctValuesIsNotAScorerColumn) {
  const auto path = scratch() / "ids.jsonl";
  {
    std::ofstream out(path);
    for (int i = 0; i < 300; ++i) {
      out << fmt::format(R"({{"set": {}, "group": "{}", "toxicity": 0.5, "id": "row{}"}})", i / 2,
                         i % 2 ? "a" : "b", i)
          << "\n";
    }
  }
  LvlmConfig c = config(false);
  c.scorers = {"id"};
  LvlmState s;
  EXPECT_NE(error_of<InputError>([&] {
              lvlm_scan(path.string(), c, s, false);
            }).find("more than 256 distinct scorers"),
            std::string::npos);
}

TEST(LvlmScorers, TheAuditShowsTheScorersInResultsAndReportAndNotesAMix) {
  const std::string gens = study("mixed.jsonl", "classifier X sha256:01", "judge Y");
  const auto spec_path = scratch() / "spec.yaml";
  std::ofstream(spec_path) << "version: 1\nkind: lvlm-counterfactual\ngenerations: " << gens
                           << "\ncolumns: {set_key: set, group: group, scores: toxicity}\n"
                              "analyses: {maxgap: {bootstrap: 50}}\n";
  const auto run = scratch() / "run";
  std::filesystem::remove_all(run);
  run_audit(load_audit_spec(spec_path), run);
  const Json results = parse_json(read_text(run / "results.json"), "results");
  const Json& scorers = results["generations"]["scorers"];
  ASSERT_EQ(scorers.size(), 2u);
  EXPECT_EQ(scorers[0]["scorer"], "classifier X sha256:01");
  EXPECT_EQ(scorers[0]["rows"], 4);
  EXPECT_EQ(scorers[1]["scorer"], "judge Y");
  bool noted = false;
  for (const Json& n : results["notes"]) {
    noted = noted || n.get<std::string>().find("from 2 scorers") != std::string::npos;
  }
  EXPECT_TRUE(noted) << results["notes"].dump();
  const std::string html = read_text(run / "report.html");
  EXPECT_NE(html.find("Scored by"), std::string::npos);
  EXPECT_NE(html.find("classifier X sha256:01"), std::string::npos);
}

}  // namespace in_lvlm_scorers_test
}  // namespace
}  // namespace vlbias
