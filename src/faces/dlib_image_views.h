#pragma once
// dlib's generic image interface (dlib/image_processing/generic_image.h) over our images, shared
// by the two files of vlbias that include dlib (face_detect.cpp, hog_scan.cpp): dlib reads
// RgbImage's interleaved RGB bytes in place (dlib::rgb_pixel is red, green, blue: the same three
// bytes). A const view for the images read, an owning chip for those written; and an istream
// over bytes in memory (weights read in place).
#include <dlib/image_processing/generic_image.h>
#include <dlib/pixel.h>

#include <cstdint>
#include <span>
#include <streambuf>
#include <utility>

#include "vlbias/encode/image/image.h"

namespace vlbias::faces_internal {

static_assert(sizeof(dlib::rgb_pixel) == 3, "dlib::rgb_pixel must be three bytes");

struct DlibRgbView {
  const RgbImage* image = nullptr;
};
struct DlibRgbChip {
  RgbImage image;
};

inline long num_rows(const DlibRgbView& v) {
  return static_cast<long>(v.image->height);
}
inline long num_columns(const DlibRgbView& v) {
  return static_cast<long>(v.image->width);
}
inline const void* image_data(const DlibRgbView& v) {
  return v.image->pixels.empty() ? nullptr : v.image->pixels.data();
}
inline long width_step(const DlibRgbView& v) {
  return static_cast<long>(v.image->width * 3);
}

inline long num_rows(const DlibRgbChip& c) {
  return static_cast<long>(c.image.height);
}
inline long num_columns(const DlibRgbChip& c) {
  return static_cast<long>(c.image.width);
}
inline void* image_data(DlibRgbChip& c) {
  return c.image.pixels.empty() ? nullptr : c.image.pixels.data();
}
inline const void* image_data(const DlibRgbChip& c) {
  return c.image.pixels.empty() ? nullptr : c.image.pixels.data();
}
inline long width_step(const DlibRgbChip& c) {
  return static_cast<long>(c.image.width * 3);
}
inline void set_image_size(DlibRgbChip& c, long rows, long cols) {
  c.image.width = static_cast<std::size_t>(cols);
  c.image.height = static_cast<std::size_t>(rows);
  c.image.pixels.assign(c.image.width * c.image.height * 3, 0);
}
inline void swap(DlibRgbChip& a, DlibRgbChip& b) {
  std::swap(a.image, b.image);
}

// An istream's buffer over bytes in memory, read in place.
class DlibByteStreamBuf : public std::streambuf {
 public:
  explicit DlibByteStreamBuf(std::span<const std::uint8_t> bytes) {
    char* begin = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
    setg(begin, begin, begin + bytes.size());
  }
};

}  // namespace vlbias::faces_internal

namespace dlib {
template <>
struct image_traits<vlbias::faces_internal::DlibRgbView> {
  using pixel_type = rgb_pixel;
};
template <>
struct image_traits<vlbias::faces_internal::DlibRgbChip> {
  using pixel_type = rgb_pixel;
};
}  // namespace dlib
