// The vision-transformer kernels of the shared runtime: the SwiGLU gate and the layer-scaled
// residual (src/nn/kernels.cpp, layers.cpp) against double formulas, and the bicubic resampling of
// position embeddings (src/nn/bicubic.cpp) against torch.nn.functional.interpolate's own float32
// values (tests/fixtures/nn/bicubic.json, written by tools/make_dinov2_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/nn/bicubic.h"
#include "vlbias/nn/kernels.h"
#include "vlbias/nn/layers.h"

namespace vlbias {
namespace {
namespace in_vision_kernels_test {

TEST(NnVisionKernels, SwigluGatesTheSiluOfTheFirstHalfByTheSecond) {
  // 70 rows (more than one row chunk) of 2 x 13 values: x1 then x2, as torch.chunk splits them.
  const std::size_t rows = 70, hidden = 13;
  std::vector<float> y(rows * 2 * hidden), bias(2 * hidden);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(std::sin(0.37 * i) * 9.0);
  for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = 0.1f * static_cast<float>(j) - 1.0f;
  std::vector<float> out(rows * hidden, -7.0f);
  bias_swiglu_rows(y.data(), out.data(), rows, hidden, bias);
  double worst = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < hidden; ++j) {
      const double x1 = double{y[r * 2 * hidden + j]} + bias[j];
      const double x2 = double{y[r * 2 * hidden + hidden + j]} + bias[hidden + j];
      const double want = x1 / (1.0 + std::exp(-x1)) * x2;
      worst = std::max(worst, std::abs(out[r * hidden + j] - want) / std::max(1.0, std::abs(want)));
    }
  }
  EXPECT_LE(worst, 1e-6);
}

TEST(NnVisionKernels, LayerScaleAddsTheScaledBiasedOutputToTheResidual) {
  const std::size_t rows = 3, cols = 4;
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> y = {0.5f, -1, 2, 0, 1, 1, 1, 1, -2, -2, -2, -2};
  const std::vector<float> b = {0.5f, 1, -1, 0.25f}, scale = {2, 0.5f, 1, -4};
  scaled_residual_add_rows(x.data(), y.data(), rows, cols, b, scale);
  // x + scale * (y + b), exact in binary for these values.
  EXPECT_EQ(x, (std::vector<float>{3, 2, 4, 3, 8, 7, 7, 3, 6, 9.5f, 8, 19}));
}

std::optional<double> scale_of(const nlohmann::json& v) {
  if (v.is_null()) return std::nullopt;
  return v.get<double>();
}

TEST(NnVisionKernels, BicubicResizeEqualsTorchInterpolate) {
  const auto path = std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/nn/bicubic.json";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  const nlohmann::json fixture = nlohmann::json::parse(in);
  ASSERT_GE(fixture.at("cases").size(), 5u);
  for (const auto& c : fixture.at("cases")) {
    const std::size_t ih = c.at("in_h"), iw = c.at("in_w"), ch = c.at("channels");
    const std::size_t oh = c.at("out_h"), ow = c.at("out_w");
    SCOPED_TRACE(testing::Message() << ih << "x" << iw << " -> " << oh << "x" << ow);
    const auto input = c.at("input").get<std::vector<float>>();
    const auto want = c.at("output").get<std::vector<float>>();
    const auto want64 = c.at("output_f64").get<std::vector<double>>();
    ASSERT_EQ(want.size(), oh * ow * ch);
    ASSERT_EQ(want64.size(), want.size());
    std::vector<float> got(want.size());
    bicubic_resize(input.data(), ih, iw, ch, oh, ow, scale_of(c.at("scale_h")),
                   scale_of(c.at("scale_w")), got.data());
    double worst = 0.0, worst64 = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::abs(double{got[i]} - want[i]));
      worst64 = std::max(worst64, std::abs(double{got[i]} - want64[i]));
    }
    // Source positions rounded to float (as torch does for float32) move values by a few 1e-6
    // on these grids, torch's own float32 result included; a wrong tap or weight costs ~1e-2.
    EXPECT_LE(worst, 1e-5);
    EXPECT_LE(worst64, 1e-5);
    RecordProperty("max_abs_error_vs_torch_f32_" + std::to_string(ih) + "x" + std::to_string(iw),
                   std::to_string(worst));
  }
}

TEST(NnVisionKernels, BicubicTapsFollowTheScaleFactorNotTheSizes) {
  // 5 -> 7 with scale 7.1 / 5: ratio 5 / 7.1, not 5 / 7, so output 6 reads source 4.077...
  const std::vector<CubicTaps> by_scale = bicubic_taps(5, 7, 7.1 / 5.0);
  const std::vector<CubicTaps> by_size = bicubic_taps(5, 7, std::nullopt);
  const double x_scale = 5.0 / 7.1 * 6.5 - 0.5, x_size = 5.0 / 7.0 * 6.5 - 0.5;
  const double t_scale = x_scale - std::floor(x_scale), t_size = x_size - std::floor(x_size);
  // Weight 1 is the near-side kernel 1.25 t^3 - 2.25 t^2 + 1 (A = -0.75).
  auto near = [](double t) { return (1.25 * t - 2.25) * t * t + 1.0; };
  EXPECT_NEAR(by_scale[6].weight[1], near(t_scale), 1e-6);
  EXPECT_NEAR(by_size[6].weight[1], near(t_size), 1e-6);
  // Taps past the border are clamped to the last sample.
  EXPECT_EQ(by_scale[6].index[3], 4u);
  EXPECT_EQ(by_scale[0].index[0], 0u);
  for (const CubicTaps& t : by_scale) {
    EXPECT_NEAR(t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3], 1.0, 1e-6);
  }
}

}  // namespace in_vision_kernels_test
}  // namespace
}  // namespace vlbias
