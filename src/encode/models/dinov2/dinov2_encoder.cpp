// Dinov2Encoder: a DINOv2 folder's model and image preprocessing. See
// include/vlbias/encode/models/dinov2_model.h.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/io/json.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

// What facebook/dinov2-* ship in preprocessor_config.json (BitImageProcessor): shortest edge 256
// bicubic, centre crop 224, rescale 1/255, ImageNet mean and std (timm's IMAGENET_DEFAULT_*).
ImagePreprocess dinov2_default_preprocess() {
  ImagePreprocess p;
  p.shortest_edge = 256;
  p.crop_width = p.crop_height = 224;
  p.crop_rounding = CropRounding::Floor;
  p.mean = {0.485f, 0.456f, 0.406f};
  p.std = {0.229f, 0.224f, 0.225f};
  return p;
}

const char* activation_name(const Dinov2Config& c) {
  return c.swiglu ? "silu (SwiGLU)" : c.hidden_act.c_str();
}

std::string positions_json(const Dinov2Config& c, Dinov2Positions mode, bool same_grid) {
  if (same_grid) return "as trained";
  if (mode == Dinov2Positions::ScaleFactor) {
    return fmt::format(
        "bicubic from {0}x{0}, scale factor (g + 0.1) / {0} (scale-factor: facebookresearch/dinov2 "
        "interpolate_pos_encoding)",
        c.grid());
  }
  return fmt::format("bicubic from {0}x{0} to the grid's size (size: current transformers)",
                     c.grid());
}

}  // namespace

Dinov2Encoder Dinov2Encoder::open(const fs::path& dir, const Dinov2EncoderOptions& options) {
  Dinov2Encoder e(Dinov2Model::load(dir, options.positions));
  e.dir_ = dir;
  const fs::path pre = dir / "preprocessor_config.json";
  std::error_code ec;
  if (fs::exists(pre, ec)) {
    e.preprocess_ = read_hf_preprocessor_config(pre);
    e.preprocess_source_ = pre.filename().string();
  } else {
    e.preprocess_ = dinov2_default_preprocess();
    e.preprocess_source_ = "DINOv2 defaults (no preprocessor_config.json)";
  }
  e.resize_ = options.resize;
  if (options.resize != Dinov2Resize::Processor) {
    // dgm-eval: a square of 224 (or --image-size) without crop, ImageNet statistics.
    const std::size_t s = options.image_size.value_or(224);
    VLBIAS_CHECK(s > 0 && s <= 65536, UsageError,
                 "--image-size is {}; expected a whole number of pixels from 1 to 65536", s);
    e.preprocess_ = dinov2_default_preprocess();
    e.preprocess_.do_resize = false;
    e.preprocess_.crop_width = e.preprocess_.crop_height = s;
    e.preprocess_source_ = fmt::format("{} ({} x {})", to_string(options.resize), s, s);
  } else if (options.image_size) {
    const std::size_t s = *options.image_size;
    VLBIAS_CHECK(s > 0 && s <= 65536, UsageError,
                 "--image-size is {}; expected a whole number of pixels from 1 to 65536", s);
    e.preprocess_.do_resize = true;
    e.preprocess_.do_center_crop = true;
    e.preprocess_.shortest_edge = s;
    e.preprocess_.crop_width = e.preprocess_.crop_height = s;
    e.preprocess_source_ += fmt::format(", --image-size {}", s);
  }
  VLBIAS_CHECK(e.preprocess_.do_center_crop, UsageError,
               "{}: the preprocessing does not centre-crop (do_center_crop false), so images "
               "would reach the model at different sizes; vlbias needs one input size (set "
               "--image-size)",
               dir.string());
  const std::size_t p = e.model_.config().patch_size;
  VLBIAS_CHECK(e.preprocess_.crop_width >= p && e.preprocess_.crop_height >= p, UsageError,
               "{}: the preprocessing crops to {} x {} pixels, smaller than one {} x {} patch",
               dir.string(), e.preprocess_.crop_width, e.preprocess_.crop_height, p, p);
  return e;
}

std::size_t Dinov2Encoder::pixels_per_image() const {
  return 3 * preprocess_.crop_width * preprocess_.crop_height;
}

