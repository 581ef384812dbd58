// JPEG decoding through libjpeg-turbo, matching Pillow 9.4 (src/libImaging/JpegDecode.c,
// src/PIL/JpegImagePlugin.py) followed by Image.convert("RGB") (src/libImaging/Convert.c).
//
// Pillow's choices reproduced here:
//   - libjpeg defaults: JDCT_ISLOW, fancy upsampling (Pillow only changes them for draft()).
//   - 1 component -> "L" (grey), 3 -> "RGB" (out_color_space JCS_RGB), 4 -> "CMYK" decoded with
//     out_color_space JCS_CMYK and unpacked as "CMYK;I" (inverted, "assume adobe conventions")
//     whether or not an Adobe APP14 marker is present; any other count is an error.
//   - libjpeg warnings (corrupt entropy data, extraneous bytes) are ignored and decoding goes
//     on, as Pillow's output_message hook does nothing.
//   - Data that ends before the last scanline is an error ("image file is truncated"); data
//     that ends after it (a missing EOI) is accepted, as Pillow's suspending source does.
//
// libjpeg reports fatal errors through error_exit, which must not return. It longjmps back to
// a setjmp in one of the small guarded_* functions below; between them and libjpeg there are
// only C frames and callbacks with trivially destructible locals, so no C++ destructor is
// skipped. C++ exceptions are thrown only outside the guarded calls.
#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "image_codecs.h"
#include "vlbias/core/error.h"

namespace vlbias::encode_internal {
namespace {

// A progressive JPEG with very many scans re-walks every coefficient block per scan; cap the
// scan count so a small hostile file cannot take minutes (libjpeg-turbo's djpeg -maxscan idea).
constexpr int kMaxJpegScans = 1000;

// All libjpeg state in one heap block, so the pointers libjpeg keeps into it stay valid.
// Every member is a C struct: the block is trivially destructible.
struct JpegContext {
  jpeg_decompress_struct cinfo;
  struct ErrorMgr {
    jpeg_error_mgr pub;  // first member: libjpeg sees &pub as its jpeg_error_mgr*
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
  } err;
  struct SourceMgr {
    jpeg_source_mgr pub;  // first member, as above
    bool hit_end;         // the data ran out and a fake EOI marker was supplied
  } src;
  struct ProgressMgr {
    jpeg_progress_mgr pub;
  } progress;
};

// libjpeg callbacks (plain functions: GCC and Clang give C and C++ functions one type).
[[noreturn]] void on_jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegContext::ErrorMgr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Pillow's decoder installs an output_message that does nothing: warnings are dropped.
void on_jpeg_output_message(j_common_ptr /*cinfo*/) {}

void on_jpeg_init_source(j_decompress_ptr /*cinfo*/) {}

// End of data: supply an EOI marker (as libjpeg's jdatasrc does) and remember it, so the caller
// can tell a truncated image from a complete one.
boolean on_jpeg_fill_input_buffer(j_decompress_ptr cinfo) {
  static const JOCTET kFakeEoi[2] = {0xFF, JPEG_EOI};
  auto* src = reinterpret_cast<JpegContext::SourceMgr*>(cinfo->src);
  src->hit_end = true;
  src->pub.next_input_byte = kFakeEoi;
  src->pub.bytes_in_buffer = sizeof(kFakeEoi);
  return TRUE;
}

void on_jpeg_skip_input_data(j_decompress_ptr cinfo, long num_bytes) {
  if (num_bytes <= 0) return;
  jpeg_source_mgr* src = cinfo->src;
  if (static_cast<unsigned long>(num_bytes) > src->bytes_in_buffer) {
    src->bytes_in_buffer = 0;
    on_jpeg_fill_input_buffer(cinfo);
    return;
  }
  src->next_input_byte += num_bytes;
  src->bytes_in_buffer -= static_cast<std::size_t>(num_bytes);
}

void on_jpeg_term_source(j_decompress_ptr /*cinfo*/) {}

void on_jpeg_progress_monitor(j_common_ptr cinfo) {
  const auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number > kMaxJpegScans) {
    auto* err = reinterpret_cast<JpegContext::ErrorMgr*>(cinfo->err);
    std::snprintf(err->message, sizeof(err->message), "more than %d progressive scans",
                  kMaxJpegScans);
    std::longjmp(err->jump, 1);
  }
}

// The guarded_* functions each call into libjpeg under a setjmp and return false when libjpeg
// raised an error (message in ctx->err.message). Their locals are trivially destructible.
bool guarded_create(JpegContext* ctx) {
  if (setjmp(ctx->err.jump) != 0) return false;
  jpeg_create_decompress(&ctx->cinfo);
  return true;
}

bool guarded_read_header(JpegContext* ctx) {
  if (setjmp(ctx->err.jump) != 0) return false;
  jpeg_read_header(&ctx->cinfo, TRUE);
  return true;
}

bool guarded_has_multiple_scans(JpegContext* ctx, bool* multi) {
  if (setjmp(ctx->err.jump) != 0) return false;
  *multi = jpeg_has_multiple_scans(&ctx->cinfo) != 0;
  return true;
}

bool guarded_start(JpegContext* ctx) {
  if (setjmp(ctx->err.jump) != 0) return false;
  jpeg_start_decompress(&ctx->cinfo);
  return true;
}

// Reads scanlines into `out` (row stride `stride` bytes) until the last one or until the data
// runs out (ctx->src.hit_end), whichever comes first.
bool guarded_read_rows(JpegContext* ctx, JSAMPLE* out, std::size_t stride) {
  if (setjmp(ctx->err.jump) != 0) return false;
  while (ctx->cinfo.output_scanline < ctx->cinfo.output_height && !ctx->src.hit_end) {
    JSAMPROW row = out + static_cast<std::size_t>(ctx->cinfo.output_scanline) * stride;
    if (jpeg_read_scanlines(&ctx->cinfo, &row, 1) != 1) {
      std::snprintf(ctx->err.message, sizeof(ctx->err.message), "the decoder stalled");
      return false;
    }
  }
  return true;
}

bool guarded_finish(JpegContext* ctx) {
  if (setjmp(ctx->err.jump) != 0) return false;
  jpeg_finish_decompress(&ctx->cinfo);
  return true;
}

// Owns a jpeg_decompress_struct reading from a memory span (RAII).
class JpegDecompressor {
 public:
  JpegDecompressor(std::span<const std::uint8_t> bytes) : ctx_(std::make_unique<JpegContext>()) {
    std::memset(ctx_.get(), 0, sizeof(JpegContext));
    jpeg_decompress_struct& cinfo = ctx_->cinfo;
    cinfo.err = jpeg_std_error(&ctx_->err.pub);
    ctx_->err.pub.error_exit = on_jpeg_error_exit;
    ctx_->err.pub.output_message = on_jpeg_output_message;
    created_ = guarded_create(ctx_.get());
    if (!created_) return;
    JpegContext::SourceMgr& src = ctx_->src;
    src.pub.init_source = on_jpeg_init_source;
    src.pub.fill_input_buffer = on_jpeg_fill_input_buffer;
    src.pub.skip_input_data = on_jpeg_skip_input_data;
    src.pub.resync_to_restart = jpeg_resync_to_restart;
    src.pub.term_source = on_jpeg_term_source;
    src.pub.next_input_byte = bytes.data();
    src.pub.bytes_in_buffer = bytes.size();
    cinfo.src = &src.pub;
    ctx_->progress.pub.progress_monitor = on_jpeg_progress_monitor;
    cinfo.progress = &ctx_->progress.pub;
  }
  ~JpegDecompressor() {
    // Safe after an error and on a struct whose creation failed (mem == NULL).
    jpeg_destroy_decompress(&ctx_->cinfo);
  }
  JpegDecompressor(const JpegDecompressor&) = delete;
  JpegDecompressor& operator=(const JpegDecompressor&) = delete;

