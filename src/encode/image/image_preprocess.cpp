// CLIP preprocessing configs and the pixel tensor: HF CLIPImageProcessor (transformers
// image_processing_clip.py, image_transforms.py) and open_clip (transform.py: torchvision
// Resize, CenterCrop, ToTensor, Normalize).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/json.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias {
namespace {

Json read_json_file(const std::filesystem::path& path) {
  const MappedFile file(path, MapAccess::Sequential);
  const std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
  return parse_json(text, fmt::format("'{}'", path.string()));
}

// Typed accessors: a wrong JSON type is an InputError naming the file and the key.
class ConfigReader {
 public:
  ConfigReader(const Json& object, std::string file, std::string prefix)
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {
    VLBIAS_CHECK(object_.is_object(), InputError, "'{}': {} must be a JSON object", file_,
                 prefix_.empty() ? "the top level" : "'" + prefix_ + "'");
  }

  bool has(const std::string& key) const {
    return object_.contains(key) && !object_.at(key).is_null();
  }
  const Json& at(const std::string& key) const { return object_.at(key); }
  std::string name(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }
  const std::string& file() const { return file_; }

  bool boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    VLBIAS_CHECK(at(key).is_boolean(), InputError, "'{}': '{}' must be true or false, not {}",
                 file_, name(key), at(key).dump());
    return at(key).get<bool>();
  }

  double number(const std::string& key, double fallback) const {
    if (!has(key)) return fallback;
    VLBIAS_CHECK(at(key).is_number(), InputError, "'{}': '{}' must be a number, not {}", file_,
                 name(key), at(key).dump());
    const double v = at(key).get<double>();
    VLBIAS_CHECK(std::isfinite(v), InputError, "'{}': '{}' must be finite", file_, name(key));
    return v;
  }

  std::size_t positive_int(const Json& value, const std::string& key) const {
    VLBIAS_CHECK(value.is_number_unsigned() && value.get<std::uint64_t>() > 0 &&
                     value.get<std::uint64_t>() <= 65536,
                 InputError, "'{}': '{}' must be a whole number of pixels from 1 to 65536, not {}",
                 file_, name(key), value.dump());
    return static_cast<std::size_t>(value.get<std::uint64_t>());
  }

  std::string string(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    VLBIAS_CHECK(at(key).is_string(), InputError, "'{}': '{}' must be a string, not {}", file_,
                 name(key), at(key).dump());
    return at(key).get<std::string>();
  }

  // image_mean / image_std: three numbers, or one number for all channels (HF accepts both).
  std::array<float, 3> channels(const std::string& key, std::array<float, 3> fallback,
                                bool nonzero) const {
    if (!has(key)) return fallback;
    const Json& v = at(key);
    std::array<double, 3> d{};
    if (v.is_number()) {
      d.fill(v.get<double>());
    } else {
      VLBIAS_CHECK(
          v.is_array() && v.size() == 3 && v[0].is_number() && v[1].is_number() && v[2].is_number(),
          InputError, "'{}': '{}' must be a list of 3 numbers (R, G, B), not {}", file_, name(key),
          v.dump());
      for (std::size_t c = 0; c < 3; ++c) d[c] = v[c].get<double>();
    }
    std::array<float, 3> out{};
    for (std::size_t c = 0; c < 3; ++c) {
      VLBIAS_CHECK(std::isfinite(d[c]) && (!nonzero || d[c] != 0.0), InputError,
                   "'{}': '{}' must hold finite{} numbers, not {}", file_, name(key),
                   nonzero ? " non-zero" : "", v.dump());
      out[c] = static_cast<float>(d[c]);  // np.array(mean, dtype=float32) / torch.as_tensor
    }
    return out;
  }

  // Keys we do not know and that are not refused are ignored, with one warning per file.
  void warn_unknown(const std::set<std::string>& known) const {
    std::string unknown;
    for (const auto& [key, value] : object_.items()) {
      if (!known.contains(key)) unknown += (unknown.empty() ? "'" : ", '") + name(key) + "'";
    }
    if (!unknown.empty()) {
      warn("'{}': ignoring keys that vlbias does not know: {}", file_, unknown);
    }
  }

 private:
  const Json& object_;
  std::string file_;
  std::string prefix_;
};

