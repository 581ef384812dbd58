#pragma once
// Internal: the two decoders behind decode_image (image_decode.cpp dispatches on magic bytes).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "vlbias/encode/image.h"

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

}  // namespace vlbias::encode_internal
