// preprocess_image against HF CLIPImageProcessor and open_clip/torchvision outputs computed by
// tools/make_image_fixtures.py, and the two config readers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "encode/image_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_image_preprocess_test {

using image_test::error_of;
using image_test::fixture_dir;
using image_test::manifest;
using image_test::TempDir;

ImagePreprocess from_manifest(const nlohmann::json& c) {
  ImagePreprocess p;
  p.do_resize = c.at("do_resize");
  p.shortest_edge = c.at("shortest_edge");
  p.do_center_crop = c.at("do_center_crop");
  p.crop_width = c.at("crop_width");
  p.crop_height = c.at("crop_height");
  p.crop_rounding = c.at("rounding") == "floor" ? CropRounding::Floor : CropRounding::Round;
  p.do_rescale = c.at("do_rescale");
  p.rescale_factor = c.at("rescale_factor");
  p.do_normalize = c.at("do_normalize");
  for (std::size_t i = 0; i < 3; ++i) {
    p.mean[i] = static_cast<float>(c.at("mean")[i].get<double>());
    p.std[i] = static_cast<float>(c.at("std")[i].get<double>());
  }
  return p;
}

TEST(ImagePreprocess, MatchesHfAndTorchvision) {
  const auto& cases = manifest().at("preprocess");
  ASSERT_GE(cases.size(), 12u);
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const ImagePreprocess p = from_manifest(c);
    const RgbImage image = c.contains("file")
                               ? decode_image_file(fixture_dir() / c.at("file").get<std::string>())
                               : image_test::synthetic_image(c.at("src_width"), c.at("src_height"),
                                                             c.at("seed").get<std::uint32_t>());
    std::vector<float> out(3 * p.crop_width * p.crop_height, -999.0f);
    preprocess_image(image, p, out.data());
    if (c.contains("expected")) {
      const NpyArray expected = read_npy(fixture_dir() / c.at("expected").get<std::string>());
      ASSERT_EQ(expected.shape(), (std::vector<std::size_t>{3, p.crop_height, p.crop_width}));
      ASSERT_EQ(expected.data.size(), out.size());
      double max_diff = 0.0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(double(out[i]) - double(expected.data[i])));
      }
      EXPECT_LE(max_diff, 1e-6);
      EXPECT_EQ(std::memcmp(out.data(), expected.data.data(), out.size() * 4), 0)
          << "within tolerance but not bit-identical";
    } else {
      const std::vector<std::uint8_t> bytes(
          reinterpret_cast<const std::uint8_t*>(out.data()),
          reinterpret_cast<const std::uint8_t*>(out.data()) + out.size() * sizeof(float));
      EXPECT_EQ(image_test::sha256_of(bytes), c.at("sha256").get<std::string>());
    }
  }
}

TEST(ImagePreprocess, GeometryIsResizeThenCrop) {
  const RgbImage src = image_test::synthetic_image(61, 47, 5);
  ImagePreprocess p;
  p.shortest_edge = 32;
  p.crop_width = 20;
  p.crop_height = 30;
  const RgbImage g = preprocess_geometry(src, p);
  const RgbImage expected = center_crop(resize_bicubic(src, 41, 32), 20, 30, CropRounding::Floor);
  EXPECT_EQ(g.width, 20u);
  EXPECT_EQ(g.height, 30u);
  EXPECT_EQ(g.pixels, expected.pixels);
}

TEST(ImagePreprocess, RefusesWrongSizeWithoutCrop) {
  ImagePreprocess p;
  p.do_center_crop = false;
  p.shortest_edge = 16;
  p.crop_width = p.crop_height = 16;
  std::vector<float> out(3 * 16 * 16);
  const RgbImage square = image_test::synthetic_image(40, 40, 1);
  EXPECT_NO_THROW(preprocess_image(square, p, out.data()));
  const RgbImage wide = image_test::synthetic_image(40, 20, 1);
  const std::string message = error_of<InputError>([&] { preprocess_image(wide, p, out.data()); });
  EXPECT_NE(message.find("32 x 16"), std::string::npos) << message;
}

// ---- HF preprocessor_config.json ----

class ImageConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    set_warning_sink([this](const std::string& m) { warnings_.push_back(m); });
  }
  void TearDown() override { set_warning_sink(nullptr); }
  std::vector<std::string> warnings_;
};