// PIL.Image.Resampling values, for messages.
std::string resample_name(std::int64_t v) {
  switch (v) {
    case 0:
      return "NEAREST";
    case 1:
      return "LANCZOS";
    case 2:
      return "BILINEAR";
    case 3:
      return "BICUBIC";
    case 4:
      return "BOX";
    case 5:
      return "HAMMING";
    default:
      return "unknown";
  }
}

// open_clip image sizes: N or a square [N, N]; a non-square [H, W] (ResizeKeepRatio) is refused.
std::size_t processor_square_size(const ConfigReader& cfg, const std::string& key) {
  const Json& s = cfg.at(key);
  if (!s.is_array()) return cfg.positive_int(s, key);
  VLBIAS_CHECK(s.size() == 2, InputError, "'{}': '{}' must be N or [H, W], not {}", cfg.file(),
               cfg.name(key), s.dump());
  const std::size_t h = cfg.positive_int(s[0], key + "[0]");
  const std::size_t w = cfg.positive_int(s[1], key + "[1]");
  VLBIAS_CHECK(h == w, UsageError,
               "'{}': '{}' is {}; vlbias implements only square images (open_clip's "
               "ResizeKeepRatio for [H, W] is not reproduced)",
               cfg.file(), cfg.name(key), s.dump());
  return h;
}

// Refuses a processor that is not CLIP's (or BiT's, the same pipeline), or settings that change the
// computation and that CLIPImageProcessor's PIL path does not have (or that vlbias does not
// implement).
void refuse_unsupported_hf_settings(const ConfigReader& cfg) {
  const std::string& file = cfg.file();
  for (const char* type_key : {"image_processor_type", "feature_extractor_type"}) {
    if (!cfg.has(type_key)) continue;
    const std::string type = cfg.string(type_key, "");
    // BitImageProcessor (DINOv2's) has CLIPImageProcessor's keys, defaults and steps: resize of
    // the shortest edge, floor centre crop, rescale, normalize
    // (models/bit/image_processing_bit.py).
    VLBIAS_CHECK(type == "CLIPImageProcessor" || type == "CLIPFeatureExtractor" ||
                     type == "BitImageProcessor",
                 UsageError,
                 "'{}': {} is '{}'; vlbias reproduces only CLIPImageProcessor / "
                 "CLIPFeatureExtractor and BitImageProcessor preprocessing",
                 file, type_key, type);
  }

  // Refused when they would take effect.
  for (const char* flag :
       {"do_pad", "do_flip_channel_order", "do_color_quantize", "rescale_offset", "use_square_size",
        "do_image_splitting", "keep_aspect_ratio", "default_to_square"}) {
    VLBIAS_CHECK(!cfg.boolean(flag, false), UsageError,
                 "'{}': '{}' is true; vlbias does not implement it (only CLIPImageProcessor's "
                 "shortest-edge resize, center crop, rescale and normalize)",
                 file, flag);
  }
  for (const char* key : {"crop_pct", "size_divisor", "pad_size", "image_grid_pinpoints",
                          "max_image_size", "ensure_multiple_of"}) {
    VLBIAS_CHECK(!cfg.has(key), UsageError,
                 "'{}': '{}' is set ({}); vlbias does not implement it (only CLIPImageProcessor's "
                 "shortest-edge resize, center crop, rescale and normalize)",
                 file, key, cfg.at(key).dump());
  }
}

