// Dinov2Encoder against an independent float64 PyTorch forward of tiny RANDOM DINOv2 models in the
// Hugging Face layout (tests/fixtures/encode/dinov2/, tools/make_dinov2_fixtures.py): real image
// files decoded and preprocessed as BitImageProcessor does, position embeddings upsampled,
// downsampled and used as trained, the plain GELU MLP and the SwiGLU MLP (BF16 weights).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "encode/clip_model_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/encode/models/image_model.h"

namespace vlbias {
namespace {
namespace in_dinov2_model_test {

using namespace clip_test;

fs::path dinov2_dir() {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "encode" / "dinov2";
}

TEST(Dinov2Model, FeaturesEqualTheFloat64ReferenceWithin1e4Relative) {
  const nlohmann::json expected = read_json(dinov2_dir() / "expected.json");
  std::vector<RgbImage> images;
  for (const auto& p : expected.at("images")) {
    images.push_back(decode_image_file(fs::path(VLBIAS_SOURCE_DIR) / p.get<std::string>()));
  }
  ASSERT_EQ(expected.at("runs").size(), 8u);
  for (const auto& run : expected.at("runs")) {
    Dinov2EncoderOptions options;
    if (!run.at("image_size").is_null()) options.image_size = run.at("image_size").get<int>();
    options.positions = parse_dinov2_positions(run.at("positions"));
    options.resize = parse_dinov2_resize(run.at("preprocess"));
    const std::string model = run.at("model");
    SCOPED_TRACE(model + " image size " + run.at("image_size").dump() + " positions " +
                 run.at("positions").get<std::string>() + " preprocess " +
                 run.at("preprocess").get<std::string>());
    const Dinov2Encoder enc = Dinov2Encoder::open(dinov2_dir() / model, options);
    const std::size_t grid = run.at("grid");
    EXPECT_EQ(enc.preprocess().crop_width / enc.model().config().patch_size, grid);
    // All images in one call (packed into one token matrix).
    const std::size_t per = enc.pixels_per_image();
    std::vector<float> px(images.size() * per);
    for (std::size_t i = 0; i < images.size(); ++i) enc.pixels(images[i], px.data() + i * per);
    const Matrix got = enc.encode_pixels(px.data(), images.size());
    const auto want = run.at("features").get<std::vector<std::vector<double>>>();
    ASSERT_EQ(got.rows, want.size());
    ASSERT_EQ(got.cols, enc.dim());
    double max_abs = 0.0, max_rel = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(want[i].size(), got.cols);
      double scale = 0.0;
      for (double v : want[i]) scale = std::max(scale, std::abs(v));
      for (std::size_t j = 0; j < got.cols; ++j) {
        const double err = std::abs(double{got.row(i)[j]} - want[i][j]);
        max_abs = std::max(max_abs, err);
        max_rel = std::max(max_rel, err / scale);
      }
    }
    // Relative to each feature vector's largest component.
    EXPECT_LE(max_rel, 1e-4);
    std::cout << "[ dinov2 ] " << model << " grid " << grid << " positions "
              << run.at("positions").get<std::string>() << ": max abs error " << max_abs
              << ", max relative " << max_rel << "\n";
  }
}

// The two position interpolations give different features (so which one runs matters, and the
// parity above tells them apart).
TEST(Dinov2Model, ScaleFactorAndSizeInterpolationsDiffer) {
  const nlohmann::json expected = read_json(dinov2_dir() / "expected.json");
  std::vector<std::vector<double>> by_scale, by_size;
  for (const auto& run : expected.at("runs")) {
    if (run.at("model") != "gelu_p4" || !run.at("image_size").is_null()) continue;
    (run.at("positions") == "size" ? by_size : by_scale) =
        run.at("features").get<std::vector<std::vector<double>>>();
  }
  ASSERT_FALSE(by_scale.empty());
  ASSERT_EQ(by_scale.size(), by_size.size());
  double diff = 0.0;
  for (std::size_t i = 0; i < by_scale.size(); ++i) {
    for (std::size_t j = 0; j < by_scale[i].size(); ++j) {
      diff = std::max(diff, std::abs(by_scale[i][j] - by_size[i][j]));
    }
  }
  EXPECT_GT(diff, 1e-2);
  EXPECT_EQ(parse_dinov2_positions("size"), Dinov2Positions::Size);
  EXPECT_STREQ(to_string(Dinov2Positions::ScaleFactor), "scale-factor");
  EXPECT_THROW(parse_dinov2_positions("bilinear"), UsageError);
}

TEST(Dinov2Model, PreprocessingNamesRoundTripAndOtherKindsNamesAreRefused) {
  for (const char* name : {"processor", "dgm-eval", "dgm-eval-clean"}) {
    EXPECT_STREQ(to_string(parse_dinov2_resize(name)), name);
  }
  EXPECT_THROW(parse_dinov2_resize("squash"), UsageError);
  ImageModelOptions o;
  set_image_preprocess(o, ImageModelKind::Dinov2, "dgm-eval");
  EXPECT_EQ(o.dinov2_resize, Dinov2Resize::DgmEval);
  set_image_preprocess(o, ImageModelKind::Inception, "clean-fid");
  EXPECT_EQ(o.fid, FidPreprocess::CleanFid);
  set_image_preprocess(o, ImageModelKind::Dinov2, "");  // the default stays
  EXPECT_EQ(o.dinov2_resize, Dinov2Resize::DgmEval);
  EXPECT_THROW(set_image_preprocess(o, ImageModelKind::Dinov2, "clean-fid"), UsageError);
  EXPECT_THROW(set_image_preprocess(o, ImageModelKind::Inception, "dgm-eval"), UsageError);
  EXPECT_THROW(set_image_preprocess(o, ImageModelKind::Clip, "dgm-eval"), UsageError);
}

TEST(Dinov2Model, OneImageAtATimeGivesTheBatchFeatures) {
  const Dinov2Encoder enc = Dinov2Encoder::open(dinov2_dir() / "swiglu_p3");
  const RgbImage a =
      decode_image_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images/jpg_420.jpg");
  const RgbImage b =
      decode_image_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images/png_rgba8.png");
  const std::size_t per = enc.pixels_per_image();
  std::vector<float> px(2 * per);
  enc.pixels(a, px.data());
  enc.pixels(b, px.data() + per);
  const Matrix both = enc.encode_pixels(px.data(), 2);
  const Matrix second = enc.encode_pixels(px.data() + per, 1);
  double worst = 0.0;
  for (std::size_t j = 0; j < both.cols; ++j) {
    worst = std::max(worst, std::abs(double{both.row(1)[j]} - second.row(0)[j]));
  }
  EXPECT_LE(worst, 1e-5);
}

// Same bits with 1, 2 or 3 threads (fixed partitions), on 6 images of 257 tokens (1,542 rows).
TEST(Dinov2Model, FeaturesDoNotDependOnTheThreadCount) {
  const unsigned saved = thread_count();
  const Dinov2Encoder enc = Dinov2Encoder::open(dinov2_dir() / "swiglu_p3", {.image_size = 48});
  Rng rng(7);
  const std::vector<float> px = random_values(6 * enc.pixels_per_image(), 1.0f, rng);
  std::vector<Matrix> out;
  for (unsigned threads : {1u, 2u, 3u}) {
    set_thread_count(threads);
    out.push_back(enc.encode_pixels(px.data(), 6));
  }
  set_thread_count(saved);
  EXPECT_TRUE(bitwise_equal(out[0], out[1]));
  EXPECT_TRUE(bitwise_equal(out[0], out[2]));
  EXPECT_GT(max_abs_diff(out[0], Matrix(6, enc.dim())), 0.1);
}

TEST(Dinov2Model, SwigluHiddenSizeFollowsTheRoundingRule) {
  const std::string base =
      R"({"model_type": "dinov2", "patch_size": 14, "layer_norm_eps": 1e-6, "image_size": 518, )";
  // ViT-g/14: int(1536 * 4) = 6144, int(6144 * 2 / 3) = 4096, rounded up to a multiple of 8.
  const Dinov2Config giant = parse_dinov2_config(
      base + R"("hidden_size": 1536, "num_attention_heads": 24, "num_hidden_layers": 40,
               "use_swiglu_ffn": true, "mlp_ratio": 4})",
      "giant");
  EXPECT_EQ(giant.mlp_width, 4096u);
  EXPECT_TRUE(giant.swiglu);
  EXPECT_EQ(giant.grid(), 37u);
  // int(32 * 2.5) = 80, int(80 * 2 / 3) = 53 -> 56.
  const Dinov2Config odd = parse_dinov2_config(
      base + R"("hidden_size": 32, "num_attention_heads": 4, "use_swiglu_ffn": true,
               "mlp_ratio": 2.5})",
      "odd");
  EXPECT_EQ(odd.mlp_width, 56u);
  // ViT-L/14 without SwiGLU: int(1024 * 4).
  const Dinov2Config large =
      parse_dinov2_config(base + R"("hidden_size": 1024, "num_attention_heads": 16})", "large");
  EXPECT_EQ(large.mlp_width, 4096u);
  EXPECT_EQ(large.activation, Activation::Gelu);
  EXPECT_EQ(large.layers, 12u);  // Dinov2Config's default
}

