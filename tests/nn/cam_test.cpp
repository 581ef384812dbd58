// The model-independent CAM pieces (src/nn/cam.cpp): OpenCV's INTER_LINEAR resize and
// pytorch-grad-cam's whole map pipeline (ReLU, min-max, cv2.resize, min-max) against cv2 and the
// library's own code run by tools/make_clip_cam_fixtures.py (tests/fixtures/encode/cam/cases.json,
// "resize"); the channel weights against their formulas; the jet overlay against
// show_cam_on_image ("overlay").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/core/error.h"
#include "vlbias/nn/cam.h"

namespace vlbias {
namespace {
namespace in_cam_test {

nlohmann::json cam_fixture(const char* key) {
  std::ifstream in(std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "encode" /
                   "cam" / "cases.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in).at(key);
}

// Every `stride`-th row and column of a w x h plane.
std::vector<float> strided(const std::vector<float>& plane, std::size_t w, std::size_t h,
                           std::size_t stride) {
  std::vector<float> out;
  for (std::size_t y = 0; y < h; y += stride) {
    for (std::size_t x = 0; x < w; x += stride) out.push_back(plane[y * w + x]);
  }
  return out;
}

TEST(NnCam, ResizeAndScalingMatchOpenCvAndPytorchGradCam) {
  const nlohmann::json cases = cam_fixture("resize");
  ASSERT_GE(cases.size(), 7u);
  for (const auto& c : cases) {
    const std::size_t gw = c.at("grid_width"), gh = c.at("grid_height");
    const std::size_t ow = c.at("out_width"), oh = c.at("out_height"), stride = c.at("stride");
    SCOPED_TRACE(testing::Message() << gw << "x" << gh << " -> " << ow << "x" << oh);
    const std::vector<float> grid = c.at("grid").get<std::vector<float>>();
    std::vector<float> resized(ow * oh), scaled(ow * oh);
    resize_linear(grid.data(), gw, gh, resized.data(), ow, oh);
    scale_cam(grid.data(), gw, gh, scaled.data(), ow, oh);
    const std::vector<float> want_resized = c.at("resized").get<std::vector<float>>();
    const std::vector<float> want_scaled = c.at("scaled").get<std::vector<float>>();
    const std::vector<float> got_resized = strided(resized, ow, oh, stride);
    const std::vector<float> got_scaled = strided(scaled, ow, oh, stride);
    ASSERT_EQ(got_resized.size(), want_resized.size());
    ASSERT_EQ(got_scaled.size(), want_scaled.size());
    for (std::size_t i = 0; i < got_resized.size(); ++i) {
      EXPECT_NEAR(got_resized[i], want_resized[i], 1e-6) << i;
      EXPECT_NEAR(got_scaled[i], want_scaled[i], 1e-6) << i;
    }
    // Scaled maps lie in [0, 1].
    const auto [lo, hi] = std::minmax_element(scaled.begin(), scaled.end());
    EXPECT_GE(*lo, 0.0f);
    EXPECT_LE(*hi, 1.0f);
  }
}

TEST(NnCam, ChannelWeightsFollowGradCamAndGradCamPlusPlus) {
  // 3 cells x 2 channels, stride 3 (a padding column that must be ignored).
  const std::vector<float> act = {1.0f, -2.0f, 99.0f, 0.5f, 1.0f, 99.0f, 2.0f, 0.0f, 99.0f};
  const std::vector<float> grad = {0.2f, -0.1f, 99.0f, 0.0f, 0.3f, 99.0f, 0.4f, 0.05f, 99.0f};
  const std::vector<double> w = grad_cam_weights(grad.data(), 3, 3, 2);
  EXPECT_NEAR(w[0], (0.2 + 0.0 + 0.4) / 3, 1e-7);
  EXPECT_NEAR(w[1], (-0.1 + 0.3 + 0.05) / 3, 1e-7);
  // GradCAM++: S = (3.5, -1); alpha = g^2 / (2 g^2 + S g^3 + 1e-6); w = sum max(g, 0) alpha.
  const auto term = [](double g, double s) {
    return g > 0 ? g * g * g / (2 * g * g + s * g * g * g + 1e-6) : 0.0;
  };
  const std::vector<double> wpp = grad_cam_plusplus_weights(act.data(), grad.data(), 3, 3, 2);
  const double g00 = grad[0], g20 = grad[6], g11 = grad[4], g21 = grad[7];
  EXPECT_NEAR(wpp[0], term(g00, 3.5) + term(g20, 3.5), 1e-7);
  EXPECT_NEAR(wpp[1], term(g11, -1.0) + term(g21, -1.0), 1e-7);
  const std::vector<float> cam = weighted_activation_map(act.data(), 3, 3, 2, w);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(cam[i], w[0] * act[i * 3] + w[1] * act[i * 3 + 1], 1e-6);
  }
}

TEST(NnCam, OverlayIsShowCamOnImageByteForByte) {
  const nlohmann::json c = cam_fixture("overlay");
  const std::vector<int> jet = c.at("jet_rgb").get<std::vector<int>>();
  ASSERT_EQ(jet.size(), 768u);
  for (std::size_t i = 0; i < 256; ++i) {
    for (std::size_t ch = 0; ch < 3; ++ch) {
      EXPECT_EQ(jet_colormap()[i][ch], jet[3 * i + ch]) << "level " << i;
    }
  }
  const std::size_t w = c.at("width"), h = c.at("height");
  const std::vector<std::uint8_t> rgb = c.at("image").get<std::vector<std::uint8_t>>();
  const std::vector<float> mask = c.at("mask").get<std::vector<float>>();
  const std::vector<std::uint8_t> want = c.at("overlay").get<std::vector<std::uint8_t>>();
  EXPECT_EQ(overlay_cam(rgb.data(), mask.data(), w, h), want);
  // Out-of-range weights and masks are refused.
  EXPECT_THROW(overlay_cam(rgb.data(), mask.data(), w, h, 1.5f), UsageError);
  std::vector<float> bad = mask;
  bad[3] = 1.25f;
  EXPECT_THROW(overlay_cam(rgb.data(), bad.data(), w, h), InputError);
  bad[3] = NAN;
  EXPECT_THROW(overlay_cam(rgb.data(), bad.data(), w, h), InputError);
}

}  // namespace in_cam_test
}  // namespace
}  // namespace vlbias
