// EXIF orientation read as Pillow 9.4 reads it, and applied as PIL.ImageOps.exif_transpose does.
//
// Pillow's path (Image.getexif -> Exif.load -> TiffImagePlugin.ImageFileDirectory_v2):
//   - the block loses a leading "Exif\0\0"; an empty block has no tags;
//   - the first 8 bytes are the TIFF header: its first 4 must be one of Pillow's PREFIXES
//     ("MM\0*", "II*\0", "MM*\0", "II\0*", "MM\0+", "II+\0"), else SyntaxError. Byte 2 equal to
//     0x2B means BigTIFF, whose 64-bit IFD offset Pillow unpacks from the 8-byte head: always
//     struct.error, as is a head shorter than 8 bytes;
//   - IFD0 at the header's offset: a count and 12-byte entries; an entry of an unknown type is
//     skipped, a value that lies outside the block (or an entry or count cut off) ends the
//     reading with the tags read so far kept (OSError, caught); a later entry of the same tag
//     replaces an earlier one;
//   - the Orientation value is the entry's first value (BYTE, ASCII and UNDEFINED give bytes or
//     text, which equal no orientation); exif_transpose looks it up in {2: ..., 8: ...}, so any
//     value equal to an integer 2-8 counts: SHORT, LONG, their signed forms, RATIONAL 12/2,
//     FLOAT 6.0 (a zero denominator is NaN).
// Where the block comes from and when Pillow reads it differs per format (see jpeg_orientation
// and png_orientation), and so does what an unreadable block means: ignored, refused by
// Image.open, or raised by exif_transpose.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "image_codecs.h"
#include "vlbias/core/error.h"
#include "vlbias/core/utf8.h"

