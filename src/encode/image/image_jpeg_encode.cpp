// encode_jpeg (include/vlbias/encode/image/image.h): baseline JPEG through libjpeg-turbo's
// compressor into memory, for the report's thumbnails.
//
// libjpeg reports fatal errors through error_exit, which must not return: it longjmps back to
// compress_into(), whose frame holds only C structs (nothing to destroy). The RAII owner of the
// compressor and its output buffer lives one frame up and releases both on every path.
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <cstdlib>
#include <span>
#include <vector>

#include <jpeglib.h>

#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"

namespace vlbias {

namespace {

struct JpegEncodeContext {
  jpeg_compress_struct cinfo;
  struct ErrorMgr {
    jpeg_error_mgr pub;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
  } err;
  unsigned char* buffer = nullptr;  // malloc'd by jpeg_mem_dest's manager
  unsigned long size = 0;           // NOLINT(runtime/int): jpeg_mem_dest's type
  bool created = false;
};

// Owns the compressor and its output buffer.
class EncodeGuard {
 public:
  explicit EncodeGuard(JpegEncodeContext& ctx) : ctx_(ctx) {}
  ~EncodeGuard() {
    if (ctx_.created) jpeg_destroy_compress(&ctx_.cinfo);
    std::free(ctx_.buffer);
  }
  EncodeGuard(const EncodeGuard&) = delete;
  EncodeGuard& operator=(const EncodeGuard&) = delete;

 private:
  JpegEncodeContext& ctx_;
};

[[noreturn]] void on_encode_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegEncodeContext::ErrorMgr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void on_encode_message(j_common_ptr, int) {}  // warnings: nothing to report for a thumbnail

// Compresses `image` into ctx.buffer; false (with ctx.err.message) when libjpeg failed.
bool compress_into(JpegEncodeContext& ctx, const RgbImage& image, int quality) {
  ctx.cinfo.err = jpeg_std_error(&ctx.err.pub);
  ctx.err.pub.error_exit = on_encode_error_exit;
  ctx.err.pub.emit_message = on_encode_message;
  if (setjmp(ctx.err.jump)) return false;
  jpeg_create_compress(&ctx.cinfo);
  ctx.created = true;
  jpeg_mem_dest(&ctx.cinfo, &ctx.buffer, &ctx.size);
  ctx.cinfo.image_width = static_cast<JDIMENSION>(image.width);
  ctx.cinfo.image_height = static_cast<JDIMENSION>(image.height);
  ctx.cinfo.input_components = 3;
  ctx.cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&ctx.cinfo);
  jpeg_set_quality(&ctx.cinfo, quality, TRUE);
  jpeg_start_compress(&ctx.cinfo, TRUE);
  const std::size_t stride = image.width * 3;
  while (ctx.cinfo.next_scanline < ctx.cinfo.image_height) {
    // libjpeg's API takes non-const rows but only reads them.
    JSAMPROW row = const_cast<JSAMPROW>(image.pixels.data() + ctx.cinfo.next_scanline * stride);
    jpeg_write_scanlines(&ctx.cinfo, &row, 1);
  }
  jpeg_finish_compress(&ctx.cinfo);
  return true;
}

}  // namespace

std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, int quality) {
  VLBIAS_CHECK(quality >= 1 && quality <= 100, UsageError, "JPEG quality must be 1 to 100, got {}.",
               quality);
  VLBIAS_CHECK(image.width > 0 && image.height > 0 && image.width <= JPEG_MAX_DIMENSION &&
                   image.height <= JPEG_MAX_DIMENSION,
               UsageError, "cannot encode a {} x {} image as JPEG (1 to {} pixels a side).",
               image.width, image.height, JPEG_MAX_DIMENSION);
  VLBIAS_CHECK(image.pixels.size() == image.width * image.height * 3, InternalError,
               "an RGB image of {} x {} holds {} bytes, expected {}.", image.width, image.height,
               image.pixels.size(), image.width * image.height * 3);
  JpegEncodeContext ctx;
  EncodeGuard guard(ctx);
  const bool ok = compress_into(ctx, image, quality);
  VLBIAS_CHECK(ok, InternalError, "libjpeg failed to encode a {} x {} image: {}.", image.width,
               image.height, ctx.err.message);
  return std::vector<std::uint8_t>(ctx.buffer, ctx.buffer + ctx.size);
}

}  // namespace vlbias