  bool created() const { return created_; }
  JpegContext* ctx() { return ctx_.get(); }

 private:
  std::unique_ptr<JpegContext> ctx_;
  bool created_ = false;
};

// Pillow's MULDIV255(a, b): a * b / 255 rounded, in integers (src/libImaging/ImPlatform.h).
inline int muldiv255(int a, int b) {
  const int tmp = a * b + 128;
  return ((tmp >> 8) + tmp) >> 8;
}

inline std::uint8_t clamp_jpeg8(int v) {
  return static_cast<std::uint8_t>(std::clamp(v, 0, 255));
}

// "CMYK;I" unpacking (each byte inverted) followed by Convert.c's cmyk2rgb:
// nk = 255 - k; out = CLIP8(nk - MULDIV255(c, nk)). With inverted input, nk is libjpeg's K byte.
void cmyk_inverted_to_rgb(const std::uint8_t* in, std::size_t pixels, std::uint8_t* out) {
  for (std::size_t i = 0; i < pixels; ++i, in += 4, out += 3) {
    const int nk = in[3];
    for (int c = 0; c < 3; ++c) {
      const int ink = 255 - in[c];
      out[c] = clamp_jpeg8(nk - muldiv255(ink, nk));
    }
  }
}

// The bytes decode_jpeg holds for an image whose header has been read: the RGB output, the
// samples before conversion (grey and CMYK), and for a multi-scan (progressive) file libjpeg's
// whole-image coefficient arrays (jdcoefct.c: one 64-coefficient JBLOCK per 8 x 8 block of each
// component, rounded up to the sampling factors).
std::size_t decoder_bytes(const jpeg_decompress_struct& cinfo, bool multi_scan) {
  const std::size_t pixels = std::size_t{cinfo.image_width} * cinfo.image_height;
  const auto components = static_cast<std::size_t>(cinfo.num_components);
  std::size_t bytes = 3 * pixels + (components == 3 ? 0 : components * pixels);
  if (multi_scan) {
    for (int c = 0; c < cinfo.num_components; ++c) {
      const jpeg_component_info& comp = cinfo.comp_info[c];
      bytes += (std::size_t{comp.width_in_blocks} + comp.h_samp_factor) *
               (std::size_t{comp.height_in_blocks} + comp.v_samp_factor) * sizeof(JBLOCK);
    }
  }
  return bytes;
}

}  // namespace

