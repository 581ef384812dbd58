// `vlbias audit --out RUN_DIR` as a careless or hostile user meets it: links planted in the run
// folder are never written through, a second audit on the folder is refused while the first
// runs, an error never leaves the folder half-written (nor mixes two runs), user mistakes exit
// 2 before any work, and labels that a spreadsheet would run as formulas are guarded in
// tables/*.csv. The study is the bundled social-perception example (a fraction of a second).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "vlbias/core/sha256.h"

namespace vlbias {
namespace {
namespace in_run_folder_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using nlohmann::json;
using ::testing::HasSubstr;

const fs::path kExample = fs::path(VLBIAS_SOURCE_DIR) / "examples/social_perception";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The example study copied into dir/study, with a spec whose title line is `title` and whose
// analyses block is `analyses`; returns the spec's path.
fs::path write_study(const fs::path& dir, const std::string& title = "title: Example",
                     const std::string& analyses = "analyses:\n  scweat: {permutations: 500}\n",
                     const std::string& image_table = "images.csv") {
  const fs::path study = dir / "study";
  fs::create_directories(study);
  for (const char* f : {"images.csv", "images.npy", "prompts.csv", "prompts.npy"}) {
    fs::copy_file(kExample / f, study / f, fs::copy_options::overwrite_existing);
  }
  write(study / "spec.yaml",
        "kind: social-perception\n" + title + "\nseed: 1\nmin_group_size: 10\n" +
            "images: {table: " + image_table + ", embeddings: images.npy}\n" +
            "prompts: {manifest: prompts.csv, embeddings: prompts.npy}\n"
            "factors:\n  groups: [race, gender]\n  ordinal: {age: 1.1, smiling: 1.1}\n"
            "  categorical: [lighting, seed]\n" +
            analyses);
  return study / "spec.yaml";
}

CliResult audit(const fs::path& spec, const fs::path& out, int limit_s = 120) {
  return run_cli(fmt::format("--quiet audit '{}' --out '{}'", spec.string(), out.string()), "",
                 limit_s);
}

// path relative to `dir` -> bytes, for every file under it (links listed by their target).
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_symlink()) {
      out[rel] = "-> " + fs::read_symlink(e.path()).string();
    } else if (e.is_regular_file()) {
      out[rel] = read_file(e.path());
    }
  }
  return out;
}

