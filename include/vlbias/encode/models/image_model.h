#pragma once
// Image feature models behind one interface, so that one job (run_encode_job: `vlbias encode
// --images` and `vlbias features`) decodes, checkpoints and writes features for any of them:
//   Clip       CLIP's image tower, projected (include/vlbias/encode/encode.h)
//   Inception  Inception-v3 pool3 as FID computes it
//              (include/vlbias/encode/models/inception_model.h), with pytorch-fid's or
//              clean-fid's preprocessing
//   Dinov2     DINOv2's CLS token after the final norm (FD_DINOv2's feature)
// The architecture is detected from the model path (detect_image_model).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/dinov2_model.h"

namespace vlbias {

enum class ImageModelKind { Clip, Inception, Dinov2 };
std::string image_model_kind_name(ImageModelKind kind);  // "clip", "inception-v3-fid", "dinov2"

struct ImageModelOptions {
  ClipEncoderOptions clip;                                    // CLIP only
  FidPreprocess fid = FidPreprocess::PytorchFid;              // Inception only
  InceptionOutput inception_output = InceptionOutput::Pool3;  // Inception only
  std::size_t image_size = 0;  // DINOv2 only: resize and crop side (0: the processor config's)
  // DINOv2 only: position embeddings resized as facebookresearch/dinov2 (FD_DINOv2) or as current
  // transformers.
  Dinov2Positions dinov2_positions = Dinov2Positions::ScaleFactor;
  Dinov2Resize dinov2_resize = Dinov2Resize::Processor;  // DINOv2 only
};

// Sets the preprocessing `name` names for a model of `kind`: pytorch-fid | clean-fid for the FID
// Inception, processor | dgm-eval | dgm-eval-clean for DINOv2; "" keeps the model's default.
// UsageError for another kind's name, and for any name with CLIP (its folder's preprocessing).
void set_image_preprocess(ImageModelOptions& options, ImageModelKind kind, const std::string& name);

// A loaded image model with its preprocessing. Immutable after opening except for work
// buffers: call encode from one thread at a time; pixels may run on many threads at once.
class ImageFeatureModel {
 public:
  virtual ~ImageFeatureModel() = default;
  virtual ImageModelKind kind() const = 0;
  // Floats of one image's input tensor (3 x S x S, CHW).
  virtual std::size_t pixels_per_image() const = 0;
  // The input tensor of one decoded image into out[0 .. pixels_per_image()).
  virtual void pixels(const RgbImage& image, float* out) const = 0;
  // An upper bound on the bytes pixels() allocates for a width x height image.
  virtual std::size_t pixels_bytes(std::size_t width, std::size_t height) const = 0;
  // n input tensors back to back -> n x dim() features, row i = image i (not normalised).
  virtual Matrix encode(const float* pixels, std::size_t n) const = 0;
  virtual std::size_t dim() const = 0;
  // Images per forward pass when the user does not say.
  virtual std::size_t default_batch() const = 0;
  // {"model": {..., "weights_sha256": ...}, "preprocessing": {...}} for manifests.
  virtual nlohmann::ordered_json describe() const = 0;
};

// What `model` (a folder or a weights file) holds: a folder with config.json of model_type
// "dinov2" -> Dinov2; a CLIP folder (config.json of a CLIP model, or open_clip_config.json) ->
// Clip; a .safetensors file, or a folder with model.safetensors, whose tensors are the FID
// Inception's (Conv2d_1a_3x3.conv.weight, ...) -> Inception. InputError naming the path and what
// was looked for otherwise.
ImageModelKind detect_image_model(const std::filesystem::path& model);

// Opens the model detect_image_model finds (InputError / UsageError from the loaders).
std::unique_ptr<ImageFeatureModel> open_image_model(const std::filesystem::path& model,
                                                    const ImageModelOptions& options = {});

}  // namespace vlbias
