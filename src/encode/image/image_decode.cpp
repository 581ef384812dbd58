// decode_image: picks the decoder from the magic bytes, as PIL.Image.open does (each plugin's
// _accept), never from the file extension.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>

#include "image_codecs.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias {

using namespace std::string_view_literals;

namespace {

bool starts_with(std::span<const std::uint8_t> bytes, std::string_view magic) {
  return bytes.size() >= magic.size() &&
         std::equal(magic.begin(), magic.end(), bytes.begin(),
                    [](char m, std::uint8_t b) { return static_cast<std::uint8_t>(m) == b; });
}

// True when the first bytes read as text: printable ASCII, whitespace or UTF-8 sequences.
bool looks_like_text(std::span<const std::uint8_t> bytes) {
  const std::size_t n = std::min<std::size_t>(bytes.size(), 512);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t b = bytes[i];
    if (b == '\t' || b == '\n' || b == '\r' || (b >= 0x20 && b != 0x7F)) continue;
    return false;
  }
  return n > 0;
}

}  // namespace

namespace encode_internal {

void check_image_pixels(const std::string& source, const char* format, std::size_t width,
                        std::size_t height, std::size_t max_pixels) {
  VLBIAS_CHECK(width > 0 && height > 0, InputError,
               "'{}' is a {} image of {} x {} pixels; its header gives no pixels in one "
               "direction (expected a width and a height of at least 1: a damaged file)",
               source, format, width, height);
  VLBIAS_CHECK(width <= max_pixels / height, InputError,
               "'{}' is a {} image of {} x {} pixels, more than the {} pixels allowed "
               "(decompression bomb limit: twice the pixel limit, as Pillow's "
               "DecompressionBombError; `vlbias encode --max-image-pixels` sets it)",
               source, format, width, height, max_pixels);
}

}  // namespace encode_internal

std::string describe_file_type(std::span<const std::uint8_t> bytes) {
  struct Magic {
    std::size_t offset;
    std::string_view bytes;
    const char* name;
  };
  // Common files that are not JPEG or PNG, by their magic numbers (file(1)'s, Pillow's _accept).
  static constexpr Magic kMagic[] = {
      {0, "GIF87a"sv, "a GIF image"},
      {0, "GIF89a"sv, "a GIF image"},
      {0, "BM"sv, "a BMP image"},
      {0, "II*\0"sv, "a TIFF image"},
      {0, "MM\0*"sv, "a TIFF image"},
      {8, "WEBP"sv, "a WebP image"},
      {4, "ftypavif"sv, "an AVIF image"},
      {4, "ftypheic"sv, "a HEIC image"},
      {4, "ftypmif1"sv, "a HEIF image"},
      {4, "ftyp"sv, "an ISO media file (MP4, MOV, HEIF)"},
      {0, "\0\0\1\0"sv, "an ICO image"},
      {0, "8BPS"sv, "a Photoshop document"},
      {0, "\xFF\x0A"sv, "a JPEG XL image"},
      {0, "\0\0\0\x0CJXL "sv, "a JPEG XL image"},
      {0, "%PDF"sv, "a PDF document"},
      {0, "PK\3\4"sv, "a zip archive"},
      {0, "\x1F\x8B"sv, "gzip data"},
      {0,
       "\x7F"
       "ELF"sv,
       "an executable (ELF)"},
      {0, "\x93NUMPY"sv, "a NumPy array (.npy)"},
      {0, "SQLite format 3"sv, "an SQLite database"},
  };
  for (const Magic& m : kMagic) {
    if (bytes.size() >= m.offset && starts_with(bytes.subspan(m.offset), m.bytes)) return m.name;
  }
  if (starts_with(bytes, "\xFF\xD8")) return "a damaged or truncated JPEG header";
  if (looks_like_text(bytes)) return "text";
  return "data of an unknown kind";
}

RgbImage decode_image(std::span<const std::uint8_t> bytes, const std::string& source,
                      const DecodeOptions& options, const DecodeReserve& reserve) {
  VLBIAS_CHECK(!bytes.empty(), InputError, "'{}' is empty; expected a JPEG or PNG image", source);
  // JpegImagePlugin._accept: FF D8 FF. PngImagePlugin._accept: the 8-byte PNG signature.
  const bool jpeg = starts_with(bytes, "\xFF\xD8\xFF");
  if (!jpeg && !starts_with(bytes, "\x89PNG\r\n\x1A\n")) {
    // The file's type, never its bytes: the path may name any readable file (issue 19).
    VLBIAS_FAIL(
        InputError,
        "'{}' is not a JPEG or PNG image (it looks like {}); only JPEG and PNG are supported",
        source, describe_file_type(bytes));
  }
  const int orientation =
      jpeg ? encode_internal::jpeg_orientation(bytes, source, options.exif_transpose)
           : encode_internal::png_orientation(bytes, source, options.exif_transpose);
  // Orientations 2-8 copy the pixels (5-8 swapping the axes): the reserve sees the final size
  // and the copy.
  const bool swap = orientation >= 5;
  DecodeReserve oriented_reserve;
  if (reserve && orientation != 1) {
    oriented_reserve = [&reserve, swap](std::size_t width, std::size_t height,
                                        std::size_t decoder_bytes) {
      reserve(swap ? height : width, swap ? width : height, decoder_bytes + 3 * width * height);
    };
  }
  const DecodeReserve& r = orientation != 1 ? oriented_reserve : reserve;
  RgbImage image = jpeg ? encode_internal::decode_jpeg(bytes, source, options.max_pixels, r)
                        : encode_internal::decode_png(bytes, source, options.max_pixels, r);
  return encode_internal::orient_image(std::move(image), orientation);
}

RgbImage decode_image(std::span<const std::uint8_t> bytes, const std::string& source,
                      std::size_t max_pixels, const DecodeReserve& reserve) {
  return decode_image(bytes, source, DecodeOptions{max_pixels, false}, reserve);
}

RgbImage decode_image_file(const std::filesystem::path& path, const DecodeOptions& options,
                           const DecodeReserve& reserve) {
  const MappedFile file(path, MapAccess::Sequential);
  return decode_image(file.bytes(), path.string(), options, reserve);
}

RgbImage decode_image_file(const std::filesystem::path& path, std::size_t max_pixels,
                           const DecodeReserve& reserve) {
  return decode_image_file(path, DecodeOptions{max_pixels, false}, reserve);
}

}  // namespace vlbias
