// Tables given as special files, at the command line and in an audit spec: a regular file or a
// named pipe is read (a pipe once, its provenance hash that of the bytes read); a device such
// as /dev/zero or a folder is a usage error at once. Before, /dev/zero never returned and a
// pipe's hash was that of an empty file. Also: a JSONL column mixing numbers and text names
// both rows and their types.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "vlbias/core/sha256.h"

namespace vlbias {
namespace {
namespace in_input_files_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::temp_dir;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr int kLimit = 30;  // seconds: what used to hang is killed and fails the test

// Two groups, three ages, two images each: enough for `compare` and `metric trends`.
const std::string kTable =
    "g,age,a,b\n"
    "x,1,0.1,0.5\nx,1,0.2,0.4\nx,2,0.3,0.6\nx,2,0.2,0.3\nx,3,0.5,0.1\nx,3,0.4,0.2\n"
    "y,1,0.6,0.2\ny,1,0.7,0.1\ny,2,0.5,0.3\ny,2,0.8,0.2\ny,3,0.9,0.0\ny,3,0.6,0.4\n";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A named pipe and a thread writing `bytes` into it once a reader opens it. A reader that
// never comes (the old hashing thread) is released at the end by opening the pipe here.
class PipeTable {
 public:
  PipeTable(const fs::path& path, const std::string& bytes) : path_(path) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    writer_ = std::thread([this, bytes] { std::ofstream(path_, std::ios::binary) << bytes; });
  }
  ~PipeTable() {
    // Unblocks a writer still waiting for a reader.
    const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK);
    writer_.join();
    if (fd >= 0) ::close(fd);
  }
  PipeTable(const PipeTable&) = delete;
  PipeTable& operator=(const PipeTable&) = delete;

 private:
  fs::path path_;
  std::thread writer_;
};

std::string input_sha256(const std::string& output, const std::string& file) {
  const json out = json::parse(output);
  for (const json& input : out["provenance"]["inputs"]) {
    if (input["path"].get<std::string>().find(file) != std::string::npos) return input["sha256"];
  }
  return "";
}

CliResult compare(const fs::path& table) {
  return run_cli(fmt::format("compare --table '{}' --value a --by g", table.string()), "", kLimit);
}

CliResult trends(const fs::path& table) {
  return run_cli(
      fmt::format("metric trends --table '{}' --values a,b --x age --by g", table.string()), "",
      kLimit);
}

TEST(TableFiles, RegularFileIsReadAndHashed) {
  const fs::path dir = temp_dir();
  write(dir / "t.csv", kTable);
  for (const CliResult& r : {compare(dir / "t.csv"), trends(dir / "t.csv")}) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(input_sha256(r.out, "t.csv"), sha256_hex(kTable));
  }
}

TEST(TableFiles, NamedPipeIsReadOnceAndHashedAsRead) {
  const fs::path dir = temp_dir();
  {
    PipeTable pipe(dir / "compare.csv", kTable);
    const CliResult r = compare(dir / "compare.csv");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(input_sha256(r.out, "compare.csv"), sha256_hex(kTable));
  }
  {
    // metric trends hashes its inputs on a thread while it parses: it must not read the
    // pipe a second time.
    PipeTable pipe(dir / "trends.csv", kTable);
    const CliResult r = trends(dir / "trends.csv");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(input_sha256(r.out, "trends.csv"), sha256_hex(kTable));
  }
}

TEST(TableFiles, EndlessDeviceIsAUsageErrorAtOnce) {
  const fs::path dir = temp_dir();
  fs::create_symlink("/dev/zero", dir / "zero.csv");
  for (const CliResult& r :
       {compare(dir / "zero.csv"), trends(dir / "zero.csv"), trends("/dev/zero")}) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is a character device"));
    EXPECT_THAT(r.err, HasSubstr("must be a regular file or a pipe"));
  }
}

TEST(TableFiles, FolderIsAUsageError) {
  const fs::path dir = temp_dir();
  fs::create_directories(dir / "folder.csv");
  for (const CliResult& r : {compare(dir / "folder.csv"), trends(dir / "folder.csv")}) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("folder.csv' is a folder"));
  }
}

// An audit spec naming a device or a folder as a table is refused when the spec is loaded,
// naming the key, before the run folder is made. (A pipe: run_folder_test.cpp.)
TEST(TableFiles, AuditSpecNamingADeviceOrFolderIsRefusedNamingTheKey) {
  const fs::path dir = temp_dir();
  const fs::path example = fs::path(VLBIAS_SOURCE_DIR) / "examples/social_perception";
  fs::create_directories(dir / "folder.csv");
  for (const char* table : {"/dev/zero", "folder.csv"}) {
    SCOPED_TRACE(table);
    write(dir / "spec.yaml",
          fmt::format("kind: social-perception\nimages: {{table: {}, embeddings: {}}}\n"
                      "prompts: {{manifest: {}, embeddings: {}}}\nfactors: {{groups: [race]}}\n",
                      table, (example / "images.npy").string(), (example / "prompts.csv").string(),
                      (example / "prompts.npy").string()));
    const CliResult r = run_cli(fmt::format("--quiet audit '{}' --out '{}'",
                                            (dir / "spec.yaml").string(), (dir / "run").string()),
                                "", kLimit);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("images.table (" + (dir / "spec.yaml").string() + " line 2)"));
    EXPECT_THAT(r.err, HasSubstr("must be a regular file or a pipe"));
    EXPECT_FALSE(fs::exists(dir / "run"));
  }
}

// The number in a column of JSON numbers and strings was called text ("line 1 holds "1" as
// text", line 1 holding the number 1).
TEST(TableFiles, JsonlColumnMixingNumbersAndTextNamesTheTypesAndRows) {
  const fs::path dir = temp_dir();
  write(dir / "mixed.jsonl",
        "{\"g\": \"x\", \"a\": 1}\n{\"g\": \"y\", \"a\": \"2\"}\n{\"g\": \"x\", \"a\": 3}\n");
  const CliResult r = compare(dir / "mixed.jsonl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("column 'a' in '" + (dir / "mixed.jsonl").string() +
                               "' is not numeric: line 2 holds a string (\"2\") where line 1 "
                               "holds a number"));
}

}  // namespace in_input_files_test
}  // namespace
}  // namespace vlbias
