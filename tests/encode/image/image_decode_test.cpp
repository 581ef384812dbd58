// decode_image against Pillow 9.4: every fixture file decodes to exactly the bytes of
// Image.open(f).convert("RGB"), mutated copies (truncated, corrupt) succeed or fail exactly
// where Pillow does, and hostile input gives an InputError naming the source.
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
namespace in_image_decode_test {

using image_test::error_of;
using image_test::fixture_bytes;
using image_test::fixture_dir;
using image_test::manifest;

TEST(ImageDecode, MatchesPillowOnEveryFixture) {
  const auto& cases = manifest().at("decode");
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    const std::string file = c.at("file");
    SCOPED_TRACE(file + ": " + c.at("note").get<std::string>());
    const std::vector<std::uint8_t> bytes = fixture_bytes(file);
    const RgbImage image = decode_image(bytes, file);
    EXPECT_EQ(image.width, c.at("width").get<std::size_t>());
    EXPECT_EQ(image.height, c.at("height").get<std::size_t>());
    const std::vector<std::uint8_t> expected = fixture_bytes(c.at("expected"));
    EXPECT_EQ(image_test::first_difference(image.pixels, expected), -1);
  }
}

TEST(ImageDecode, FileApiMatchesMemoryApi) {
  const RgbImage from_file = decode_image_file(fixture_dir() / "png_rgb8_interlaced.png");
  EXPECT_EQ(from_file.pixels, fixture_bytes("png_rgb8_interlaced.rgb"));
  const RgbImage jpeg = decode_image_file(fixture_dir() / "jpg_progressive.jpg");
  EXPECT_EQ(jpeg.pixels, fixture_bytes("jpg_progressive.rgb"));
}

// Truncations at many points, flipped bytes, broken CRCs, trailing garbage: Pillow's outcome.
TEST(ImageDecode, MutatedFilesBehaveAsInPillow) {
  const auto& cases = manifest().at("variants");
  ASSERT_GE(cases.size(), 50u);
  for (const auto& c : cases) {
    const std::string file = c.at("file");
    SCOPED_TRACE(file + ": " + c.at("note").get<std::string>());
    std::vector<std::uint8_t> bytes = fixture_bytes(file);
    if (c.contains("cut")) bytes.resize(c.at("cut").get<std::size_t>());
    if (c.contains("xor")) {
      for (const auto& flip : c.at("xor")) {
        bytes.at(flip.at(0).get<std::size_t>()) ^= flip.at(1).get<std::uint8_t>();
      }
    }
    if (c.contains("append")) {
      for (const auto& b : c.at("append")) bytes.push_back(b.get<std::uint8_t>());
    }
    const std::string source = "mutated-" + file;
    if (c.at("expect") == "error") {
      const std::string message = error_of<InputError>([&] { decode_image(bytes, source); });
      EXPECT_NE(message.find(source), std::string::npos) << message;
    } else {
      const RgbImage image = decode_image(bytes, source);
      EXPECT_EQ(image.width, c.at("width").get<std::size_t>());
      EXPECT_EQ(image.height, c.at("height").get<std::size_t>());
      EXPECT_EQ(image_test::sha256_of(image.pixels), c.at("sha256").get<std::string>());
    }
  }
}

TEST(ImageDecode, RefusesBadFiles) {
  for (const auto& c : manifest().at("bad_files")) {
    const std::string file = c.at("file");
    SCOPED_TRACE(file);
    const std::string message =
        error_of<InputError>([&] { decode_image_file(fixture_dir() / file); });
    EXPECT_NE(message.find(file), std::string::npos) << message;
  }
  const std::string bomb =
      error_of<InputError>([] { decode_image_file(fixture_dir() / "png_bomb_100000.png"); });
  EXPECT_NE(bomb.find("100000 x 100000"), std::string::npos) << bomb;
}

TEST(ImageDecode, EmptyAndUnknownFormats) {
  const std::vector<std::uint8_t> empty;
  EXPECT_NE(error_of<InputError>([&] { decode_image(empty, "empty.jpg"); }).find("empty.jpg"),
            std::string::npos);
  const std::vector<std::uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  const std::string message = error_of<InputError>([&] { decode_image(gif, "cat.png"); });
  EXPECT_NE(message.find("cat.png"), std::string::npos) << message;
  EXPECT_NE(message.find("a GIF image"), std::string::npos) << message;
  // Magic bytes decide, not the name; one byte short of a magic is unknown.
  const std::vector<std::uint8_t> short_jpeg = {0xFF, 0xD8};
  EXPECT_FALSE(error_of<InputError>([&] { decode_image(short_jpeg, "a.jpg"); }).empty());
  const std::vector<std::uint8_t> png_sig_only = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  EXPECT_FALSE(error_of<InputError>([&] { decode_image(png_sig_only, "a.png"); }).empty());
}

