// Image feature models behind one interface: detection from the model path, and CLIP's image
// tower as one of them (see include/vlbias/encode/models/image_model.h).
#include "vlbias/encode/models/image_model.h"

#include <fstream>
#include <optional>

#include "image_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/inception_model.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias {

namespace fs = std::filesystem;

std::string image_model_kind_name(ImageModelKind kind) {
  switch (kind) {
    case ImageModelKind::Clip:
      return "clip";
    case ImageModelKind::Inception:
      return "inception-v3-fid";
    case ImageModelKind::Dinov2:
      return "dinov2";
  }
  return "";
}

FidPreprocess parse_fid_preprocess(const std::string& name) {
  if (name == "pytorch-fid") return FidPreprocess::PytorchFid;
  if (name == "clean-fid") return FidPreprocess::CleanFid;
  VLBIAS_FAIL(UsageError,
              "Unknown FID preprocessing '{}'; expected pytorch-fid (torch's bilinear resize) or "
              "clean-fid (Pillow's bicubic on float channels).",
              name);
}

std::string fid_preprocess_name(FidPreprocess mode) {
  return mode == FidPreprocess::PytorchFid ? "pytorch-fid" : "clean-fid";
}

namespace {

// The files a folder of the FID Inception's weights may hold, in the order they are looked for:
// ours, pytorch-fid's state dict, clean-fid's / StyleGAN's TorchScript archive.
constexpr const char* kInceptionFiles[] = {
    "model.safetensors", "pt_inception-2015-12-05-6726825d.pth", "inception-2015-12-05.pt"};

bool is_weights_file(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".safetensors" || ext == ".pth" || ext == ".pt" || ext == ".bin";
}

// pytorch-fid's names, or the graph's 94 convolution kernels under any names (TorchScript).
bool holds_inception(const fs::path& weights) {
  const SafetensorsFile f = open_weights_file(weights);
  if (f.contains(kInceptionFirstWeight)) return true;
  std::size_t kernels = 0;
  for (const std::string& name : f.names()) kernels += f.info(name).shape.size() == 4 ? 1 : 0;
  return kernels == encode_internal::inception_conv_count();
}

// The Inception weights file of a folder, or "" when it has none.
fs::path inception_file_in(const fs::path& dir) {
  for (const char* name : kInceptionFiles) {
    if (fs::is_regular_file(dir / name) && holds_inception(dir / name)) return dir / name;
  }
  return {};
}

// config.json's model_type, or "" when the file is absent or has none.
std::string config_model_type(const fs::path& dir) {
  const fs::path config = dir / "config.json";
  if (!fs::is_regular_file(config)) return "";
  const Json j = parse_json(read_file_text(config, "a model config.json"), config.string());
  return j.is_object() && j.contains("model_type") && j["model_type"].is_string()
             ? j["model_type"].get<std::string>()
             : "";
}

class ClipImageModel final : public ImageFeatureModel {
 public:
  ClipImageModel(const fs::path& dir, const ClipEncoderOptions& options)
      : encoder_(ClipEncoder::open(dir, options)) {}

  ImageModelKind kind() const override { return ImageModelKind::Clip; }
  std::size_t pixels_per_image() const override { return encoder_.pixels_per_image(); }
  void pixels(const RgbImage& image, float* out) const override { encoder_.pixels(image, out); }
  std::size_t pixels_bytes(std::size_t width, std::size_t height) const override {
    return preprocess_geometry_bytes(width, height, encoder_.preprocess());
  }
  Matrix encode(const float* pixels, std::size_t n) const override {
    return encoder_.model().encode_images(pixels, n);
  }
  std::size_t dim() const override { return encoder_.model().config().embed_dim; }
  std::size_t default_batch() const override { return 32; }
  Json describe() const override {
    Json d = encoder_.describe();
    d.erase("tokenizer");
    d["model"]["architecture"] = image_model_kind_name(kind());
    return d;
  }