TEST_F(ImageConfig, ReadsOpenAiClipConfig) {
  TempDir dir;
  // openai/clip-vit-base-patch32 preprocessor_config.json (transformers 4.2x layout).
  const auto path = dir.write("preprocessor_config.json", R"({
    "crop_size": 224, "do_center_crop": true, "do_normalize": true, "do_resize": true,
    "feature_extractor_type": "CLIPFeatureExtractor",
    "image_mean": [0.48145466, 0.4578275, 0.40821073],
    "image_std": [0.26862954, 0.26130258, 0.27577711],
    "resample": 3, "size": 224})");
  const ImagePreprocess p = read_hf_preprocessor_config(path);
  EXPECT_TRUE(p.do_resize && p.do_center_crop && p.do_rescale && p.do_normalize);
  EXPECT_EQ(p.shortest_edge, 224u);
  EXPECT_EQ(p.crop_width, 224u);
  EXPECT_EQ(p.crop_height, 224u);
  EXPECT_EQ(p.crop_rounding, CropRounding::Floor);
  EXPECT_EQ(p.rescale_factor, 1.0 / 255.0);
  EXPECT_EQ(p.mean[1], 0.4578275f);
  EXPECT_EQ(p.std[2], 0.27577711f);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(ImageConfig, ReadsDictSizesAndFlags) {
  TempDir dir;
  const auto path = dir.write("preprocessor_config.json", R"({
    "image_processor_type": "CLIPImageProcessor", "processor_class": "CLIPProcessor",
    "size": {"shortest_edge": 336}, "crop_size": {"height": 320, "width": 300},
    "do_rescale": false, "rescale_factor": 0.5, "do_normalize": false, "do_convert_rgb": true,
    "image_mean": 0.5, "image_std": [0.25, 0.5, 1], "resample": 3})");
  const ImagePreprocess p = read_hf_preprocessor_config(path);
  EXPECT_EQ(p.shortest_edge, 336u);
  EXPECT_EQ(p.crop_width, 300u);
  EXPECT_EQ(p.crop_height, 320u);
  EXPECT_FALSE(p.do_rescale);
  EXPECT_FALSE(p.do_normalize);
  EXPECT_EQ(p.rescale_factor, 0.5);
  EXPECT_EQ(p.mean[0], 0.5f);
  EXPECT_EQ(p.mean[2], 0.5f);
  EXPECT_EQ(p.std[0], 0.25f);
}

TEST_F(ImageConfig, DefaultsForMissingKeysAndWarnsOnUnknown) {
  TempDir dir;
  const auto path = dir.write("preprocessor_config.json", R"({"some_future_key": 1})");
  const ImagePreprocess p = read_hf_preprocessor_config(path);
  const ImagePreprocess d;
  EXPECT_EQ(p.shortest_edge, d.shortest_edge);
  EXPECT_EQ(p.crop_width, d.crop_width);
  EXPECT_EQ(p.mean, d.mean);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("some_future_key"), std::string::npos) << warnings_[0];
}

TEST_F(ImageConfig, RefusesUnsupportedSettings) {
  TempDir dir;
  struct Case {
    const char* json;
    const char* needle;
  };
  for (const Case& c : {
           Case{R"({"resample": 2})", "'resample' is 2 (BILINEAR)"},
           Case{R"({"resample": 1})", "LANCZOS"},
           Case{R"({"image_processor_type": "SiglipImageProcessor"})", "SiglipImageProcessor"},
           Case{R"({"feature_extractor_type": "ViTFeatureExtractor"})", "ViTFeatureExtractor"},
           Case{R"({"size": {"height": 224, "width": 224}})", "'size'"},
           Case{R"({"do_pad": true})", "do_pad"},
           Case{R"({"crop_pct": 0.875})", "crop_pct"},
           Case{R"({"use_square_size": true})", "use_square_size"},
       }) {
    SCOPED_TRACE(c.json);
    const auto path = dir.write("preprocessor_config.json", c.json);
    const std::string message = error_of<UsageError>([&] { read_hf_preprocessor_config(path); });
    EXPECT_NE(message.find(c.needle), std::string::npos) << message;
    EXPECT_NE(message.find("preprocessor_config.json"), std::string::npos) << message;
  }
  // false flags change nothing and are accepted.
  const auto ok = dir.write("ok.json", R"({"do_pad": false, "use_square_size": false})");
  EXPECT_NO_THROW(read_hf_preprocessor_config(ok));
}

