// Skin tone per face (include/vlbias/faces/skin_tone.h) against numpy ports of HEIM's
// skin_tone_metrics.py (its published version, R and B swapped, and the corrected one) and of
// DALL-Eval's ITA, with python3-opencv's conversions: tests/fixtures/faces/skin_tone.json, written
// by tools/make_skin_tone_fixtures.py from face boxes and whole images of tests/data/images/real/
// and from uniform patches, plus hashes of the skin rule and of OpenCV's YCrCb over all 2^24
// colours.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "skin_tone_internal.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/faces/skin_tone.h"

namespace vlbias {
namespace {
namespace in_skin_tone_test {

using PlainJson = nlohmann::json;

// OpenCV's float32 RGB -> Lab (cv::cvtColor, COLOR_RGB2Lab on RGB / 255) interpolates a
// lookup table: its L*, a*, b* differ from the exact conversion by up to about 0.15, which
// moves a face's mean ITA by up to 0.28 degrees (chelsea.png, whole). The float64 reference
// (exact sRGB curve, the same matrix and white) is met to rounding.
constexpr double kItaToleranceOpenCv = 0.35;
constexpr double kItaToleranceFloat64 = 1e-9;

const PlainJson& skin_fixture() {
  return testing_util::fixture_json("faces/skin_tone.json");
}

RgbImage uniform_image(std::size_t width, std::size_t height, std::array<std::uint8_t, 3> rgb) {
  RgbImage image{width, height, {}};
  for (std::size_t i = 0; i < width * height; ++i) {
    image.pixels.insert(image.pixels.end(), rgb.begin(), rgb.end());
  }
  return image;
}

// Columns [x0, x1) and rows [y0, y1) of `image`.
RgbImage crop_box(const RgbImage& image, const PlainJson& box) {
  const auto x0 = box[0].get<std::size_t>(), y0 = box[1].get<std::size_t>();
  const auto x1 = box[2].get<std::size_t>(), y1 = box[3].get<std::size_t>();
  RgbImage out{x1 - x0, y1 - y0, {}};
  for (std::size_t y = y0; y < y1; ++y) {
    const auto* row = &image.pixels[(y * image.width + x0) * 3];
    out.pixels.insert(out.pixels.end(), row, row + (x1 - x0) * 3);
  }
  return out;
}

// The mask the fixture calls "checkerboard": pixel (x, y) examined when x + y is even.
std::vector<std::uint8_t> checkerboard(std::size_t width, std::size_t height) {
  std::vector<std::uint8_t> mask(width * height);
  for (std::size_t y = 0; y < height; ++y) {
    for (std::size_t x = 0; x < width; ++x) mask[y * width + x] = (x + y) % 2 == 0 ? 1 : 0;
  }
  return mask;
}

RgbImage real_image(const std::string& file) {
  return decode_image_file(std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/data/images/real" /
                           file);
}

RgbImage case_image(const PlainJson& c) {
  if (c.contains("patch_rgb")) {
    const auto rgb = c["patch_rgb"].get<std::array<std::uint8_t, 3>>();
    return uniform_image(c["patch_size"][0].get<std::size_t>(),
                         c["patch_size"][1].get<std::size_t>(), rgb);
  }
  RgbImage image = real_image(c["file"].get<std::string>());
  return c["box"].is_null() ? image : crop_box(image, c["box"]);
}

// The fixture's numbers for one mode against ours.
void expect_heim_outcome(const SkinTone& got, const PlainJson& want, SkinToneMode mode) {
  SCOPED_TRACE(to_string(mode));
  if (want["monk"].is_null()) {
    EXPECT_FALSE(got.monk.has_value()) << "no skin pixels: unknown, never a tone";
    EXPECT_FALSE(got.monk_l1.has_value());
    EXPECT_FALSE(got.mean_rgb.has_value());
    return;
  }
  ASSERT_TRUE(got.mean_rgb && got.monk && got.monk_l1);
  // HEIM returns its lists' means as [red, green, blue]; the published code had R and B swapped.
  const auto& m = *got.mean_rgb;
  const std::array<double, 3> heims_order =
      mode == SkinToneMode::Heim ? std::array<double, 3>{m[2], m[1], m[0]} : m;
  for (int c = 0; c < 3; ++c) EXPECT_EQ(heims_order[c], want["mean"][c].get<double>()) << c;
  EXPECT_EQ(*got.monk, want["monk"].get<int>());
  EXPECT_NEAR(*got.monk_l1, want["l1"].get<double>(), 1e-9);
}

SkinTone measure_case(const PlainJson& c, SkinToneMode mode) {
  const RgbImage image = case_image(c);
  SkinToneOptions options;
  options.mode = mode;
  std::vector<std::uint8_t> mask;
  if (c["mask"] == "checkerboard") {
    mask = checkerboard(image.width, image.height);
    options.mask = PixelMaskView{image.width, image.height, mask};
  }
  return measure_skin_tone(image, c["name"].get<std::string>(), options);
}

TEST(SkinToneRule, AcceptsExactlyTheColoursHeimsRuleAcceptsAmongAllTwoTo24Colours) {
  const PlainJson& want = skin_fixture()["exhaustive"];
  // Bit j of byte i is colour 8 i + j, colour = (R << 16) | (G << 8) | B (numpy's packbits
  // with bitorder "little").
  std::string bits(std::size_t{1} << 21, '\0');
  std::size_t count = 0;
  for (std::uint32_t colour = 0; colour < (1u << 24); ++colour) {
    if (faces_internal::heim_skin_pixel(static_cast<std::uint8_t>(colour >> 16),
                                        static_cast<std::uint8_t>(colour >> 8),
                                        static_cast<std::uint8_t>(colour))) {
      bits[colour >> 3] = static_cast<char>(bits[colour >> 3] | (1 << (colour & 7)));
      ++count;
    }
  }
  EXPECT_EQ(count, want["skin_colours"].get<std::size_t>());
  EXPECT_EQ(sha256_hex(bits), want["skin_bits_sha256"].get<std::string>());
}

TEST(SkinToneRule, YCrCbEqualsOpenCvsCvtColorForEveryColour) {
  std::string bytes;
  bytes.reserve(std::size_t{3} << 24);
  for (std::uint32_t colour = 0; colour < (1u << 24); ++colour) {
    const auto c = faces_internal::opencv_ycrcb(static_cast<std::uint8_t>(colour >> 16),
                                                static_cast<std::uint8_t>(colour >> 8),
                                                static_cast<std::uint8_t>(colour));
    bytes.push_back(static_cast<char>(c.y));
    bytes.push_back(static_cast<char>(c.cr));
    bytes.push_back(static_cast<char>(c.cb));
  }
  EXPECT_EQ(sha256_hex(bytes), skin_fixture()["exhaustive"]["ycrcb_sha256"].get<std::string>());
}

// The mask `vlbias explain` weighs its maps with: the rule (checked above against HEIM's for all
// 2^24 colours) per pixel, the pixels measure_skin_tone counts as skin.
TEST(SkinToneMask, MarksExactlyThePixelsTheRuleAcceptsAndCountsAsMeasureDoes) {
  RgbImage image{64, 64, {}};
  for (int r = 0; r < 256; r += 17) {
    for (int g = 0; g < 256; g += 17) {
      for (int b = 0; b < 256; b += 17) {
        image.pixels.insert(image.pixels.end(),
                            {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g),
                             static_cast<std::uint8_t>(b)});
      }
    }
  }
  ASSERT_EQ(image.pixels.size(), 64u * 64 * 3);
  const std::vector<std::uint8_t> mask = skin_pixel_mask(image, "colours");
  ASSERT_EQ(mask.size(), 64u * 64);
  std::size_t skin = 0;
  for (std::size_t i = 0; i < mask.size(); ++i) {
    const std::uint8_t* p = image.pixels.data() + 3 * i;
    EXPECT_EQ(mask[i], faces_internal::heim_skin_pixel(p[0], p[1], p[2]) ? 1 : 0) << i;
    skin += mask[i];
  }
  EXPECT_GT(skin, 0u);
  EXPECT_LT(skin, mask.size());
  EXPECT_EQ(skin, measure_skin_tone(image, "colours").skin_pixels);
  image.pixels.pop_back();
  EXPECT_THROW(skin_pixel_mask(image, "colours"), InputError);
}

TEST(SkinTone, TheMonkTonesAreTheTenColoursHeimAndDallEvalList) {
  const PlainJson& want = skin_fixture()["monk_rgb"];
  ASSERT_EQ(want.size(), kMonkSkinTonesRgb.size());
  for (std::size_t k = 0; k < kMonkSkinTonesRgb.size(); ++k) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(kMonkSkinTonesRgb[k][c], want[k][c].get<int>()) << k;
  }
}

TEST(SkinTone, EveryFaceImageAndPatchMatchesHeimsCodeInBothModesAndTheItaReferences) {
  const PlainJson& cases = skin_fixture()["cases"];
  ASSERT_GE(cases.size(), 30u);
  for (const PlainJson& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const SkinTone heim = measure_case(c, SkinToneMode::Heim);
    const SkinTone corrected = measure_case(c, SkinToneMode::Corrected);
    EXPECT_EQ(heim.mode, SkinToneMode::Heim);
    EXPECT_EQ(corrected.mode, SkinToneMode::Corrected);
    EXPECT_EQ(corrected.skin_pixels, c["skin_pixels"].get<std::size_t>());
    EXPECT_EQ(heim.skin_pixels, corrected.skin_pixels);
    expect_heim_outcome(heim, c["heim"], SkinToneMode::Heim);
    expect_heim_outcome(corrected, c["corrected"], SkinToneMode::Corrected);
    if (c["ita_float64"].is_null()) {
      EXPECT_FALSE(corrected.known());
      EXPECT_FALSE(corrected.ita_degrees.has_value());
      EXPECT_FALSE(corrected.ita_category.has_value());
      continue;
    }
    ASSERT_TRUE(corrected.ita_degrees && heim.ita_degrees && corrected.ita_category);
    EXPECT_EQ(*heim.ita_degrees, *corrected.ita_degrees) << "the ITA does not depend on the mode";
    EXPECT_NEAR(*corrected.ita_degrees, c["ita_float64"].get<double>(), kItaToleranceFloat64);
    EXPECT_NEAR(*corrected.ita_degrees, c["ita_cv2"].get<double>(), kItaToleranceOpenCv);
    if (c.contains("ita_closed_form")) {
      EXPECT_NEAR(*corrected.ita_degrees, c["ita_closed_form"].get<double>(), kItaToleranceFloat64);
    }
    std::string category = to_string(*corrected.ita_category);
    for (char& ch : category) ch = ch == ' ' ? '_' : ch;
    EXPECT_EQ(category, c["ita_category"].get<std::string>());
  }
}

TEST(SkinTone, TheChannelSwapMovesTheMonkToneOfSomeSkinColours) {
  // Without cases where the modes disagree, the Heim mode would go untested.
  int differ = 0;
  for (const PlainJson& c : skin_fixture()["cases"]) {
    if (!c["heim"]["monk"].is_null() && c["heim"]["monk"] != c["corrected"]["monk"]) ++differ;
  }
  EXPECT_GE(differ, 3);
  const RgbImage brown = uniform_image(4, 4, {141, 85, 36});
  EXPECT_EQ(measure_skin_tone(brown, "brown").monk, 7);
  SkinToneOptions heim;
  heim.mode = SkinToneMode::Heim;
  // (36, 85, 141) is nearest Monk 9 (58, 49, 42): 22 + 36 + 99 = 157.
  const SkinTone swapped = measure_skin_tone(brown, "brown", heim);
  EXPECT_EQ(swapped.monk, 9);
  EXPECT_EQ(swapped.monk_l1, 157.0);
}

}  // namespace in_skin_tone_test
}  // namespace
}  // namespace vlbias