void Dinov2Encoder::pixels(const RgbImage& image, float* out) const {
  const std::size_t w = preprocess_.crop_width, h = preprocess_.crop_height;
  if (resize_ == Dinov2Resize::Processor) return preprocess_image(image, preprocess_, out);
  // The square's centre crop is the whole square: only rescale and normalise remain.
  if (resize_ == Dinov2Resize::DgmEval)
    return preprocess_image(resize_bicubic(image, w, h), preprocess_, out);
  VLBIAS_CHECK(
      image.width > 0 && image.height > 0 && image.pixels.size() == image.width * image.height * 3,
      InputError, "cannot preprocess an image of {} x {} pixels with {} bytes", image.width,
      image.height, image.pixels.size());
  std::vector<float> plane(image.width * image.height);
  for (std::size_t c = 0; c < 3; ++c) {
    for (std::size_t i = 0; i < plane.size(); ++i) plane[i] = image.pixels[3 * i + c];
    const std::vector<float> r =
        resize_bicubic_float(plane.data(), image.width, image.height, w, h);
    // ToTensor of the float array divides by 255 after the clip, then Normalize.
    float* o = out + c * w * h;
    for (std::size_t i = 0; i < w * h; ++i) {
      const float v = std::clamp(r[i], 0.0f, 255.0f) / 255.0f;
      o[i] = (v - preprocess_.mean[c]) / preprocess_.std[c];
    }
  }
}

Matrix Dinov2Encoder::encode_pixels(const float* pixels, std::size_t n) const {
  return model_.encode_images(pixels, n, preprocess_.crop_height, preprocess_.crop_width);
}

std::size_t Dinov2Encoder::dim() const {
  return model_.config().width;
}

Json Dinov2Encoder::describe() const {
  const Dinov2Config& c = model_.config();
  const ImagePreprocess& p = preprocess_;
  const std::size_t gh = p.crop_height / c.patch_size, gw = p.crop_width / c.patch_size;
  const bool same_grid = gh * gw == c.grid() * c.grid() && p.crop_height == p.crop_width;
  Json model{{"dir", dir_.string()},
             {"architecture", "dinov2 (transformers Dinov2Model)"},
             {"weights", model_.weights_path().filename().string()},
             {"weights_sha256", sha256_file(model_.weights_path().string())},
             {"width", c.width},
             {"layers", c.layers},
             {"heads", c.heads},
             {"mlp_width", c.mlp_width},
             {"mlp", c.swiglu ? "swiglu" : "fc1-act-fc2"},
             {"activation", activation_name(c)},
             {"qkv_bias", c.qkv_bias},
             {"layer_norm_eps", c.layer_norm_eps},
             {"patch_size", c.patch_size},
             {"trained_image_size", c.image_size},
             {"input_grid", Json::array({gh, gw})},
             {"positions", positions_json(c, model_.positions(), same_grid)},
             {"output", "CLS token after the final layernorm (pooler_output), not normalised"}};
  if (resize_ != Dinov2Resize::Processor) {
    return Json{{"model", model},
                {"preprocessing",
                 Json{{"mode", to_string(resize_)},
                      {"source", preprocess_source_},
                      {"convert_rgb", "Pillow 9.4 convert(\"RGB\")"},
                      {"resize", Json{{"width", p.crop_width},
                                      {"height", p.crop_height},
                                      {"resample", resize_ == Dinov2Resize::DgmEval
                                                       ? "Pillow bicubic, 8-bit"
                                                       : "Pillow bicubic on float channels"},
                                      {"crop", false}}},
                      {"rescale_factor", p.rescale_factor},
                      {"mean", p.mean},
                      {"std", p.std}}}};
  }
  Json pre{{"mode", "processor"},
           {"source", preprocess_source_},
           {"convert_rgb", "Pillow 9.4 convert(\"RGB\")"},
           {"resize", p.do_resize
                          ? Json{{"shortest_edge", p.shortest_edge}, {"resample", "Pillow bicubic"}}
                          : Json(nullptr)},
           {"center_crop",
            Json{{"width", p.crop_width},
                 {"height", p.crop_height},
                 {"rounding", p.crop_rounding == CropRounding::Floor ? "floor" : "round"}}},
           {"rescale_factor", p.do_rescale ? Json(p.rescale_factor) : Json(nullptr)},
           {"mean", p.do_normalize ? Json(p.mean) : Json(nullptr)},
           {"std", p.do_normalize ? Json(p.std) : Json(nullptr)}};
  return Json{{"model", model}, {"preprocessing", pre}};
}

}  // namespace vlbias