// The resize, crop and resampling keys: "size", "crop_size", "resample".
void read_hf_geometry(const ConfigReader& cfg, ImagePreprocess& p) {
  const std::string& file = cfg.file();
  if (cfg.has("size")) {
    const Json& size = cfg.at("size");
    if (size.is_object()) {
      VLBIAS_CHECK(size.contains("shortest_edge"), UsageError,
                   "'{}': 'size' is {}; vlbias implements only the shortest-edge resize "
                   "({{\"shortest_edge\": N}} or N), not a fixed height and width",
                   file, size.dump());
      VLBIAS_CHECK(size.size() == 1, UsageError,
                   "'{}': 'size' is {}; only {{\"shortest_edge\": N}} is supported", file,
                   size.dump());
      p.shortest_edge = cfg.positive_int(size.at("shortest_edge"), "size.shortest_edge");
    } else {
      p.shortest_edge = cfg.positive_int(size, "size");
    }
  }
  if (cfg.has("crop_size")) {
    const Json& crop = cfg.at("crop_size");
    if (crop.is_object()) {
      VLBIAS_CHECK(crop.contains("height") && crop.contains("width") && crop.size() == 2,
                   InputError,
                   "'{}': 'crop_size' must be N or {{\"height\": H, \"width\": W}}, not {}", file,
                   crop.dump());
      p.crop_height = cfg.positive_int(crop.at("height"), "crop_size.height");
      p.crop_width = cfg.positive_int(crop.at("width"), "crop_size.width");
    } else {
      p.crop_width = p.crop_height = cfg.positive_int(crop, "crop_size");
    }
  }
  if (cfg.has("resample")) {
    const Json& r = cfg.at("resample");
    VLBIAS_CHECK(r.is_number_integer(), InputError,
                 "'{}': 'resample' must be a PIL resampling code (3 = BICUBIC), not {}", file,
                 r.dump());
    const auto v = r.get<std::int64_t>();
    VLBIAS_CHECK(v == 3, UsageError,
                 "'{}': 'resample' is {} ({}); vlbias implements only 3 (BICUBIC)", file, v,
                 resample_name(v));
  }
}

}  // namespace

ImagePreprocess read_hf_preprocessor_config(const std::filesystem::path& path) {
  const Json json = read_json_file(path);
  const ConfigReader cfg(json, path.string(), "");
  refuse_unsupported_hf_settings(cfg);

  ImagePreprocess p;
  p.crop_rounding = CropRounding::Floor;
  p.do_convert_rgb = cfg.boolean("do_convert_rgb", true);
  p.do_resize = cfg.boolean("do_resize", true);
  p.do_center_crop = cfg.boolean("do_center_crop", true);
  p.do_rescale = cfg.boolean("do_rescale", true);
  p.do_normalize = cfg.boolean("do_normalize", true);

  read_hf_geometry(cfg, p);
  p.rescale_factor = cfg.number("rescale_factor", 1.0 / 255.0);
  p.mean = cfg.channels("image_mean", p.mean, false);
  p.std = cfg.channels("image_std", p.std, true);

  cfg.warn_unknown({"image_processor_type",
                    "feature_extractor_type",
                    "processor_class",
                    "_processor_class",
                    "_valid_processor_keys",
                    "do_convert_rgb",
                    "do_resize",
                    "size",
                    "resample",
                    "do_center_crop",
                    "crop_size",
                    "do_rescale",
                    "rescale_factor",
                    "do_normalize",
                    "image_mean",
                    "image_std",
                    "do_pad",
                    "do_flip_channel_order",
                    "do_color_quantize",
                    "rescale_offset",
                    "use_square_size",
                    "do_image_splitting",
                    "keep_aspect_ratio",
                    "default_to_square",
                    "crop_pct",
                    "size_divisor",
                    "pad_size",
                    "image_grid_pinpoints",
                    "max_image_size",
                    "ensure_multiple_of"});
  return p;
}

