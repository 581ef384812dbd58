#include "vlbias/core/rng.h"

namespace vlbias {

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  // Mix the stream index into the seed through SplitMix64 so neighbouring
  // streams are decorrelated; then fill the xoshiro state.
  std::uint64_t sm = seed;
  std::uint64_t base = splitmix64(sm);
  std::uint64_t st = base ^ (stream * 0xD1B54A32D192ED03ULL + 0x8CB92BA72F3D8DD7ULL);
  for (auto& word : s_) word = splitmix64(st);
}

}  // namespace vlbias