 private:
  ClipEncoder encoder_;
};

class Dinov2ImageModel final : public ImageFeatureModel {
 public:
  Dinov2ImageModel(const fs::path& dir, const ImageModelOptions& options)
      : encoder_(Dinov2Encoder::open(
            dir,
            {options.image_size > 0 ? std::optional<std::size_t>(options.image_size) : std::nullopt,
             options.dinov2_positions, options.dinov2_resize})) {}

  ImageModelKind kind() const override { return ImageModelKind::Dinov2; }
  std::size_t pixels_per_image() const override { return encoder_.pixels_per_image(); }
  void pixels(const RgbImage& image, float* out) const override { encoder_.pixels(image, out); }
  std::size_t pixels_bytes(std::size_t width, std::size_t height) const override {
    return preprocess_geometry_bytes(width, height, encoder_.preprocess());
  }
  Matrix encode(const float* pixels, std::size_t n) const override {
    return encoder_.encode_pixels(pixels, n);
  }
  std::size_t dim() const override { return encoder_.dim(); }
  std::size_t default_batch() const override { return 32; }
  Json describe() const override {
    Json d = encoder_.describe();
    d["model"]["architecture"] = image_model_kind_name(kind());
    return d;
  }

 private:
  Dinov2Encoder encoder_;
};

}  // namespace

ImageModelKind detect_image_model(const fs::path& model) {
  VLBIAS_CHECK(fs::exists(model), InputError, "--model {} does not exist.", model.string());
  if (fs::is_regular_file(model)) {
    VLBIAS_CHECK(is_weights_file(model) && holds_inception(model), InputError,
                 "--model {}: a weights file is read as the FID Inception-v3 and must be a "
                 ".safetensors, .pth, .pt or .bin file with its tensors ('{}', ..., or the "
                 "graph's 94 convolutions under other names); for CLIP or DINOv2 give the model "
                 "folder.",
                 model.string(), kInceptionFirstWeight);
    return ImageModelKind::Inception;
  }
  const std::string type = config_model_type(model);
  if (type == "dinov2") return ImageModelKind::Dinov2;
  if (fs::exists(model / "open_clip_config.json") || type == "clip") return ImageModelKind::Clip;
  if (!inception_file_in(model).empty()) return ImageModelKind::Inception;
  VLBIAS_FAIL(InputError,
              "--model {}: not a model this tool reads: expected a CLIP folder (config.json of "
              "model_type clip, or open_clip_config.json), a DINOv2 folder (config.json of "
              "model_type dinov2), or the FID Inception-v3's weights (model.safetensors, "
              "pt_inception-2015-12-05-6726825d.pth or inception-2015-12-05.pt){}.",
              model.string(),
              type.empty() ? "" : fmt::format("; config.json says model_type '{}'", type));
}

void set_image_preprocess(ImageModelOptions& options, ImageModelKind kind,
                          const std::string& name) {
  if (name.empty()) return;
  switch (kind) {
    case ImageModelKind::Inception:
      options.fid = parse_fid_preprocess(name);
      return;
    case ImageModelKind::Dinov2:
      options.dinov2_resize = parse_dinov2_resize(name);
      return;
    case ImageModelKind::Clip:
      break;
  }
  VLBIAS_FAIL(UsageError,
              "--preprocess {}: a CLIP model's preprocessing is its folder's "
              "(preprocessor_config.json or open_clip_config.json); --preprocess names the FID "
              "Inception's (pytorch-fid, clean-fid) or DINOv2's (processor, dgm-eval, "
              "dgm-eval-clean).",
              name);
}

std::unique_ptr<ImageFeatureModel> open_image_model(const fs::path& model,
                                                    const ImageModelOptions& options) {
  switch (detect_image_model(model)) {
    case ImageModelKind::Clip:
      return std::make_unique<ClipImageModel>(model, options.clip);
    case ImageModelKind::Inception:
      return encode_internal::open_inception(
          fs::is_regular_file(model) ? model : inception_file_in(model), options.fid,
          options.inception_output);
    case ImageModelKind::Dinov2:
      return std::make_unique<Dinov2ImageModel>(model, options);
  }
  VLBIAS_FAIL(InternalError, "--model {}: an image model kind without a loader", model.string());
}

}  // namespace vlbias
