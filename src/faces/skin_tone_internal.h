#pragma once
// The per-pixel pieces of skin_tone.cpp, visible to tests/faces for exhaustive checks over all
// 2^24 colours (include/vlbias/faces/skin_tone.h documents the formulas and their sources).
#include <cstdint>

namespace vlbias::faces_internal {

struct YCrCb8 {
  std::uint8_t y = 0, cr = 0, cb = 0;
};
// cv2.cvtColor(COLOR_BGR2YCrCb) of one 8-bit pixel: OpenCV's fixed point (14 bits; coefficients
// 4899, 9617, 1868 for Y, 11682 for Cr, 9241 for Cb; offset 128 << 14; rounded, clamped).
YCrCb8 opencv_ycrcb(std::uint8_t r, std::uint8_t g, std::uint8_t b);

// arXiv 1708.02694's rule as HEIM applies it (alpha 255), decided in integers.
bool heim_skin_pixel(std::uint8_t r, std::uint8_t g, std::uint8_t b);

struct CieLab {
  double l = 0, a = 0, b = 0;
};
// CIELAB (L* 0..100) of an 8-bit sRGB colour: exact sRGB curve, OpenCV's matrix and D65 white.
CieLab srgb8_to_lab(std::uint8_t r, std::uint8_t g, std::uint8_t b);

// atan((L* - 50) / b*) in degrees (b* = 0, which no skin colour has, gives +-90, or NaN at
// L* = 50, as numpy's arctan does).
double ita_of_lab(const CieLab& lab);

}  // namespace vlbias::faces_internal
