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

// Seed of an independent sub-procedure `task` of a run seeded with `seed` (e.g. the
// bootstrap of group g). Distinct tasks get decorrelated seeds.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t task) {
  std::uint64_t state = seed ^ (0xA0761D6478BD642FULL * (task + 1));
  return splitmix64(state);
}

class Rng {
 public:
  // Stream for task `stream` of a procedure seeded with `seed`.
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);

  // Defined inline below: they sit in the inner loop of every shuffle.
  std::uint64_t next_u64();
  // Uniform integer in [0, bound), unbiased (Lemire's multiply-and-reject). bound > 0.
  std::uint64_t uniform_index(std::uint64_t bound);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // A fair coin: +1 or -1.
  int sign() { return (next_u64() >> 63) ? 1 : -1; }

 private:
  std::uint64_t s_[4];
};

inline std::uint64_t Rng::next_u64() {
  const auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

inline std::uint64_t Rng::uniform_index(std::uint64_t bound) {
  // Lemire, "Fast Random Integer Generation in an Interval" (2019).
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

}  // namespace vlbias
