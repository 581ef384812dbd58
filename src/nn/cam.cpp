// Class activation maps over a layer's activations and gradients: see include/vlbias/nn/cam.h.
#include "vlbias/nn/cam.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "vlbias/core/error.h"

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

// cv2.applyColorMap(np.arange(256, dtype=np.uint8), cv2.COLORMAP_JET) in OpenCV 4.6, as RGB.
constexpr std::array<std::array<std::uint8_t, 3>, 256> kJetRgb = {{
    {0, 0, 128},     {0, 0, 132},     {0, 0, 136},     {0, 0, 140},     {0, 0, 144},
    {0, 0, 148},     {0, 0, 152},     {0, 0, 156},     {0, 0, 160},     {0, 0, 164},
    {0, 0, 168},     {0, 0, 172},     {0, 0, 176},     {0, 0, 180},     {0, 0, 184},
    {0, 0, 188},     {0, 0, 192},     {0, 0, 196},     {0, 0, 200},     {0, 0, 204},
    {0, 0, 208},     {0, 0, 212},     {0, 0, 216},     {0, 0, 220},     {0, 0, 224},
    {0, 0, 228},     {0, 0, 232},     {0, 0, 236},     {0, 0, 240},     {0, 0, 244},
    {0, 0, 248},     {0, 0, 252},     {0, 0, 255},     {0, 4, 255},     {0, 8, 255},
    {0, 12, 255},    {0, 16, 255},    {0, 20, 255},    {0, 24, 255},    {0, 28, 255},
    {0, 32, 255},    {0, 36, 255},    {0, 40, 255},    {0, 44, 255},    {0, 48, 255},
    {0, 52, 255},    {0, 56, 255},    {0, 60, 255},    {0, 64, 255},    {0, 68, 255},
    {0, 72, 255},    {0, 76, 255},    {0, 80, 255},    {0, 84, 255},    {0, 88, 255},
    {0, 92, 255},    {0, 96, 255},    {0, 100, 255},   {0, 104, 255},   {0, 108, 255},
    {0, 112, 255},   {0, 116, 255},   {0, 120, 255},   {0, 124, 255},   {0, 128, 255},
    {0, 132, 255},   {0, 136, 255},   {0, 140, 255},   {0, 144, 255},   {0, 148, 255},
    {0, 152, 255},   {0, 156, 255},   {0, 160, 255},   {0, 164, 255},   {0, 168, 255},
    {0, 172, 255},   {0, 176, 255},   {0, 180, 255},   {0, 184, 255},   {0, 188, 255},
    {0, 192, 255},   {0, 196, 255},   {0, 200, 255},   {0, 204, 255},   {0, 208, 255},
    {0, 212, 255},   {0, 216, 255},   {0, 220, 255},   {0, 224, 255},   {0, 228, 255},
    {0, 232, 255},   {0, 236, 255},   {0, 240, 255},   {0, 244, 255},   {0, 248, 255},
    {0, 252, 255},   {2, 255, 254},   {6, 255, 250},   {10, 255, 246},  {14, 255, 242},
    {18, 255, 238},  {22, 255, 234},  {26, 255, 230},  {30, 255, 226},  {34, 255, 222},
    {38, 255, 218},  {42, 255, 214},  {46, 255, 210},  {50, 255, 206},  {54, 255, 202},
    {58, 255, 198},  {62, 255, 194},  {66, 255, 190},  {70, 255, 186},  {74, 255, 182},
    {78, 255, 178},  {82, 255, 174},  {86, 255, 170},  {90, 255, 166},  {94, 255, 162},
    {98, 255, 158},  {102, 255, 154}, {106, 255, 150}, {110, 255, 146}, {114, 255, 142},
    {118, 255, 138}, {122, 255, 134}, {126, 255, 130}, {130, 255, 126}, {134, 255, 122},
    {138, 255, 118}, {142, 255, 114}, {146, 255, 110}, {150, 255, 106}, {154, 255, 102},
    {158, 255, 98},  {162, 255, 94},  {166, 255, 90},  {170, 255, 86},  {174, 255, 82},
    {178, 255, 78},  {182, 255, 74},  {186, 255, 70},  {190, 255, 66},  {194, 255, 62},
    {198, 255, 58},  {202, 255, 54},  {206, 255, 50},  {210, 255, 46},  {214, 255, 42},
    {218, 255, 38},  {222, 255, 34},  {226, 255, 30},  {230, 255, 26},  {234, 255, 22},
    {238, 255, 18},  {242, 255, 14},  {246, 255, 10},  {250, 255, 6},   {254, 255, 1},
    {255, 252, 0},   {255, 248, 0},   {255, 244, 0},   {255, 240, 0},   {255, 236, 0},
    {255, 232, 0},   {255, 228, 0},   {255, 224, 0},   {255, 220, 0},   {255, 216, 0},
    {255, 212, 0},   {255, 208, 0},   {255, 204, 0},   {255, 200, 0},   {255, 196, 0},
    {255, 192, 0},   {255, 188, 0},   {255, 184, 0},   {255, 180, 0},   {255, 176, 0},
    {255, 172, 0},   {255, 168, 0},   {255, 164, 0},   {255, 160, 0},   {255, 156, 0},
    {255, 152, 0},   {255, 148, 0},   {255, 144, 0},   {255, 140, 0},   {255, 136, 0},
    {255, 132, 0},   {255, 128, 0},   {255, 124, 0},   {255, 120, 0},   {255, 116, 0},
    {255, 112, 0},   {255, 108, 0},   {255, 104, 0},   {255, 100, 0},   {255, 96, 0},
    {255, 92, 0},    {255, 88, 0},    {255, 84, 0},    {255, 80, 0},    {255, 76, 0},
    {255, 72, 0},    {255, 68, 0},    {255, 64, 0},    {255, 60, 0},    {255, 56, 0},
    {255, 52, 0},    {255, 48, 0},    {255, 44, 0},    {255, 40, 0},    {255, 36, 0},
    {255, 32, 0},    {255, 28, 0},    {255, 24, 0},    {255, 20, 0},    {255, 16, 0},
    {255, 12, 0},    {255, 8, 0},     {255, 4, 0},     {255, 0, 0},     {252, 0, 0},
    {248, 0, 0},     {244, 0, 0},     {240, 0, 0},     {236, 0, 0},     {232, 0, 0},
    {228, 0, 0},     {224, 0, 0},     {220, 0, 0},     {216, 0, 0},     {212, 0, 0},
    {208, 0, 0},     {204, 0, 0},     {200, 0, 0},     {196, 0, 0},     {192, 0, 0},
    {188, 0, 0},     {184, 0, 0},     {180, 0, 0},     {176, 0, 0},     {172, 0, 0},
    {168, 0, 0},     {164, 0, 0},     {160, 0, 0},     {156, 0, 0},     {152, 0, 0},
    {148, 0, 0},     {144, 0, 0},     {140, 0, 0},     {136, 0, 0},     {132, 0, 0},
    {128, 0, 0},
}};

}  // namespace

