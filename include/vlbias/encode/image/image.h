#pragma once
// Image decoding and CLIP preprocessing, bit-exact with Pillow 9.4 and the
// Hugging Face CLIPImageProcessor / open_clip (torchvision) pipelines.
//
//   bytes --decode_image--> RgbImage --resize_bicubic--> --center_crop--> --rescale, normalize-->
//   float32 CHW tensor (preprocess_image does the last three steps from an ImagePreprocess).
//
// Decoding reproduces PIL.Image.open(f).convert("RGB"): JPEG through libjpeg-turbo with the
// settings Pillow uses, PNG through libpng with Pillow's own sample conversions. By default no
// EXIF orientation is applied (Image.open does not, nor do HF's CLIPImageProcessor and
// open_clip); DecodeOptions::exif_transpose applies it as PIL.ImageOps.exif_transpose does
// (HF's transformers.image_utils.load_image calls that).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace vlbias {

// 8-bit RGB image, row-major, interleaved: pixels[(y * width + x) * 3 + c]. Owning.
struct RgbImage {
  std::size_t width = 0;
  std::size_t height = 0;
  std::vector<std::uint8_t> pixels;
};

// Pillow's PIL.Image.MAX_IMAGE_PIXELS (1024 * 1024 * 1024 // 4 // 3 = 89,478,485, "around a
// quarter gigabyte for a 24 bit image"). Image.open warns above it (DecompressionBombWarning)
// and refuses images with more than twice it (DecompressionBombError).
inline constexpr std::size_t kPillowMaxImagePixels = 1024ull * 1024 * 1024 / 4 / 3;
// The decoders' default limit: Pillow's refusal threshold, 2 * MAX_IMAGE_PIXELS.
inline constexpr std::size_t kMaxImagePixels = 2 * kPillowMaxImagePixels;

// Called by the decoders once an image's header is read and its size allowed, before any
// pixel memory is allocated: the image's size and the bytes the decoder is about to hold for
// it (output and work buffers). It may block (a MemoryBudget) or throw to refuse the image.
using DecodeReserve =
    std::function<void(std::size_t width, std::size_t height, std::size_t decoder_bytes)>;

// Decodes a JPEG or PNG (recognised by magic bytes, not the extension) and converts it to RGB
// exactly as PIL.Image.open(f).convert("RGB") does in Pillow 9.4. Throws InputError naming
// `source` for unknown formats (saying what the bytes look like, e.g. "a GIF image" or "text",
// never quoting them), corrupt or truncated data and images with more than `max_pixels`
// pixels (checked from the header, before any pixel memory is allocated). Never crashes or
// hangs on hostile input (a progressive JPEG may have at most 1000 scans).
RgbImage decode_image(std::span<const std::uint8_t> bytes, const std::string& source,
                      std::size_t max_pixels = kMaxImagePixels, const DecodeReserve& reserve = {});
// decode_image over a read-only mapping of `path`; InputError when it cannot be read.
RgbImage decode_image_file(const std::filesystem::path& path,
                           std::size_t max_pixels = kMaxImagePixels,
                           const DecodeReserve& reserve = {});

struct DecodeOptions {
  std::size_t max_pixels = kMaxImagePixels;
  // Apply the EXIF orientation as ImageOps.exif_transpose(Image.open(f)).convert("RGB") does in
  // Pillow 9.4: orientations 2-8 flip, rotate, transpose or transverse the image (5-8 swap its
  // width and height). Read from a JPEG's first APP1 "Exif" segment, and from a PNG's eXIf
  // chunk (or tEXt "exif"), else its XMP tiff:Orientation (tEXt or uncompressed iTXt); IFD0 tag
  // 0x0112, either byte order. An EXIF block Pillow ignores is ignored; one on which
  // exif_transpose raises is refused (InputError). Compressed text chunks and ImageMagick's
  // "Raw profile type exif" are not read.
  bool exif_transpose = false;
};
// decode_image / decode_image_file with options. With exif_transpose, `reserve` is called with
// the oriented size and, for orientations 2-8, the bytes of the transposed copy added.
// Whatever the options, a JPEG whose EXIF header is cut off before its IFD offset is refused
// when Pillow's Image.open refuses it (no JFIF resolution before the EXIF segment).
RgbImage decode_image(std::span<const std::uint8_t> bytes, const std::string& source,
                      const DecodeOptions& options, const DecodeReserve& reserve = {});
RgbImage decode_image_file(const std::filesystem::path& path, const DecodeOptions& options,
                           const DecodeReserve& reserve = {});
// What bytes that are not a JPEG or PNG look like, from their magic number: "a GIF image",
// "a PDF document", "text", ... or "data of an unknown kind". Names a type, never content.
std::string describe_file_type(std::span<const std::uint8_t> bytes);

// A baseline JPEG (libjpeg-turbo's compressor, 4:2:0, standard tables scaled to `quality`,
// 1 to 100) of `image`, for the report's thumbnails. UsageError for an empty image, a side over
// 65,500 pixels or a quality out of range; InternalError when libjpeg fails.
std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, int quality);

// An 8-bit RGB PNG of `image` (libpng, zlib level 1, no time or text chunks: the same pixels
// give the same bytes), for face chips. UsageError for an empty image; InternalError when
// libpng fails.
std::vector<std::uint8_t> encode_png(const RgbImage& image);

// Image.resize((width, height), Image.BICUBIC) of Pillow 9.4, bit-exact (reducing_gap=None):
// separable convolution with support scaled by the downscale factor, fixed-point coefficients,
// horizontal pass first (only when the width changes), then vertical. Same size gives a copy.
// UsageError for a zero target size; InputError for an empty image.
RgbImage resize_bicubic(const RgbImage& image, std::size_t width, std::size_t height);

