// PNG decoding through libpng, matching Pillow 9.4's PngImagePlugin.py + ZipDecode.c and
// Image.convert("RGB") (src/libImaging/Unpack.c, Convert.c, Palette.c).
//
// libpng only inflates, unfilters and splits the Adam7 passes (no libpng transforms); the
// samples are then converted the way Pillow's rawmodes and convert("RGB") do:
//   grey 1-bit ("1")           0 / 255
//   grey 2-bit, 4-bit ("L;2/4") v * 0x55, v * 0x11
//   grey 16-bit ("I;16B" -> I)  min(v, 255): mode "I" is clipped, not scaled, by i2rgb
//   RGB / RGBA / LA 16-bit      high byte of each sample
//   LA, RGBA                   alpha dropped (no compositing); LA grey replicated
//   palette                    through PLTE; indices past its end read Pillow's default
//                              palette entry (i, i, i); tRNS ignored
// Pillow's leniency is kept: CRCs are checked for every chunk before the first IDAT (as
// Pillow's ChunkStream does) but not for IDAT and later chunks, and decoding succeeds as soon as
// every row is decoded, whatever follows (missing zlib tail, IEND or trailing garbage).
//
// libpng reports fatal errors through its error callback, which longjmps to the setjmp in
// guarded_process(); between them there are only C frames and callbacks whose locals are
// trivially destructible (the C++ work sits in noexcept helpers that have returned before any
// longjmp). C++ exceptions are thrown only outside the guarded call.
#include <array>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <png.h>
#include <zlib.h>

#include "image_codecs.h"
#include "vlbias/core/error.h"

