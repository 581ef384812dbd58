#pragma once
// Helpers for the image tests: fixture access (tests/fixtures/encode/images, written by
// tools/make_image_fixtures.py), the synthetic image generator mirrored from that script, a
// per-test temporary directory and error capture.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image/image.h"

namespace vlbias::image_test {

inline std::filesystem::path fixture_dir() {
  return std::filesystem::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images";
}

inline const nlohmann::json& manifest() {
  return testing_util::fixture_json("encode/images/manifest.json");
}

inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::uint8_t> fixture_bytes(const std::string& name) {
  return read_bytes(fixture_dir() / name);
}

inline std::string sha256_of(const std::vector<std::uint8_t>& bytes) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// make_image_fixtures.py synthetic(): hashed noise in a third of the 8x8 blocks, ramps elsewhere.
inline RgbImage synthetic_image(std::size_t width, std::size_t height, std::uint32_t seed) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(width * height * 3);
  for (std::size_t y = 0; y < height; ++y) {
    for (std::size_t x = 0; x < width; ++x) {
      for (std::size_t c = 0; c < 3; ++c) {
        std::uint32_t v = (static_cast<std::uint32_t>(x) * 0x9E3779B1u) ^
                          (static_cast<std::uint32_t>(y) * 0x85EBCA77u) ^
                          (static_cast<std::uint32_t>(c) * 0xC2B2AE3Du) ^ seed;
        v ^= v >> 15;
        v *= 0x2C1B3C6Du;
        v ^= v >> 12;
        v *= 0x297A2D39u;
        v ^= v >> 15;
        const std::uint32_t noise = v >> 24;
        const std::size_t block = ((x >> 3) + (y >> 3) + c) % 3;
        const std::size_t ramp = (x * 3 + y * 2 + c * 40) & 255;
        image.pixels[(y * width + x) * 3 + c] =
            static_cast<std::uint8_t>(block == 0 ? noise : ramp);
      }
    }
  }
  return image;
}

// Index of the first differing byte, or -1; for readable failures on image bytes.
inline long first_difference(const std::vector<std::uint8_t>& a,
                             const std::vector<std::uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return static_cast<long>(i);
  }
  return -1;
}

using testing_util::TempDir;

using testing_util::error_of;

}  // namespace vlbias::image_test