ImagePreprocess read_open_clip_preprocess(const std::filesystem::path& open_clip_config_json) {
  const Json json = read_json_file(open_clip_config_json);
  const ConfigReader top(json, open_clip_config_json.string(), "");
  const std::string& file = top.file();

  // open_clip's CLIPVisionCfg default is 224.
  // open_clip's CLIPVisionCfg default is 224; preprocess_cfg.size, when given, overrides it
  // (open_clip merges preprocess_cfg over the model's own PreprocessCfg).
  std::size_t image_size = 224;
  if (top.has("model_cfg")) {
    const ConfigReader model(top.at("model_cfg"), file, "model_cfg");
    if (model.has("vision_cfg")) {
      const ConfigReader vision(model.at("vision_cfg"), file, "model_cfg.vision_cfg");
      if (vision.has("image_size")) image_size = processor_square_size(vision, "image_size");
    }
  }

  ImagePreprocess p;
  p.crop_rounding = CropRounding::Round;
  p.rescale_factor = 1.0 / 255.0;  // ToTensor; equal to float32 x / 255 for every byte value
  if (top.has("preprocess_cfg")) {
    const ConfigReader pre(top.at("preprocess_cfg"), file, "preprocess_cfg");
    if (pre.has("size")) image_size = processor_square_size(pre, "size");
    const std::string mode = pre.string("mode", "RGB");
    VLBIAS_CHECK(mode == "RGB", UsageError,
                 "'{}': 'preprocess_cfg.mode' is '{}'; vlbias implements only 'RGB'", file, mode);
    const std::string interpolation = pre.string("interpolation", "bicubic");
    VLBIAS_CHECK(interpolation == "bicubic", UsageError,
                 "'{}': 'preprocess_cfg.interpolation' is '{}'; vlbias implements only 'bicubic'",
                 file, interpolation);
    const std::string resize_mode = pre.string("resize_mode", "shortest");
    VLBIAS_CHECK(resize_mode == "shortest", UsageError,
                 "'{}': 'preprocess_cfg.resize_mode' is '{}'; vlbias implements only 'shortest'",
                 file, resize_mode);
    p.mean = pre.channels("mean", p.mean, false);
    p.std = pre.channels("std", p.std, true);
    pre.warn_unknown({"mean", "std", "interpolation", "resize_mode", "fill_color", "size", "mode"});
  }
  p.shortest_edge = image_size;
  p.crop_width = p.crop_height = image_size;
  return p;
}

RgbImage preprocess_geometry(const RgbImage& image, const ImagePreprocess& p) {
  if (!p.do_resize) {
    return p.do_center_crop ? center_crop(image, p.crop_width, p.crop_height, p.crop_rounding)
                            : image;
  }
  const auto [w, h] = shortest_edge_size(image.width, image.height, p.shortest_edge);
  RgbImage resized = resize_bicubic(image, w, h);
  if (!p.do_center_crop) return resized;
  return center_crop(resized, p.crop_width, p.crop_height, p.crop_rounding);
}

std::size_t preprocess_geometry_bytes(std::size_t width, std::size_t height,
                                      const ImagePreprocess& p) {
  // In double: the products may exceed size_t for hostile sizes (the resize then refuses them).
  const double w = static_cast<double>(width), h = static_cast<double>(height);
  double pixels = p.do_center_crop ? static_cast<double>(p.crop_width * p.crop_height) : 0.0;
  if (!p.do_resize) {
    if (!p.do_center_crop) pixels += w * h;  // the copy
  } else if (width > 0 && height > 0 && p.shortest_edge > 0) {
    const auto [rw, rh] = shortest_edge_size(width, height, p.shortest_edge);
    // The horizontal pass (at most every source row at the new width), then the vertical one.
    pixels += static_cast<double>(rw) * h + static_cast<double>(rw) * static_cast<double>(rh);
  }
  const double bytes = 3.0 * pixels;
  constexpr double kCap = static_cast<double>(std::numeric_limits<std::size_t>::max() / 2);
  return bytes >= kCap ? static_cast<std::size_t>(kCap) : static_cast<std::size_t>(bytes);
}

void preprocess_image(const RgbImage& image, const ImagePreprocess& p, float* out) {
  const RgbImage ready = preprocess_geometry(image, p);
  VLBIAS_CHECK(ready.width == p.crop_width && ready.height == p.crop_height, InputError,
               "the preprocessed image is {} x {} pixels but the model expects {} x {} (center "
               "crop is off)",
               ready.width, ready.height, p.crop_width, p.crop_height);
  const std::size_t plane = ready.width * ready.height;
  for (std::size_t c = 0; c < 3; ++c) {
    float* dst = out + c * plane;
    const float mean = p.mean[c];
    const float std = p.std[c];
    for (std::size_t i = 0; i < plane; ++i) {
      const std::uint8_t pixel = ready.pixels[3 * i + c];
      // HF rescale: image.astype(float64) * scale, then .astype(float32); without rescale,
      // normalize casts the uint8 image to float32.
      float v = p.do_rescale ? static_cast<float>(static_cast<double>(pixel) * p.rescale_factor)
                             : static_cast<float>(pixel);
      // HF normalize: (image - mean) / std with float32 mean and std.
      if (p.do_normalize) v = (v - mean) / std;
      dst[i] = v;
    }
  }
}

}  // namespace vlbias
