// Reading small files whole (file_text.h): every config, vocabulary, lexicon and checkpoint
// reader goes through it, so its refusals are tested once here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"

namespace vlbias {
namespace {
namespace in_file_text_test {

namespace fs = std::filesystem;
using testing_util::error_of;

fs::path scratch() {
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_file_text_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(FileText, ReadsAFileWhole) {
  const fs::path p = scratch() / "config.json";
  const std::string bytes = std::string("{\"a\": 1}\n") + std::string(100000, ' ') + "\0x";
  std::ofstream(p, std::ios::binary) << bytes;
  EXPECT_EQ(read_file_text(p, "a configuration"), bytes);
}

TEST(FileText, MissingEmptyOversizedAndFolderAreInputErrorsNamingWhatWasExpected) {
  const fs::path empty = scratch() / "empty.json", big = scratch() / "big.json";
  std::ofstream(empty).flush();
  std::ofstream(big) << std::string(2000, 'x');
  struct Case {
    fs::path path;
    std::string message;
  };
  for (const Case& c : {Case{scratch() / "nope.json", "does not exist; expected a vocabulary"},
                        Case{empty, "is empty; expected a vocabulary"},
                        Case{big, "is larger than 1024 bytes; expected a vocabulary"}}) {
    SCOPED_TRACE(c.path.string());
    const std::string e =
        error_of<InputError>([&] { (void)read_file_text(c.path, "a vocabulary", 1024); });
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
    EXPECT_NE(e.find(c.path.string()), std::string::npos) << e;
  }
  // A folder or a device that never ends is refused before anything is read.
  EXPECT_FALSE(
      error_of<UsageError>([&] { (void)read_file_text(scratch(), "a vocabulary"); }).empty());
  EXPECT_FALSE(
      error_of<UsageError>([&] { (void)read_file_text("/dev/zero", "a vocabulary"); }).empty());
}

TEST(FileText, APipeIsReadAndBoundedWhileReading) {
  const fs::path fifo = scratch() / "fifo";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << std::string(5000, 'y'); });
  const std::string e =
      error_of<InputError>([&] { (void)read_file_text(fifo, "a lexicon", 4096); });
  writer.join();
  EXPECT_NE(e.find("larger than 4096 bytes"), std::string::npos) << e;
}

}  // namespace in_file_text_test
}  // namespace
}  // namespace vlbias
