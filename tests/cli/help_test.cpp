// What a newcomer meets first: `vlbias` alone, `vlbias help`, `vlbias help COMMAND`, unknown
// commands, and `vlbias --version` (commit and BLAS library).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "cli/cli_util.h"

namespace {
namespace in_help_test {

namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

constexpr const char* kCommands[] = {
    "compare", "compare-runs", "correlate",       "power",    "describe", "prompts", "dataset",
    "metric",  "audit",        "report",          "encode",   "features", "faces",   "label",
    "explain", "merge",        "convert-weights", "generate", "score",    "spec",    "help"};

// The stdout of a shell command (empty when it fails).
std::string shell_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  std::size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, got);
  if (pclose(pipe) != 0) return "";
  return out;
}

void expect_command_list(const std::string& out) {
  EXPECT_EQ(out.rfind("usage: vlbias ", 0), 0u) << out;
  for (const char* command : kCommands) {
    SCOPED_TRACE(command);
    // One line per command: three spaces, the name, its summary.
    EXPECT_TRUE(
        std::regex_search(out, std::regex(std::string("\n   ") + command + " +[A-Z][^\n]+\n")))
        << out;
  }
  EXPECT_NE(out.find("See 'vlbias help COMMAND'"), std::string::npos) << out;
  EXPECT_NE(out.find("docs/specs.md"), std::string::npos) << out;
}

TEST(CliHelp, BareVlbiasPrintsTheCommandListAndExitsWithTheUsageCode) {
  const CliResult r = run_cli("");
  EXPECT_EQ(r.exit_code, 2);
  expect_command_list(r.out);
  EXPECT_EQ(r.err, "");
}

TEST(CliHelp, GlobalOptionsAloneStillPrintTheCommandList) {
  const CliResult r = run_cli("--threads 2 --quiet");
  EXPECT_EQ(r.exit_code, 2);
  expect_command_list(r.out);
}

TEST(CliHelp, HelpAlonePrintsTheSameCommandListAndSucceeds) {
  const CliResult r = run_cli("help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_command_list(r.out);
  EXPECT_EQ(r.out, run_cli("").out);
}

TEST(CliHelp, HelpCommandShowsThatCommandsHelpAndPointsAuditAtTheSpecDocs) {
  const CliResult audit = run_cli("help audit");
  EXPECT_EQ(audit.exit_code, 0) << audit.err;
  EXPECT_NE(audit.out.find("docs/specs.md"), std::string::npos) << audit.out;
  EXPECT_NE(audit.out.find("--check"), std::string::npos) << audit.out;
  const CliResult generate = run_cli("help generate");
  EXPECT_EQ(generate.exit_code, 0) << generate.err;
  EXPECT_NE(generate.out.find("docs/specs.md"), std::string::npos) << generate.out;
}

TEST(CliHelp, HelpOfANestedCommandShowsTheSubcommandsHelp) {
  const CliResult r = run_cli("help metric clipscore");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CLIPScore"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--variant"), std::string::npos) << r.out;
}

TEST(CliHelp, HelpOfAnUnknownCommandIsAUsageErrorWithANearMiss) {
  const CliResult r = run_cli("help autid");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no command named 'autid' (did you mean 'audit'?)"), std::string::npos)
      << r.err;
  const CliResult nested = run_cli("help metric skw");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("'metric skw' (did you mean 'skew'?)"), std::string::npos)
      << nested.err;
  const CliResult far = run_cli("help zzzzzzzz");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(CliHelp, AnUnknownCommandSuggestsTheNearestOne) {
  const CliResult r = run_cli("auditt spec.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'auditt' (did you mean 'audit'?)"), std::string::npos)
      << r.err;
}

TEST(CliVersion, VersionIsOneLineWithTheCommitAndTheBlasLibrary) {
  const CliResult r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      r.out, m,
      std::regex(R"(vlbias [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}(, dirty)?|unknown); )"
                 R"(BLAS: OpenBLAS [0-9][^\n]*\)\n)")))
      << r.out;
  // Built from a git checkout (the tests run in one): the commit is HEAD, or one of its
  // ancestors when commits were made since the build.
  const std::string commit = m[1].str().substr(0, m[1].str().find(','));
  const std::string git = std::string("git -C '") + VLBIAS_SOURCE_DIR + "' ";
  if (!shell_output(git + "rev-parse HEAD 2>/dev/null").empty()) {
    ASSERT_NE(commit, "unknown") << r.out;
    EXPECT_EQ(shell_output(git + "merge-base --is-ancestor " + commit + " HEAD && echo yes"),
              "yes\n")
        << r.out << " names a commit that is not HEAD or an ancestor of it";
  }
}

// cmake/build_info.cmake, the build step behind the commit: "unknown" outside a checkout, and
// the file left untouched when its text would not change (so a build recompiles nothing).
TEST(CliVersion, BuildInfoSaysUnknownOutsideACheckoutAndRewritesOnlyOnChange) {
  const fs::path dir = temp_dir();
  const fs::path tarball = dir / "unpacked";
  fs::create_directories(tarball);
  const fs::path out = dir / "build_info.cpp";
  const std::string script = std::string(VLBIAS_SOURCE_DIR) + "/cmake/build_info.cmake";
  const std::string run = "cmake -DSOURCE_DIR='" + tarball.string() + "' -DOUTPUT='" +
                          out.string() + "' -P '" + script + "' 2>&1 && echo done";
  // Inside /tmp, or inside some other checkout: either way not the top of one.
  ASSERT_EQ(shell_output(run), "done\n");
  const std::string text = read_file(out);
  EXPECT_NE(text.find("return \"unknown\";"), std::string::npos) << text;
  const auto written = fs::last_write_time(out);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(shell_output(run), "done\n");
  EXPECT_EQ(fs::last_write_time(out), written);

  // In the source checkout itself: the HEAD commit.
  const std::string head = shell_output(std::string("git -C '") + VLBIAS_SOURCE_DIR +
                                        "' rev-parse --short=10 HEAD 2>/dev/null");
  if (head.empty()) GTEST_SKIP() << "the source tree is not a git checkout";
  const fs::path here = dir / "here.cpp";
  ASSERT_EQ(shell_output("cmake -DSOURCE_DIR='" + std::string(VLBIAS_SOURCE_DIR) + "' -DOUTPUT='" +
                         here.string() + "' -P '" + script + "' 2>&1 && echo done"),
            "done\n");
  EXPECT_NE(read_file(here).find("return \"" + head.substr(0, head.size() - 1)), std::string::npos)
      << read_file(here);
}

}  // namespace in_help_test
}  // namespace