TEST_F(ImageConfig, RefusesMalformedConfigs) {
  TempDir dir;
  for (const char* json : {R"({"size": 224,)", "[1, 2]", R"({"size": -3})", R"({"size": 2.5})",
                           R"({"crop_size": {"height": 2}})", R"({"image_mean": [1, 2]})",
                           R"({"image_std": [1, 0, 1]})", R"({"do_resize": "yes"})",
                           R"({"resample": "bicubic"})", R"({"rescale_factor": "x"})"}) {
    SCOPED_TRACE(json);
    const auto path = dir.write("preprocessor_config.json", json);
    const std::string message = error_of<InputError>([&] { read_hf_preprocessor_config(path); });
    EXPECT_NE(message.find("preprocessor_config.json"), std::string::npos) << message;
  }
  const std::string missing =
      error_of<InputError>([&] { read_hf_preprocessor_config(fixture_dir() / "nope.json"); });
  EXPECT_NE(missing.find("nope.json"), std::string::npos);
}

// ---- open_clip_config.json ----

TEST_F(ImageConfig, ReadsOpenClipConfig) {
  TempDir dir;
  const auto path = dir.write("open_clip_config.json", R"({
    "model_cfg": {"embed_dim": 512, "vision_cfg": {"image_size": 256, "layers": 12,
                  "width": 768, "patch_size": 16}, "text_cfg": {"context_length": 77}},
    "preprocess_cfg": {"mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5],
                       "interpolation": "bicubic", "resize_mode": "shortest"}})");
  const ImagePreprocess p = read_open_clip_preprocess(path);
  EXPECT_EQ(p.shortest_edge, 256u);
  EXPECT_EQ(p.crop_width, 256u);
  EXPECT_EQ(p.crop_height, 256u);
  EXPECT_EQ(p.crop_rounding, CropRounding::Round);
  EXPECT_EQ(p.rescale_factor, 1.0 / 255.0);
  EXPECT_EQ(p.mean[0], 0.5f);
  EXPECT_EQ(p.std[2], 0.5f);
  EXPECT_TRUE(warnings_.empty());

  const auto square =
      dir.write("square.json", R"({"model_cfg": {"vision_cfg": {"image_size": [224, 224]}}})");
  const ImagePreprocess q = read_open_clip_preprocess(square);
  EXPECT_EQ(q.shortest_edge, 224u);
  EXPECT_EQ(q.mean, ImagePreprocess{}.mean);  // OpenAI defaults without preprocess_cfg

  // preprocess_cfg.size overrides the model's image_size, as open_clip merges them.
  const auto sized = dir.write("sized.json", R"({"model_cfg": {"vision_cfg": {"image_size": 224}},
    "preprocess_cfg": {"size": 336, "mode": "RGB", "fill_color": 0}})");
  const ImagePreprocess r = read_open_clip_preprocess(sized);
  EXPECT_EQ(r.shortest_edge, 336u);
  EXPECT_EQ(r.crop_width, 336u);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(ImageConfig, OpenClipRefusals) {
  TempDir dir;
  struct Case {
    const char* json;
    const char* needle;
  };
  for (const Case& c : {
           Case{R"({"preprocess_cfg": {"interpolation": "bilinear"}})", "bilinear"},
           Case{R"({"preprocess_cfg": {"resize_mode": "squash"}})", "squash"},
           Case{R"({"preprocess_cfg": {"resize_mode": "longest"}})", "longest"},
           Case{R"({"model_cfg": {"vision_cfg": {"image_size": [224, 256]}}})", "square"},
           Case{R"({"preprocess_cfg": {"size": [224, 256]}})", "preprocess_cfg.size"},
           Case{R"({"preprocess_cfg": {"mode": "L"}})", "mode"},
       }) {
    SCOPED_TRACE(c.json);
    const auto path = dir.write("open_clip_config.json", c.json);
    const std::string message = error_of<UsageError>([&] { read_open_clip_preprocess(path); });
    EXPECT_NE(message.find(c.needle), std::string::npos) << message;
  }
  const auto bad = dir.write("bad.json", R"({"model_cfg": [)");
  EXPECT_FALSE(error_of<InputError>([&] { read_open_clip_preprocess(bad); }).empty());
  const auto bad_type = dir.write("bad_type.json", R"({"preprocess_cfg": {"mean": "red"}})");
  EXPECT_FALSE(error_of<InputError>([&] { read_open_clip_preprocess(bad_type); }).empty());
}

}  // namespace in_image_preprocess_test
}  // namespace
}  // namespace vlbias
