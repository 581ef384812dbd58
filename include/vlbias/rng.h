#pragma once
// Deterministic random streams. Every resampling procedure derives one stream per
// task (e.g. per permutation or bootstrap replicate) from (seed, task index), so
// results are identical whatever the number of threads and however tasks are
// scheduled. Generator: xoshiro256** seeded by SplitMix64 (Blackman & Vigna).
#include <cstdint>

namespace vlbias {

// SplitMix64 step: advances `state` and returns the next output.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  // Stream for task `stream` of a procedure seeded with `seed`.
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);

  std::uint64_t next_u64();
  // Uniform integer in [0, bound), unbiased (Lemire's multiply-and-reject). bound > 0.
  std::uint64_t uniform_index(std::uint64_t bound);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform01();
  // A fair coin: +1 or -1.
  int sign() { return (next_u64() >> 63) ? 1 : -1; }

 private:
  std::uint64_t s_[4];
};

}  // namespace vlbias
