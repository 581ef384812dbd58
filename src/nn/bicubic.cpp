// Bicubic resampling as torch's F.interpolate(mode="bicubic"): see include/vlbias/nn/bicubic.h.
#include "vlbias/nn/bicubic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

namespace vlbias {

namespace {

// Keys' cubic convolution kernel with A = -0.75 (torch's cubic_convolution1 for |x| <= 1 and
// cubic_convolution2 for 1 < |x| < 2), in float as torch evaluates it for float32.
float cubic_near(float x, float a) {
  return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
}
float cubic_far(float x, float a) {
  return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
}

}  // namespace

std::vector<CubicTaps> bicubic_taps(std::size_t in_size, std::size_t out_size,
                                    std::optional<double> scale) {
  assert(in_size > 0 && out_size > 0);
  // area_pixel_compute_scale: 1 / scale_factor when one is given, else in / out.
  const float ratio = scale && *scale > 0.0
                          ? static_cast<float>(1.0 / *scale)
                          : static_cast<float>(in_size) / static_cast<float>(out_size);
  const auto last = static_cast<std::int64_t>(in_size) - 1;
  std::vector<CubicTaps> taps(out_size);
  for (std::size_t i = 0; i < out_size; ++i) {
    // area_pixel_compute_source_index(cubic): float(ratio * (i + 0.5) - 0.5), the product in
    // double (i + 0.5 is a double there); no clamping at 0 for cubic.
    const float x =
        static_cast<float>(static_cast<double>(ratio) * (static_cast<double>(i) + 0.5) - 0.5);
    const auto x0 = static_cast<std::int64_t>(std::floor(x));
    const float t = x - static_cast<float>(x0);
    // get_cubic_upsample_coefficients: x + 1.0 and 1.0 - x are doubles rounded back to float.
    constexpr float kA = -0.75f;
    const float t2 = static_cast<float>(1.0 - static_cast<double>(t));
    taps[i].weight = {cubic_far(static_cast<float>(static_cast<double>(t) + 1.0), kA),
                      cubic_near(t, kA), cubic_near(t2, kA),
                      cubic_far(static_cast<float>(static_cast<double>(t2) + 1.0), kA)};
    for (std::int64_t k = 0; k < 4; ++k) {
      taps[i].index[static_cast<std::size_t>(k)] =
          static_cast<std::size_t>(std::clamp<std::int64_t>(x0 - 1 + k, 0, last));
    }
  }
  return taps;
}

void bicubic_resize(const float* in, std::size_t in_h, std::size_t in_w, std::size_t channels,
                    std::size_t out_h, std::size_t out_w, std::optional<double> scale_h,
                    std::optional<double> scale_w, float* out) {
  const std::vector<CubicTaps> ty = bicubic_taps(in_h, out_h, scale_h);
  const std::vector<CubicTaps> tx = bicubic_taps(in_w, out_w, scale_w);
  std::vector<float> row(channels);
  for (std::size_t y = 0; y < out_h; ++y) {
    for (std::size_t x = 0; x < out_w; ++x) {
      float* o = out + (y * out_w + x) * channels;
      for (std::size_t i = 0; i < 4; ++i) {
        const float* src = in + ty[y].index[i] * in_w * channels;
        // The inner (x) interpolation of source row y_i, then its weighted add (first term
        // assigned, as torch's Interpolate<n>::eval starts from t * w).
        for (std::size_t c = 0; c < channels; ++c) {
          row[c] = src[tx[x].index[0] * channels + c] * tx[x].weight[0];
        }
        for (std::size_t j = 1; j < 4; ++j) {
          const float* s = src + tx[x].index[j] * channels;
          const float w = tx[x].weight[j];
          for (std::size_t c = 0; c < channels; ++c) row[c] += s[c] * w;
        }
        const float wy = ty[y].weight[i];
        if (i == 0) {
          for (std::size_t c = 0; c < channels; ++c) o[c] = row[c] * wy;
        } else {
          for (std::size_t c = 0; c < channels; ++c) o[c] += row[c] * wy;
        }
      }
    }
  }
}

}  // namespace vlbias
