// NumpyGenerator against numpy 1.24's own outputs (tools/make_sample_fixtures.py writes
// tests/fixtures/sample/numpy_random.json): SeedSequence state words, PCG64 raw draws, and
// Generator.choice on both of its algorithms, followed by the next raw draw (so that the
// number of draws consumed matches too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/numpy_random.h"

namespace {
namespace in_numpy_random_test {

using vlbias::NumpyGenerator;

std::uint64_t u64(const nlohmann::json& text) {
  return std::stoull(text.get<std::string>());
}

const nlohmann::json& reference() {
  return vlbias::testing_util::fixture_json("sample/numpy_random.json");
}

TEST(NumpyRandom, SeedSequenceAndPcg64MatchNumpyForSeedsOfOneAndTwoWords) {
  ASSERT_FALSE(reference()["seeds"].empty());
  for (const auto& c : reference()["seeds"]) {
    SCOPED_TRACE("seed " + c["seed"].get<std::string>());
    const std::uint64_t seed = u64(c["seed"]);
    EXPECT_EQ(vlbias::numpy_seed_sequence_state(seed, 8),
              c["state"].get<std::vector<std::uint32_t>>());
    NumpyGenerator g(seed);
    for (const auto& raw : c["raw"]) EXPECT_EQ(g.next_u64(), u64(raw));
  }
}

TEST(NumpyRandom, ChoiceMatchesNumpyOnFloydsAndTheTailShufflePaths) {
  ASSERT_FALSE(reference()["choices"].empty());
  for (const auto& c : reference()["choices"]) {
    const auto n = c["n"].get<std::int64_t>();
    const auto k = c["k"].get<std::int64_t>();
    SCOPED_TRACE("n " + std::to_string(n) + " k " + std::to_string(k));
    NumpyGenerator g(c["seed"].get<std::uint64_t>());
    const std::vector<std::int64_t> got = c["replace"].get<bool>()
                                              ? g.choice_with_replacement(n, k)
                                              : g.choice_without_replacement(n, k);
    EXPECT_EQ(got, c["values"].get<std::vector<std::int64_t>>());
    EXPECT_EQ(g.next_u64(), u64(c["next_raw"]));
  }
}

TEST(NumpyRandom, ChoiceWithoutReplacementDrawsDistinctIndicesInRange) {
  NumpyGenerator g(3);
  for (const std::int64_t n : {1, 2, 50, 10001, 30000}) {
    for (const std::int64_t k : {std::int64_t{0}, std::int64_t{1}, n / 3, n}) {
      SCOPED_TRACE(std::to_string(n) + " " + std::to_string(k));
      std::vector<std::int64_t> v = g.choice_without_replacement(n, k);
      ASSERT_EQ(static_cast<std::int64_t>(v.size()), k);
      std::sort(v.begin(), v.end());
      EXPECT_EQ(std::adjacent_find(v.begin(), v.end()), v.end());
      if (k > 0) {
        EXPECT_TRUE(v.front() >= 0 && v.back() < n);
      }
    }
  }
}

}  // namespace in_numpy_random_test
}  // namespace
