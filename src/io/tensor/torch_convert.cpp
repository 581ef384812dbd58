// A checkpoint's tensors written as safetensors (torch_checkpoint.h), with optional float
// conversion, and open_weights_file.
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias {

namespace {

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

void store_le(std::uint64_t v, std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// IEEE half bits to double (exact).
double half_to_double(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1f) return mantissa != 0 ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Double to IEEE half, rounded to nearest even (as torch's .half() rounds a float32).
std::uint16_t double_to_half(double d) {
  const std::uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) return sign | 0x7e00;
  if (std::isinf(d)) return sign | 0x7c00;
  const double a = std::fabs(d);
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: units of 2^-24, rounded to even (1024 units is the smallest normal).
    return sign | static_cast<std::uint16_t>(std::nearbyint(a * std::ldexp(1.0, 24)));
  }
  int e = 0;
  (void)std::frexp(a, &e);  // a = f x 2^e, f in [0.5, 1): the unbiased exponent is e - 1
  --e;
  auto m = static_cast<std::uint32_t>(std::nearbyint((std::ldexp(a, -e) - 1.0) * 1024.0));
  if (m == 1024) {
    m = 0;
    ++e;
  }
  if (e > 15) return sign | 0x7c00;  // beyond 65504 rounds to infinity
  return sign | static_cast<std::uint16_t>(((e + 15) << 10) | m);
}

double load_float(SafetensorsDtype dtype, const std::uint8_t* p) {
  switch (dtype) {
    case SafetensorsDtype::F16:
      return half_to_double(static_cast<std::uint16_t>(load_le(p, 2)));
    case SafetensorsDtype::BF16:
      return std::bit_cast<float>(static_cast<std::uint32_t>(load_le(p, 2) << 16));
    case SafetensorsDtype::F32:
      return std::bit_cast<float>(static_cast<std::uint32_t>(load_le(p, 4)));
    default:
      return std::bit_cast<double>(load_le(p, 8));
  }
}

// Converts `count` float elements from `from` to `to` (F32 or F16).
void convert_floats(SafetensorsDtype from, std::span<const std::uint8_t> src, SafetensorsDtype to,
                    std::span<std::uint8_t> dst, std::size_t count) {
  const std::size_t in = dtype_size(from);
  const std::size_t out = dtype_size(to);
  for (std::size_t i = 0; i < count; ++i) {
    const double v = load_float(from, src.data() + i * in);
    if (to == SafetensorsDtype::F32) {
      store_le(std::bit_cast<std::uint32_t>(static_cast<float>(v)), dst.data() + i * out, 4);
    } else {
      // Through float32, as torch's Tensor.half() converts a float64 tensor.
      store_le(double_to_half(static_cast<float>(v)), dst.data() + i * out, 2);
    }
  }
}

std::vector<SafetensorsEntry> entries_of(const TorchCheckpoint& c, WeightsDtype target) {
  std::vector<SafetensorsEntry> entries;
  for (const TorchTensorInfo& t : c.tensors()) {
    entries.push_back({t.name, converted_dtype(t.dtype, target), t.shape});
  }
  return entries;
}

// Tensor `i` in its target dtype into `dst`; `scratch` holds the stored bytes when converting.
void fill_tensor(const TorchCheckpoint& c, std::size_t i, SafetensorsDtype to,
                 std::vector<std::uint8_t>& scratch, std::span<std::uint8_t> dst) {
  const TorchTensorInfo& t = c.tensors()[i];
  if (to == t.dtype) {
    c.copy_tensor(i, dst);
    return;
  }
  scratch.resize(t.count * dtype_size(t.dtype));
  c.copy_tensor(i, scratch);
  convert_floats(t.dtype, scratch, to, dst, t.count);
}

const std::map<std::string, std::string> kMetadata = {{"format", "pt"}};

}  // namespace

SafetensorsDtype converted_dtype(SafetensorsDtype dtype, WeightsDtype target) {
  if (!dtype_is_float(dtype) || target == WeightsDtype::Keep) return dtype;
  return target == WeightsDtype::F32 ? SafetensorsDtype::F32 : SafetensorsDtype::F16;
}

void write_torch_as_safetensors(const TorchCheckpoint& c, const std::filesystem::path& path,
                                WeightsDtype target) {
  const auto entries = entries_of(c, target);
  const std::string header = safetensors_header(path.string(), entries, kMetadata);
  AtomicWriter out(path);
  out.write(header.data(), header.size());
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> scratch;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    bytes.resize(c.tensors()[i].count * dtype_size(entries[i].dtype));
    fill_tensor(c, i, entries[i].dtype, scratch, bytes);
    out.write(bytes.data(), bytes.size());
  }
  out.commit();
}

std::vector<std::uint8_t> torch_as_safetensors(const TorchCheckpoint& c, WeightsDtype target) {
  const auto entries = entries_of(c, target);
  const std::string header = safetensors_header(c.source(), entries, kMetadata);
  std::size_t total = header.size();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    total += c.tensors()[i].count * dtype_size(entries[i].dtype);
  }
  std::vector<std::uint8_t> image(total);
  std::memcpy(image.data(), header.data(), header.size());
  std::size_t at = header.size();
  std::vector<std::uint8_t> scratch;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t n = c.tensors()[i].count * dtype_size(entries[i].dtype);
    fill_tensor(c, i, entries[i].dtype, scratch, std::span(image).subspan(at, n));
    at += n;
  }
  return image;
}

std::filesystem::path model_weights_file(const std::filesystem::path& dir,
                                         const std::string& safetensors_name,
                                         const std::string& torch_name) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / safetensors_name, ec)) return dir / safetensors_name;
  if (std::filesystem::is_regular_file(dir / torch_name, ec)) return dir / torch_name;
  return {};
}

SafetensorsFile open_weights_file(const std::filesystem::path& path) {
  if (path.extension() == ".safetensors") return SafetensorsFile::open(path);
  const TorchCheckpoint c = TorchCheckpoint::open(path);
  return SafetensorsFile::from_owned(torch_as_safetensors(c, WeightsDtype::Keep), path.string());
}

}  // namespace vlbias