namespace vlbias::encode_internal {
namespace {

constexpr std::array<std::uint8_t, 8> kPngSignature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

// Adam7 pass geometry (PNG specification, section 8.2).
constexpr std::array<std::uint32_t, 7> kPassX0 = {0, 4, 0, 2, 0, 1, 0};
constexpr std::array<std::uint32_t, 7> kPassDx = {8, 8, 4, 4, 2, 2, 1};
constexpr std::array<std::uint32_t, 7> kPassY0 = {0, 0, 4, 0, 2, 0, 1};
constexpr std::array<std::uint32_t, 7> kPassDy = {8, 8, 8, 4, 4, 2, 2};

std::uint32_t pass_extent(std::uint32_t size, std::uint32_t start, std::uint32_t step) {
  return size > start ? (size - start + step - 1) / step : 0;
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// Everything the libpng callbacks read and write. Plain data; the pixel vector is owned by the
// caller and only resized inside a noexcept helper.
struct PngState {
  std::size_t max_pixels = 0;
  std::vector<std::uint8_t>* pixels = nullptr;  // width * height * 3 once the header is read
  std::uint32_t width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  bool interlaced = false;
  bool header_seen = false;
  // Pillow's palette: PLTE entries, then ImagingPaletteNew's default grey ramp (i, i, i).
  std::array<std::uint8_t, 256 * 3> palette{};
  std::uint64_t rows_expected = 0, rows_done = 0;
  char message[256] = {};       // the error that stopped decoding
  char last_warning[256] = {};  // the last libpng warning (e.g. a zlib data error)
};

void copy_message(char (&dst)[256], const char* text) {
  std::snprintf(dst, sizeof(dst), "%s", text != nullptr ? text : "unknown error");
}

// libpng callbacks (plain functions: GCC and Clang give C and C++ functions one type).
[[noreturn]] void on_png_error(png_structp png, png_const_charp text) {
  copy_message(static_cast<PngState*>(png_get_error_ptr(png))->message, text);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp png, png_const_charp text) {
  copy_message(static_cast<PngState*>(png_get_error_ptr(png))->last_warning, text);
}

// Reads the header, checks the size limit and allocates the output. False with a message on
// failure; never throws.
bool prepare_output(PngState* st, png_structp png, png_infop info) noexcept {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  if (png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, nullptr,
                   nullptr) == 0) {
    copy_message(st->message, "no IHDR chunk");
    return false;
  }
  const std::uint64_t pixels = std::uint64_t{width} * height;
  if (width == 0 || height == 0 || pixels > st->max_pixels) {
    std::snprintf(st->message, sizeof(st->message),
                  "%u x %u pixels is more than the %zu allowed (decompression bomb limit)",
                  static_cast<unsigned>(width), static_cast<unsigned>(height), st->max_pixels);
    return false;
  }
  st->width = width;
  st->height = height;
  st->bit_depth = bit_depth;
  st->color_type = color_type;
  st->interlaced = interlace != PNG_INTERLACE_NONE;
  for (int i = 0; i < 256; ++i) {
    st->palette[3 * i] = st->palette[3 * i + 1] = st->palette[3 * i + 2] =
        static_cast<std::uint8_t>(i);
  }
  png_colorp plte = nullptr;
  int entries = 0;
  if (color_type == PNG_COLOR_TYPE_PALETTE && png_get_PLTE(png, info, &plte, &entries) != 0) {
    for (int i = 0; i < entries && i < 256; ++i) {
      st->palette[3 * i] = plte[i].red;
      st->palette[3 * i + 1] = plte[i].green;
      st->palette[3 * i + 2] = plte[i].blue;
    }
  }
  if (st->interlaced) {
    st->rows_expected = 0;
    for (int p = 0; p < 7; ++p) {
      if (pass_extent(width, kPassX0[p], kPassDx[p]) > 0) {
        st->rows_expected += pass_extent(height, kPassY0[p], kPassDy[p]);
      }
    }
  } else {
    st->rows_expected = height;
  }
  try {
    st->pixels->assign(static_cast<std::size_t>(pixels) * 3, 0);
  } catch (const std::exception&) {
    copy_message(st->message, "out of memory for the decoded pixels");
    return false;
  }
  st->header_seen = true;
  return true;
}

void on_png_info(png_structp png, png_infop info) {
  auto* st = static_cast<PngState*>(png_get_progressive_ptr(png));
  // The size limit first: png_read_update_info allocates row buffers.
  if (!prepare_output(st, png, info)) png_longjmp(png, 1);
  png_read_update_info(png, info);  // starts the row machinery; no transforms are set
}

// Sample i of a row packed at `bit_depth` bits (1, 2, 4 or 8), most significant bits first.
inline unsigned packed_sample(const std::uint8_t* row, std::size_t i, int bit_depth) {
  if (bit_depth == 8) return row[i];
  const std::size_t bit = i * static_cast<std::size_t>(bit_depth);
  const unsigned shift = 8u - static_cast<unsigned>(bit_depth) - static_cast<unsigned>(bit % 8);
  return (row[bit / 8] >> shift) & ((1u << bit_depth) - 1u);
}

// Converts `count` pixels of a raw PNG row to RGB, writing pixel i at out + i * step * 3.
void convert_row(const PngState& st, const std::uint8_t* row, std::size_t count, std::uint8_t* out,
                 std::size_t step) {
  const int depth = st.bit_depth;
  for (std::size_t i = 0; i < count; ++i, out += step * 3) {
    switch (st.color_type) {
      case PNG_COLOR_TYPE_GRAY: {
        unsigned v = 0;
        if (depth == 16) {
          // "I;16B" gives mode I; i2rgb clips to 0..255.
          const unsigned v16 = (unsigned{row[2 * i]} << 8) | row[2 * i + 1];
          v = v16 > 255 ? 255 : v16;
        } else if (depth == 1) {
          v = packed_sample(row, i, 1) != 0 ? 255 : 0;  // "1", then bit2rgb
        } else if (depth == 2) {
          v = packed_sample(row, i, 2) * 0x55;  // unpackL2
        } else if (depth == 4) {
          v = packed_sample(row, i, 4) * 0x11;  // unpackL4
        } else {
          v = row[i];
        }
        out[0] = out[1] = out[2] = static_cast<std::uint8_t>(v);
        break;
      }
      case PNG_COLOR_TYPE_RGB:
        for (int c = 0; c < 3; ++c) {
          out[c] = depth == 16 ? row[6 * i + 2 * c] : row[3 * i + c];  // "RGB;16B": high bytes
        }
        break;
      case PNG_COLOR_TYPE_PALETTE: {
        const unsigned index = packed_sample(row, i, depth);
        std::memcpy(out, &st.palette[3 * index], 3);
        break;
      }
      case PNG_COLOR_TYPE_GRAY_ALPHA: {
        const std::uint8_t v = depth == 16 ? row[4 * i] : row[2 * i];  // "LA;16B": high byte
        out[0] = out[1] = out[2] = v;
        break;
      }
      default:  // PNG_COLOR_TYPE_RGB_ALPHA
        for (int c = 0; c < 3; ++c) {
          out[c] = depth == 16 ? row[8 * i + 2 * c] : row[4 * i + c];
        }
        break;
    }
  }
}

// Places one decoded row (of the whole image, or of Adam7 pass `pass`) into the output.
bool store_row(PngState* st, const std::uint8_t* row, png_uint_32 row_num, int pass) noexcept {
  if (!st->header_seen || row == nullptr) {
    copy_message(st->message, "image data before the header");
    return false;
  }
  std::uint32_t x0 = 0, dx = 1, y = row_num, columns = st->width;
  if (st->interlaced) {
    if (pass < 0 || pass > 6) {
      copy_message(st->message, "invalid interlace pass");
      return false;
    }
    x0 = kPassX0[pass];
    dx = kPassDx[pass];
    columns = pass_extent(st->width, x0, dx);
    if (row_num >= pass_extent(st->height, kPassY0[pass], kPassDy[pass])) {
      copy_message(st->message, "too many rows in an interlace pass");
      return false;
    }
    y = kPassY0[pass] + row_num * kPassDy[pass];
  }
  if (y >= st->height || st->rows_done >= st->rows_expected) {
    copy_message(st->message, "too many image rows");
    return false;
  }
  std::uint8_t* out = st->pixels->data() + (std::size_t{y} * st->width + x0) * 3;
  convert_row(*st, row, columns, out, dx);
  ++st->rows_done;
  return true;
}

void on_png_row(png_structp png, png_bytep row, png_uint_32 row_num, int pass) {
  auto* st = static_cast<PngState*>(png_get_progressive_ptr(png));
  if (!store_row(st, row, row_num, pass)) png_longjmp(png, 1);
  // Like Pillow, stop at the last row: what follows is never looked at. (A jump, not
  // png_process_data_pause: libpng 1.6 underflows its buffer count after a pause inside the
  // row callback and then loops forever.) decode_png sees all rows and reports success.
  if (st->rows_done == st->rows_expected) png_longjmp(png, 1);
}

// Runs libpng's progressive reader over the whole file under a setjmp. False when libpng (or a
// callback) raised an error; the message is in st->message. Locals are trivially destructible.
bool guarded_process(png_structp png, png_infop info, PngState* st, png_bytep data,
                     std::size_t size) {
  if (setjmp(png_jmpbuf(png)) != 0) return false;
  // Chunks before the first IDAT are CRC-checked by check_chunks_before_idat; Pillow checks no
  // CRC after that point, so libpng must not either.
  png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
  png_set_benign_errors(png, 1);
  // The pixel limit is ours (Pillow's); libpng's default 1e6-per-side limit would be stricter.
  png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
  png_set_progressive_read_fn(png, st, on_png_info, on_png_row, nullptr);
  png_process_data(png, info, data, size);
  return true;
}

// Owns a libpng read struct and its info struct (RAII).
class PngReader {
 public:
  explicit PngReader(PngState* st) {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, st, on_png_error, on_png_warning);
    if (png_ != nullptr) info_ = png_create_info_struct(png_);
  }
  ~PngReader() {
    if (png_ != nullptr)
      png_destroy_read_struct(&png_, info_ != nullptr ? &info_ : nullptr, nullptr);
  }
  PngReader(const PngReader&) = delete;
  PngReader& operator=(const PngReader&) = delete;

  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

// Pillow reads the chunks before the first IDAT itself and refuses a bad CRC or a truncated
// chunk there (PngImagePlugin ChunkStream.crc). Also refuses chunk lengths beyond 2^31 - 1.
void check_chunks_before_idat(std::span<const std::uint8_t> bytes, const std::string& source) {
  std::size_t pos = kPngSignature.size();
  for (;;) {
    VLBIAS_CHECK(bytes.size() - pos >= 8, InputError,
                 "'{}' is a truncated PNG image: the data ends before its image data (IDAT)",
                 source);
    const std::uint32_t length = read_be32(&bytes[pos]);
    const std::uint8_t* type = &bytes[pos + 4];
    const std::string name(reinterpret_cast<const char*>(type), 4);
    VLBIAS_CHECK(length <= 0x7fffffffu, InputError,
                 "'{}' is not a valid PNG image: chunk at byte {} has length {} (at most 2^31 - 1)",
                 source, pos, length);
    if (name == "IDAT") return;
    VLBIAS_CHECK(name != "IEND", InputError, "'{}' is not a valid PNG image: it has no image data",
                 source);
    VLBIAS_CHECK(bytes.size() - pos - 8 >= std::size_t{length} + 4, InputError,
                 "'{}' is a truncated PNG image: the data ends inside a chunk before its image "
                 "data (IDAT)",
                 source);
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), type, 4 + length);
    VLBIAS_CHECK(crc == read_be32(type + 4 + length), InputError,
                 "'{}' is not a valid PNG image: bad CRC in the chunk at byte {}", source, pos);
    pos += 12 + std::size_t{length};
  }
}

