#pragma once
// Skin tone of one face: the Monk Skin Tone scale (10 tones) and the Individual Typology Angle,
// from the skin pixels of a face chip (or of a whole image, as HEIM measures a generated image).
//
// Data convention: an RgbImage (8-bit sRGB, row-major, interleaved,
// include/vlbias/encode/image/image.h) and, optionally, a mask of the same width and height (one
// byte per pixel, row-major; a pixel is examined where its byte is non-zero). Nothing is resized or
// converted before measuring.
//
// Skin pixels: the RGB-A and YCrCb rule of Kolkur et al., arXiv 1708.02694, exactly as HEIM's
// SkinToneMetric.skin_pixel_from_image (helm, skin_tone_metrics.py) and DALL-Eval's
// detect_skintone.py apply it, A being 255 (what cv2.cvtColor(BGR2RGBA) gives):
//   R > 95, G > 40, B > 20, R > G, R > B, |R - G| > 15,
//   Cr > 135, Cb > 85, Y > 80, Cr <= 1.5862 Cb + 20, Cr >= 0.3448 Cb + 76.2069,
//   Cr >= -4.5652 Cb + 234.5652, Cr <= -1.15 Cb + 301.75, Cr <= -2.2857 Cb + 432.85,
// where Y, Cr, Cb are OpenCV's 8-bit cv2.cvtColor(BGR2YCrCb): Y = 0.299 R + 0.587 G + 0.114 B,
// Cr = 0.713 (R - Y) + 128, Cb = 0.564 (B - Y) + 128 in OpenCV's 14-bit fixed point, rounded and
// clamped to 0..255. The inequalities are decided exactly (integers); HEIM's float64 comparisons
// decide every one of the 256 x 256 (Cr, Cb) pairs the same way, and the rule equals HEIM's
// for all 2^24 colours (tests/faces/skin_tone_test.cpp, tools/make_skin_tone_fixtures.py).
//
// Monk tone: the mean skin colour, the ten Monk RGB colours (skintone.google; HEIM's
// SKIN_TONES_RGB), the tone at the least L1 distance sum_c |mean_c - tone_c| (the first on a
// tie; find_scale_rgb). The mean is sum / count in double, as numpy's mean of HEIM's lists.
//   SkinToneMode::Corrected  compares (mean R, mean G, mean B): RGB with RGB. The default; HEIM
//                            since helm commit 83e45f393 (v0.5.5, November 2024).
//   SkinToneMode::Heim       compares (mean B, mean G, mean R) with the RGB tones, as HEIM's
//                            published code did (helm 346f765d9 to v0.5.4, the HEIM paper, and
//                            DALL-Eval's detect_skintone.py): its "blue" list collected R and its
//                            "red" list B. Bit for bit, the channel swap included.
// ITA (Chardon et al. 1991; Del Bino et al. 2006): per skin pixel, CIELAB from sRGB (the exact
// IEC 61966-2-1 curve, OpenCV's sRGB -> XYZ matrix and its D65 white (0.950456, 1, 1.088754),
// the matrix's row sums, so white is a* = b* = 0; CIE f(t) = cbrt(t) above (6/29)^3, which every
// skin pixel is), ITA = atan((L* - 50) / b*) * 180 / pi in degrees, L* in 0..100 and b* signed
// (not OpenCV's 8-bit encoding L * 255 / 100, b + 128); the ITA reported is the mean of the
// pixels' ITAs, as DALL-Eval's TRUST compute_ita.py averages them. No skin colour has b* = 0
// (the least |b*| over all skin colours is 4.8e-5), so every pixel's ITA is finite. The ITA is
// the same in both modes. Categories (Del Bino et al. 2006), each bound belonging to the darker
// side: very light > 55, light (41, 55], intermediate (28, 41], tan (10, 28], brown (-30, 10],
// dark <= -30.
//
// Unknown: with no skin pixel (an image without skin-coloured pixels, a grey image, a mask that
// excludes every skin pixel) there is no mean colour, no Monk tone and no ITA: the optionals
// below are empty. That is "unknown", never a tone (HEIM counts it as monk_unknown).
//
// docs/methods.md#skin-tone: what the swap changes (measured), why tones 9 and 10 cannot come
// out of the corrected mode, and where DALL-Eval's ITA code is not followed.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/encode/image/image.h"
#include "vlbias/io/json.h"

namespace vlbias {

enum class SkinToneMode { Corrected, Heim };
// "corrected" | "heim".
const char* to_string(SkinToneMode mode);
// "corrected" or "heim" (the command line's --skin-tone); UsageError naming both otherwise.
SkinToneMode parse_skin_tone_mode(std::string_view text);

enum class ItaCategory { VeryLight, Light, Intermediate, Tan, Brown, Dark };
// "very light" | "light" | "intermediate" | "tan" | "brown" | "dark".
const char* to_string(ItaCategory category);
// The category of an ITA in degrees (bounds above); UsageError for NaN.
ItaCategory ita_category(double ita_degrees);

// The Monk Skin Tone scale, tones 1 (lightest) to 10, as sRGB (#f6ede4 ... #292420).
inline constexpr std::array<std::array<std::uint8_t, 3>, 10> kMonkSkinTonesRgb = {{
    {246, 237, 228},
    {243, 231, 219},
    {247, 234, 208},
    {234, 218, 186},
    {215, 189, 150},
    {160, 126, 86},
    {130, 92, 67},
    {96, 65, 52},
    {58, 49, 42},
    {41, 36, 32},
}};

// A mask over an image: width x height bytes, row-major; non-zero = examined. Not owning.
struct PixelMaskView {
  std::size_t width = 0;
  std::size_t height = 0;
  std::span<const std::uint8_t> values;
};

struct SkinToneOptions {
  SkinToneMode mode = SkinToneMode::Corrected;
  std::optional<PixelMaskView> mask;  // none: every pixel is examined
};

struct SkinTone {
  SkinToneMode mode = SkinToneMode::Corrected;
  std::size_t examined_pixels = 0;  // pixels inside the mask (all without one)
  std::size_t skin_pixels = 0;      // of those, pixels the skin rule accepts
  // Mean skin colour (R, G, B), 0..255, in this order in both modes.
  std::optional<std::array<double, 3>> mean_rgb;
  std::optional<int> monk;        // 1..10
  std::optional<double> monk_l1;  // L1 distance from the compared mean (mode) to that tone
  std::optional<double> ita_degrees;
  std::optional<ItaCategory> ita_category;
  bool known() const { return skin_pixels > 0; }
};

// The skin tone of `image` (a face chip, or a whole image). `source` names it in errors (a file
// and face, e.g. "'a.jpg', face 2"). InputError when the image is empty (no pixels), its pixel
// buffer does not hold width x height x 3 bytes, or the mask's size differs from the image's or
// its values do not hold width x height bytes. Zero skin pixels are not an error: the result is
// unknown (above).
SkinTone measure_skin_tone(const RgbImage& image, std::string_view source,
                           const SkinToneOptions& options = {});

// The skin rule above per pixel of `image`: width x height bytes, row-major, 1 where the pixel is
// skin-coloured, else 0 (the mask measure_skin_tone counts as skin_pixels). InputError when the
// pixel buffer does not hold width x height x 3 bytes.
std::vector<std::uint8_t> skin_pixel_mask(const RgbImage& image, std::string_view source);

// {"mode", "examined_pixels", "skin_pixels", "mean_rgb": [r, g, b], "monk", "monk_l1", "ita",
// "ita_category"}: null for each of the last six when unknown.
Json skin_tone_json(const SkinTone& tone);

}  // namespace vlbias
