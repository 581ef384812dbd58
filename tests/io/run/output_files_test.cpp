// Outputs never go through a planted symbolic link (atomic_file.h), and a run folder is
// locked by one process at a time (run_lock.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "io/table_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"

namespace vlbias {
namespace {
namespace in_output_files_test {

namespace fs = std::filesystem;
using table_test::error_of;
using table_test::read_file;
using table_test::TempDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Every entry of a folder, for "nothing was left behind".
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AtomicWriter, LinkAtTheOldTemporaryNameIsNotWrittenThrough) {
  TempDir dir;
  const std::string victim = dir.write("victim.txt", "precious\n");
  fs::create_directory(dir.path("run"));
  // Before: every write went to PATH.tmp, opened following links.
  fs::create_symlink(victim, dir.path("run/out.json.tmp"));
  write_file_atomically(dir.path("run/out.json"), "{}\n");
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_EQ(read_file(dir.path("run/out.json")), "{}\n");
  EXPECT_TRUE(fs::is_symlink(dir.path("run/out.json.tmp")));  // left alone
  EXPECT_EQ(entries(dir.path("run")), (std::vector<std::string>{"out.json", "out.json.tmp"}));
}

TEST(AtomicWriter, LinkAtTheFinalNameIsReplacedNotFollowed) {
  TempDir dir;
  const std::string victim = dir.write("victim.txt", "precious\n");
  fs::create_symlink(victim, dir.path("out.csv"));
  write_file_atomically(dir.path("out.csv"), "a\n1\n");
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(dir.path("out.csv")));
  EXPECT_EQ(read_file(dir.path("out.csv")), "a\n1\n");
}

TEST(AtomicWriter, TemporaryIsHiddenRandomAndRemovedWithoutCommit) {
  TempDir dir;
  {
    AtomicWriter a(dir.path("x.bin"));
    AtomicWriter b(dir.path("x.bin"));  // two writers never share a temporary
    a.write("a", 1);
    b.write("b", 1);
    const std::vector<std::string> names = entries(dir.path(""));
    ASSERT_EQ(names.size(), 2u);
    EXPECT_NE(names[0], names[1]);
    for (const std::string& n : names) {
      EXPECT_EQ(n.rfind(".x.bin.", 0), 0u) << n;
      EXPECT_EQ(n.substr(n.size() - 4), ".tmp") << n;
    }
    b.commit();
  }
  EXPECT_EQ(entries(dir.path("")), std::vector<std::string>{"x.bin"});
  EXPECT_EQ(read_file(dir.path("x.bin")), "b");
}

TEST(AtomicWriter, FolderAtTheFinalNameIsAnInputErrorBeforeWriting) {
  TempDir dir;
  fs::create_directory(dir.path("out.npy"));
  EXPECT_THAT(error_of<InputError>([&] { AtomicWriter w(dir.path("out.npy")); }),
              AllOf(HasSubstr("out.npy"), HasSubstr("is a folder")));
  EXPECT_EQ(entries(dir.path("")), std::vector<std::string>{"out.npy"});
}

TEST(AtomicWriter, LongFileNamesStillGetATemporary) {
  TempDir dir;
  const std::string name(250, 'n');
  write_file_atomically(dir.path(name), "ok");
  EXPECT_EQ(read_file(dir.path(name)), "ok");
}

TEST(AtomicWriter, OverwritesAndReadsBackWhatWasWrittenWithoutMovingTheEnd) {
  TempDir dir;
  AtomicWriter w(dir.path("maps.npy"));
  w.write("HEADER:0000|", 12);
  const float values[3] = {1.5f, -2.0f, 3.25f};
  w.write_f32le(values, 3);
  float back[2] = {0, 0};
  w.read_back(12 + sizeof(float), back, sizeof back);  // what stdio still buffers
  EXPECT_EQ(back[0], -2.0f);
  EXPECT_EQ(back[1], 3.25f);
  w.overwrite(7, "0003", 4);
  w.write("|end", 4);  // appends after the floats, not after the overwritten bytes
  char head[12];
  w.read_back(0, head, sizeof head);
  EXPECT_EQ(std::string(head, sizeof head), "HEADER:0003|");
  // Past the end: an internal error, nothing written.
  EXPECT_THROW(w.overwrite(26, "xyz", 3), InternalError);
  EXPECT_THROW(w.read_back(24, back, 8), InternalError);
  w.commit();
  const std::string file = read_file(dir.path("maps.npy"));
  ASSERT_EQ(file.size(), 12 + 3 * sizeof(float) + 4);
  EXPECT_EQ(file.substr(0, 12), "HEADER:0003|");
  EXPECT_EQ(file.substr(file.size() - 4), "|end");
}

TEST(MakeOutputFolders, RefusesLinksAndFilesOnTheWay) {
  TempDir dir;
  fs::create_directory(dir.path("elsewhere"));
  fs::create_directory(dir.path("run"));
  fs::create_directory_symlink(dir.path("elsewhere"), dir.path("run/images"));
  EXPECT_THAT(error_of<InputError>([&] { make_output_folders(dir.path("run"), "images/3"); }),
              AllOf(HasSubstr("run/images"), HasSubstr("symbolic link")));
  EXPECT_TRUE(entries(dir.path("elsewhere")).empty());
  dir.write("run/tables", "a file");
  EXPECT_THAT(error_of<InputError>([&] { make_output_folders(dir.path("run"), "tables"); }),
              HasSubstr("is not a folder"));
  make_output_folders(dir.path("run"), "a/b/c");
  EXPECT_TRUE(fs::is_directory(dir.path("run/a/b/c")));
  make_output_folders(dir.path("run"), "a/b/c");  // existing folders are fine
}

TEST(MakeOutputFolders, ManyThreadsMakingTheSameFolders) {
  TempDir dir;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back(
        [&, t] { make_output_folders(dir.path(""), "images/" + std::to_string(t % 2)); });
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(fs::is_directory(dir.path("images/0")));
  EXPECT_TRUE(fs::is_directory(dir.path("images/1")));
}

TEST(RunLock, SecondHolderIsRefusedUntilTheFirstIsGone) {
  TempDir dir;
  const std::string run = dir.path("runs/one");
  {
    RunLock first(run);  // creates the folder
    EXPECT_TRUE(fs::is_directory(run));
    EXPECT_THAT(error_of<UsageError>([&] { RunLock second(run); }),
                HasSubstr("another vlbias process is running in this run folder"));
  }
  RunLock again(run);
}

TEST(RunLock, FileOrLinkedLockIsAUserError) {
  TempDir dir;
  dir.write("afile", "x");
  EXPECT_THAT(error_of<UsageError>([&] { RunLock lock(dir.path("afile")); }),
              AllOf(HasSubstr("afile"), HasSubstr("is a file; expected a run folder")));
  EXPECT_THAT(error_of<UsageError>([&] { RunLock lock(""); }), HasSubstr("--out"));
  fs::create_directory(dir.path("run"));
  fs::create_symlink(dir.path("outside.lock"), dir.path("run/.lock"));
  EXPECT_THAT(error_of<InputError>([&] { RunLock lock(dir.path("run")); }),
              HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(dir.path("outside.lock")));
}

}  // namespace in_output_files_test
}  // namespace
}  // namespace vlbias
