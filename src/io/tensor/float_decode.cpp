#include "float_decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "vlbias/core/error.h"

namespace vlbias::io_internal {

namespace {

// Elements decoded per step: small enough that the finite check re-reads the
// chunk from L2 cache, large enough to amortise the loop overhead.
constexpr std::size_t kChunk = 16384;

std::size_t product(std::span<const std::size_t> shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

// Decodes n contiguous elements. Returns the index of the first finite float64
// that overflowed to +-inf in float32, or n.
std::size_t decode_run(const std::uint8_t* src, std::size_t n, FloatKind kind, bool swap,
                       float* dst) {
  switch (kind) {
    case FloatKind::F32:
      if (!swap) {
        std::memcpy(dst, src, n * sizeof(float));
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          std::uint32_t v;
          std::memcpy(&v, src + 4 * i, 4);
          dst[i] = std::bit_cast<float>(byteswap32(v));
        }
      }
      return n;
    case FloatKind::F16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        dst[i] = half_to_float(swap ? byteswap16(v) : v);
      }
      return n;
    case FloatKind::BF16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        dst[i] = bfloat16_to_float(swap ? byteswap16(v) : v);
      }
      return n;
    case FloatKind::F64: {
      bool overflow = false;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t v;
        std::memcpy(&v, src + 8 * i, 8);
        const double d = std::bit_cast<double>(swap ? byteswap64(v) : v);
        const float f = static_cast<float>(d);
        dst[i] = f;
        overflow |= std::isinf(f) && !std::isinf(d);
      }
      if (!overflow) return n;
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isinf(dst[i])) {
          std::uint64_t v;
          std::memcpy(&v, src + 8 * i, 8);
          if (!std::isinf(std::bit_cast<double>(swap ? byteswap64(v) : v))) return i;
        }
      }
      return n;
    }
  }
  return n;
}

[[noreturn]] void fail_overflow(const std::uint8_t* src, bool swap,
                                std::span<const std::size_t> shape, std::size_t c_index,
                                std::size_t file_index, std::string_view what) {
  std::uint64_t v;
  std::memcpy(&v, src + 8 * file_index, 8);
  const double d = std::bit_cast<double>(swap ? byteswap64(v) : v);
  VLBIAS_FAIL(InputError,
              "{} has float64 value {} at {} (0-based), outside the float32 range "
              "(magnitude at most 3.4e38)",
              what, d, describe_position(shape, c_index));
}

// Row-major index of the element stored at position k of a column-major array.
std::size_t fortran_to_c_index(std::span<const std::size_t> shape, std::size_t k) {
  std::size_t c = 0;
  std::size_t stride = 1;
  std::vector<std::size_t> coords(shape.size());
  for (std::size_t a = 0; a < shape.size(); ++a) {
    coords[a] = k % shape[a];
    k /= shape[a];
  }
  for (std::size_t a = shape.size(); a-- > 0;) {
    c += coords[a] * stride;
    stride *= shape[a];
  }
  return c;
}

// Column-major `src` of `shape` -> row-major `dst`.
void fortran_to_c(const float* src, std::span<const std::size_t> shape, float* dst) {
  if (shape.size() == 2) {
    // Tiled transpose: src is cols x rows row-major.
    const std::size_t rows = shape[0], cols = shape[1];
    constexpr std::size_t kTile = 32;
    for (std::size_t i0 = 0; i0 < rows; i0 += kTile) {
      const std::size_t i1 = std::min(rows, i0 + kTile);
      for (std::size_t j0 = 0; j0 < cols; j0 += kTile) {
        const std::size_t j1 = std::min(cols, j0 + kTile);
        for (std::size_t i = i0; i < i1; ++i) {
          for (std::size_t j = j0; j < j1; ++j) dst[i * cols + j] = src[j * rows + i];
        }
      }
    }
    return;
  }
  // General rank: walk the file order with an odometer (axis 0 fastest),
  // keeping the row-major offset of the current element up to date.
  const std::size_t nd = shape.size();
  const std::size_t count = product(shape);
  std::vector<std::size_t> c_stride(nd, 1);
  for (std::size_t a = nd - 1; a-- > 0;) c_stride[a] = c_stride[a + 1] * shape[a + 1];
  std::vector<std::size_t> idx(nd, 0);
  std::size_t c = 0;
  for (std::size_t k = 0; k < count; ++k) {
    dst[c] = src[k];
    for (std::size_t a = 0; a < nd; ++a) {
      ++idx[a];
      c += c_stride[a];
      if (idx[a] < shape[a]) break;
      c -= c_stride[a] * shape[a];
      idx[a] = 0;
    }
  }
}

}  // namespace

void decode_float_array(const std::uint8_t* src, FloatKind kind, bool swap,
                        std::span<const std::size_t> shape, bool fortran, NonFinite policy,
                        std::string_view what, float* dst) {
  const std::size_t count = product(shape);
  const std::size_t size = float_kind_size(kind);
  // A column-major array of rank >= 2 is decoded into a scratch buffer, then
  // reordered; rank 0 and 1 are the same in both orders.
  const bool reorder = fortran && shape.size() >= 2 && count > 0;
  std::vector<float> scratch;
  float* out = dst;
  if (reorder) {
    scratch.resize(count);
    out = scratch.data();
  }
  for (std::size_t off = 0; off < count; off += kChunk) {
    const std::size_t n = std::min(kChunk, count - off);
    const std::size_t bad = decode_run(src + off * size, n, kind, swap, out + off);
    if (bad != n) {
      const std::size_t k = off + bad;
      fail_overflow(src, swap, shape, reorder ? fortran_to_c_index(shape, k) : k, k, what);
    }
    // Checked while the chunk is still in cache.
    if (policy == NonFinite::Reject && !reorder) {
      const std::size_t at = find_nonfinite(out + off, n);
      if (at != n) require_finite(std::span<const float>(dst, off + n), shape, what);
    }
  }
  if (reorder) {
    fortran_to_c(scratch.data(), shape, dst);
    if (policy == NonFinite::Reject)
      require_finite(std::span<const float>(dst, count), shape, what);
  }
}

}  // namespace vlbias::io_internal