RgbImage decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& source,
                     std::size_t max_pixels, const DecodeReserve& reserve) {
  JpegDecompressor decompressor(bytes);
  JpegContext* ctx = decompressor.ctx();
  VLBIAS_CHECK(decompressor.created(), InternalError, "cannot create a JPEG decoder for '{}': {}",
               source, ctx->err.message);
  jpeg_decompress_struct& cinfo = ctx->cinfo;

  VLBIAS_CHECK(guarded_read_header(ctx), InputError, "'{}' is not a valid JPEG image: {}", source,
               ctx->err.message);
  VLBIAS_CHECK(!ctx->src.hit_end, InputError,
               "'{}' is a truncated JPEG image: the data ends inside its header", source);
  const int components = cinfo.num_components;
  VLBIAS_CHECK(components == 1 || components == 3 || components == 4, InputError,
               "'{}' is a JPEG image with {} colour components; expected 1 (grey), 3 (RGB) or "
               "4 (CMYK)",
               source, components);
  const std::size_t width = cinfo.image_width;
  const std::size_t height = cinfo.image_height;
  check_image_pixels(source, "JPEG", width, height, max_pixels);
  if (reserve) {
    bool multi_scan = false;
    VLBIAS_CHECK(guarded_has_multiple_scans(ctx, &multi_scan), InputError,
                 "'{}' is not a valid JPEG image: {}", source, ctx->err.message);
    reserve(width, height, decoder_bytes(cinfo, multi_scan));
  }

  // JpegDecode.c: the rawmode selects out_color_space; "L" keeps libjpeg's default (grey).
  cinfo.out_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  cinfo.dct_method = JDCT_ISLOW;
  cinfo.do_fancy_upsampling = TRUE;

  VLBIAS_CHECK(guarded_start(ctx), InputError, "'{}' is not a valid JPEG image: {}", source,
               ctx->err.message);
  VLBIAS_CHECK(!ctx->src.hit_end, InputError,
               "'{}' is a truncated JPEG image: the data ends before its last scan", source);
  VLBIAS_CHECK(cinfo.output_width == width && cinfo.output_height == height &&
                   cinfo.output_components == components,
               InternalError, "libjpeg decodes '{}' to an unexpected layout", source);

  RgbImage image;
  image.width = width;
  image.height = height;
  std::vector<std::uint8_t> raw;
  JSAMPLE* target = nullptr;
  if (components == 3) {
    image.pixels.resize(width * height * 3);
    target = image.pixels.data();
  } else {
    raw.resize(width * height * static_cast<std::size_t>(components));
    target = raw.data();
  }
  VLBIAS_CHECK(guarded_read_rows(ctx, target, width * static_cast<std::size_t>(components)),
               InputError, "'{}' is not a valid JPEG image: {}", source, ctx->err.message);
  VLBIAS_CHECK(!ctx->src.hit_end, InputError,
               "'{}' is a truncated JPEG image: the data ends at scanline {} of {}", source,
               cinfo.output_scanline, height);
  // Reads up to EOI; a missing EOI is fine (the fake one), a broken marker is not.
  VLBIAS_CHECK(guarded_finish(ctx), InputError, "'{}' is not a valid JPEG image: {}", source,
               ctx->err.message);

  if (components == 1) {
    // "L" -> "RGB": the grey value in all three channels (Convert.c l2rgb).
    image.pixels.resize(width * height * 3);
    for (std::size_t i = 0; i < width * height; ++i) {
      image.pixels[3 * i] = image.pixels[3 * i + 1] = image.pixels[3 * i + 2] = raw[i];
    }
  } else if (components == 4) {
    image.pixels.resize(width * height * 3);
    cmyk_inverted_to_rgb(raw.data(), width * height, image.pixels.data());
  }
  return image;
}

}  // namespace vlbias::encode_internal
