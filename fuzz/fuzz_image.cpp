// libFuzzer target for the image decoders (JPEG via libjpeg-turbo, PNG via libpng), the EXIF
// orientation reader (with DecodeOptions::exif_transpose), and the preprocessing that follows them:
// resize, center crop and the pixel tensor. Only vlbias::Error may escape; anything else (crash,
// sanitizer report, other exception, an image whose size disagrees with its pixel count) is a bug.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/encode/image/image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  // A lower pixel cap than the default keeps each run fast and within libFuzzer's RSS limit.
  constexpr std::size_t kFuzzMaxPixels = std::size_t{1} << 22;
  const std::span<const std::uint8_t> bytes(data, size);
  // The EXIF path too (JPEG APP1 / PNG eXIf, tEXt, iTXt): the oriented image is the plain one
  // transposed, so it has the same pixels, in the same or swapped shape.
  vlbias::RgbImage oriented;
  bool oriented_ok = true;
  try {
    oriented = vlbias::decode_image(bytes, "fuzz.img", vlbias::DecodeOptions{kFuzzMaxPixels, true});
  } catch (const vlbias::Error&) {
    oriented_ok = false;
  }
  vlbias::RgbImage image;
  try {
    image = vlbias::decode_image(bytes, "fuzz.img", kFuzzMaxPixels);
  } catch (const vlbias::Error&) {
    if (oriented_ok) std::abort();  // the orientation cannot make a bad image decodable
    return 0;
  }
  if (image.width == 0 || image.height == 0 || image.width * image.height > kFuzzMaxPixels ||
      image.pixels.size() != image.width * image.height * 3) {
    std::abort();
  }
  if (oriented_ok) {
    const bool same = oriented.width == image.width && oriented.height == image.height;
    const bool swapped = oriented.width == image.height && oriented.height == image.width;
    if (!same && !swapped) std::abort();
    if (image.width * image.height <= (std::size_t{1} << 16)) {
      std::vector<std::uint8_t> a = image.pixels, b = oriented.pixels;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a != b) std::abort();
    }
  }
  if (image.width * image.height > (std::size_t{1} << 16)) return 0;
  // Sizes derived from the input, so the fuzzer also explores resize and crop geometry.
  const std::size_t w = 1 + (size * 7 + image.width) % 48;
  const std::size_t h = 1 + (size * 13 + image.height) % 48;
  const vlbias::RgbImage resized = vlbias::resize_bicubic(image, w, h);
  if (resized.width != w || resized.height != h || resized.pixels.size() != w * h * 3) {
    std::abort();
  }
  // An elongated image resized by its short side becomes huge (slow, not a bug): skip it.
  if (std::max(image.width, image.height) > 16 * std::min(image.width, image.height)) return 0;
  vlbias::ImagePreprocess p;
  p.shortest_edge = 1 + size % 40;
  p.crop_width = 1 + (size / 3) % 40;
  p.crop_height = 1 + (size / 5) % 40;
  p.crop_rounding = size % 2 == 0 ? vlbias::CropRounding::Floor : vlbias::CropRounding::Round;
  std::vector<float> tensor(3 * p.crop_width * p.crop_height);
  vlbias::preprocess_image(image, p, tensor.data());
  return 0;
}
