#pragma once
// numpy's default random generator, reproduced draw for draw so that a sample vlbias draws can
// be checked against (and redrawn by) a numpy/pandas script: `np.random.default_rng(seed)`
// (SeedSequence -> PCG64) and `Generator.choice(n, k, replace=False)` /
// `Generator.integers(0, n, k)`. Written from numpy's documented definitions (numpy >= 1.17,
// checked against numpy 1.24 by tests/core/numpy_random_test.cpp and the fixtures of
// tools/make_sample_fixtures.py):
// - SeedSequence(seed).generate_state(4, uint64): the seed as little-endian 32-bit words mixed
//   into a pool of four words (O'Neill's seed_seq hash), then expanded;
// - PCG64: a 128-bit LCG whose seed is state words 0-1 and increment words 2-3, output
//   XSL-RR (high ^ low, rotated right by the top 6 bits); 32-bit draws use the low half of
//   a 64-bit output first and keep the high half for the next;
// - bounded integers in [0, rng]: Lemire's multiply-and-reject on 32-bit draws when rng fits
//   in 32 bits, on 64-bit draws otherwise;
// - choice without replacement: Floyd's algorithm with a linear-probing set, then a
//   Fisher-Yates shuffle of the result (numpy's default shuffle=True), or for populations over
//   10,000 drawing more than 1/50 of them, a partial Fisher-Yates shuffle of the tail.
#include <cstdint>
#include <vector>

namespace vlbias {

class NumpyGenerator {
 public:
  // np.random.default_rng(seed).
  explicit NumpyGenerator(std::uint64_t seed);

  std::uint64_t next_u64();
  std::uint32_t next_u32();
  // Uniform integer in [0, rng] (inclusive), as numpy's random_bounded_uint64.
  std::uint64_t bounded(std::uint64_t rng);

  // Generator.choice(n, k, replace=False): k distinct indices in [0, n), in numpy's order.
  // Requires k <= n (the caller checks).
  std::vector<std::int64_t> choice_without_replacement(std::int64_t n, std::int64_t k);
  // Generator.choice(n, k, replace=True) = Generator.integers(0, n, k). Requires n > 0.
  std::vector<std::int64_t> choice_with_replacement(std::int64_t n, std::int64_t k);

 private:
  void shuffle_tail(std::int64_t* data, std::int64_t n, std::int64_t first);
  unsigned __int128 state_ = 0;
  unsigned __int128 increment_ = 0;
  bool has_u32_ = false;
  std::uint32_t u32_ = 0;
};

// SeedSequence(seed).generate_state(words, uint32) (exposed for the tests).
std::vector<std::uint32_t> numpy_seed_sequence_state(std::uint64_t seed, std::size_t words);

}  // namespace vlbias
