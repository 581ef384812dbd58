// Real photographs (tests/data/images/real/, licences in LICENSES.md there) and the variants
// tools/make_real_image_fixtures.py derives from them with Pillow 9.4: progressive, 4:2:2,
// grey and CMYK JPEGs, palette / RGBA / LA / 16-bit PNGs, EXIF orientations 1-8 and hostile
// EXIF blocks. Each decodes to exactly what Pillow gives (tests/fixtures/encode/real_images.json):
// Image.open(f).convert("RGB") by default, ImageOps.exif_transpose(Image.open(f)).convert("RGB")
// with DecodeOptions::exif_transpose; where Pillow raises, decoding is refused.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "encode/image_test_util.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"

namespace vlbias {
namespace {
namespace in_image_real_test {

namespace fs = std::filesystem;
using image_test::read_bytes;
using PlainJson = nlohmann::json;

fs::path real_dir() {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests/data/images/real";
}

const PlainJson& real_cases() {
  return testing_util::fixture_json("encode/real_images.json").at("cases");
}

std::string sha256_of_pixels(const RgbImage& image) {
  return sha256_hex(
      std::string_view(reinterpret_cast<const char*>(image.pixels.data()), image.pixels.size()));
}

// The decode equals Pillow's outcome `want`: size, sample pixels and the SHA-256 of every byte.
void expect_pillow_outcome(const fs::path& path, bool exif_transpose, const PlainJson& pillow) {
  DecodeOptions options;
  options.exif_transpose = exif_transpose;
  // The one deviation: exif_transpose raises after the transpose where it cannot write the other
  // EXIF tags back; vlbias writes no EXIF and gives the transposed pixels (recorded by Pillow).
  const PlainJson& want =
      pillow.contains("raised_after_transpose") ? pillow["raised_after_transpose"] : pillow;
  if (want.contains("error")) {
    EXPECT_THROW(decode_image_file(path, options), InputError)
        << "Pillow raises " << want["error"].get<std::string>();
    return;
  }
  RgbImage image;
  try {
    image = decode_image_file(path, options);
  } catch (const Error& e) {
    ADD_FAILURE() << "Pillow decodes it, vlbias refuses: " << e.what();
    return;
  }
  ASSERT_EQ(image.width, want["width"].get<std::size_t>());
  ASSERT_EQ(image.height, want["height"].get<std::size_t>());
  for (const PlainJson& s : want["samples"]) {
    const auto x = s[0].get<std::size_t>(), y = s[1].get<std::size_t>();
    const std::uint8_t* p = &image.pixels[(y * image.width + x) * 3];
    EXPECT_EQ((std::vector<int>{p[0], p[1], p[2]}),
              (std::vector<int>{s[2].get<int>(), s[3].get<int>(), s[4].get<int>()}))
        << "pixel (" << x << ", " << y << ")";
  }
  EXPECT_EQ(sha256_of_pixels(image), want["sha256"].get<std::string>());
}

TEST(RealImages, EveryFileDecodesExactlyAsPillowOpensAndConvertsIt) {
  ASSERT_GE(real_cases().size(), 80u);
  for (const PlainJson& c : real_cases()) {
    const std::string file = c["file"].get<std::string>();
    SCOPED_TRACE(file + " (Pillow mode " + c["pillow_mode"].dump() + ")");
    expect_pillow_outcome(real_dir() / file, false, c["open"]);
  }
}

TEST(RealImages, WithExifTransposeEveryFileDecodesAsPillowsExifTranspose) {
  for (const PlainJson& c : real_cases()) {
    const std::string file = c["file"].get<std::string>();
    SCOPED_TRACE(file);
    expect_pillow_outcome(real_dir() / file, true, c["exif_transpose"]);
  }
}

TEST(RealImages, TheFixtureHoldsThePhotographsAndEveryKindItClaims) {
  std::set<std::string> files, modes;
  for (const PlainJson& c : real_cases()) {
    files.insert(c["file"].get<std::string>());
    if (c["pillow_mode"].is_string()) modes.insert(c["pillow_mode"].get<std::string>());
  }
  for (const char* f :
       {"astronaut.png", "camera.png", "chelsea.png", "coffee.png", "rocket.jpg", "china.jpg",
        "flower.jpg", "grace_hopper.jpg", "derived/progressive.jpg", "derived/cmyk.jpg",
        "derived/grey16.png", "derived/rgb16.png", "derived/palette_trns_alphas.png",
        "derived/exif_orientation_6.png", "derived/exif_orientation_6_after_idat.png"}) {
    EXPECT_TRUE(files.count(f)) << f;
  }
  for (int v = 1; v <= 8; ++v) {
    EXPECT_TRUE(files.count("derived/exif_orientation_" + std::to_string(v) + ".jpg")) << v;
  }
  EXPECT_EQ(modes, (std::set<std::string>{"1", "CMYK", "I", "L", "LA", "P", "RGB", "RGBA"}));
}

TEST(RealImages, OrientationsFiveToEightSwapWidthAndHeightOnlyWhenAsked) {
  const fs::path path = real_dir() / "derived/exif_orientation_6.jpg";
  const RgbImage plain = decode_image_file(path);
  EXPECT_EQ(plain.width, 96u);
  EXPECT_EQ(plain.height, 64u);
  DecodeOptions options;
  options.exif_transpose = true;
  const std::vector<std::uint8_t> bytes = read_bytes(path);
  const RgbImage rotated = decode_image(bytes, "exif_orientation_6.jpg", options);
  EXPECT_EQ(rotated.width, 64u);
  EXPECT_EQ(rotated.height, 96u);
  // ROTATE_270 (clockwise): the top-left output pixel is the source's bottom-left one.
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(rotated.pixels[c], plain.pixels[(63 * 96) * 3 + c]);
  }
}

TEST(RealImages, TheReserveHookSeesTheOrientedSizeAndTheBytesOfTheTransposedCopy) {
  DecodeOptions options;
  options.exif_transpose = true;
  std::size_t seen_w = 0, seen_h = 0, seen_bytes = 0, plain_bytes = 0;
  decode_image_file(real_dir() / "derived/exif_orientation_1.jpg", options,
                    [&](std::size_t, std::size_t, std::size_t b) { plain_bytes = b; });
  decode_image_file(real_dir() / "derived/exif_orientation_8.jpg", options,
                    [&](std::size_t w, std::size_t h, std::size_t b) {
                      seen_w = w;
                      seen_h = h;
                      seen_bytes = b;
                    });
  EXPECT_EQ(seen_w, 64u);
  EXPECT_EQ(seen_h, 96u);
  EXPECT_EQ(seen_bytes, plain_bytes + 3 * 96 * 64);
  // A flip keeps the shape but copies the pixels too.
  decode_image_file(real_dir() / "derived/exif_orientation_3.jpg", options,
                    [&](std::size_t w, std::size_t h, std::size_t b) {
                      seen_w = w;
                      seen_h = h;
                      seen_bytes = b;
                    });
  EXPECT_EQ(seen_w, 96u);
  EXPECT_EQ(seen_h, 64u);
  EXPECT_EQ(seen_bytes, plain_bytes + 3 * 96 * 64);
}

TEST(RealImages, AnUnreadableExifBlockIsRefusedNamingTheFileOnlyWhenPillowRaises) {
  DecodeOptions options;
  options.exif_transpose = true;
  const std::string with_dpi = image_test::error_of<InputError>(
      [&] { decode_image_file(real_dir() / "derived/hostile_truncated_header_dpi.jpg", options); });
  EXPECT_NE(with_dpi.find("hostile_truncated_header_dpi.jpg"), std::string::npos) << with_dpi;
  EXPECT_NE(with_dpi.find("exif_transpose"), std::string::npos) << with_dpi;
  // Without the option the same file decodes (Image.open never parses its EXIF) ...
  EXPECT_NO_THROW(decode_image_file(real_dir() / "derived/hostile_truncated_header_dpi.jpg"));
  // ... but one without a JFIF resolution before the EXIF is refused, as Image.open refuses it.
  const std::string at_open = image_test::error_of<InputError>(
      [&] { decode_image_file(real_dir() / "derived/hostile_truncated_header.jpg"); });
  EXPECT_NE(at_open.find("cannot open"), std::string::npos) << at_open;
}

}  // namespace in_image_real_test
}  // namespace
}  // namespace vlbias
