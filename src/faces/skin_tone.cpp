// Skin tone per face: HEIM's skin rule and Monk tone, and the ITA (include/vlbias/faces/skin_tone.h
// has the formulas, their sources and the data convention).
#include "vlbias/faces/skin_tone.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "skin_tone_internal.h"
#include "vlbias/core/error.h"

namespace vlbias {
namespace faces_internal {

YCrCb8 opencv_ycrcb(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  // OpenCV imgproc color_yuv: RGB2YCrCb_i<uchar>, yuv_shift = 14, CV_DESCALE(x, n) =
  // (x + (1 << (n - 1))) >> n, saturate_cast<uchar>. Coefficients: 0.299, 0.587, 0.114 (Y),
  // 0.713 (Cr), 0.564 (Cb), each times 2^14 and rounded.
  constexpr int kShift = 14;
  constexpr int kHalf = 1 << (kShift - 1);
  constexpr int kDelta = 128 << kShift;
  const int y = (r * 4899 + g * 9617 + b * 1868 + kHalf) >> kShift;
  const int cr = ((r - y) * 11682 + kDelta + kHalf) >> kShift;
  const int cb = ((b - y) * 9241 + kDelta + kHalf) >> kShift;
  auto clamp255 = [](int v) { return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v)); };
  return {clamp255(y), clamp255(cr), clamp255(cb)};
}

bool heim_skin_pixel(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  // arXiv 1708.02694 (Kolkur et al.), in HEIM's skin_tone_metrics.py form; A = 255 > 15 always.
  if (!(r > 95 && g > 40 && b > 20 && r > g && r > b && r - g > 15)) return false;
  const YCrCb8 c = opencv_ycrcb(r, g, b);
  const long cr = c.cr, cb = c.cb;
  if (!(cr > 135 && cb > 85 && c.y > 80)) return false;
  // The five lines of the Cr-Cb polygon, times 10^4 (10^2 for the fourth) to integers:
  // Cr <= 1.5862 Cb + 20, Cr >= 0.3448 Cb + 76.2069, Cr >= -4.5652 Cb + 234.5652,
  // Cr <= -1.15 Cb + 301.75, Cr <= -2.2857 Cb + 432.85. Exact; HEIM's float64 expressions decide
  // all 256 x 256 (Cr, Cb) pairs alike (tools/make_skin_tone_fixtures.py's exhaustive hash).
  return 10000 * cr <= 15862 * cb + 200000 && 10000 * cr >= 3448 * cb + 762069 &&
         10000 * cr >= -45652 * cb + 2345652 && 100 * cr <= -115 * cb + 30175 &&
         10000 * cr <= -22857 * cb + 4328500;
}

namespace {

// sRGB (IEC 61966-2-1) decoding of each 8-bit level to linear light.
const std::array<double, 256>& srgb8_linear_table() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int v = 0; v < 256; ++v) {
      const double c = v / 255.0;
      t[v] = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    }
    return t;
  }();
  return table;
}

// CIE 1976 f(t): cube root above (6/29)^3, else the linear segment t / (3 (6/29)^2) + 4/29.
double cie_lab_f(double t) {
  constexpr double kDelta = 6.0 / 29.0;
  if (t > kDelta * kDelta * kDelta) return std::cbrt(t);
  return t / (3.0 * kDelta * kDelta) + 4.0 / 29.0;
}

}  // namespace

CieLab srgb8_to_lab(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  const auto& lin = srgb8_linear_table();
  const double lr = lin[r], lg = lin[g], lb = lin[b];
  // OpenCV's sRGB -> XYZ (D65) matrix (imgproc color_lab.cpp sRGB2XYZ_D65) and its white point,
  // the row sums 0.950456, 1, 1.088754.
  const double x = (0.412453 * lr + 0.357580 * lg + 0.180423 * lb) / 0.950456;
  const double y = 0.212671 * lr + 0.715160 * lg + 0.072169 * lb;
  const double z = (0.019334 * lr + 0.119193 * lg + 0.950227 * lb) / 1.088754;
  const double fx = cie_lab_f(x), fy = cie_lab_f(y), fz = cie_lab_f(z);
  return {116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)};
}

double ita_of_lab(const CieLab& lab) {
  // Chardon et al. 1991: ITA = arctan((L* - 50) / b*) x 180 / pi.
  return std::atan((lab.l - 50.0) / lab.b) * 180.0 / std::numbers::pi;
}

}  // namespace faces_internal

namespace {

using faces_internal::heim_skin_pixel;

// InputError unless the image has pixels and its buffer and the mask fit its size.
void check_skin_tone_inputs(const RgbImage& image, std::string_view source,
                            const std::optional<PixelMaskView>& mask) {
  VLBIAS_CHECK(image.width > 0 && image.height > 0, InputError,
               "{} is empty ({} x {} pixels): a skin tone needs an image with pixels", source,
               image.width, image.height);
  const std::size_t pixels = image.width * image.height;
  VLBIAS_CHECK(pixels / image.width == image.height &&
                   pixels <= std::numeric_limits<std::size_t>::max() / 3 &&
                   image.pixels.size() == pixels * 3,
               InputError,
               "{} holds {} bytes of pixels for {} x {} pixels: expected width x height x 3 (RGB)",
               source, image.pixels.size(), image.width, image.height);
  if (!mask) return;
  VLBIAS_CHECK(mask->width == image.width && mask->height == image.height, InputError,
               "the mask for {} is {} x {} pixels, the image {} x {}: a mask must have the "
               "image's width and height",
               source, mask->width, mask->height, image.width, image.height);
  VLBIAS_CHECK(mask->values.size() == pixels, InputError,
               "the mask for {} holds {} values for {} x {} pixels: expected one byte per pixel",
               source, mask->values.size(), image.width, image.height);
}

// find_scale_rgb: the Monk tone (1-based) at the least L1 distance from `v`, the first on a tie.
std::pair<int, double> nearest_monk_tone(const std::array<double, 3>& v) {
  int best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 10; ++k) {
    const auto& tone = kMonkSkinTonesRgb[k];
    const double d = std::abs(v[0] - tone[0]) + std::abs(v[1] - tone[1]) + std::abs(v[2] - tone[2]);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return {best + 1, best_distance};
}

}  // namespace

