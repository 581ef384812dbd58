// Class activation maps over a layer's activations and gradients: see include/vlbias/nn/cam.h.
#include "vlbias/nn/cam.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vlbias {

namespace {

// OpenCV's INTER_LINEAR taps along one axis (resizeGeneric_ in imgproc/src/resize.cpp): for each
// output index, the first source index and the weight of the second (0: the first alone).
void cv2_linear_taps(std::size_t in, std::size_t out, std::vector<std::size_t>& first,
                     std::vector<float>& frac) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  first.resize(out);
  frac.resize(out);
  for (std::size_t d = 0; d < out; ++d) {
    float f = static_cast<float>((static_cast<double>(d) + 0.5) * scale - 0.5);
    const float fl = std::floor(f);
    long s = static_cast<long>(fl);
    f -= fl;
    if (s < 0) {
      s = 0;
      f = 0.0f;
    }
    if (s >= static_cast<long>(in) - 1) {
      s = static_cast<long>(in) - 1;
      f = 0.0f;
    }
    first[d] = static_cast<std::size_t>(s);
    frac[d] = f;
  }
}

// v - min, then / (1e-7 + max) (scale_cam_image's min-max).
void min_max_in_place(float* v, std::size_t n) {
  if (n == 0) return;
  const float lo = *std::min_element(v, v + n);
  for (std::size_t i = 0; i < n; ++i) v[i] -= lo;
  const double hi = *std::max_element(v, v + n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] / (1e-7 + hi));
}

}  // namespace

std::vector<double> grad_cam_weights(const float* grad, std::size_t ld, std::size_t cells,
                                     std::size_t channels) {
  std::vector<double> w(channels, 0.0);
  for (std::size_t i = 0; i < cells; ++i) {
    for (std::size_t c = 0; c < channels; ++c) w[c] += grad[i * ld + c];
  }
  for (double& v : w) v /= static_cast<double>(cells);
  return w;
}

std::vector<double> grad_cam_plusplus_weights(const float* act, const float* grad, std::size_t ld,
                                              std::size_t cells, std::size_t channels) {
  std::vector<double> sum_act(channels, 0.0), w(channels, 0.0);
  for (std::size_t i = 0; i < cells; ++i) {
    for (std::size_t c = 0; c < channels; ++c) sum_act[c] += act[i * ld + c];
  }
  for (std::size_t i = 0; i < cells; ++i) {
    for (std::size_t c = 0; c < channels; ++c) {
      const double g = grad[i * ld + c];
      if (g <= 0.0) continue;  // max(G, 0) alpha is 0 there (and alpha is 0 where G == 0)
      const double g2 = g * g;
      const double alpha = g2 / (2.0 * g2 + sum_act[c] * g2 * g + 1e-6);
      w[c] += g * alpha;
    }
  }
  return w;
}

std::vector<float> weighted_activation_map(const float* act, std::size_t ld, std::size_t cells,
                                           std::size_t channels,
                                           const std::vector<double>& weights) {
  std::vector<float> cam(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    double s = 0.0;
    for (std::size_t c = 0; c < channels; ++c) s += weights[c] * act[i * ld + c];
    cam[i] = static_cast<float>(s);
  }
  return cam;
}

void resize_linear(const float* src, std::size_t width, std::size_t height, float* dst,
                   std::size_t out_width, std::size_t out_height) {
  if (width == out_width && height == out_height) {
    std::memcpy(dst, src, width * height * sizeof(float));
    return;
  }
  std::vector<std::size_t> xs, ys;
  std::vector<float> fx, fy;
  cv2_linear_taps(width, out_width, xs, fx);
  cv2_linear_taps(height, out_height, ys, fy);
  // Horizontal pass over every source row, then the vertical blend of two rows.
  std::vector<float> rows(height * out_width);
  for (std::size_t y = 0; y < height; ++y) {
    const float* s = src + y * width;
    float* r = rows.data() + y * out_width;
    for (std::size_t x = 0; x < out_width; ++x) {
      const std::size_t i = xs[x];
      r[x] = fx[x] == 0.0f ? s[i] : s[i] * (1.0f - fx[x]) + s[i + 1] * fx[x];
    }
  }
  for (std::size_t y = 0; y < out_height; ++y) {
    const float* r0 = rows.data() + ys[y] * out_width;
    const float* r1 = fy[y] == 0.0f ? r0 : r0 + out_width;
    const float b0 = 1.0f - fy[y], b1 = fy[y];
    float* d = dst + y * out_width;
    for (std::size_t x = 0; x < out_width; ++x) d[x] = r0[x] * b0 + r1[x] * b1;
  }
}

void scale_cam(const float* grid, std::size_t grid_width, std::size_t grid_height, float* out,
               std::size_t out_width, std::size_t out_height) {
  std::vector<float> cam(grid, grid + grid_width * grid_height);
  for (float& v : cam) v = std::max(v, 0.0f);  // np.maximum(cam, 0)
  min_max_in_place(cam.data(), cam.size());
  resize_linear(cam.data(), grid_width, grid_height, out, out_width, out_height);
  min_max_in_place(out, out_width * out_height);
}

}  // namespace vlbias