const std::array<std::array<std::uint8_t, 3>, 256>& jet_colormap() {
  return kJetRgb;
}

std::vector<std::uint8_t> overlay_cam(const std::uint8_t* rgb, const float* mask, std::size_t width,
                                      std::size_t height, float image_weight) {
  VLBIAS_CHECK(image_weight >= 0.0f && image_weight <= 1.0f, UsageError,
               "the overlay's image weight must be in [0, 1], not {}", image_weight);
  const std::size_t n = width * height;
  // (1 - image_weight) as numpy casts the Python scalar: computed in double, used as float32.
  const float heat_weight = static_cast<float>(1.0 - static_cast<double>(image_weight));
  std::vector<float> cam(3 * n);
  float top = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    VLBIAS_CHECK(mask[i] >= 0.0f && mask[i] <= 1.0f, InputError,
                 "CAM value {} at row {}, column {} is outside [0, 1]; expected a scaled map",
                 mask[i], i / width, i % width);
    const auto level = static_cast<std::uint8_t>(255.0f * mask[i]);  // np.uint8 truncates
    for (std::size_t ch = 0; ch < 3; ++ch) {
      const float heat = static_cast<float>(kJetRgb[level][ch]) / 255.0f;
      const float img = static_cast<float>(rgb[3 * i + ch]) / 255.0f;
      const float v = heat_weight * heat + image_weight * img;
      cam[3 * i + ch] = v;
      top = std::max(top, v);
    }
  }
  std::vector<std::uint8_t> out(3 * n);
  if (top == 0.0f) return out;  // a black image under no heatmap (image_weight 1)
  for (std::size_t i = 0; i < 3 * n; ++i) {
    out[i] = static_cast<std::uint8_t>(255.0f * (cam[i] / top));
  }
  return out;
}

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
