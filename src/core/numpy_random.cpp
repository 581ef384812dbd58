// numpy's SeedSequence, PCG64 and Generator.choice, from their definitions (numpy_random.h).
#include "vlbias/core/numpy_random.h"

#include <algorithm>
#include <cstddef>

namespace vlbias {
namespace {

// SeedSequence's hash constants (numpy/random/bit_generator.pyx, after O'Neill's seed_seq).
constexpr std::uint32_t kInitA = 0x43b0d7e5;
constexpr std::uint32_t kMultA = 0x931e8875;
constexpr std::uint32_t kInitB = 0x8b51f9dd;
constexpr std::uint32_t kMultB = 0x58f38ded;
constexpr std::uint32_t kMixMultL = 0xca01f9dd;
constexpr std::uint32_t kMixMultR = 0x4973f715;
constexpr int kXShift = 16;
constexpr std::size_t kPoolSize = 4;

std::uint32_t hashmix(std::uint32_t value, std::uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

// The pool after mixing in the entropy words (SeedSequence.mix_entropy).
std::vector<std::uint32_t> mixed_pool(const std::vector<std::uint32_t>& entropy) {
  std::vector<std::uint32_t> pool(kPoolSize);
  std::uint32_t hash_const = kInitA;
  for (std::size_t i = 0; i < kPoolSize; ++i) {
    pool[i] = hashmix(i < entropy.size() ? entropy[i] : 0, hash_const);
  }
  for (std::size_t src = 0; src < kPoolSize; ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
    }
  }
  for (std::size_t src = kPoolSize; src < entropy.size(); ++src) {
    for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
      pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
    }
  }
  return pool;
}

// PCG64's multiplier (PCG_DEFAULT_MULTIPLIER_128).
constexpr unsigned __int128 kPcgMultiplier =
    (static_cast<unsigned __int128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;

}  // namespace

std::vector<std::uint32_t> numpy_seed_sequence_state(std::uint64_t seed, std::size_t words) {
  // A Python int becomes its little-endian 32-bit words; 0 is one word.
  std::vector<std::uint32_t> entropy{static_cast<std::uint32_t>(seed)};
  if (seed >> 32) entropy.push_back(static_cast<std::uint32_t>(seed >> 32));
  const std::vector<std::uint32_t> pool = mixed_pool(entropy);
  std::vector<std::uint32_t> state(words);
  std::uint32_t hash_const = kInitB;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint32_t v = pool[i % kPoolSize];
    v ^= hash_const;
    hash_const *= kMultB;
    v *= hash_const;
    v ^= v >> kXShift;
    state[i] = v;
  }
  return state;
}

NumpyGenerator::NumpyGenerator(std::uint64_t seed) {
  // generate_state(4, uint64): pairs of 32-bit words, low word first.
  const std::vector<std::uint32_t> w = numpy_seed_sequence_state(seed, 8);
  std::uint64_t v[4];
  for (int i = 0; i < 4; ++i) v[i] = w[2 * i] | (static_cast<std::uint64_t>(w[2 * i + 1]) << 32);
  // pcg64_set_seed: words 0-1 are the seed (high, low), words 2-3 the stream.
  const unsigned __int128 initstate = (static_cast<unsigned __int128>(v[0]) << 64) | v[1];
  const unsigned __int128 initseq = (static_cast<unsigned __int128>(v[2]) << 64) | v[3];
  // pcg_setseq_128_srandom_r.
  increment_ = (initseq << 1) | 1;
  state_ = 0;
  state_ = state_ * kPcgMultiplier + increment_;
  state_ += initstate;
  state_ = state_ * kPcgMultiplier + increment_;
}

std::uint64_t NumpyGenerator::next_u64() {
  state_ = state_ * kPcgMultiplier + increment_;
  // XSL-RR: xor the halves, rotate right by the top 6 bits of the state.
  const std::uint64_t x =
      static_cast<std::uint64_t>(state_ >> 64) ^ static_cast<std::uint64_t>(state_);
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  return (x >> rot) | (x << ((64 - rot) & 63));
}