// The image size in the IHDR chunk, which libpng requires first (PNG spec 5.6), read before
// libpng allocates anything. Nothing when the first chunk is not a complete IHDR: libpng then
// refuses the file before any pixel memory is allocated.
std::optional<std::pair<std::uint32_t, std::uint32_t>> ihdr_size(
    std::span<const std::uint8_t> bytes) {
  const std::size_t at = kPngSignature.size();
  if (bytes.size() < at + 8 + 13 || read_be32(&bytes[at]) != 13 ||
      std::memcmp(&bytes[at + 4], "IHDR", 4) != 0) {
    return std::nullopt;
  }
  return std::pair{read_be32(&bytes[at + 8]), read_be32(&bytes[at + 12])};
}

}  // namespace

RgbImage decode_png(std::span<const std::uint8_t> bytes, const std::string& source,
                    std::size_t max_pixels, const DecodeReserve& reserve) {
  check_chunks_before_idat(bytes, source);
  const auto size = ihdr_size(bytes);
  if (size) {
    check_image_pixels(source, "PNG", size->first, size->second, max_pixels);
    // The RGB output and libpng's two row buffers (at most 8 bytes per pixel: RGBA 16-bit).
    const std::size_t pixels = std::size_t{size->first} * size->second;
    if (reserve)
      reserve(size->first, size->second, 3 * pixels + 2 * (8 * std::size_t{size->first} + 1));
  }
  RgbImage image;
  PngState st;
  // Without a readable IHDR nothing may be allocated: libpng's own check then refuses everything.
  st.max_pixels = size ? max_pixels : 0;
  st.pixels = &image.pixels;
  PngReader reader(&st);
  VLBIAS_CHECK(reader.png() != nullptr && reader.info() != nullptr, InternalError,
               "cannot create a PNG decoder for '{}'", source);
  // png_process_data takes a non-const pointer but only reads the buffer.
  auto* data = const_cast<png_bytep>(bytes.data());
  const bool clean = guarded_process(reader.png(), reader.info(), &st, data, bytes.size());
  // Every row decoded: done, even if libpng complained about what followed them.
  if (st.header_seen && st.rows_done == st.rows_expected) {
    image.width = st.width;
    image.height = st.height;
    return image;
  }
  VLBIAS_CHECK(clean, InputError, "'{}' is not a valid PNG image: {}", source, st.message);
  VLBIAS_CHECK(st.header_seen, InputError,
               "'{}' is a truncated PNG image: the data ends before its image data", source);
  VLBIAS_FAIL(
      InputError, "'{}' is a truncated or corrupt PNG image: its data ends after {} of {} rows{}{}",
      source, st.rows_done, st.rows_expected, st.last_warning[0] != 0 ? ": " : "", st.last_warning);
}

}  // namespace vlbias::encode_internal
