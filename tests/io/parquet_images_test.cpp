// The naming rules of extracted images (include/vlbias/io/parquet_images.h): which stored paths
// are kept, and the formats sniffed from magic numbers. The files themselves are tested at the
// CLI (tests/cli/extract_images_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "vlbias/io/parquet.h"
#include "vlbias/io/parquet_images.h"

namespace {
namespace in_parquet_images_test {

using vlbias::safe_image_name;
using vlbias::sniff_image_extension;
using namespace std::string_view_literals;

TEST(ParquetImages, SafeNamesAreRelativePathsInsideTheFolder) {
  EXPECT_EQ(safe_image_name("a.jpg"), "a.jpg");
  EXPECT_EQ(safe_image_name("train/x/1.png"), "train/x/1.png");
  EXPECT_EQ(safe_image_name("é.jpg"), "é.jpg");
  const std::vector<std::string> bad_names = {"",
                                              "/etc/passwd",
                                              "../a.jpg",
                                              "a/../../b.jpg",
                                              "a/./b.jpg",
                                              "a//b.jpg",
                                              "a/",
                                              ".",
                                              "..",
                                              "a\\b.jpg",
                                              "a\nb.jpg",
                                              std::string("a\0b", 3),
                                              "a\x7f",
                                              "\xff.jpg",
                                              std::string(256, 'x'),
                                              std::string(1025, 'x')};
  for (const std::string& bad : bad_names) {
    EXPECT_EQ(safe_image_name(bad), "") << bad;
  }
  EXPECT_EQ(safe_image_name(std::string(255, 'x')), std::string(255, 'x'));
}

TEST(ParquetImages, FormatsAreSniffedFromTheirMagicNumbers) {
  EXPECT_EQ(sniff_image_extension("\xFF\xD8\xFF\xE0rest"), "jpg");
  EXPECT_EQ(sniff_image_extension("\x89PNG\r\n\x1A\nrest"), "png");
  EXPECT_EQ(sniff_image_extension("RIFF\x10\x00\x00\x00WEBPVP8 "sv), "webp");
  EXPECT_EQ(sniff_image_extension("GIF87a"), "gif");
  EXPECT_EQ(sniff_image_extension("GIF89a.."), "gif");
  EXPECT_EQ(sniff_image_extension("\x89PNG"), "bin");  // truncated
  EXPECT_EQ(sniff_image_extension("RIFF\x10\x00\x00\x00WAVEfmt "sv), "bin");
  EXPECT_EQ(sniff_image_extension(""), "bin");
}

TEST(ParquetImages, TheFootersKeyValueMetadataIsRead) {
  const std::string dir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/io/parquet/";
  const vlbias::ParquetInfo info =
      vlbias::read_parquet_info(dir + "hf_fairface/0.25/validation-00000-of-00001.parquet");
  std::string hf;
  for (const auto& [key, value] : info.metadata) {
    if (key == "huggingface") hf = value;
  }
  EXPECT_EQ(hf.rfind("{\"info\":{\"features\":{\"image\":{\"_type\":\"Image\"}", 0), 0u) << hf;
  EXPECT_NE(hf.find("\"race\":{\"names\":[\"East Asian\",\"Indian\","), std::string::npos) << hf;
}

}  // namespace in_parquet_images_test
}  // namespace