namespace vlbias::encode_internal {
namespace {

using Bytes = std::span<const std::uint8_t>;

constexpr std::uint16_t kOrientationTag = 0x0112;
constexpr std::uint16_t kXResolutionTag = 0x011A;
constexpr std::uint16_t kResolutionUnitTag = 0x0128;

bool exif_starts_with(Bytes bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

// An unsigned integer of `n` bytes (n <= 8) in the block's byte order.
std::uint64_t read_uint(const std::uint8_t* p, std::size_t n, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = big_endian ? i : n - 1 - i;
    v = (v << 8) | p[k];
  }
  return v;
}

// TiffImagePlugin's _load_dispatch sizes; 0 for the types Pillow skips.
std::size_t tiff_type_size(unsigned type) {
  switch (type) {
    case 1:  // BYTE
    case 2:  // ASCII
    case 6:  // SIGNED BYTE
    case 7:  // UNDEFINED
      return 1;
    case 3:  // SHORT
    case 8:  // SIGNED SHORT
      return 2;
    case 4:   // LONG
    case 9:   // SIGNED LONG
    case 11:  // FLOAT
    case 13:  // IFD
      return 4;
    case 5:   // RATIONAL
    case 10:  // SIGNED RATIONAL
    case 12:  // DOUBLE
    case 16:  // LONG8
      return 8;
    default:
      return 0;
  }
}

// 2-8 when the first value of an Orientation entry equals that integer in Python, else 0.
int orientation_value(unsigned type, const std::uint8_t* p, bool big) {
  double v = 0;
  switch (type) {
    case 3:
      v = static_cast<double>(read_uint(p, 2, big));
      break;
    case 8:
      v = static_cast<std::int16_t>(read_uint(p, 2, big));
      break;
    case 6:
      v = static_cast<std::int8_t>(p[0]);
      break;
    case 4:
    case 13:
      v = static_cast<double>(read_uint(p, 4, big));
      break;
    case 9:
      v = static_cast<std::int32_t>(read_uint(p, 4, big));
      break;
    case 16:
      v = static_cast<double>(std::min<std::uint64_t>(read_uint(p, 8, big), 1000));
      break;
    case 5:
    case 10: {  // IFDRational: a Fraction, NaN for a zero denominator
      const bool sign = type == 10;
      const std::uint64_t n32 = read_uint(p, 4, big), d32 = read_uint(p + 4, 4, big);
      const std::int64_t n =
          sign ? std::int64_t{static_cast<std::int32_t>(n32)} : static_cast<std::int64_t>(n32);
      const std::int64_t d =
          sign ? std::int64_t{static_cast<std::int32_t>(d32)} : static_cast<std::int64_t>(d32);
      if (d == 0 || n % d != 0) return 0;
      v = static_cast<double>(n / d);
      break;
    }
    case 11: {
      float f;
      const std::uint32_t bits = static_cast<std::uint32_t>(read_uint(p, 4, big));
      std::memcpy(&f, &bits, sizeof f);
      v = f;
      break;
    }
    case 12: {
      const std::uint64_t bits = read_uint(p, 8, big);
      std::memcpy(&v, &bits, sizeof v);
      break;
    }
    default:  // BYTE (bytes), ASCII (text), UNDEFINED (bytes): equal to no integer
      return 0;
  }
  if (!(v >= 2 && v <= 8) || v != std::floor(v)) return 0;
  return static_cast<int>(v);
}

}  // namespace

ExifRead read_exif_orientation(Bytes block, bool strip_exif_prefix) {
  ExifRead r;
  if (strip_exif_prefix && exif_starts_with(block, std::string_view("Exif\0\0", 6))) {
    block = block.subspan(6);
  }
  if (block.empty()) return r;
  const Bytes head = block.first(std::min<std::size_t>(block.size(), 8));
  static constexpr std::string_view kPrefixes[] = {{"MM\0*", 4}, {"II*\0", 4}, {"MM*\0", 4},
                                                   {"II\0*", 4}, {"MM\0+", 4}, {"II+\0", 4}};
  if (std::none_of(std::begin(kPrefixes), std::end(kPrefixes),
                   [&](std::string_view p) { return exif_starts_with(head, p); })) {
    r.status = ExifStatus::NotTiff;
    return r;
  }
  if (head.size() < 8 || head[2] == 0x2B) {
    r.status = ExifStatus::Truncated;
    return r;
  }
  const bool big = head[0] == 'M';
  const std::uint64_t ifd = read_uint(&head[4], 4, big);
  if (ifd > block.size() || block.size() - ifd < 2) return r;
  const std::size_t count = read_uint(&block[ifd], 2, big);
  std::size_t pos = ifd + 2;
  bool has_unit = false, x_resolution_short = false;
  for (std::size_t i = 0; i < count; ++i, pos += 12) {
    if (block.size() - pos < 12) break;
    const auto tag = static_cast<std::uint16_t>(read_uint(&block[pos], 2, big));
    const auto type = static_cast<unsigned>(read_uint(&block[pos + 2], 2, big));
    const std::uint64_t values = read_uint(&block[pos + 4], 4, big);
    const std::size_t unit = tiff_type_size(type);
    if (unit == 0) continue;
    const std::uint64_t size = values * unit;
    const std::uint8_t* data = &block[pos + 8];
    if (size > 4) {
      const std::uint64_t offset = read_uint(data, 4, big);
      if (offset > block.size() || block.size() - offset < size) break;  // OSError: stop
      data = &block[offset];
    }
    if (size == 0) continue;
    if (tag == kOrientationTag) {
      r.has_orientation = true;
      r.orientation = orientation_value(type, data, big);
    } else if (tag == kResolutionUnitTag) {
      has_unit = true;
    } else if (tag == kXResolutionTag) {
      // BYTE / UNDEFINED give bytes, ASCII text without its final NUL: one character or none
      // makes JpegImagePlugin's x_resolution[1] raise IndexError.
      x_resolution_short = ((type == 1 || type == 7) && values == 1) ||
                           (type == 2 && (values == 1 || (values == 2 && data[1] == 0)));
    }
  }
  r.resolution_breaks_open = has_unit && x_resolution_short;
  return r;
}

JpegExif find_jpeg_exif(Bytes bytes) {
  // JpegImagePlugin._open's marker loop, up to the first scan.
  JpegExif found;
  bool dpi = false;
  std::size_t pos = 2;
  while (bytes.size() - pos >= 2) {
    if (bytes[pos] != 0xFF || bytes[pos + 1] == 0xFF) {  // skipped byte, or a fill byte
      ++pos;
      continue;
    }
    const std::uint8_t marker = bytes[pos + 1];
    if (marker == 0x00 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7)) {
      pos += 2;  // no length field
      continue;
    }
    if (marker == 0xDA || marker == 0xD9 || bytes.size() - pos < 4) break;
    const std::size_t length = read_uint(&bytes[pos + 2], 2, true);
    if (length < 2 || bytes.size() - pos - 2 < length) break;
    const Bytes s = bytes.subspan(pos + 4, length - 2);
    // APP0 JFIF with density unit 1 (dots per inch) gives info["dpi"].
    if (marker == 0xE0 && exif_starts_with(s, "JFIF") && s.size() >= 12 && s[7] == 1) dpi = true;
    // The first APP1 starting "Exif\0" is info["exif"]; without a dpi so far, Image.open reads
    // it at once (to look for a resolution there).
    if (marker == 0xE1 && !found.present && exif_starts_with(s, std::string_view("Exif\0", 5))) {
      found.present = true;
      found.block = s;
      found.read_at_open = !dpi;
    }
    pos += 2 + length;
  }
  return found;
}

