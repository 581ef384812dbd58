// Run folders given as inputs (issue 37 items 1, 5, 12, 17): `compare-runs`, `power` and `merge`
// refuse an output that is, contains or sits inside an input run (compare-runs A B --out B
// replaced run B's results); `report` and `power` read a run's results.json and compare-runs its
// summary.json and units/*.csv only inside the run, never through a link (a link to /dev/zero was
// read until memory ran out; one to an outside CSV or /etc/passwd reached the comparison or its
// error message), and a units table that is there but no regular file is named as what it is,
// not as missing.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace vlbias {
namespace {
namespace in_run_inputs_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::shell_quote;
using cli_util::temp_dir;
using PlainJson = nlohmann::json;

constexpr int kLimit = 60;  // seconds: what used to hang (or read without end) is killed and fails

const fs::path kRuns = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/compare_runs";

// Copies of the fixture runs A and B in temp_dir()/runs (writable, so a test can plant files).
void copy_runs() {
  fs::remove_all(temp_dir() / "runs");
  fs::create_directories(temp_dir() / "runs");
  for (const char* run : {"run_a", "run_b"}) {
    fs::copy(kRuns / run, temp_dir() / "runs" / run, fs::copy_options::recursive);
  }
}

fs::path run(const char* name) {
  return temp_dir() / "runs" / name;
}

CliResult compare_runs(const fs::path& out) {
  return run_cli("--quiet compare-runs " + shell_quote(run("run_a").string()) + " " +
                     shell_quote(run("run_b").string()) + " --bootstrap 50 --out " +
                     shell_quote(out.string()),
                 "", kLimit);
}

void expect_refused(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
}

// Every file of `dir` with its bytes.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? read_file(e.path()) : "";
  }
  return out;
}

TEST(RunInputs, CompareRunsRefusesAnOutThatIsContainsOrSitsInsideAnInputRunAndLeavesItAsItWas) {
  copy_runs();
  const auto before = contents(run("run_b"));
  fs::create_directory_symlink(run("run_b"), temp_dir() / "b_link");
  expect_refused(compare_runs(run("run_b")), "is the input");
  expect_refused(compare_runs(temp_dir() / "b_link"), "is the input");
  expect_refused(compare_runs(run("run_b") / "comparison"), "lies inside the input");
  expect_refused(compare_runs(temp_dir() / "runs"), "contains the input");
  expect_refused(compare_runs(run("run_b") / ".." / ".." / "runs"), "contains the input");
  EXPECT_EQ(contents(run("run_b")), before);
  EXPECT_FALSE(fs::exists(run("run_b") / "results.json"));
  // Beside the runs it is written as before.
  const CliResult ok = compare_runs(temp_dir() / "comparison");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(temp_dir() / "comparison" / "results.json"));
}

// A trait-pairs results.json with one Welch test: a pilot `power` reads.
std::string pilot_results() {
  PlainJson groups = PlainJson::array({{{"level", "female"}, {"n", 20}, {"mean", 0.5}, {"sd", 1.0}},
                                       {{"level", "male"}, {"n", 30}, {"mean", 0.5}, {"sd", 2.0}}});
  PlainJson test{{"pair", "smart/dumb"},
                 {"factor", "gender"},
                 {"within", "race"},
                 {"within_level", "r0"},
                 {"p_holm", 1.0},
                 {"groups", groups},
                 {"result", {{"test", "welch"}, {"p_value", 0.5}}}};
  return PlainJson{{"kind", "trait-pairs"},
                   {"analyses", {{"confidence", {{"tests", PlainJson::array({test})}}}}}}
      .dump();
}

