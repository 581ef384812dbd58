// resize_bicubic against Pillow 9.4's Image.resize(BICUBIC), byte for byte; shortest_edge_size
// against HF / torchvision's rule; center_crop against HF (floor) and torchvision (round).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "encode/image_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"

namespace vlbias {
namespace {
namespace in_image_resize_test {

using image_test::error_of;
using image_test::fixture_bytes;
using image_test::manifest;
using image_test::synthetic_image;

void expect_bytes(const nlohmann::json& c, const RgbImage& image) {
  if (c.contains("expected")) {
    const auto expected = fixture_bytes(c.at("expected"));
    EXPECT_EQ(image_test::first_difference(image.pixels, expected), -1);
  } else {
    EXPECT_EQ(image_test::sha256_of(image.pixels), c.at("sha256").get<std::string>());
  }
}

TEST(ImageResize, MatchesPillowBicubic) {
  const auto& cases = manifest().at("resize");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const std::size_t w = c.at("src_width"), h = c.at("src_height");
    const std::size_t tw = c.at("width"), th = c.at("height");
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " -> " + std::to_string(tw) + "x" +
                 std::to_string(th));
    const RgbImage src = synthetic_image(w, h, c.at("seed").get<std::uint32_t>());
    const RgbImage out = resize_bicubic(src, tw, th);
    ASSERT_EQ(out.width, tw);
    ASSERT_EQ(out.height, th);
    ASSERT_EQ(out.pixels.size(), tw * th * 3);
    expect_bytes(c, out);
  }
}

TEST(ImageResize, SameSizeIsACopy) {
  const RgbImage src = synthetic_image(9, 5, 3);
  const RgbImage out = resize_bicubic(src, 9, 5);
  EXPECT_EQ(out.pixels, src.pixels);
}

TEST(ImageResize, ConstantImageStaysConstant) {
  RgbImage src;
  src.width = 17;
  src.height = 5;
  src.pixels.assign(17 * 5 * 3, 200);
  for (auto [w, h] : {std::pair{3, 40}, std::pair{40, 2}, std::pair{1, 1}}) {
    const RgbImage out = resize_bicubic(src, w, h);
    for (const auto v : out.pixels) ASSERT_EQ(v, 200);
  }
}

TEST(ImageResize, RefusesBadSizes) {
  const RgbImage src = synthetic_image(4, 4, 1);
  EXPECT_FALSE(error_of<UsageError>([&] { resize_bicubic(src, 0, 4); }).empty());
  EXPECT_FALSE(error_of<UsageError>([&] { resize_bicubic(src, 4, 0); }).empty());
  EXPECT_FALSE(error_of<UsageError>([&] { resize_bicubic(src, 100000, 100000); }).empty());
  RgbImage broken = src;
  broken.pixels.pop_back();
  EXPECT_FALSE(error_of<InputError>([&] { resize_bicubic(broken, 2, 2); }).empty());
  EXPECT_FALSE(error_of<InputError>([&] { resize_bicubic(RgbImage{}, 2, 2); }).empty());
}

TEST(ImageResize, ShortestEdgeSizeAsHfAndTorchvision) {
  using P = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(shortest_edge_size(640, 480, 224), (P{298, 224}));  // int(224 * 640 / 480) = 298
  EXPECT_EQ(shortest_edge_size(480, 640, 224), (P{224, 298}));
  EXPECT_EQ(shortest_edge_size(300, 300, 224), (P{224, 224}));
  EXPECT_EQ(shortest_edge_size(1, 1000, 224), (P{224, 224000}));
  EXPECT_EQ(shortest_edge_size(1000, 3, 2), (P{666, 2}));  // 666.66 truncated
  EXPECT_EQ(shortest_edge_size(49, 7, 7), (P{49, 7}));     // exact, no rounding down
  EXPECT_EQ(shortest_edge_size(100, 30, 3), (P{10, 3}));
  EXPECT_EQ(shortest_edge_size(110, 30, 9), (P{33, 9}));  // 990 / 30: an exact quotient stays exact
  EXPECT_EQ(shortest_edge_size(10, 20, 1), (P{1, 2}));
  EXPECT_FALSE(error_of<UsageError>([] { shortest_edge_size(10, 10, 0); }).empty());
  EXPECT_FALSE(error_of<InputError>([] { shortest_edge_size(0, 10, 5); }).empty());
}

TEST(ImageCrop, MatchesHfAndTorchvision) {
  const auto& cases = manifest().at("crop");
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const std::size_t w = c.at("src_width"), h = c.at("src_height");
    const std::size_t cw = c.at("width"), ch = c.at("height");
    const std::string rounding = c.at("rounding");
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " -> " + std::to_string(cw) + "x" +
                 std::to_string(ch) + " " + rounding);
    const RgbImage src = synthetic_image(w, h, c.at("seed").get<std::uint32_t>());
    const RgbImage out =
        center_crop(src, cw, ch, rounding == "floor" ? CropRounding::Floor : CropRounding::Round);
    ASSERT_EQ(out.width, cw);
    ASSERT_EQ(out.height, ch);
    expect_bytes(c, out);
  }
}

TEST(ImageCrop, OffsetsByRule) {
  // 1-pixel-wide columns make the chosen offset visible: pixel value = x.
  RgbImage src;
  src.width = 11;
  src.height = 1;
  for (std::size_t x = 0; x < 11; ++x) src.pixels.insert(src.pixels.end(), 3, std::uint8_t(x));
  // 11 - 6 = 5: floor(2.5) = 2; round(2.5) = 2 (half to even).
  EXPECT_EQ(center_crop(src, 6, 1, CropRounding::Floor).pixels[0], 2);
  EXPECT_EQ(center_crop(src, 6, 1, CropRounding::Round).pixels[0], 2);
  // 11 - 4 = 7: floor(3.5) = 3; round(3.5) = 4.
  EXPECT_EQ(center_crop(src, 4, 1, CropRounding::Floor).pixels[0], 3);
  EXPECT_EQ(center_crop(src, 4, 1, CropRounding::Round).pixels[0], 4);
  // Padding 11 -> 14 (3 extra): HF puts the image at ceil(1.5) = 2, torchvision at 1.
  const RgbImage hf = center_crop(src, 14, 1, CropRounding::Floor);
  const RgbImage tv = center_crop(src, 14, 1, CropRounding::Round);
  EXPECT_EQ(hf.pixels[3 * 1], 0);
  EXPECT_EQ(hf.pixels[3 * 3], 1);
  EXPECT_EQ(hf.pixels[3 * 12], 10);
  EXPECT_EQ(hf.pixels[3 * 13], 0);
  EXPECT_EQ(tv.pixels[3 * 0], 0);
  EXPECT_EQ(tv.pixels[3 * 2], 1);
  EXPECT_EQ(tv.pixels[3 * 11], 10);
  EXPECT_EQ(tv.pixels[3 * 12], 0);
  EXPECT_FALSE(error_of<UsageError>([&] { center_crop(src, 0, 1, CropRounding::Floor); }).empty());
}

}  // namespace in_image_resize_test
}  // namespace
}  // namespace vlbias
