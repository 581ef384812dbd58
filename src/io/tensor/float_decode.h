#pragma once
// Internal to vlbias_io: decoding of stored float arrays (float16, bfloat16,
// float32, float64; either byte order; C or Fortran order) into row-major
// float32, shared by the .npy and .safetensors readers.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "vlbias/io/finite.h"

namespace vlbias::io_internal {

// IEEE 754 binary16 -> binary32. Exact for every input: subnormals become
// normal floats, +-0 and +-inf keep their sign, NaN stays NaN with its payload
// shifted into the top mantissa bits (as numpy and F16C do for quiet NaNs).
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24, exactly representable in float32.
  const float magnitude = static_cast<float>(mant) * 0x1p-24f;
  return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
}

// bfloat16 is the top half of a binary32, so widening is exact by construction.
inline float bfloat16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t byteswap16(std::uint16_t v) {
  return static_cast<std::uint16_t>((v >> 8) | (v << 8));
}
inline std::uint32_t byteswap32(std::uint32_t v) {
  return __builtin_bswap32(v);
}
inline std::uint64_t byteswap64(std::uint64_t v) {
  return __builtin_bswap64(v);
}

enum class FloatKind { F16, BF16, F32, F64 };

inline std::size_t float_kind_size(FloatKind k) {
  switch (k) {
    case FloatKind::F16:
    case FloatKind::BF16:
      return 2;
    case FloatKind::F32:
      return 4;
    case FloatKind::F64:
      return 8;
  }
  return 0;
}

// Decodes the array at `src` (product(shape) elements of `kind`, unaligned
// allowed; `swap`: stored in the byte order opposite to the host's; `fortran`:
// stored column-major) into `dst`, row-major float32, product(shape) elements.
// Throws InputError, naming `what` and the 0-based position, when a finite
// float64 value does not fit in float32, or when policy is Reject and a value
// is NaN or +-inf (the first one in row-major order). The caller has checked
// that product(shape) * size(kind) bytes are readable at src.
void decode_float_array(const std::uint8_t* src, FloatKind kind, bool swap,
                        std::span<const std::size_t> shape, bool fortran, NonFinite policy,
                        std::string_view what, float* dst);

}  // namespace vlbias::io_internal
