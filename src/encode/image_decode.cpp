// decode_image: picks the decoder from the magic bytes, as PIL.Image.open does (each plugin's
// _accept), never from the file extension.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "encode/image_codecs.h"
#include "vlbias/error.h"
#include "vlbias/image.h"
#include "vlbias/mapped_file.h"

namespace vlbias {
namespace {

bool starts_with(std::span<const std::uint8_t> bytes, std::initializer_list<std::uint8_t> magic) {
  return bytes.size() >= magic.size() && std::equal(magic.begin(), magic.end(), bytes.begin());
}

}  // namespace

RgbImage decode_image(std::span<const std::uint8_t> bytes, const std::string& source,
                      std::size_t max_pixels) {
  VLBIAS_CHECK(!bytes.empty(), InputError, "'{}' is empty; expected a JPEG or PNG image", source);
  // JpegImagePlugin._accept: FF D8 FF. PngImagePlugin._accept: the 8-byte PNG signature.
  if (starts_with(bytes, {0xFF, 0xD8, 0xFF})) {
    return image_detail::decode_jpeg(bytes, source, max_pixels);
  }
  if (starts_with(bytes, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'})) {
    return image_detail::decode_png(bytes, source, max_pixels);
  }
  std::string head;
  for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 8); ++i) {
    head += fmt::format("{}{:02X}", i == 0 ? "" : " ", bytes[i]);
  }
  VLBIAS_FAIL(InputError,
              "'{}' is not a JPEG or PNG image (it starts with bytes {}); only JPEG and PNG "
              "are supported",
              source, head);
}

RgbImage decode_image_file(const std::filesystem::path& path, std::size_t max_pixels) {
  const MappedFile file(path, MapAccess::Sequential);
  return decode_image(file.bytes(), path.string(), max_pixels);
}

}  // namespace vlbias