const char* to_string(SkinToneMode mode) {
  return mode == SkinToneMode::Heim ? "heim" : "corrected";
}

SkinToneMode parse_skin_tone_mode(std::string_view text) {
  if (text == "corrected") return SkinToneMode::Corrected;
  if (text == "heim") return SkinToneMode::Heim;
  VLBIAS_FAIL(UsageError,
              "unknown skin tone mode '{}': expected 'corrected' (RGB mean against the RGB Monk "
              "tones) or 'heim' (HEIM's published code, R and B of the mean swapped)",
              text);
}

const char* to_string(ItaCategory category) {
  switch (category) {
    case ItaCategory::VeryLight:
      return "very light";
    case ItaCategory::Light:
      return "light";
    case ItaCategory::Intermediate:
      return "intermediate";
    case ItaCategory::Tan:
      return "tan";
    case ItaCategory::Brown:
      return "brown";
    case ItaCategory::Dark:
      return "dark";
  }
  return "dark";
}

ItaCategory ita_category(double ita_degrees) {
  VLBIAS_CHECK(!std::isnan(ita_degrees), UsageError, "an ITA category needs an angle, not NaN");
  // Del Bino et al. 2006 (after Chardon et al. 1991): 55, 41, 28, 10, -30 degrees.
  if (ita_degrees > 55.0) return ItaCategory::VeryLight;
  if (ita_degrees > 41.0) return ItaCategory::Light;
  if (ita_degrees > 28.0) return ItaCategory::Intermediate;
  if (ita_degrees > 10.0) return ItaCategory::Tan;
  if (ita_degrees > -30.0) return ItaCategory::Brown;
  return ItaCategory::Dark;
}

std::vector<std::uint8_t> skin_pixel_mask(const RgbImage& image, std::string_view source) {
  VLBIAS_CHECK(
      image.pixels.size() / 3 == image.width * image.height && image.pixels.size() % 3 == 0,
      InputError, "{}: {} x {} pixels but {} bytes; expected 3 bytes a pixel.", source, image.width,
      image.height, image.pixels.size());
  std::vector<std::uint8_t> mask(image.width * image.height);
  for (std::size_t i = 0; i < mask.size(); ++i) {
    const std::uint8_t* p = image.pixels.data() + 3 * i;
    mask[i] = heim_skin_pixel(p[0], p[1], p[2]) ? 1 : 0;
  }
  return mask;
}

SkinTone measure_skin_tone(const RgbImage& image, std::string_view source,
                           const SkinToneOptions& options) {
  check_skin_tone_inputs(image, source, options.mask);
  SkinTone out;
  out.mode = options.mode;
  const std::size_t pixels = image.width * image.height;
  std::array<std::uint64_t, 3> sums{0, 0, 0};
  double ita_sum = 0.0;
  for (std::size_t i = 0; i < pixels; ++i) {
    if (options.mask && options.mask->values[i] == 0) continue;
    ++out.examined_pixels;
    const std::uint8_t r = image.pixels[3 * i], g = image.pixels[3 * i + 1],
                       b = image.pixels[3 * i + 2];
    if (!heim_skin_pixel(r, g, b)) continue;
    ++out.skin_pixels;
    sums[0] += r;
    sums[1] += g;
    sums[2] += b;
    ita_sum += faces_internal::ita_of_lab(faces_internal::srgb8_to_lab(r, g, b));
  }
  if (out.skin_pixels == 0) return out;  // unknown: no mean, no tone, no ITA
  const auto n = static_cast<double>(out.skin_pixels);
  const std::array<double, 3> mean = {static_cast<double>(sums[0]) / n,
                                      static_cast<double>(sums[1]) / n,
                                      static_cast<double>(sums[2]) / n};
  out.mean_rgb = mean;
  // HEIM's published code returned [mean B, mean G, mean R] under the names red, green, blue.
  const std::array<double, 3> compared =
      options.mode == SkinToneMode::Heim ? std::array<double, 3>{mean[2], mean[1], mean[0]} : mean;
  const auto [tone, distance] = nearest_monk_tone(compared);
  out.monk = tone;
  out.monk_l1 = distance;
  out.ita_degrees = ita_sum / n;
  out.ita_category = ita_category(*out.ita_degrees);
  return out;
}

Json skin_tone_json(const SkinTone& tone) {
  Json j;
  j["mode"] = to_string(tone.mode);
  j["examined_pixels"] = tone.examined_pixels;
  j["skin_pixels"] = tone.skin_pixels;
  j["mean_rgb"] = tone.mean_rgb ? Json(*tone.mean_rgb) : Json(nullptr);
  j["monk"] = tone.monk ? Json(*tone.monk) : Json(nullptr);
  j["monk_l1"] = tone.monk_l1 ? Json(*tone.monk_l1) : Json(nullptr);
  j["ita"] = tone.ita_degrees ? Json(*tone.ita_degrees) : Json(nullptr);
  j["ita_category"] = tone.ita_category ? Json(to_string(*tone.ita_category)) : Json(nullptr);
  return j;
}

}  // namespace vlbias
