// open_input_file (include/vlbias/core/input_file.h): the kind is checked before open(), a named
// pipe is opened without waiting and then waits a bounded time for its writer (issue 37 item 3:
// open() on a FIFO without a writer used to block forever), and a writer that comes late or
// leaves without writing is read as it should be.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"

namespace vlbias {
namespace {
namespace in_input_open_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

fs::path fresh_dir() {
  return testing_util::fresh_test_dir("vlbias_input_open_");
}

using testing_util::error_of;

// Opens `path` for writing once a reader holds it (a non-blocking open fails with ENXIO until
// then), after `delay`; writes `bytes` and closes. Gives up after 30 s, so a test whose reader
// failed never hangs on its writer.
std::future<void> late_writer(const fs::path& path, std::chrono::milliseconds delay,
                              const std::string& bytes) {
  return std::async(std::launch::async, [path, delay, bytes] {
    std::this_thread::sleep_for(delay);
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    int fd = -1;
    while ((fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK)) < 0 && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // writes wait for the reader
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
}

TEST(OpenInputFile, ARegularFileIsReadWhole) {
  const fs::path dir = fresh_dir();
  std::ofstream(dir / "f.txt") << "hello\n";
  InputFile f = open_input_file((dir / "f.txt").string(), "a test file");
  EXPECT_EQ(f.kind(), InputKind::File);
  EXPECT_EQ(f.size(), 6u);
  EXPECT_EQ(f.read_all(100, "a test file"), "hello\n");
  const std::string big = error_of<InputError>(
      [&] { (void)open_input_file((dir / "f.txt").string()).read_all(3, "a small file"); });
  EXPECT_NE(big.find("is larger than 3 bytes; expected a small file"), std::string::npos) << big;
}

// With VLBIAS_PIPE_WAIT_SECONDS=1 (the default 10 s is checked below without waiting it).
TEST(OpenInputFile, ANamedPipeWithoutAWriterIsAnErrorAfterTheWaitNotAHang) {
  const fs::path dir = fresh_dir();
  ASSERT_EQ(::mkfifo((dir / "p").c_str(), 0600), 0);
  const testing_util::ScopedEnv wait("VLBIAS_PIPE_WAIT_SECONDS", "1");
  const auto start = Clock::now();
  auto opened = std::async(std::launch::async, [&] {
    return error_of<UsageError>([&] { (void)open_input_file((dir / "p").string(), "a table"); });
  });
  ASSERT_EQ(opened.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "open_input_file still waits for a writer";
  const std::string message = opened.get();
  EXPECT_NE(message.find("is a named pipe that no program opened for writing within 1 s"),
            std::string::npos)
      << message;
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(900)) << "it did not wait";
}

TEST(OpenInputFile, ThePipeWaitIsTenSecondsOrTheEnvironmentsAndABadValueIsNamed) {
  {
    const testing_util::ScopedEnv wait("VLBIAS_PIPE_WAIT_SECONDS", "3");
    EXPECT_EQ(pipe_writer_wait_seconds(), 3);
  }
  ::unsetenv("VLBIAS_PIPE_WAIT_SECONDS");
  EXPECT_EQ(pipe_writer_wait_seconds(), 10);
  EXPECT_EQ(pipe_writer_wait_seconds(), kPipeWriterWaitSeconds);
  for (const char* bad : {"0", "-1", "86401", "1.5", "", "ten", "5 ", "99999999999"}) {
    SCOPED_TRACE(bad);
    const testing_util::ScopedEnv wait("VLBIAS_PIPE_WAIT_SECONDS", bad);
    const std::string message = error_of<UsageError>([] { (void)pipe_writer_wait_seconds(); });
    EXPECT_NE(message.find("VLBIAS_PIPE_WAIT_SECONDS is '" + std::string(bad) +
                           "'; expected a whole number of seconds from 1 to 86400"),
              std::string::npos)
        << message;
  }
}

TEST(OpenInputFile, ANamedPipeWhoseWriterComesLateIsReadWhole) {
  const fs::path dir = fresh_dir();
  ASSERT_EQ(::mkfifo((dir / "p").c_str(), 0600), 0);
  const std::string bytes(200000, 'x');  // more than a pipe's buffer: reads block in between
  auto writer = late_writer(dir / "p", std::chrono::milliseconds(1000), bytes);
  InputFile f = open_input_file((dir / "p").string(), "a table");
  EXPECT_EQ(f.kind(), InputKind::Pipe);
  EXPECT_EQ(f.read_all(1 << 20, "a table"), bytes);
  writer.get();
}

TEST(OpenInputFile, ANamedPipeWhoseWriterLeavesWithoutWritingIsEmptyAtOnce) {
  const fs::path dir = fresh_dir();
  ASSERT_EQ(::mkfifo((dir / "p").c_str(), 0600), 0);
  auto writer = late_writer(dir / "p", std::chrono::milliseconds(0), "");
  const auto start = Clock::now();
  InputFile f = open_input_file((dir / "p").string(), "a table");
  writer.get();
  EXPECT_EQ(f.read_all(100, "a table"), "");
  // Ended by the writer's close, well before the wait for a writer would have ended.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(kPipeWriterWaitSeconds));
}

TEST(OpenInputFile, PipesWhereAFileIsMappedAndDevicesAnywhereAreRefusedBeforeOpening) {
  const fs::path dir = fresh_dir();
  ASSERT_EQ(::mkfifo((dir / "p").c_str(), 0600), 0);
  // No writer exists: a blocking open() would never return, a refusal returns at once.
  const std::string pipe = error_of<UsageError>(
      [&] { (void)open_input_file((dir / "p").string(), "an image", PipeRule::Refuse); });
  EXPECT_NE(pipe.find("is a pipe, not a regular file; an image must be a regular file"),
            std::string::npos)
      << pipe;
  for (const PipeRule rule : {PipeRule::Allow, PipeRule::Refuse}) {
    const std::string device =
        error_of<UsageError>([&] { (void)open_input_file("/dev/zero", "a table", rule); });
    EXPECT_NE(device.find("'/dev/zero' is a character device"), std::string::npos) << device;
  }
  const std::string folder = error_of<UsageError>([&] { (void)open_input_file(dir.string()); });
  EXPECT_NE(folder.find("is a folder"), std::string::npos) << folder;
  const std::string missing =
      error_of<InputError>([&] { (void)open_input_file((dir / "absent").string()); });
  EXPECT_NE(missing.find("cannot open"), std::string::npos) << missing;
  fs::remove_all(dir);
}

}  // namespace in_input_open_test
}  // namespace
}  // namespace vlbias