int jpeg_orientation(Bytes bytes, const std::string& source, bool exif_transpose) {
  const JpegExif exif = find_jpeg_exif(bytes);
  if (!exif.present) return 1;
  const ExifRead r = read_exif_orientation(exif.block, true);
  // Image.open catches SyntaxError there (the EXIF is ignored) but not struct.error, nor the
  // IndexError of a resolution it cannot index.
  VLBIAS_CHECK(!(exif.read_at_open && r.status == ExifStatus::Truncated), InputError,
               "'{}' is a JPEG image whose EXIF block is cut off inside its TIFF header; Pillow "
               "9.4 cannot open it",
               source);
  VLBIAS_CHECK(!(exif.read_at_open && r.resolution_breaks_open), InputError,
               "'{}' is a JPEG image whose EXIF XResolution is one byte or character long; Pillow "
               "9.4 cannot open it",
               source);
  if (!exif_transpose) return 1;
  VLBIAS_CHECK(exif.read_at_open || r.status == ExifStatus::Read, InputError,
               "'{}' is a JPEG image with an unreadable EXIF block ({}), on which "
               "PIL.ImageOps.exif_transpose raises; decode it without --exif-transpose",
               source, r.status == ExifStatus::NotTiff ? "no TIFF header" : "a cut-off header");
  return r.orientation != 0 ? r.orientation : 1;
}

namespace {

// What PngImagePlugin puts in info["exif"] and info["XML:com.adobe.xmp"] from one side of the
// first IDAT chunk (a later chunk replaces an earlier one).
struct PngMetadata {
  Bytes exif;
  bool has_exif = false;
  bool exif_prefixed = false;  // a tEXt "exif" value, whose "Exif\0\0" Exif.load strips
  Bytes xmp;
  bool has_xmp = false;
};

// Key and value of a tEXt chunk (chunk_tEXt: split at the first NUL; no NUL: all key).
std::pair<std::string_view, Bytes> text_chunk(Bytes data) {
  const auto nul = std::find(data.begin(), data.end(), std::uint8_t{0});
  const std::size_t k = static_cast<std::size_t>(nul - data.begin());
  const std::string_view key(reinterpret_cast<const char*>(data.data()), k);
  return {key, k < data.size() ? data.subspan(k + 1) : Bytes{}};
}

// The text of an uncompressed iTXt chunk whose key is the XMP key, as chunk_iTXt accepts it
// (language and translated key and text valid UTF-8); false otherwise. Compressed iTXt and zTXt
// chunks are not read.
bool itxt_xmp(Bytes data, Bytes* text) {
  const auto [key, rest] = text_chunk(data);
  if (key != "XML:com.adobe.xmp" || rest.size() < 2 || rest[0] != 0) return false;
  const auto as_view = [](Bytes b) {
    return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
  };
  Bytes r = rest.subspan(2);
  Bytes parts[2];
  for (Bytes& part : parts) {  // language tag, translated key
    const auto nul = std::find(r.begin(), r.end(), std::uint8_t{0});
    if (nul == r.end()) return false;
    part = r.first(static_cast<std::size_t>(nul - r.begin()));
    r = r.subspan(part.size() + 1);
  }
  for (const Bytes b : {parts[0], parts[1], r}) {
    if (first_invalid_utf8(as_view(b)) != b.size()) return false;
  }
  *text = r;
  return true;
}

// Image.getexif's XMP fallback: re.search(r'tiff:Orientation(="|>)([0-9])', xmp).
int xmp_orientation(Bytes xmp) {
  const std::string_view text(reinterpret_cast<const char*>(xmp.data()), xmp.size());
  constexpr std::string_view kName = "tiff:Orientation";
  for (std::size_t at = text.find(kName); at != std::string_view::npos;
       at = text.find(kName, at + 1)) {
    std::size_t p = at + kName.size();
    if (text.substr(p, 2) == "=\"") {
      p += 2;
    } else if (text.substr(p, 1) == ">") {
      p += 1;
    } else {
      continue;
    }
    if (p < text.size() && text[p] >= '0' && text[p] <= '9') {
      const int v = text[p] - '0';
      return v >= 2 && v <= 8 ? v : 1;
    }
  }
  return 1;
}

}  // namespace

