// The naming rules of extracted images (include/vlbias/io/parquet/parquet_images.h): which stored
// paths are kept, and the formats sniffed from magic numbers. The files themselves are tested at
// the CLI (tests/cli/extract_images_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "vlbias/core/error.h"

#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/parquet/parquet_images.h"

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

const std::filesystem::path kItems =
    std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/io/parquet/items";
const std::vector<std::string> kItemFiles = {"jpg_420.jpg", "png_rgb8.png", "jpg_grey.jpg",
                                             "jpg_444.jpg", "png_rgba8.png"};

std::string image_file(const std::string& name) {
  std::ifstream in(std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images" / name,
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// images.parquet (arrow-rs, three row groups of 2, 2, 1 rows), binary.parquet (DuckDB, a plain
// BLOB column) and shards/ (two DuckDB files): every row's cell is its image file's bytes, in
// any order of rows (row groups decoded again when evicted) and from several threads.
TEST(ParquetImageColumn, EveryRowsCellIsItsImageInAnyOrderAndFromThreads) {
  for (const char* input : {"images.parquet", "binary.parquet", "shards"}) {
    SCOPED_TRACE(input);
    const vlbias::ParquetImageColumn column((kItems / input).string(), "image");
    ASSERT_EQ(column.rows(), 5u);
    EXPECT_EQ(column.bytes_column(),
              std::string(input) == "binary.parquet" ? "image" : "image.bytes");
    std::vector<std::size_t> order;
    std::mt19937 draw(7);
    for (int k = 0; k < 40; ++k) order.push_back(draw() % 5);
    for (const std::size_t r : order) EXPECT_EQ(column.cell(r), image_file(kItemFiles[r])) << r;
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int k = 0; k < 50; ++k) {
          const std::size_t r = static_cast<std::size_t>(k * (t + 1)) % 5;
          wrong[t] += column.cell(r) != image_file(kItemFiles[r]);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(wrong, std::vector<int>(4, 0));
  }
}

TEST(ParquetImageColumn, NullCellsAndColumnsThatHoldNoImages) {
  const std::string hf =
      std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/io/parquet/hf_images.parquet";
  const vlbias::ParquetImageColumn column(hf, "image");
  ASSERT_EQ(column.rows(), 8u);
  EXPECT_FALSE(column.cell(4).has_value());  // the null image
  EXPECT_EQ(column.cell(7), "plain text");
  EXPECT_TRUE(vlbias::parquet_column_holds_images(hf, "image"));
  EXPECT_TRUE(vlbias::parquet_column_holds_images(hf, "image.bytes"));
  EXPECT_FALSE(vlbias::parquet_column_holds_images(hf, "gender"));
  EXPECT_FALSE(vlbias::parquet_column_holds_images(hf, "picture"));
  for (const char* bad : {"gender", "picture"}) {
    try {
      const vlbias::ParquetImageColumn refused(hf, bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const vlbias::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace in_parquet_images_test
}  // namespace
