// Bicubic and bilinear resizes bit-exact with Pillow 9.4 (src/libImaging/Resample.c,
// ImagingResample with the BICUBIC or BILINEAR filter and box (0, 0, width, height)), plus the
// shortest-edge size rule and the two center-crop conventions (HF image_transforms.center_crop,
// torchvision F.center_crop).
//
// The floating-point steps are written in Pillow's order and types (double coefficients from
// float box edges, int truncation, 22-bit fixed point) so that every coefficient, and hence every
// output byte, is identical. Build without -ffast-math and without FMA contraction (the default
// on x86-64).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"

namespace vlbias {
namespace {

// Resample.c: 8 bits for the result, 2 for overflow and sign, the rest for the fraction.
constexpr int kPrecisionBits = 32 - 8 - 2;

// Resample.c bicubic_filter, a = -0.5 (Keys' cubic convolution), same expression order.
double bicubic_filter(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// Resample.c bilinear_filter (the triangle).
double pil_bilinear_filter(double x) {
  if (x < 0.0) x = -x;
  if (x < 1.0) return 1.0 - x;
  return 0.0;
}

// Resample.c's struct filter: the kernel and its support at scale 1 (BICUBIC 2, BILINEAR 1).
struct PilFilter {
  double (*kernel)(double);
  double support;
};
constexpr PilFilter kPilBicubic{bicubic_filter, 2.0};
constexpr PilFilter kPilBilinear{pil_bilinear_filter, 1.0};

// Filter taps for one axis: output i reads input[first[i] .. first[i] + count[i]) with the
// weights coeffs[i * ksize ..] (normalised doubles, or 22-bit fixed point for 8-bit images).
template <typename Coeff>
struct AxisTaps {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<Coeff> coeffs;
};

// Resample.c precompute_coeffs for box [in0, in1) of an axis of in_size pixels mapped onto
// out_size pixels: each output's weights divided by their sum (what 32-bit float images use).
AxisTaps<double> precompute_taps(int in_size, float in0, float in1, int out_size,
                                 const PilFilter& filter = kPilBicubic) {
  double scale = static_cast<double>(in1 - in0) / out_size;
  double filterscale = scale;
  if (filterscale < 1.0) filterscale = 1.0;
  const double support = filter.support * filterscale;
  AxisTaps<double> taps;
  taps.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  const auto ksize = static_cast<std::size_t>(taps.ksize);
  taps.first.resize(static_cast<std::size_t>(out_size));
  taps.count.resize(static_cast<std::size_t>(out_size));
  taps.coeffs.assign(static_cast<std::size_t>(out_size) * ksize, 0.0);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    double ww = 0.0;
    // "Round the value": truncation toward zero of center -/+ support + 0.5, then clamped.
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double* k = &taps.coeffs[static_cast<std::size_t>(xx) * ksize];
    for (int x = 0; x < xmax; ++x) {
      const double w = filter.kernel((x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[x] /= ww;
    }
    taps.first[static_cast<std::size_t>(xx)] = xmin;
    taps.count[static_cast<std::size_t>(xx)] = std::max(xmax, 0);
  }
  return taps;
}

// normalize_coeffs_8bpc: round half away from zero into 22-bit fixed point.
AxisTaps<std::int32_t> fixed_point(const AxisTaps<double>& taps) {
  AxisTaps<std::int32_t> out{taps.ksize, taps.first, taps.count, {}};
  out.coeffs.reserve(taps.coeffs.size());
  for (const double v : taps.coeffs) {
    out.coeffs.push_back(v < 0 ? static_cast<std::int32_t>(-0.5 + v * (1 << kPrecisionBits))
                               : static_cast<std::int32_t>(0.5 + v * (1 << kPrecisionBits)));
  }
  return out;
}

// Resample.c clip8: the accumulator (with its 1 << 21 rounding bias) shifted down and clamped
// to 0..255 (Pillow's lookup table is exactly this clamp over its range).
template <typename Acc>
inline std::uint8_t clip8(Acc acc) {
  return static_cast<std::uint8_t>(std::clamp<Acc>(acc >> kPrecisionBits, 0, 255));
}

constexpr std::int32_t kRoundingBias = std::int32_t{1} << (kPrecisionBits - 1);

// Pillow accumulates in int. Integer sums are exact in any order, so the results equal
// Pillow's whenever no partial sum can overflow: |partial| <= bias + 255 * sum |k| for every
// output. That holds for bicubic taps in practice; the int64 path covers anything else.
bool fits_int32(const AxisTaps<std::int32_t>& taps) {
  const auto ksize = static_cast<std::size_t>(taps.ksize);
  for (std::size_t i = 0; i < taps.first.size(); ++i) {
    std::int64_t total = 0;
    for (int j = 0; j < taps.count[i]; ++j) {
      total += std::abs(std::int64_t{taps.coeffs[i * ksize + static_cast<std::size_t>(j)]});
    }
    if (kRoundingBias + 255 * total > std::numeric_limits<std::int32_t>::max()) return false;
  }
  return true;
}

// ImagingResampleHorizontal_8bpc for 3 bands: rows [row0, row0 + rows) of `in`.
template <typename Acc>
RgbImage resample_horizontal(const RgbImage& in, std::size_t row0, std::size_t rows,
                             const AxisTaps<std::int32_t>& taps, std::size_t out_width) {
  RgbImage out;
  out.width = out_width;
  out.height = rows;
  out.pixels.resize(out_width * rows * 3);
  const auto ksize = static_cast<std::size_t>(taps.ksize);
  for (std::size_t yy = 0; yy < rows; ++yy) {
    const std::uint8_t* src = &in.pixels[(row0 + yy) * in.width * 3];
    std::uint8_t* dst = &out.pixels[yy * out_width * 3];
    for (std::size_t xx = 0; xx < out_width; ++xx) {
      const std::int32_t* k = &taps.coeffs[xx * ksize];
      const std::uint8_t* p = src + static_cast<std::size_t>(taps.first[xx]) * 3;
      Acc s0 = kRoundingBias, s1 = kRoundingBias, s2 = kRoundingBias;
      for (int x = 0; x < taps.count[xx]; ++x, p += 3) {
        s0 += Acc{p[0]} * k[x];
        s1 += Acc{p[1]} * k[x];
        s2 += Acc{p[2]} * k[x];
      }
      dst[3 * xx] = clip8(s0);
      dst[3 * xx + 1] = clip8(s1);
      dst[3 * xx + 2] = clip8(s2);
    }
  }
  return out;
}

// ImagingResampleVertical_8bpc for 3 bands; taps.first is relative to `in`'s first row.
// Accumulates whole rows at a time: the same integer sums in a cache- and vector-friendly order.
template <typename Acc>
RgbImage resample_vertical(const RgbImage& in, const AxisTaps<std::int32_t>& taps,
                           std::size_t out_height) {
  RgbImage out;
  out.width = in.width;
  out.height = out_height;
  out.pixels.resize(in.width * out_height * 3);
  const auto ksize = static_cast<std::size_t>(taps.ksize);
  const std::size_t stride = in.width * 3;
  std::vector<Acc> acc(stride);
  for (std::size_t yy = 0; yy < out_height; ++yy) {
    const std::int32_t* k = &taps.coeffs[yy * ksize];
    const std::uint8_t* src = &in.pixels[static_cast<std::size_t>(taps.first[yy]) * stride];
    std::fill(acc.begin(), acc.end(), Acc{kRoundingBias});
    for (int y = 0; y < taps.count[yy]; ++y) {
      const std::uint8_t* row = src + static_cast<std::size_t>(y) * stride;
      const Acc ky = k[y];
      for (std::size_t i = 0; i < stride; ++i) acc[i] += Acc{row[i]} * ky;
    }
    std::uint8_t* dst = &out.pixels[yy * stride];
    for (std::size_t i = 0; i < stride; ++i) dst[i] = clip8(acc[i]);
  }
  return out;
}

// Python's round() of d / 2.0 for an integer d >= 0: round half to even.
std::size_t half_round_even(std::size_t d) {
  const std::size_t q = d / 2;
  if (d % 2 == 0) return q;
  return q % 2 == 0 ? q : q + 1;
}

// Image.resize((width, height), filter) of an RGB image (ImagingResample's 8-bit path).
RgbImage resize_pil_8bit(const RgbImage& image, std::size_t width, std::size_t height,
                         const PilFilter& filter) {
  VLBIAS_CHECK(
      image.width > 0 && image.height > 0 && image.pixels.size() == image.width * image.height * 3,
      InputError, "cannot resize an image of {} x {} pixels with {} bytes", image.width,
      image.height, image.pixels.size());
  constexpr std::size_t kMaxSide = std::numeric_limits<int>::max();
  VLBIAS_CHECK(width > 0 && height > 0 && width <= kMaxSide && height <= kMaxSide &&
                   width * height <= kMaxImagePixels,
               UsageError, "cannot resize to {} x {} pixels; expected 1 to {} pixels in all", width,
               height, kMaxImagePixels);
  VLBIAS_CHECK(image.width <= kMaxSide && image.height <= kMaxSide, InputError,
               "cannot resize an image of {} x {} pixels (sides up to {})", image.width,
               image.height, kMaxSide);
  // _imaging.c _resize: the same size (with the full box) is a plain copy.
  if (width == image.width && height == image.height) return image;

  const int in_w = static_cast<int>(image.width), in_h = static_cast<int>(image.height);
  const int out_w = static_cast<int>(width), out_h = static_cast<int>(height);
  // Image.resize passes box = (0, 0) + size as C floats.
  const bool need_horizontal = out_w != in_w;
  const bool need_vertical = out_h != in_h;
  AxisTaps<std::int32_t> vert =
      fixed_point(precompute_taps(in_h, 0.0f, static_cast<float>(in_h), out_h, filter));
  // ImagingResampleInner: the horizontal pass only produces the source rows the vertical
  // pass reads, and the vertical taps are shifted to that band.
  const int ybox_first = vert.first.front();
  const int ybox_last = vert.first.back() + vert.count.back();

  RgbImage horizontal;
  const RgbImage* source = &image;
  if (need_horizontal) {
    const AxisTaps<std::int32_t> horiz =
        fixed_point(precompute_taps(in_w, 0.0f, static_cast<float>(in_w), out_w, filter));
    for (int& f : vert.first) f -= ybox_first;
    const auto row0 = static_cast<std::size_t>(ybox_first);
    const auto rows = static_cast<std::size_t>(ybox_last - ybox_first);
    horizontal = fits_int32(horiz)
                     ? resample_horizontal<std::int32_t>(image, row0, rows, horiz, width)
                     : resample_horizontal<std::int64_t>(image, row0, rows, horiz, width);
    source = &horizontal;
  }
  if (need_vertical) {
    return fits_int32(vert) ? resample_vertical<std::int32_t>(*source, vert, height)
                            : resample_vertical<std::int64_t>(*source, vert, height);
  }
  return horizontal;
}

}  // namespace

RgbImage resize_bicubic(const RgbImage& image, std::size_t width, std::size_t height) {
  return resize_pil_8bit(image, width, height, kPilBicubic);
}

RgbImage resize_bilinear_pil(const RgbImage& image, std::size_t width, std::size_t height) {
  return resize_pil_8bit(image, width, height, kPilBilinear);
}

std::vector<float> resize_bicubic_float(const float* plane, std::size_t width, std::size_t height,
                                        std::size_t out_width, std::size_t out_height) {
  constexpr std::size_t kMaxSide = std::numeric_limits<int>::max();
  VLBIAS_CHECK(width > 0 && height > 0 && width <= kMaxSide && height <= kMaxSide, InputError,
               "cannot resize an image of {} x {} pixels", width, height);
  VLBIAS_CHECK(out_width > 0 && out_height > 0 && out_width * out_height <= kMaxImagePixels,
               UsageError, "cannot resize to {} x {} pixels", out_width, out_height);
  std::vector<float> current(plane, plane + width * height);
  if (out_width == width && out_height == height) return current;
  const int in_w = static_cast<int>(width), in_h = static_cast<int>(height);
  AxisTaps<double> vert =
      precompute_taps(in_h, 0.0f, static_cast<float>(in_h), static_cast<int>(out_height));
  const auto ksize_v = static_cast<std::size_t>(vert.ksize);
  if (out_width != width) {
    // ImagingResampleHorizontal_32bpc over the band of rows the vertical pass reads: each output
    // a double sum of float pixels times double weights, stored as float.
    const AxisTaps<double> horiz =
        precompute_taps(in_w, 0.0f, static_cast<float>(in_w), static_cast<int>(out_width));
    const auto ksize = static_cast<std::size_t>(horiz.ksize);
    const int row0 = vert.first.front();
    const auto rows = static_cast<std::size_t>(vert.first.back() + vert.count.back() - row0);
    for (int& f : vert.first) f -= row0;
    std::vector<float> out(out_width * rows);
    for (std::size_t y = 0; y < rows; ++y) {
      const float* src = plane + (y + static_cast<std::size_t>(row0)) * width;
      for (std::size_t x = 0; x < out_width; ++x) {
        const double* k = &horiz.coeffs[x * ksize];
        const float* p = src + horiz.first[x];
        double ss = 0.0;
        for (int i = 0; i < horiz.count[x]; ++i) ss += p[i] * k[i];
        out[y * out_width + x] = static_cast<float>(ss);
      }
    }
    current = std::move(out);
  }
  if (out_height == height) return current;
  // ImagingResampleVertical_32bpc.
  std::vector<float> out(out_width * out_height);
  for (std::size_t y = 0; y < out_height; ++y) {
    const double* k = &vert.coeffs[y * ksize_v];
    const float* src = current.data() + static_cast<std::size_t>(vert.first[y]) * out_width;
    for (std::size_t x = 0; x < out_width; ++x) {
      double ss = 0.0;
      for (int i = 0; i < vert.count[y]; ++i)
        ss += src[static_cast<std::size_t>(i) * out_width + x] * k[i];
      out[y * out_width + x] = static_cast<float>(ss);
    }
  }
  return out;
}

std::pair<std::size_t, std::size_t> shortest_edge_size(std::size_t width, std::size_t height,
                                                       std::size_t shortest_edge) {
  VLBIAS_CHECK(width > 0 && height > 0, InputError, "cannot resize an image of {} x {} pixels",
               width, height);
  VLBIAS_CHECK(shortest_edge > 0, UsageError, "the shortest edge must be at least 1 pixel");
  const bool portrait = width <= height;
  const std::size_t short_side = portrait ? width : height;
  const std::size_t long_side = portrait ? height : width;
  // int(requested_new_short * long / short): Python's true division (correctly rounded), then
  // truncation. Exact in double for the sizes we allow.
  const double scaled = static_cast<double>(shortest_edge) * static_cast<double>(long_side) /
                        static_cast<double>(short_side);
  const auto new_long = static_cast<std::size_t>(scaled);
  return portrait ? std::pair{shortest_edge, new_long} : std::pair{new_long, shortest_edge};
}

RgbImage center_crop(const RgbImage& image, std::size_t width, std::size_t height,
                     CropRounding rounding) {
  VLBIAS_CHECK(image.pixels.size() == image.width * image.height * 3, InputError,
               "cannot crop an image of {} x {} pixels with {} bytes", image.width, image.height,
               image.pixels.size());
  VLBIAS_CHECK(width > 0 && height > 0 && width * height <= kMaxImagePixels, UsageError,
               "cannot crop to {} x {} pixels", width, height);
  // Per axis: where the image is larger, the source offset; where smaller, the offset of the
  // image inside the zero-padded crop. HF: floor((H - h) / 2) and ceil((h - H) / 2);
  // torchvision: round-half-even((H - h) / 2.0) and floor((h - H) / 2).
  auto place = [rounding](std::size_t have, std::size_t want) {
    std::size_t src = 0, dst = 0;
    if (have >= want) {
      src = rounding == CropRounding::Floor ? (have - want) / 2 : half_round_even(have - want);
    } else {
      dst = rounding == CropRounding::Floor ? (want - have + 1) / 2 : (want - have) / 2;
    }
    return std::pair{src, dst};
  };
  const auto [src_x, dst_x] = place(image.width, width);
  const auto [src_y, dst_y] = place(image.height, height);
  const std::size_t copy_w = std::min(image.width, width);
  const std::size_t copy_h = std::min(image.height, height);
  RgbImage out;
  out.width = width;
  out.height = height;
  out.pixels.assign(width * height * 3, 0);
  for (std::size_t y = 0; y < copy_h; ++y) {
    std::memcpy(&out.pixels[((dst_y + y) * width + dst_x) * 3],
                &image.pixels[((src_y + y) * image.width + src_x) * 3], copy_w * 3);
  }
  return out;
}

}  // namespace vlbias
