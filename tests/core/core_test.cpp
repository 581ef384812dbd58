#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/core/sha256.h"

namespace vlbias {

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 / NIST example vectors.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, MissingFileIsInputError) {
  EXPECT_THROW(sha256_file("/nonexistent/file"), InputError);
}

TEST(Rng, StreamsAreDeterministicAndDistinct) {
  Rng a(42, 0), b(42, 0), c(42, 1), d(43, 0);
  const auto x = a.next_u64();
  EXPECT_EQ(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  EXPECT_NE(x, d.next_u64());
}

TEST(Rng, UniformIndexInRangeAndCoversAll) {
  Rng r(7);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const auto v = r.uniform_index(7);
    ASSERT_LT(v, 7u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Parallel, RunsEveryTaskOnceAndRethrowsLowestError) {
  set_thread_count(4);
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(hits.size(), [&](std::size_t i) { hits[i]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  try {
    parallel_for(100, [](std::size_t i) {
      if (i == 37 || i == 80) throw InputError(fmt::format("task {}", i));
    });
    FAIL() << "expected a throw";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "task 37");
  }
  // Nested calls run serially inside the task and still cover everything.
  std::atomic<int> total{0};
  parallel_for(8, [&](std::size_t) { parallel_for(10, [&](std::size_t) { total++; }); });
  EXPECT_EQ(total.load(), 80);
  set_thread_count(0);
}

TEST(Parallel, ChunkBoundariesIndependentOfThreads) {
  for (unsigned t : {1u, 2u, 3u}) {
    set_thread_count(t);
    std::vector<std::pair<std::size_t, std::size_t>> seen(4);
    parallel_chunks(10, 3, [&](std::size_t c, std::size_t b, std::size_t e) { seen[c] = {b, e}; });
    EXPECT_EQ(seen[0], std::make_pair(std::size_t{0}, std::size_t{3}));
    EXPECT_EQ(seen[3], std::make_pair(std::size_t{9}, std::size_t{10}));
  }
  set_thread_count(0);
}

TEST(Check, FormatsMessageAndType) {
  try {
    VLBIAS_CHECK(1 + 1 == 3, InputError, "file '{}' row {}: expected {}", "a.csv", 3, "a number");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "file 'a.csv' row 3: expected a number");
    EXPECT_EQ(e.exit_code(), 2);
  }
}

}  // namespace vlbias