TEST(RunInputs, PowerRefusesAnOutInsideThePilotRun) {
  const fs::path pilot = temp_dir() / "pilot";
  fs::create_directories(pilot);
  const std::string results = pilot_results();
  std::ofstream(pilot / "results.json") << results;
  const std::string common = " --effect 0.8 --replicates 50 --out ";
  for (const fs::path& out : {pilot / "results.json", pilot / "power.json"}) {
    SCOPED_TRACE(out.string());
    expect_refused(run_cli("--quiet power --pilot " + shell_quote(pilot.string()) + common +
                               shell_quote(out.string()),
                           "", kLimit),
                   "lies inside the input");
    // Given as the run's results.json, the run is its folder.
    expect_refused(
        run_cli("--quiet power --pilot " + shell_quote((pilot / "results.json").string()) + common +
                    shell_quote(out.string()),
                "", kLimit),
        "lies inside the input");
  }
  EXPECT_EQ(read_file(pilot / "results.json"), results);
  EXPECT_FALSE(fs::exists(pilot / "power.json"));
  const CliResult ok = run_cli("--quiet power --pilot " + shell_quote(pilot.string()) + common +
                                   shell_quote((temp_dir() / "power.json").string()),
                               "", kLimit);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(temp_dir() / "power.json"));
}

TEST(RunInputs, MergeRefusesAnOutThatIsContainsOrSitsInsideAShardRun) {
  const fs::path texts = temp_dir() / "texts.jsonl";
  std::ofstream(texts) << "{\"id\": 0, \"text\": \"a calm day\"}\n"
                          "{\"id\": 1, \"text\": \"you are awful\"}\n"
                          "{\"id\": 2, \"text\": \"thanks a lot\"}\n";
  for (const char* shard : {"0/2", "1/2"}) {
    const CliResult r =
        run_cli("--quiet score classifier --model tests/fixtures/classifier/bert_multilabel " +
                    shell_quote(texts.string()) + " --chunk 1 --batch 1 --shard " + shard +
                    " --out " + shell_quote((temp_dir() / "shards" / "{shard}").string()),
                "", kLimit);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const fs::path s0 = temp_dir() / "shards" / "0", s1 = temp_dir() / "shards" / "1";
  const auto before = contents(temp_dir() / "shards");
  auto merge = [&](const fs::path& out) {
    return run_cli("--quiet merge " + shell_quote(out.string()) + " " + shell_quote(s0.string()) +
                       " " + shell_quote(s1.string()),
                   "", kLimit);
  };
  expect_refused(merge(s1), "is the input");
  expect_refused(merge(s0 / "merged"), "lies inside the input");
  expect_refused(merge(temp_dir() / "shards"), "contains the input");
  EXPECT_EQ(contents(temp_dir() / "shards"), before);
  const CliResult ok = merge(temp_dir() / "merged");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(temp_dir() / "merged" / "scored.jsonl"));
}

TEST(RunInputs, ResultsJsonLinkedToADeviceIsRefusedAtOnceByReportAndPower) {
  const fs::path dir = temp_dir() / "run";
  fs::create_directories(dir);
  fs::create_symlink("/dev/zero", dir / "results.json");
  const CliResult report = run_cli("--quiet report " + shell_quote(dir.string()), "", kLimit);
  expect_refused(report, "results.json is a symbolic link");
  const CliResult power =
      run_cli("--quiet power --pilot " + shell_quote(dir.string()) + " --effect 1", "", kLimit);
  expect_refused(power, "results.json is a symbolic link");
  // Named directly (no run folder around it), the device itself is refused before it is read.
  const CliResult direct = run_cli("--quiet power --pilot /dev/zero --effect 1", "", kLimit);
  expect_refused(direct, "is a character device");
  // A link to another run's results is not this run's either.
  fs::remove(dir / "results.json");
  std::ofstream(temp_dir() / "other.json") << pilot_results();
  fs::create_symlink(temp_dir() / "other.json", dir / "results.json");
  expect_refused(run_cli("--quiet report " + shell_quote(dir.string()), "", kLimit),
                 "results.json is a symbolic link");
}

TEST(RunInputs, ResultsJsonAsANamedPipeWithoutAWriterEndsWithAnErrorInsteadOfWaiting) {
  const fs::path dir = temp_dir() / "run";
  // The commands inherit a 1 s wait (OpenInputFile's tests check the 10 s default).
  const testing_util::ScopedEnv wait("VLBIAS_PIPE_WAIT_SECONDS", "1");
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "results.json").c_str(), 0600), 0);
  const CliResult r = run_cli("--quiet report " + shell_quote(dir.string()), "", kLimit);
  expect_refused(r, "no program opened for writing within 1 s");
}

