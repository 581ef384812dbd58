// MemoryBudget (the bound on image decode memory across `vlbias encode`'s decoding threads):
// what fits, what waits and in which order, and the peak under many threads. Deterministic:
// a waiting thread is observed through waiting(), never through a sleep.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "vlbias/core/memory_budget.h"
#include "vlbias/core/rng.h"

namespace vlbias {
namespace {
namespace in_memory_budget_test {

// Spins (yielding) until `n` threads wait in acquire(); a wait that never comes is a hang,
// which ctest's TIMEOUT turns into a failure.
void wait_for_waiters(const MemoryBudget& budget, std::size_t n) {
  while (budget.waiting() < n) std::this_thread::yield();
}

TEST(MemoryBudget, LeasesFitTheCapacityAndReleaseOnDestruction) {
  MemoryBudget budget(100);
  auto a = budget.try_acquire(60);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(budget.in_use(), 60u);
  EXPECT_FALSE(budget.try_acquire(41).has_value());  // 101 > 100
  {
    auto b = budget.try_acquire(40);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(budget.in_use(), 100u);
  }
  EXPECT_EQ(budget.in_use(), 60u);
  MemoryBudget::Lease moved = std::move(*a);
  EXPECT_EQ(a->bytes(), 0u);
  a.reset();  // the moved-from lease gives nothing back
  EXPECT_EQ(budget.in_use(), 60u);
  moved.release();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(budget.peak(), 100u);
}

TEST(MemoryBudget, ARequestLargerThanTheCapacityRunsAlone) {
  MemoryBudget budget(100);
  auto small = budget.try_acquire(1);
  ASSERT_TRUE(small.has_value());
  EXPECT_FALSE(budget.try_acquire(250).has_value());
  small->release();
  auto big = budget.try_acquire(250);
  ASSERT_TRUE(big.has_value());
  EXPECT_FALSE(budget.try_acquire(1).has_value());  // nothing beside it
}

TEST(MemoryBudget, AcquireWaitsUntilTheBytesAreReleased) {
  MemoryBudget budget(100);
  auto held = budget.try_acquire(60);
  ASSERT_TRUE(held.has_value());
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    MemoryBudget::Lease lease = budget.acquire(50);
    got = true;
  });
  wait_for_waiters(budget, 1);
  EXPECT_FALSE(got.load());  // 60 + 50 > 100: it cannot have been served
  EXPECT_EQ(budget.in_use(), 60u);
  held->release();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(budget.peak(), 60u);
}

TEST(MemoryBudget, AWaitingRequestIsNotOvertakenBySmallerOnes) {
  MemoryBudget budget(100);
  auto held = budget.try_acquire(60);
  ASSERT_TRUE(held.has_value());
  std::thread big([&] { MemoryBudget::Lease lease = budget.acquire(80); });
  wait_for_waiters(budget, 1);
  // 10 more would fit beside the 60, but the 80 came first.
  EXPECT_FALSE(budget.try_acquire(10).has_value());
  held->release();
  big.join();
  EXPECT_EQ(budget.in_use(), 0u);
}

// Eight threads taking random leases: the bytes in flight never pass the capacity.
TEST(MemoryBudget, ManyThreadsNeverHoldMoreThanTheCapacity) {
  constexpr std::size_t kCapacity = 100;
  MemoryBudget budget(kCapacity);
  std::atomic<std::size_t> held{0}, most{0};
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(7, t);
      for (int i = 0; i < 2000; ++i) {
        const std::size_t bytes = 1 + rng.uniform_index(40);
        MemoryBudget::Lease lease = budget.acquire(bytes);
        const std::size_t now = held += bytes;
        std::size_t seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        held -= bytes;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(most.load(), kCapacity);
  EXPECT_LE(budget.peak(), kCapacity);
  EXPECT_EQ(budget.in_use(), 0u);
}

}  // namespace in_memory_budget_test
}  // namespace
}  // namespace vlbias
