// Skin tone per face (include/vlbias/faces/skin_tone.h): masks, unknown results, bad input, the
// ITA categories, the mode names and the JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "skin_tone_internal.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/faces/skin_tone.h"

namespace vlbias {
namespace {
namespace in_skin_tone_input_test {

using ::testing::HasSubstr;

RgbImage astronaut() {
  return decode_image_file(std::filesystem::path(VLBIAS_SOURCE_DIR) /
                           "tests/data/images/real/astronaut.png");
}

// The face box of tools/make_skin_tone_fixtures.py: columns 175..284, rows 70..184.
constexpr std::size_t kX0 = 175, kY0 = 70, kX1 = 285, kY1 = 185;

RgbImage astronaut_face() {
  const RgbImage image = astronaut();
  RgbImage face{kX1 - kX0, kY1 - kY0, {}};
  for (std::size_t y = kY0; y < kY1; ++y) {
    const auto* row = &image.pixels[(y * image.width + kX0) * 3];
    face.pixels.insert(face.pixels.end(), row, row + face.width * 3);
  }
  return face;
}

// Every grey level, R = G = B, in a 256 x 4 image.
RgbImage grey_ramp() {
  RgbImage image{256, 4, {}};
  for (std::size_t y = 0; y < 4; ++y) {
    for (int v = 0; v < 256; ++v) image.pixels.insert(image.pixels.end(), 3, std::uint8_t(v));
  }
  return image;
}

void expect_unknown(const SkinTone& tone) {
  EXPECT_EQ(tone.skin_pixels, 0u);
  EXPECT_FALSE(tone.known());
  EXPECT_FALSE(tone.mean_rgb.has_value());
  EXPECT_FALSE(tone.monk.has_value()) << "no skin pixels: unknown, never a tone";
  EXPECT_FALSE(tone.monk_l1.has_value());
  EXPECT_FALSE(tone.ita_degrees.has_value());
  EXPECT_FALSE(tone.ita_category.has_value());
}

TEST(SkinToneMask, AMaskOfTheFaceBoxGivesExactlyWhatTheCroppedFaceGives) {
  const RgbImage image = astronaut();
  std::vector<std::uint8_t> mask(image.width * image.height, 0);
  for (std::size_t y = kY0; y < kY1; ++y) {
    for (std::size_t x = kX0; x < kX1; ++x) mask[y * image.width + x] = 255;
  }
  for (SkinToneMode mode : {SkinToneMode::Corrected, SkinToneMode::Heim}) {
    SkinToneOptions options;
    options.mode = mode;
    const SkinTone face = measure_skin_tone(astronaut_face(), "face", options);
    options.mask = PixelMaskView{image.width, image.height, mask};
    const SkinTone masked = measure_skin_tone(image, "astronaut.png", options);
    const SkinTone whole = measure_skin_tone(image, "astronaut.png", {mode, std::nullopt});
    EXPECT_EQ(masked.examined_pixels, (kX1 - kX0) * (kY1 - kY0));
    EXPECT_EQ(whole.examined_pixels, image.width * image.height);
    EXPECT_GT(whole.skin_pixels, masked.skin_pixels) << "the orange suit passes the rule too";
    EXPECT_EQ(skin_tone_json(masked), skin_tone_json(face));
  }
}

TEST(SkinToneMask, AMaskWithoutSkinGivesUnknownAndExaminesOnlyItsPixels) {
  const RgbImage face = astronaut_face();
  std::vector<std::uint8_t> none(face.width * face.height, 0);
  const SkinTone empty_mask = measure_skin_tone(
      face, "face", {SkinToneMode::Corrected, PixelMaskView{face.width, face.height, none}});
  EXPECT_EQ(empty_mask.examined_pixels, 0u);
  expect_unknown(empty_mask);
  // Only the pixels the rule rejects: examined, none of them skin.
  std::vector<std::uint8_t> not_skin(face.width * face.height, 0);
  std::size_t rejected = 0;
  for (std::size_t i = 0; i < not_skin.size(); ++i) {
    const std::uint8_t* p = &face.pixels[3 * i];
    if (!faces_internal::heim_skin_pixel(p[0], p[1], p[2])) {
      not_skin[i] = 1;
      ++rejected;
    }
  }
  ASSERT_GT(rejected, 100u);
  const SkinTone tone = measure_skin_tone(
      face, "face", {SkinToneMode::Heim, PixelMaskView{face.width, face.height, not_skin}});
  EXPECT_EQ(tone.examined_pixels, rejected);
  expect_unknown(tone);
}

TEST(SkinToneUnknown, GreyImagesHaveNoSkinPixelsAndSoNoToneInEitherMode) {
  expect_unknown(measure_skin_tone(grey_ramp(), "grey ramp"));
  const SkinTone heim = measure_skin_tone(grey_ramp(), "grey ramp", {SkinToneMode::Heim, {}});
  expect_unknown(heim);
  EXPECT_EQ(heim.examined_pixels, 256u * 4);
  // camera.png is a greyscale photograph.
  expect_unknown(measure_skin_tone(decode_image_file(std::filesystem::path(VLBIAS_SOURCE_DIR) /
                                                     "tests/data/images/real/camera.png"),
                                   "camera.png"));
}

TEST(SkinToneUnknown, TheJsonOfAnUnknownToneHasNullsWhereTheToneWouldBe) {
  const Json j = skin_tone_json(measure_skin_tone(grey_ramp(), "grey ramp"));
  EXPECT_EQ(j["mode"], "corrected");
  EXPECT_EQ(j["examined_pixels"], 1024);
  EXPECT_EQ(j["skin_pixels"], 0);
  for (const char* key : {"mean_rgb", "monk", "monk_l1", "ita", "ita_category"}) {
    EXPECT_TRUE(j.at(key).is_null()) << key;
  }
  const Json known = skin_tone_json(measure_skin_tone(astronaut_face(), "face"));
  EXPECT_EQ(known["monk"], 5);
  EXPECT_EQ(known["mean_rgb"].size(), 3u);
  EXPECT_EQ(known["ita_category"], "intermediate");
  EXPECT_TRUE(known["ita"].is_number_float());
}

TEST(SkinToneInput, AnEmptyImageIsAnInputErrorNamingIt) {
  for (const RgbImage& image : {RgbImage{0, 0, {}}, RgbImage{0, 5, {}}, RgbImage{5, 0, {}}}) {
    try {
      measure_skin_tone(image, "'gen/7.png', face 2");
      ADD_FAILURE() << "an empty image was measured";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'gen/7.png', face 2 is empty"));
    }
  }
}

TEST(SkinToneInput, APixelBufferThatDoesNotFitTheSizeIsAnInputError) {
  RgbImage image = grey_ramp();
  image.pixels.pop_back();
  EXPECT_THROW(measure_skin_tone(image, "ramp"), InputError);
  // width x height x 3 overflowing size_t never reads past the buffer.
  const RgbImage huge{std::numeric_limits<std::size_t>::max() / 2, 4,
                      std::vector<std::uint8_t>(24)};
  try {
    measure_skin_tone(huge, "huge");
    ADD_FAILURE() << "an image larger than its buffer was measured";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("huge holds 24 bytes of pixels"));
  }
}

TEST(SkinToneInput, AMaskOfAnotherSizeIsAnInputErrorNamingBothSizes) {
  const RgbImage image = grey_ramp();  // 256 x 4
  std::vector<std::uint8_t> values(256 * 4, 1);
  try {
    // The same number of values, the sides swapped.
    measure_skin_tone(image, "'a.png'", {SkinToneMode::Corrected, PixelMaskView{4, 256, values}});
    ADD_FAILURE() << "a transposed mask was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the mask for 'a.png' is 4 x 256 pixels, the image 256 x 4"));
  }
  values.resize(256 * 3);
  try {
    measure_skin_tone(image, "'a.png'", {SkinToneMode::Corrected, PixelMaskView{256, 4, values}});
    ADD_FAILURE() << "a mask with too few values was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the mask for 'a.png' holds 768 values for 256 x 4 pixels"));
  }
}