// run_b's summary.json names units/warmth.csv and units/gap.csv.
TEST(RunInputs, CompareRunsRefusesUnitsTablesLinkedOutsideTheRun) {
  copy_runs();
  // An outside CSV with the right columns: its values reached differences.csv before.
  fs::copy_file(run("run_b") / "units/warmth.csv", temp_dir() / "outside.csv");
  fs::remove(run("run_b") / "units/warmth.csv");
  fs::create_symlink(temp_dir() / "outside.csv", run("run_b") / "units/warmth.csv");
  expect_refused(compare_runs(temp_dir() / "cmp"), "units/warmth.csv is a symbolic link");
  // /etc/passwd was parsed and its first line quoted as the table's columns.
  fs::remove(run("run_b") / "units/warmth.csv");
  fs::create_symlink("/etc/passwd", run("run_b") / "units/warmth.csv");
  const CliResult passwd = compare_runs(temp_dir() / "cmp");
  expect_refused(passwd, "units/warmth.csv is a symbolic link");
  EXPECT_EQ(passwd.err.find("root:"), std::string::npos) << passwd.err;
  // The units folder itself linked elsewhere.
  fs::remove(run("run_b") / "units/warmth.csv");
  fs::rename(run("run_b") / "units", temp_dir() / "units_elsewhere");
  fs::copy_file(temp_dir() / "outside.csv", temp_dir() / "units_elsewhere/warmth.csv");
  fs::create_directory_symlink(temp_dir() / "units_elsewhere", run("run_b") / "units");
  expect_refused(compare_runs(temp_dir() / "cmp"), "run_b/units is a symbolic link");
  // summary.json itself.
  copy_runs();
  fs::rename(run("run_b") / "summary.json", temp_dir() / "summary.json");
  fs::create_symlink(temp_dir() / "summary.json", run("run_b") / "summary.json");
  expect_refused(compare_runs(temp_dir() / "cmp"), "summary.json is a symbolic link");
  EXPECT_FALSE(fs::exists(temp_dir() / "cmp"));
}

TEST(RunInputs, AUnitsTableThatIsNoCsvOrNoRegularFileIsNamedAsWhatItIs) {
  copy_runs();
  // A units table linked to /dev/zero was reported missing.
  fs::remove(run("run_b") / "units/warmth.csv");
  fs::create_symlink("/dev/zero", run("run_b") / "units/warmth.csv");
  const CliResult zero = compare_runs(temp_dir() / "cmp");
  expect_refused(zero, "is a symbolic link");
  EXPECT_EQ(zero.err.find("missing"), std::string::npos) << zero.err;
  // A folder where the table should be.
  fs::remove(run("run_b") / "units/warmth.csv");
  fs::create_directory(run("run_b") / "units/warmth.csv");
  const CliResult folder = compare_runs(temp_dir() / "cmp");
  expect_refused(folder, "warmth.csv' is a folder");
  EXPECT_EQ(folder.err.find("missing"), std::string::npos) << folder.err;
  // summary.json naming a file of the run that is no CSV: refused by name, its lines unquoted.
  copy_runs();
  std::string summary = read_file(run("run_b") / "summary.json");
  const std::string table = "\"units/gap.csv\"";
  ASSERT_NE(summary.find(table), std::string::npos);
  summary.replace(summary.find(table), table.size(), "\"summary.json\"");
  std::ofstream(run("run_b") / "summary.json", std::ios::binary) << summary;
  const CliResult json = compare_runs(temp_dir() / "cmp");
  expect_refused(json, "is not a .csv file");
  EXPECT_EQ(json.err.find("vlbias.summary/1"), std::string::npos) << json.err;
  // Truly absent: still "missing".
  copy_runs();
  fs::remove(run("run_b") / "units/warmth.csv");
  expect_refused(compare_runs(temp_dir() / "cmp"), "is missing");
}

}  // namespace in_run_inputs_test
}  // namespace
}  // namespace vlbias
