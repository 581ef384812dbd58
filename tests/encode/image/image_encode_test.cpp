// encode_jpeg: its output decodes with our own decoder close to the image it encoded.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"

namespace vlbias {
namespace {
namespace in_image_encode_test {

// Peak signal-to-noise ratio in dB over every sample of two equal-size images.
double psnr(const RgbImage& a, const RgbImage& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = double(a.pixels[i]) - double(b.pixels[i]);
    sum += d * d;
  }
  const double mse = sum / double(a.pixels.size());
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

// A 96 x 64 thumbnail of one of the example's pictures, as the report makes it.
RgbImage example_thumbnail() {
  const RgbImage full =
      decode_image_file("examples/geo_diversity_images/generated/Africa_ball_00.jpg");
  const std::size_t w = 96, h = std::max<std::size_t>(1, full.height * 96 / full.width);
  return resize_bicubic(full, w, h);
}

TEST(EncodeJpeg, AThumbnailDecodesWithinThirtyDecibelsOfWhatWasEncoded) {
  const RgbImage thumb = example_thumbnail();
  const std::vector<std::uint8_t> jpeg = encode_jpeg(thumb, 80);
  ASSERT_GE(jpeg.size(), 4u);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);
  const RgbImage back = decode_image(jpeg, "thumbnail");
  ASSERT_EQ(back.width, thumb.width);
  ASSERT_EQ(back.height, thumb.height);
  const double p = psnr(thumb, back);
  RecordProperty("psnr_db", std::to_string(p));
  EXPECT_GE(p, 30.0) << "quality 80";
}

TEST(EncodeJpeg, AHigherQualityGivesALargerFileAndAHigherPsnr) {
  const RgbImage thumb = example_thumbnail();
  const std::vector<std::uint8_t> low = encode_jpeg(thumb, 30);
  const std::vector<std::uint8_t> high = encode_jpeg(thumb, 95);
  EXPECT_LT(low.size(), high.size());
  EXPECT_LT(psnr(thumb, decode_image(low, "low")), psnr(thumb, decode_image(high, "high")));
}

TEST(EncodeJpeg, AnEmptyImageOrAQualityOutOfRangeIsRefused) {
  RgbImage empty;
  EXPECT_THROW(encode_jpeg(empty, 80), UsageError);
  RgbImage one{1, 1, {10, 20, 30}};
  EXPECT_NO_THROW(encode_jpeg(one, 80));
  EXPECT_THROW(encode_jpeg(one, 0), UsageError);
  EXPECT_THROW(encode_jpeg(one, 101), UsageError);
}

}  // namespace in_image_encode_test
}  // namespace
}  // namespace vlbias