std::uint32_t NumpyGenerator::next_u32() {
  if (has_u32_) {
    has_u32_ = false;
    return u32_;
  }
  const std::uint64_t v = next_u64();
  has_u32_ = true;
  u32_ = static_cast<std::uint32_t>(v >> 32);
  return static_cast<std::uint32_t>(v);
}

std::uint64_t NumpyGenerator::bounded(std::uint64_t rng) {
  if (rng == 0) return 0;
  if (rng <= 0xFFFFFFFFULL) {
    if (rng == 0xFFFFFFFFULL) return next_u32();
    // Lemire (2019) on 32-bit draws.
    const std::uint64_t excl = rng + 1;
    std::uint64_t m = static_cast<std::uint64_t>(next_u32()) * excl;
    std::uint32_t leftover = static_cast<std::uint32_t>(m);
    if (leftover < excl) {
      const std::uint32_t threshold = static_cast<std::uint32_t>((0xFFFFFFFFULL - rng) % excl);
      while (leftover < threshold) {
        m = static_cast<std::uint64_t>(next_u32()) * excl;
        leftover = static_cast<std::uint32_t>(m);
      }
    }
    return m >> 32;
  }
  if (rng == ~0ULL) return next_u64();
  const std::uint64_t excl = rng + 1;
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * excl;
  std::uint64_t leftover = static_cast<std::uint64_t>(m);
  if (leftover < excl) {
    const std::uint64_t threshold = (~0ULL - rng) % excl;
    while (leftover < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * excl;
      leftover = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

// Fisher-Yates from the end down to index `first` (numpy's _shuffle_int).
void NumpyGenerator::shuffle_tail(std::int64_t* data, std::int64_t n, std::int64_t first) {
  for (std::int64_t i = n - 1; i >= first; --i) {
    const auto j = static_cast<std::int64_t>(bounded(static_cast<std::uint64_t>(i)));
    std::swap(data[i], data[j]);
  }
}

std::vector<std::int64_t> NumpyGenerator::choice_without_replacement(std::int64_t n,
                                                                     std::int64_t k) {
  constexpr std::int64_t kCutoff = 50;  // numpy's heuristic when shuffle=True
  if (n > 10000 && k > n / kCutoff) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    shuffle_tail(all.data(), n, std::max<std::int64_t>(n - k, 1));
    return {all.end() - k, all.end()};
  }
  // Floyd's algorithm; the set is open addressing over a power of two >= 1.2 k.
  std::vector<std::int64_t> out(static_cast<std::size_t>(k));
  std::uint64_t mask = static_cast<std::uint64_t>(1.2 * static_cast<double>(k));
  for (int s = 1; s <= 32; s <<= 1) mask |= mask >> s;
  constexpr std::uint64_t kEmpty = ~0ULL;
  std::vector<std::uint64_t> set(mask + 1, kEmpty);
  for (std::int64_t j = n - k; j < n; ++j) {
    const std::uint64_t val = bounded(static_cast<std::uint64_t>(j));
    std::uint64_t loc = val & mask;
    while (set[loc] != kEmpty && set[loc] != val) loc = (loc + 1) & mask;
    std::uint64_t chosen = val;
    if (set[loc] != kEmpty) {  // val was drawn before: j itself joins instead
      chosen = static_cast<std::uint64_t>(j);
      loc = chosen & mask;
      while (set[loc] != kEmpty) loc = (loc + 1) & mask;
    }
    set[loc] = chosen;
    out[static_cast<std::size_t>(j - n + k)] = static_cast<std::int64_t>(chosen);
  }
  shuffle_tail(out.data(), k, 1);
  return out;
}

std::vector<std::int64_t> NumpyGenerator::choice_with_replacement(std::int64_t n, std::int64_t k) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(k));
  for (auto& v : out) v = static_cast<std::int64_t>(bounded(static_cast<std::uint64_t>(n - 1)));
  return out;
}

}  // namespace vlbias