TEST(Dinov2Model, ImageSizeOverrideResizesAndCropsToIt) {
  const Dinov2Encoder enc = Dinov2Encoder::open(dinov2_dir() / "gelu_p4", {.image_size = 24});
  EXPECT_EQ(enc.preprocess().shortest_edge, 24u);
  EXPECT_EQ(enc.preprocess().crop_width, 24u);
  EXPECT_EQ(enc.preprocess().crop_height, 24u);
  EXPECT_EQ(enc.pixels_per_image(), 3u * 24 * 24);
  EXPECT_EQ(enc.dim(), 32u);
  const nlohmann::ordered_json d = enc.describe();
  EXPECT_EQ(d.at("model").at("input_grid"), nlohmann::ordered_json::array({6, 6}));
  EXPECT_NE(d.at("model").at("positions").get<std::string>().find("bicubic from 5x5"),
            std::string::npos);
  EXPECT_EQ(d.at("preprocessing").at("mean").at(0).get<float>(), 0.485f);
  // The trained grid needs no interpolation.
  const Dinov2Encoder same = Dinov2Encoder::open(dinov2_dir() / "gelu_p4", {.image_size = 20});
  EXPECT_EQ(same.describe().at("model").at("positions"), "as trained");
}

}  // namespace in_dinov2_model_test
}  // namespace
}  // namespace vlbias
