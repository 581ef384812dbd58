#pragma once
// Internal: the two decoders behind decode_image (image_decode.cpp dispatches on magic bytes).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "vlbias/encode/image/image.h"

namespace vlbias::encode_internal {

// JPEG via libjpeg-turbo as Pillow 9.4's JpegDecode.c drives it; `bytes` starts with FF D8 FF.
// `reserve` (may be empty) is called with the buffers' bytes before they are allocated.
RgbImage decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& source,
                     std::size_t max_pixels, const DecodeReserve& reserve);

// PNG via libpng's progressive reader, converted as Pillow 9.4's PngImagePlugin + convert("RGB");
// `bytes` starts with the 8-byte PNG signature.
RgbImage decode_png(std::span<const std::uint8_t> bytes, const std::string& source,
                    std::size_t max_pixels, const DecodeReserve& reserve);

// InputError naming `source` when width x height is zero or more than `max_pixels` (Pillow's
// decompression bomb check); called from the header, before any pixel memory is allocated.
void check_image_pixels(const std::string& source, const char* format, std::size_t width,
                        std::size_t height, std::size_t max_pixels);

// ---- EXIF orientation (image_exif.cpp), as Pillow 9.4 reads it.

// Read: the block parsed (tags found or not); NotTiff: Pillow raises SyntaxError (no TIFF
// header); Truncated: Pillow raises struct.error (header cut off, or BigTIFF).
enum class ExifStatus { Read, NotTiff, Truncated };
struct ExifRead {
  ExifStatus status = ExifStatus::Read;
  bool has_orientation = false;  // IFD0 holds a readable Orientation entry (tag 0x0112)
  int orientation = 0;           // 2-8 when its value equals one, else 0
  // ResolutionUnit present and XResolution bytes or text of length <= 1: the JPEG plugin's
  // dpi lookup at open raises IndexError, which Image.open does not survive.
  bool resolution_breaks_open = false;
};
// Parses an EXIF block (a TIFF header and IFD0, after "Exif\0\0" when `strip_exif_prefix`).
ExifRead read_exif_orientation(std::span<const std::uint8_t> block, bool strip_exif_prefix);

// The first APP1 segment starting "Exif\0" before the first scan, as JpegImagePlugin keeps it.
struct JpegExif {
  bool present = false;
  std::span<const std::uint8_t> block;  // the segment's payload, "Exif\0..." included
  bool read_at_open = false;            // no JFIF dpi before it: Image.open parses it at once
};
JpegExif find_jpeg_exif(std::span<const std::uint8_t> bytes);

// The orientation (1-8) to apply to a JPEG / PNG: 1 unless `exif_transpose`. InputError naming
// `source` where Pillow raises: Image.open on a JPEG whose EXIF header is cut off (whatever
// `exif_transpose` is), exif_transpose on an unreadable block.
int jpeg_orientation(std::span<const std::uint8_t> bytes, const std::string& source,
                     bool exif_transpose);
int png_orientation(std::span<const std::uint8_t> bytes, const std::string& source,
                    bool exif_transpose);

// The image transposed as ImageOps.exif_transpose does for `orientation` (1: unchanged).
RgbImage orient_image(RgbImage image, int orientation);

}  // namespace vlbias::encode_internal