int png_orientation(Bytes bytes, const std::string& source, bool exif_transpose) {
  // Image.open never reads a PNG's EXIF: only exif_transpose does.
  if (!exif_transpose) return 1;
  PngMetadata before, after;  // the first IDAT divides them
  bool idat = false;
  for (std::size_t pos = 8; bytes.size() - pos >= 12;) {
    const std::uint64_t length = read_uint(&bytes[pos], 4, true);
    if (length > bytes.size() - pos - 12) break;
    const std::string_view type(reinterpret_cast<const char*>(&bytes[pos + 4]), 4);
    const Bytes data = bytes.subspan(pos + 8, length);
    pos += 12 + length;
    if (type == "IEND") break;
    if (type == "IDAT") idat = true;
    PngMetadata& m = idat ? after : before;
    if (type == "eXIf") {
      m = PngMetadata{data, true, false, m.xmp, m.has_xmp};
    } else if (type == "tEXt") {
      const auto [key, value] = text_chunk(data);
      if (key == "exif") m = PngMetadata{value, true, true, m.xmp, m.has_xmp};
      if (key == "XML:com.adobe.xmp") {
        m.xmp = value;
        m.has_xmp = true;
      }
    } else if (type == "iTXt" && itxt_xmp(data, &m.xmp)) {
      m.has_xmp = true;
    }
  }
  // getexif loads the image (reading the chunks after IDAT) only when no EXIF came before it.
  const PngMetadata& exif = before.has_exif ? before : after;
  const PngMetadata& xmp = before.has_exif || !after.has_xmp ? before : after;
  if (exif.has_exif) {
    const ExifRead r = read_exif_orientation(exif.exif, exif.exif_prefixed);
    VLBIAS_CHECK(r.status == ExifStatus::Read, InputError,
                 "'{}' is a PNG image with an unreadable EXIF block ({}), on which "
                 "PIL.ImageOps.exif_transpose raises; decode it without --exif-transpose",
                 source, r.status == ExifStatus::NotTiff ? "no TIFF header" : "a cut-off header");
    if (r.has_orientation) return r.orientation != 0 ? r.orientation : 1;
  }
  return xmp.has_xmp ? xmp_orientation(xmp.xmp) : 1;
}

// Transposes `image` as Image.transpose does for ImageOps.exif_transpose's method of
// `orientation`: 2 FLIP_LEFT_RIGHT, 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270,
// 7 TRANSVERSE, 8 ROTATE_90 (counter-clockwise degrees); 1 leaves it as it is.
RgbImage orient_image(RgbImage image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const std::size_t w = image.width, h = image.height;
  const bool swap = orientation >= 5;
  RgbImage out;
  out.width = swap ? h : w;
  out.height = swap ? w : h;
  out.pixels.resize(image.pixels.size());
  for (std::size_t y = 0; y < out.height; ++y) {
    for (std::size_t x = 0; x < out.width; ++x) {
      std::size_t sx = x, sy = y;  // the source pixel of output pixel (x, y)
      switch (orientation) {
        case 2:
          sx = w - 1 - x;
          break;
        case 3:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;
        case 4:
          sy = h - 1 - y;
          break;
        case 5:
          sx = y;
          sy = x;
          break;
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;
        default:
          sx = w - 1 - y;
          sy = x;
          break;  // 8
      }
      std::memcpy(&out.pixels[(y * out.width + x) * 3], &image.pixels[(sy * w + sx) * 3], 3);
    }
  }
  return out;
}

}  // namespace vlbias::encode_internal