// The cells of a CSV file as written (quotes removed, nothing else undone): what a
// spreadsheet would see.
std::vector<std::vector<std::string>> raw_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false, in_quotes = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      in_quotes = quoted = true;
    } else if (c == ',' || c == '\n') {
      rows.back().push_back(cell);
      cell.clear();
      quoted = false;
      if (c == '\n') rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(AuditRunFolder, PlantedLinksAreNotWrittenThrough) {
  const fs::path dir = temp_dir();
  const fs::path spec = write_study(dir);
  const fs::path outside = dir / "outside";
  write(outside / "victim.json", "precious json\n");
  write(outside / "victim.html", "precious html\n");
  fs::create_directories(outside / "tables");
  const auto before = snapshot(outside);
  const fs::path run = dir / "run";
  fs::create_directories(run);
  // The old fixed temporary names, the tables folder and a final name.
  fs::create_symlink(outside / "victim.json", run / "results.json.tmp");
  fs::create_symlink(outside / "victim.html", run / "report.html.tmp");
  fs::create_directory_symlink(outside / "tables", run / "tables");
  fs::create_symlink(outside / "victim.html", run / "report.html");

  const CliResult r = audit(spec, run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(snapshot(outside), before);  // nothing outside the run folder was written
  EXPECT_FALSE(fs::is_symlink(run / "tables"));
  EXPECT_TRUE(fs::is_directory(run / "tables"));
  EXPECT_TRUE(fs::exists(run / "tables/association_groups.csv"));
  EXPECT_FALSE(fs::is_symlink(run / "report.html"));
  EXPECT_NE(read_file(run / "report.html").find("<html"), std::string::npos);
  EXPECT_EQ(json::parse(read_file(run / "results.json"))["kind"], "social-perception");
}

TEST(AuditRunFolder, LinkedLockIsRefusedAndNotCreated) {
  const fs::path dir = temp_dir();
  const fs::path spec = write_study(dir);
  const fs::path run = dir / "run";
  fs::create_directories(run);
  fs::create_symlink(dir / "outside.lock", run / ".lock");
  const CliResult r = audit(spec, run);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(".lock"));
  EXPECT_THAT(r.err, HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(dir / "outside.lock"));
  EXPECT_FALSE(fs::exists(run / "results.json"));
}

// The first audit reads its image table from a named pipe, so it holds the folder for as long
// as the test keeps the pipe's writing end unwritten: no race on timing.
TEST(AuditRunFolder, SecondAuditOnTheSameFolderIsRefusedWhileTheFirstRuns) {
  const fs::path dir = temp_dir();
  const fs::path spec =
      write_study(dir, "title: Locked", "analyses:\n  scweat: false\n", "images_pipe.csv");
  const fs::path fifo = dir / "study/images_pipe.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path run = dir / "run";
  ASSERT_EQ(audit(write_study(dir / "earlier"), run).exit_code, 0);  // a run to re-run
  const char* binary = testing_util::vlbias_binary();                // read before fork
  const pid_t first = ::fork();
  if (first == 0) {
    const std::string log = (dir / "first.log").string();
    std::FILE* f = std::freopen(log.c_str(), "w", stdout);
    if (f != nullptr) ::dup2(::fileno(stdout), 2);
    const std::string spec_arg = spec.string(), out_arg = run.string();
    ::execl(binary, binary, "--quiet", "audit", spec_arg.c_str(), "--out", out_arg.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(first, 0);
  // Opening the writing end without blocking succeeds once the audit has the pipe open.
  int writer = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (writer < 0 && std::chrono::steady_clock::now() < deadline) {
    writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(writer, 0) << "the first audit never opened its image table";

  const CliResult second = audit(write_study(dir / "other"), run, 30);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_THAT(second.err, HasSubstr("another vlbias process is running in this run folder"));
  const CliResult report = run_cli(fmt::format("report '{}'", run.string()), "", 30);
  EXPECT_EQ(report.exit_code, 2) << report.err;
  EXPECT_THAT(report.err, HasSubstr("another vlbias process is running in this run folder"));

  const std::string table = read_file(kExample / "images.csv");
  ::fcntl(writer, F_SETFL, 0);  // blocking writes from here
  std::size_t written = 0;
  while (written < table.size()) {
    const ssize_t n = ::write(writer, table.data() + written, table.size() - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::close(writer);
  int status = 0;
  for (int i = 0; i < 600 && ::waitpid(first, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (::waitpid(first, &status, WNOHANG) == 0) {
    ::kill(first, SIGKILL);
    ::waitpid(first, &status, 0);
    FAIL() << "the first audit did not finish: " << read_file(dir / "first.log");
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(dir / "first.log");
  // The table came through a pipe: its provenance hash is that of the bytes read.
  const json results = json::parse(read_file(run / "results.json"));
  bool found = false;
  for (const json& input : results["provenance"]["inputs"]) {
    if (input["path"].get<std::string>().find("images_pipe.csv") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(input["sha256"], sha256_hex(table));
  }
  EXPECT_TRUE(found);
}

// Bytes that are not UTF-8 in the title used to fail when results.json was written, after the
// analyses and the tables (exit 1, tables/*.csv without results.json or report.html).
TEST(AuditRunFolder, SpecErrorLeavesNoFolderAndAnEarlierRunUntouched) {
  const fs::path dir = temp_dir();
  const fs::path bad = write_study(dir / "bad", "title: \"bad \xFF\xFE title\"");
  const CliResult fresh = audit(bad, dir / "fresh");
  EXPECT_EQ(fresh.exit_code, 2) << fresh.err;
  EXPECT_THAT(fresh.err, HasSubstr("title is not valid UTF-8"));
  EXPECT_FALSE(fs::exists(dir / "fresh"));

  const fs::path run = dir / "run";
  ASSERT_EQ(audit(write_study(dir / "good"), run).exit_code, 0);
  const auto before = snapshot(run);
  const CliResult again = audit(bad, run);
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_EQ(snapshot(run), before);
}

// A re-run into an existing folder replaces its tables as a whole: none of the earlier run's
// tables remains beside a results.json that does not list it, and a staging folder left by a
// killed run is cleared.
TEST(AuditRunFolder, RerunReplacesTheEarlierRunsTables) {
  const fs::path dir = temp_dir();
  const fs::path run = dir / "run";
  ASSERT_EQ(audit(write_study(dir / "full"), run).exit_code, 0);
  ASSERT_TRUE(fs::exists(run / "tables/absdiff.csv"));
  write(run / ".staging-Abc123/tables/leftover.csv", "x\n1\n");
  const CliResult r = audit(write_study(dir / "few", "title: Fewer analyses",
                                        "analyses:\n  scweat: false\n  absdiff: false\n"
                                        "  trends: false\n  ellipses: false\n"),
                            run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json results = json::parse(read_file(run / "results.json"));
  std::set<std::string> listed;
  for (const json& t : results["tables"]) listed.insert(t.get<std::string>());
  for (const auto& e : fs::directory_iterator(run / "tables")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fig_", 0) == 0) continue;  // the report's chart tables
    EXPECT_TRUE(listed.count("tables/" + name)) << name << " is not in results.json";
  }
  EXPECT_FALSE(fs::exists(run / "tables/absdiff.csv"));
  std::set<std::string> top;
  for (const auto& e : fs::directory_iterator(run)) top.insert(e.path().filename().string());
  EXPECT_EQ(top, (std::set<std::string>{".lock", "report.html", "results.json", "summary.json",
                                        "tables", "units"}));
}

TEST(AuditUserMistakes, OutNamingAFileIsAUsageErrorBeforeAnyWork) {
  const fs::path dir = temp_dir();
  write(dir / "taken", "not a folder\n");
  const CliResult r = audit(write_study(dir), dir / "taken");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--out"));
  EXPECT_THAT(r.err, HasSubstr("is a file; expected a run folder"));
  EXPECT_EQ(read_file(dir / "taken"), "not a folder\n");
}

TEST(AuditUserMistakes, HugeResamplingCountIsAUsageErrorWithTheRange) {
  const fs::path dir = temp_dir();
  for (const char* analyses :
       {"association: {bootstrap: 1000000000000}", "scweat: {permutations: 100000000000}"}) {
    SCOPED_TRACE(analyses);
    const CliResult r =
        audit(write_study(dir, "title: T", std::string("analyses:\n  ") + analyses + "\n"),
              dir / "run", 60);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("must be an integer from"));
    EXPECT_THAT(r.err, HasSubstr("to 1000000"));
    EXPECT_FALSE(fs::exists(dir / "run"));
  }
}

TEST(AuditUserMistakes, MisspelledKindSaysTheKindIsUnknown) {
  const fs::path dir = temp_dir();
  const fs::path geo = dir / "geo";
  fs::copy(fs::path(VLBIAS_SOURCE_DIR) / "examples/geo_diversity", geo);
  std::string text = read_file(geo / "spec.yaml");
  text.replace(text.find("kind: geo-diversity"), 19, "kind: geo-diversty");
  write(geo / "spec.yaml", text);
  const CliResult r = audit(geo / "spec.yaml", dir / "run");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("got 'geo-diversty', which is not a kind of audit"));
  EXPECT_THAT(r.err, HasSubstr("(did you mean 'geo-diversity'?)"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("unknown key")));
}

// OWASP's CSV-injection guidance: labels a spreadsheet would run as formulas are written with
// a single quote in front; numbers (negative ones included) and one-character labels are not.
TEST(AuditTables, FormulaLikeLabelsAreGuardedNumbersAreNot) {
  const fs::path dir = temp_dir();
  const fs::path spec = write_study(dir);
  std::string images = read_file(dir / "study/images.csv");
  const std::map<std::string, std::string> relabel = {
      {",Asian,", ",=1+2,"}, {",Black,", ",@SUM(A1),"}, {",White,", ",-,"}, {",hard,", ",-1,"}};
  for (const auto& [from, to] : relabel) {
    for (std::size_t at = images.find(from); at != std::string::npos;
         at = images.find(from, at + to.size())) {
      images.replace(at, from.size(), to);
    }
  }
  write(dir / "study/images.csv", images);
  const CliResult r = audit(spec, dir / "run");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::set<std::string> seen;
  std::size_t negative_numbers = 0;
  for (const auto& e : fs::directory_iterator(dir / "run/tables")) {
    for (const auto& row : raw_csv(read_file(e.path()))) {
      for (const std::string& cell : row) {
        seen.insert(cell);
        if (cell.size() < 2 || std::string("=+-@\t\r").find(cell[0]) == std::string::npos) {
          continue;
        }
        // A cell starting like a formula must be a plain number.
        char* end = nullptr;
        const double v = std::strtod(cell.c_str(), &end);
        EXPECT_TRUE(end == cell.c_str() + cell.size() && std::isfinite(v))
            << e.path().filename() << ": " << cell;
        if (cell[0] == '-') ++negative_numbers;
      }
    }
  }
  EXPECT_TRUE(seen.count("'=1+2"));
  EXPECT_TRUE(seen.count("'@SUM(A1)"));
  EXPECT_TRUE(seen.count("-"));   // one character: written as is
  EXPECT_TRUE(seen.count("-1"));  // a number in a text column: written as is
  EXPECT_FALSE(seen.count("=1+2"));
  EXPECT_GT(negative_numbers, 100u);  // delta_cos and the like stay numbers

  // vlbias reads its own tables back with the labels as they were.
  const CliResult back =
      run_cli(fmt::format("compare --table '{}' --value delta_cos_mean --by race",
                          (dir / "run/tables/association_groups.csv").string()));
  ASSERT_EQ(back.exit_code, 0) << back.err;
  const json compared = json::parse(back.out);
  std::set<std::string> races;
  for (const json& g : compared["comparisons"][0]["groups"]) {
    races.insert(g["key"]["race"].get<std::string>());
  }
  EXPECT_EQ(races, (std::set<std::string>{"-", "=1+2", "@SUM(A1)"}));
}

}  // namespace in_run_folder_test
}  // namespace
}  // namespace vlbias
