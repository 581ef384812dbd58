// Issue 37, item 2, in the pool itself: thread counts above kMaxThreads are refused, and a
// parallel_for starts no more threads than it has tasks (--threads 1000 used to start 999
// workers and wake them all for every call; 20,000 aborted).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias {
namespace {
namespace in_thread_limits_test {

// Threads of this process (Linux: one entry per thread in /proc/self/task).
std::size_t live_threads() {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST(ThreadLimits, CountsAboveTheBoundAreAUsageErrorNamingTheRange) {
  const unsigned before = thread_count();
  EXPECT_NO_THROW(check_thread_count(0, "--threads"));
  EXPECT_NO_THROW(check_thread_count(kMaxThreads, "--threads"));
  for (const std::int64_t n :
       {std::int64_t{kMaxThreads} + 1, std::int64_t{1000000}, std::int64_t{-1}}) {
    const std::string e =
        testing_util::error_of<UsageError>([&] { check_thread_count(n, "--threads"); });
    EXPECT_EQ(
        e.rfind("--threads must be an integer from 0 (all cores) to 256, got " + std::to_string(n),
                0),
        0u)
        << e;
  }
  const std::string e =
      testing_util::error_of<UsageError>([] { set_thread_count(kMaxThreads + 1); });
  EXPECT_NE(e.find("from 0 (all cores) to 256"), std::string::npos) << e;
  EXPECT_EQ(thread_count(), before);  // the refused count changed nothing
}

TEST(ThreadLimits, AParallelForStartsNoMoreThreadsThanItHasTasks) {
  set_thread_count(kMaxThreads);
  const std::size_t before = live_threads();
  std::atomic<int> done{0};
  // Tasks that wait a little, so that a pool that started a worker per thread would have them
  // all alive while they run.
  parallel_for(3, [&](std::size_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ++done;
  });
  EXPECT_EQ(done.load(), 3);
  EXPECT_LE(live_threads(), before + 2);  // 3 tasks: the caller and at most 2 workers
  // A bigger job starts what it needs, and the results are those of one thread.
  std::vector<std::size_t> seen(40, 0);
  parallel_for(seen.size(), [&](std::size_t i) { seen[i] = i * i; });
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i * i);
  EXPECT_LE(live_threads(), before + 39);
  set_thread_count(0);
}

TEST(ThreadLimits, StartThreadsRunsEveryBodyItStarted) {
  std::vector<std::thread> threads;
  std::atomic<int> sum{0};
  const std::size_t started =
      start_threads(threads, 5, [&](std::size_t i) { sum += static_cast<int>(i) + 1; });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(started, 5u);
  EXPECT_EQ(threads.size(), 5u);
  EXPECT_EQ(sum.load(), 15);
}

}  // namespace in_thread_limits_test
}  // namespace
}  // namespace vlbias