// Image.resize((width, height), Image.BILINEAR) of Pillow 9.4, bit-exact: resize_bicubic with
// Pillow's triangle filter (support 1, scaled by the downscale factor: antialiased). What
// torchvision 0.x's transforms.Resize does to a PIL image by default (FairFace's predict.py).
RgbImage resize_bilinear_pil(const RgbImage& image, std::size_t width, std::size_t height);

// Image.resize((out_width, out_height), Image.BICUBIC) of a mode "F" (32-bit float) image in
// Pillow 9.4: resize_bicubic's taps unquantised (normalised double weights, each pass a double sum
// stored as float; horizontal first, only the rows the vertical pass reads). clean-fid resizes
// each channel of an image this way. One plane, row-major, width x height; returns
// out_width x out_height floats. Same size gives a copy.
std::vector<float> resize_bicubic_float(const float* plane, std::size_t width, std::size_t height,
                                        std::size_t out_width, std::size_t out_height);

// (width, height) after resizing the short side to `shortest_edge`, as HF's
// get_resize_output_image_size(default_to_square=False) and torchvision Resize(int) compute it:
// long = int(shortest_edge * long / short) in double precision.
std::pair<std::size_t, std::size_t> shortest_edge_size(std::size_t width, std::size_t height,
                                                       std::size_t shortest_edge);

// Center crop. Where the image is at least as large as the crop, the offset is
// floor((H - h) / 2) for HF CLIPImageProcessor (Floor) and round((H - h) / 2.0) with Python's
// round-half-even for torchvision CenterCrop (Round). Where it is smaller, the result is padded
// with zeros, the image placed at ceil((h - H) / 2) (HF) or floor((h - H) / 2) (torchvision).
enum class CropRounding { Floor, Round };
RgbImage center_crop(const RgbImage& image, std::size_t width, std::size_t height,
                     CropRounding rounding);

// How FID tools turn a decoded RGB image into the Inception's 3 x 299 x 299 input:
//   PytorchFid  u8 / 255 in float32, torch's bilinear resize to 299 x 299 (F.interpolate,
//               align_corners=False, no antialiasing), then 2 x - 1   (pytorch-fid)
//   CleanFid    each channel as a float image resized by Pillow's bicubic filter (mode "F", no
//               quantisation), clipped to [0, 255], then (x - 128) / 128   (clean-fid "clean")
enum class FidPreprocess { PytorchFid, CleanFid };
// "pytorch-fid" | "clean-fid" (UsageError naming both otherwise).
FidPreprocess parse_fid_preprocess(const std::string& name);
std::string fid_preprocess_name(FidPreprocess mode);

// Everything between a decoded image and the model's pixel tensor.
struct ImagePreprocess {
  bool do_convert_rgb = true;  // decode_image always yields RGB; kept for the config's sake
  bool do_resize = true;
  std::size_t shortest_edge = 224;  // only bicubic resampling is supported
  bool do_center_crop = true;
  std::size_t crop_width = 224, crop_height = 224;
  CropRounding crop_rounding = CropRounding::Floor;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::array<float, 3> mean{0.48145466f, 0.4578275f, 0.40821073f};
  std::array<float, 3> std{0.26862954f, 0.26130258f, 0.27577711f};
};

// HF preprocessor_config.json (CLIPImageProcessor / CLIPFeatureExtractor, and BitImageProcessor,
// which DINOv2 ships and which has the same keys, defaults and steps): size (int or
// {"shortest_edge"}), crop_size (int or {"height", "width"}), the do_* flags, rescale_factor,
// image_mean / image_std, resample (only 3 = BICUBIC). Crop rounding Floor. Missing keys take
// CLIPImageProcessor's defaults. UsageError naming the key for settings we do not implement
// (another resample, size {"height", "width"}, do_pad, crop_pct, ...) and for a processor type
// that is neither; InputError for malformed JSON or wrongly typed values. Keys that do not
// change the computation and that we do not know are ignored with a warning.
ImagePreprocess read_hf_preprocessor_config(const std::filesystem::path& path);

// open_clip's open_clip_config.json: {"model_cfg": {"vision_cfg": {"image_size": 224}},
// "preprocess_cfg": {"mean", "std", "interpolation": "bicubic", "resize_mode": "shortest"}}.
// shortest_edge = crop = image_size (an int or a square [n, n]); crop rounding Round
// (torchvision); rescale 1/255. UsageError naming the key for another interpolation or
// resize_mode, or a non-square image_size.
ImagePreprocess read_open_clip_preprocess(const std::filesystem::path& open_clip_config_json);

// Resize and center crop as configured: the uint8 image the pixel tensor is computed from.
RgbImage preprocess_geometry(const RgbImage& image, const ImagePreprocess& p);
// An upper bound on the bytes preprocess_geometry allocates for a width x height image (the
// resize passes and the crop), saturating instead of overflowing: a tiny image with an extreme
// aspect ratio can resize to hundreds of megabytes.
std::size_t preprocess_geometry_bytes(std::size_t width, std::size_t height,
                                      const ImagePreprocess& p);

// The model's pixel tensor for one image: 3 x crop_height x crop_width float32, CHW, written to
// out[0 .. 3 * crop_height * crop_width). Values ((pixel * rescale_factor) - mean[c]) / std[c]:
// pixel * rescale_factor in double then cast to float32, the rest in float32, as HF's
// rescale/normalize do (for rescale 1/255 this equals torchvision's ToTensor + Normalize
// exactly). InputError when do_center_crop is off and the resized image is not crop-sized.
void preprocess_image(const RgbImage& image, const ImagePreprocess& p, float* out);

}  // namespace vlbias
