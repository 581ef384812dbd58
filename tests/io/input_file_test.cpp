// Tables from special files (input_file.h): a regular file or a pipe is read, a pipe once and
// hashed as read; a device or folder is refused before anything is read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "io/table_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_input_file_test {

namespace fs = std::filesystem;
using table_test::error_of;
using table_test::TempDir;
using table_test::texts;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kCsv = "g,x\na,1\nb,2\na,3\n";

// A named pipe at `path` and a thread that writes `bytes` into it once a reader opens it.
class FifoFeeder {
 public:
  FifoFeeder(const std::string& path, const std::string& bytes) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    thread_ = std::thread([path, bytes] { std::ofstream(path, std::ios::binary) << bytes; });
  }
  ~FifoFeeder() { join(); }
  FifoFeeder(const FifoFeeder&) = delete;
  FifoFeeder& operator=(const FifoFeeder&) = delete;
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// Runs `f` on a thread and fails the test (instead of hanging it) when it takes over 20 s.
template <typename F>
void within_20_seconds(F f) {
  auto done = std::async(std::launch::async, f);
  ASSERT_EQ(done.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "still reading after 20 s";
  done.get();
}

TEST(InputFile, RegularFileAndItsHash) {
  TempDir dir;
  const std::string path = dir.write("t.csv", kCsv);
  EXPECT_EQ(check_input_file(path), InputKind::File);
  EXPECT_THAT(texts(read_table(path), "g"), ElementsAre("a", "b", "a"));
  EXPECT_EQ(sha256_file(path), sha256_hex(kCsv));
}

TEST(InputFile, NamedPipeIsReadOnceAndHashedAsRead) {
  TempDir dir;
  const std::string path = dir.path("piped.csv");
  FifoFeeder writer(path, kCsv);
  EXPECT_EQ(check_input_file(path), InputKind::Pipe);
  const Table t = read_table(path);
  writer.join();
  EXPECT_THAT(texts(t, "x"), ElementsAre("1", "2", "3"));
  // The hash of the bytes parsed, not of an empty read after them.
  EXPECT_EQ(sha256_file(path), sha256_hex(kCsv));
  EXPECT_THAT(error_of<UsageError>([&] { read_table(path); }),
              AllOf(HasSubstr("piped.csv"), HasSubstr("already read")));
}

TEST(InputFile, StreamedPipeIsHashedToo) {
  TempDir dir;
  const std::string path = dir.path("piped.jsonl");
  const std::string text = "{\"g\": \"a\"}\n{\"g\": \"b\"}\n";
  FifoFeeder writer(path, text);
  std::size_t rows = 0;
  for_each_record(path, {"g"}, [&](const Record&) { ++rows; });
  writer.join();
  EXPECT_EQ(rows, 2u);
  EXPECT_EQ(sha256_file(path), sha256_hex(text));
}

TEST(InputFile, EndlessDeviceIsRefusedAtOnce) {
  TempDir dir;
  const std::string zero = dir.path("zero.jsonl");  // a link with a table's extension
  fs::create_symlink("/dev/zero", zero);
  within_20_seconds([&] {
    EXPECT_THAT(error_of<UsageError>([] { read_csv("/dev/zero"); }),
                AllOf(HasSubstr("'/dev/zero' is a character device"),
                      HasSubstr("must be a regular file or a pipe")));
    EXPECT_THAT(error_of<UsageError>([&] { read_table(zero); }), HasSubstr("character device"));
    EXPECT_THAT(error_of<UsageError>([&] { for_each_record(zero, {"g"}, [](const Record&) {}); }),
                HasSubstr("character device"));
    EXPECT_THAT(error_of<UsageError>([] { sha256_file("/dev/zero"); }),
                HasSubstr("character device"));
  });
}

TEST(InputFile, FolderIsRefused) {
  TempDir dir;
  fs::create_directory(dir.path("t.csv"));
  EXPECT_THAT(error_of<UsageError>([&] { read_table(dir.path("t.csv")); }),
              AllOf(HasSubstr("t.csv' is a folder"), HasSubstr("a table must be")));
  EXPECT_THAT(error_of<UsageError>([&] { sha256_file(dir.path("t.csv")); }),
              HasSubstr("is a folder"));
}

TEST(InputFile, PipeNotReadCannotBeHashed) {
  TempDir dir;
  const std::string path = dir.path("never.csv");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  within_20_seconds([&] {
    EXPECT_THAT(error_of<UsageError>([&] { sha256_file(path); }), HasSubstr("is a pipe"));
  });
}

TEST(InputFile, MissingFileIsAnInputError) {
  EXPECT_THAT(error_of<InputError>([] { check_input_file("/no/such/table.csv"); }),
              HasSubstr("No such file"));
}

}  // namespace in_input_file_test
}  // namespace
}  // namespace vlbias