TEST(SkinToneIta, CategoriesFollowDelBinoWithEachBoundOnTheDarkerSide) {
  const std::array<std::pair<double, ItaCategory>, 12> cases = {{
      {90.0, ItaCategory::VeryLight},
      {std::nextafter(55.0, 90.0), ItaCategory::VeryLight},
      {55.0, ItaCategory::Light},
      {41.5, ItaCategory::Light},
      {41.0, ItaCategory::Intermediate},
      {28.0, ItaCategory::Tan},
      {10.5, ItaCategory::Tan},
      {10.0, ItaCategory::Brown},
      {0.0, ItaCategory::Brown},
      {-29.9, ItaCategory::Brown},
      {-30.0, ItaCategory::Dark},
      {-90.0, ItaCategory::Dark},
  }};
  for (const auto& [ita, category] : cases) {
    EXPECT_EQ(to_string(ita_category(ita)), std::string(to_string(category))) << ita;
  }
  EXPECT_THROW(ita_category(std::nan("")), UsageError);
}

TEST(SkinToneIta, TheItaOfAColourIsArctanOfLMinus50OverB) {
  // Monk 6 (160, 126, 86): L* 55.1429, b* 26.7441 (DALL-Eval lists 55.142, 26.74).
  const auto lab = faces_internal::srgb8_to_lab(160, 126, 86);
  EXPECT_NEAR(lab.l, 55.142877, 1e-6);
  EXPECT_NEAR(lab.b, 26.744124, 1e-6);
  EXPECT_NEAR(faces_internal::ita_of_lab(lab), 10.885065, 1e-6);
  // White is neutral with OpenCV's white point: L* 100, a* = b* = 0.
  const auto white = faces_internal::srgb8_to_lab(255, 255, 255);
  EXPECT_NEAR(white.l, 100.0, 1e-12);
  EXPECT_NEAR(white.a, 0.0, 1e-12);
  EXPECT_NEAR(white.b, 0.0, 1e-12);
}

TEST(SkinToneMode, ModesParseFromTheirNamesAndAnythingElseIsAUsageError) {
  EXPECT_EQ(parse_skin_tone_mode("corrected"), SkinToneMode::Corrected);
  EXPECT_EQ(parse_skin_tone_mode("heim"), SkinToneMode::Heim);
  EXPECT_STREQ(to_string(SkinToneMode::Heim), "heim");
  EXPECT_STREQ(to_string(SkinToneMode::Corrected), "corrected");
  for (const char* bad : {"HEIM", "", "dalleval", "heim "}) {
    try {
      parse_skin_tone_mode(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("expected 'corrected'"));
    }
  }
}

}  // namespace in_skin_tone_input_test
}  // namespace
}  // namespace vlbias
