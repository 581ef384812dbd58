#pragma once
// Running the `vlbias` executable from tests/cli/*.cpp (testing_util::vlbias_binary(), from the
// repo root VLBIAS_SOURCE_DIR), capturing its exit code, stdout and stderr.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

namespace vlbias::cli_util {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A directory of its own for the running test (process id + test name), emptied the first
// time the test asks for it: process ids are reused, and a folder left by an earlier run with
// the same id (e.g. an interrupted encode's checkpoint) must not leak into this one.
inline std::filesystem::path temp_dir() {
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("vlbias_cli_" + std::to_string(::getpid()) + "_" + name);
  static std::set<std::string> fresh;  // tests whose folder was emptied in this process
  if (fresh.insert(name).second) std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes `text` to `name` in the test's temp_dir(); returns the path shell-quoted for run_cli.
inline std::string write_temp_file(const std::string& name, const std::string& text) {
  const std::filesystem::path p = temp_dir() / name;
  std::ofstream(p) << text;
  std::string quoted = "'";  // built in steps: GCC 12 -Wrestrict misfires on "'" + s
  quoted += p.string();
  quoted += "'";
  return quoted;
}

// `s` in single quotes for a POSIX shell (a quote inside becomes '\'').
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  q += "'";
  return q;
}

// Runs the shell command line `cmd` from the repo root; stdout is captured through a pipe and
// stderr through a file in the test's temp_dir().
inline CliResult run_shell(const std::string& cmd) {
  const std::filesystem::path err_file = temp_dir() / "stderr.txt";
  const std::string full = "cd " + shell_quote(VLBIAS_SOURCE_DIR) + " && " + cmd + " 2>" +
                           shell_quote(err_file.string());
  CliResult r;
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t got;
  while ((got = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, got);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_file);
  return r;
}

// Runs the vlbias binary with `args` (already shell-quoted) from the repo root, with the
// environment assignments `env` ("NAME=value ...", shell-quoted) added. With `limit_s` > 0 the
// process is killed after that many seconds (exit code 124, as timeout(1) gives), so a test of
// something that used to hang fails instead of hanging.
inline CliResult run_cli(const std::string& args, const std::string& env = "", int limit_s = 0) {
  const std::string limit =
      limit_s > 0 ? "timeout -k 5 " + std::to_string(limit_s) + " " : std::string();
  return run_shell("env " + env + " " + limit + shell_quote(testing_util::vlbias_binary()) + " " +
                   args);
}

// Starts the vlbias binary with `--threads 1 ` + `args` (shell-quoted) from the repo root and
// kills it (SIGKILL) once `checkpoint` exists, or when `done` does (a run faster than the poll),
// or after 60 s. True when the run was interrupted: `done` does not exist. The resume tests
// run it, then resume and compare with an uninterrupted run.
inline bool run_killed_at_checkpoint(const std::string& args,
                                     const std::filesystem::path& checkpoint,
                                     const std::filesystem::path& done) {
  const std::string cmd = "cd " + shell_quote(VLBIAS_SOURCE_DIR) + " && exec " +
                          shell_quote(testing_util::vlbias_binary()) + " --threads 1 " + args;
  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return false;
  }
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(checkpoint) && !std::filesystem::exists(done) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return !std::filesystem::exists(done);
}

// Runs `bash -c script` from the repo root with the built vlbias as $VLBIAS (the paper
// recipes' scripts), killed after `limit_s` seconds.
inline CliResult run_bash(const std::string& script, int limit_s = 300) {
  return run_shell("VLBIAS=" + shell_quote(testing_util::vlbias_binary()) + " timeout -k 5 " +
                   std::to_string(limit_s) + " bash -c " + shell_quote(script));
}

// A paper recipe's output (examples/papers/*/run.sh) says "step NAME: STATE" for every one of
// `steps` (STATE: "running" or "up to date").
inline void expect_steps(const CliResult& r, const std::vector<std::string>& steps,
                         const std::string& state) {
  for (const std::string& name : steps) {
    SCOPED_TRACE(name);
    EXPECT_NE(r.out.find("step " + name + ": " + state), std::string::npos) << r.out;
  }
}

// The social-perception example study (examples/social_perception) as an audit spec with
// absolute paths, its `factors` and `analyses` maps given as flow YAML.
inline std::string social_perception_example_spec(const std::string& factors,
                                                  const std::string& analyses) {
  const std::string ex = std::string(VLBIAS_SOURCE_DIR) + "/examples/social_perception/";
  return "kind: social-perception\nseed: 1\n"
         "images: {table: " +
         ex + "images.csv, embeddings: " + ex +
         "images.npy}\n"
         "prompts: {manifest: " +
         ex + "prompts.csv, embeddings: " + ex +
         "prompts.npy}\n"
         "factors: " +
         factors + "\nanalyses: " + analyses + "\n";
}

}  // namespace vlbias::cli_util