// The message names what a file looks like, never its bytes: an image path may name any
// readable file (issue 19: the first 8 bytes of a shadow file were printed).
TEST(ImageDecode, NonImagesAreDescribedByTypeNeverByContent) {
  const std::string shadow = "root:*:19000:0:99999:7:::\n";
  const std::vector<std::uint8_t> text(shadow.begin(), shadow.end());
  const std::string message = error_of<InputError>([&] { decode_image(text, "shadow.png"); });
  EXPECT_NE(message.find("looks like text"), std::string::npos) << message;
  EXPECT_EQ(message.find("root"), std::string::npos) << message;
  EXPECT_EQ(message.find("72 6F"), std::string::npos) << message;  // "ro" in hex
  const std::vector<std::uint8_t> binary = {0x01, 0x02, 0xFE, 0x00, 0x7F};
  const std::string unknown = error_of<InputError>([&] { decode_image(binary, "x.jpg"); });
  EXPECT_NE(unknown.find("data of an unknown kind"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.find("FE"), std::string::npos) << unknown;
  struct Case {
    std::string bytes, type;
  };
  for (const Case& c : {Case{std::string("%PDF-1.7\n", 9), "a PDF document"},
                        Case{std::string("RIFF\0\0\0\0WEBPVP8 ", 16), "a WebP image"},
                        Case{std::string("II*\0\x08\0\0\0", 8), "a TIFF image"},
                        Case{std::string("PK\x03\x04\x14\0", 6), "a zip archive"},
                        Case{std::string("\x7F"
                                         "ELF\x02\x01",
                                         6),
                             "an executable (ELF)"}}) {
    SCOPED_TRACE(c.type);
    EXPECT_EQ(
        describe_file_type({reinterpret_cast<const std::uint8_t*>(c.bytes.data()), c.bytes.size()}),
        c.type);
  }
}

// The reserve hook runs after the header and before any pixel buffer: it sees the size and the
// bytes the decoder will hold, may refuse, and is never called for an image over the limit.
TEST(ImageDecode, ReserveHookSeesTheBuffersBeforeTheyAreAllocated) {
  for (const char* file : {"jpg_420.jpg", "jpg_progressive.jpg", "png_rgb8.png"}) {
    SCOPED_TRACE(file);
    const auto bytes = fixture_bytes(file);
    std::size_t calls = 0, width = 0, height = 0, reserved = 0;
    const RgbImage image = decode_image(bytes, file, kMaxImagePixels,
                                        [&](std::size_t w, std::size_t h, std::size_t b) {
                                          ++calls;
                                          width = w;
                                          height = h;
                                          reserved = b;
                                        });
    EXPECT_EQ(calls, 1u);
    EXPECT_EQ(width, image.width);
    EXPECT_EQ(height, image.height);
    EXPECT_GE(reserved, image.pixels.size());
    const std::string refused = error_of<InputError>([&] {
      decode_image(bytes, file, kMaxImagePixels, [](std::size_t, std::size_t, std::size_t) {
        throw InputError("refused by the budget");
      });
    });
    EXPECT_EQ(refused, "refused by the budget");
    bool called = false;
    EXPECT_THROW(decode_image(bytes, file, 10,
                              [&](std::size_t, std::size_t, std::size_t) { called = true; }),
                 InputError);
    EXPECT_FALSE(called);
  }
  // A progressive JPEG also reserves libjpeg's whole-image coefficient arrays.
  std::size_t progressive = 0;
  const RgbImage p =
      decode_image(fixture_bytes("jpg_progressive.jpg"), "p.jpg", kMaxImagePixels,
                   [&](std::size_t, std::size_t, std::size_t b) { progressive = b; });
  EXPECT_GT(progressive, p.pixels.size() + p.width * p.height);
}

TEST(ImageDecode, MissingFileAndEmptyFile) {
  const std::string missing =
      error_of<InputError>([] { decode_image_file(fixture_dir() / "no_such_image.jpg"); });
  EXPECT_NE(missing.find("no_such_image.jpg"), std::string::npos) << missing;
  image_test::TempDir dir;
  const auto empty = dir.write("empty.png", "");
  const std::string message = error_of<InputError>([&] { decode_image_file(empty); });
  EXPECT_NE(message.find("empty.png"), std::string::npos) << message;
}

TEST(ImageDecode, PixelLimitIsCheckedFromTheHeader) {
  const auto jpeg = fixture_bytes("jpg_420.jpg");  // 37 x 29
  EXPECT_NO_THROW(decode_image(jpeg, "ok.jpg", 37 * 29));
  const std::string message =
      error_of<InputError>([&] { decode_image(jpeg, "x.jpg", 37 * 29 - 1); });
  EXPECT_NE(message.find("37 x 29"), std::string::npos) << message;
  const auto png = fixture_bytes("png_rgb8.png");  // 23 x 17
  EXPECT_NO_THROW(decode_image(png, "ok.png", 23 * 17));
  EXPECT_FALSE(error_of<InputError>([&] { decode_image(png, "x.png", 100); }).empty());
}

// Every truncation point of a few files: an InputError or a full image, never a crash.
TEST(ImageDecode, EveryTruncationIsHandled) {
  for (const char* file :
       {"jpg_444.jpg", "jpg_cmyk_adobe.jpg", "png_p4_interlaced.png", "png_rgba16.png"}) {
    SCOPED_TRACE(file);
    const auto bytes = fixture_bytes(file);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      const std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + cut);
      try {
        const RgbImage image = decode_image(part, file);
        EXPECT_EQ(image.pixels.size(), image.width * image.height * 3);
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
      }
    }
  }
}

// Corrupting each byte in turn: never anything but an InputError or an image.
TEST(ImageDecode, EveryByteFlipIsHandled) {
  for (const char* file : {"jpg_progressive.jpg", "png_l1_interlaced.png"}) {
    SCOPED_TRACE(file);
    const auto bytes = fixture_bytes(file);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::vector<std::uint8_t> broken = bytes;
      broken[i] ^= 0xA5;
      try {
        const RgbImage image = decode_image(broken, file);
        EXPECT_EQ(image.pixels.size(), image.width * image.height * 3);
      } catch (const InputError&) {
      }
    }
  }
}

}  // namespace in_image_decode_test
}  // namespace
}  // namespace vlbias
