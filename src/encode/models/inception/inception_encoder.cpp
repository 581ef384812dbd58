// The FID Inception-v3 as an ImageFeatureModel: weights, one of the two FID preprocessing modes,
// and the forward (see include/vlbias/encode/models/image_model.h).
#include <algorithm>
#include <vector>

#include "models/image_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/models/inception_model.h"
#include "vlbias/io/json.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/nn/conv.h"

namespace vlbias {

namespace {

constexpr std::size_t kSide = InceptionModel::kInputSize;
constexpr std::size_t kPlane = kSide * kSide;

// One channel of `image` as floats: the 8-bit values, or / 255 (ToTensor) when `unit`.
std::vector<float> channel(const RgbImage& image, std::size_t c, bool unit) {
  std::vector<float> plane(image.width * image.height);
  for (std::size_t i = 0; i < plane.size(); ++i) {
    const auto v = static_cast<float>(image.pixels[i * 3 + c]);
    plane[i] = unit ? v / 255.0f : v;
  }
  return plane;
}

class InceptionImageModel final : public ImageFeatureModel {
 public:
  InceptionImageModel(const std::filesystem::path& weights, FidPreprocess mode,
                      InceptionOutput output)
      : weights_(weights),
        file_(open_weights_file(weights)),
        model_(file_.contains(kInceptionFirstWeight) ? InceptionModel::load(file_)
                                                     : InceptionModel::load_by_order(file_)),
        mode_(mode),
        output_(output) {
    VLBIAS_CHECK(output == InceptionOutput::Pool3 || model_.classes() > 0, InputError,
                 "{} holds no fc layer (fc.weight, fc.bias): no {} to write", weights.string(),
                 inception_output_name(output));
  }

  ImageModelKind kind() const override { return ImageModelKind::Inception; }
  std::size_t pixels_per_image() const override { return 3 * kPlane; }
  std::size_t dim() const override {
    return output_ == InceptionOutput::Pool3 ? model_.feature_dim() : model_.classes();
  }
  std::size_t default_batch() const override { return 16; }

  void pixels(const RgbImage& image, float* out) const override {
    VLBIAS_CHECK(image.width > 0 && image.height > 0 &&
                     image.pixels.size() == image.width * image.height * 3,
                 InputError, "cannot preprocess an image of {} x {} pixels with {} bytes",
                 image.width, image.height, image.pixels.size());
    for (std::size_t c = 0; c < 3; ++c) {
      float* o = out + c * kPlane;
      if (mode_ == FidPreprocess::PytorchFid) {
        // pytorch-fid: ToTensor, F.interpolate(bilinear) to 299, then 2 x - 1.
        const std::vector<float> plane = channel(image, c, true);
        resize_bilinear(plane.data(), image.height, image.width, o, kSide, kSide);
        for (std::size_t i = 0; i < kPlane; ++i) o[i] = 2.0f * o[i] - 1.0f;
      } else {
        // clean-fid: Pillow's bicubic on the float channel, clip, then (x - 128) / 128.
        const std::vector<float> plane = channel(image, c, false);
        const std::vector<float> resized =
            resize_bicubic_float(plane.data(), image.width, image.height, kSide, kSide);
        for (std::size_t i = 0; i < kPlane; ++i) {
          o[i] = (std::clamp(resized[i], 0.0f, 255.0f) - 128.0f) / 128.0f;
        }
      }
    }
  }

  std::size_t pixels_bytes(std::size_t width, std::size_t height) const override {
    // A float channel, and for clean-fid the horizontal pass (299 x height) and its result.
    const std::size_t plane = width * height;
    return sizeof(float) *
           (plane + (mode_ == FidPreprocess::CleanFid ? kSide * height : 0) + 2 * kPlane);
  }

  Matrix encode(const float* pixels, std::size_t n) const override {
    const Matrix pool3 = model_.features(pixels, n);
    if (output_ == InceptionOutput::Pool3) return pool3;
    return model_.logits(pool3, output_ == InceptionOutput::Logits);
  }

  Json describe() const override {
    Json model{{"architecture", image_model_kind_name(kind())},
               {"weights", weights_.string()},
               {"weights_sha256", sha256_file(weights_.string())},
               {"feature_dim", model_.feature_dim()},
               {"classes", model_.classes()},
               {"output", output_ == InceptionOutput::Pool3
                              ? "pool3: global average of Mixed_7c (2048 for the real network)"
                          : output_ == InceptionOutput::Logits
                              ? "logits: fc(pool3) (1008 for the real network)"
                              : "logits-unbiased: fc(pool3) without the fc bias"},
               {"macs_per_image", model_.macs_per_image()}};
    Json pre{{"mode", fid_preprocess_name(mode_)},
             {"convert_rgb", "Pillow 9.4 convert(\"RGB\")"},
             {"input_size", kSide}};
    if (mode_ == FidPreprocess::PytorchFid) {
      pre["resize"] = "torch F.interpolate bilinear, align_corners=False, of u8 / 255";
      pre["scale"] = "2 x - 1";
    } else {
      pre["resize"] = "Pillow bicubic of each channel as a mode F image, clipped to [0, 255]";
      pre["scale"] = "(x - 128) / 128";
    }
    return Json{{"model", model}, {"preprocessing", pre}};
  }

 private:
  std::filesystem::path weights_;
  SafetensorsFile file_;
  InceptionModel model_;
  FidPreprocess mode_;
  InceptionOutput output_;
};

}  // namespace

namespace encode_internal {

std::unique_ptr<ImageFeatureModel> open_inception(const std::filesystem::path& weights,
                                                  FidPreprocess mode, InceptionOutput output) {
  return std::make_unique<InceptionImageModel>(weights, mode, output);
}

}  // namespace encode_internal

}  // namespace vlbias
