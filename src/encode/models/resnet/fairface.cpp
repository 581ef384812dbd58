// The FairFace classifier (see include/vlbias/encode/models/fairface.h): predict.py's heads,
// classes and preprocessing around the ResNet forward.
#include "vlbias/encode/models/fairface.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias {

namespace {

// torchvision's ImageNet normalisation, which predict.py's Normalize uses.
constexpr std::array<float, 3> kImageNetMean{0.485f, 0.456f, 0.406f};
constexpr std::array<float, 3> kImageNetStd{0.229f, 0.224f, 0.225f};

// The weights file of `model`: the file itself, or a folder's model.safetensors /
// pytorch_model.bin.
std::filesystem::path fairface_weights_path(const std::filesystem::path& model) {
  if (!std::filesystem::is_directory(model)) return model;
  std::filesystem::path file = model_weights_file(model, "model.safetensors", "pytorch_model.bin");
  VLBIAS_CHECK(!file.empty(), UsageError,
               "'{}' is a folder without model.safetensors or pytorch_model.bin; expected the "
               "FairFace ResNet-34's weights there (or give the .pt file itself)",
               model.string());
  return file;
}

ResNetModel load_fairface_network(const std::filesystem::path& weights) {
  const SafetensorsFile file = open_weights_file(weights);
  ResNetModel net = ResNetModel::load(file);
  VLBIAS_CHECK(net.classes() == kFairFaceOutputs, UsageError,
               "'{}' holds a ResNet whose fc layer has {} outputs; the FairFace classifier has {} "
               "(race, gender and age logits)",
               weights.string(), net.classes(), kFairFaceOutputs);
  return net;
}

// Applies the renaming file `path` to `heads` (see FairFaceOptions::classes).
void rename_fairface_classes(const std::filesystem::path& path, std::vector<FairFaceHead>& heads) {
  const Json doc =
      parse_json(read_file_text(path, "a FairFace class list"), fmt::format("'{}'", path.string()));
  VLBIAS_CHECK(doc.is_object(), UsageError,
               "'{}' is not a JSON object; expected {{\"race\": [class names], ...}}",
               path.string());
  for (const auto& item : doc.items()) {
    const std::string attribute = item.key();
    const Json& names = item.value();
    auto head = std::find_if(heads.begin(), heads.end(),
                             [&](const FairFaceHead& h) { return h.attribute == attribute; });
    VLBIAS_CHECK(head != heads.end(), UsageError,
                 "'{}' names the attribute '{}', which this FairFace model has no head for",
                 path.string(), attribute);
    VLBIAS_CHECK(names.is_array() && names.size() == head->classes.size(), UsageError,
                 "'{}': attribute '{}' lists {} class names; its head has {} ({})", path.string(),
                 attribute, names.is_array() ? names.size() : 0, head->classes.size(),
                 fmt::format("{}", fmt::join(head->classes, ", ")));
    std::set<std::string> seen;
    for (std::size_t i = 0; i < names.size(); ++i) {
      VLBIAS_CHECK(names[i].is_string() && !names[i].get<std::string>().empty() &&
                       seen.insert(names[i].get<std::string>()).second,
                   UsageError, "'{}': class {} of attribute '{}' is not a new, non-empty string",
                   path.string(), i, attribute);
      head->classes[i] = names[i].get<std::string>();
    }
  }
}

}  // namespace

FairFaceVariant parse_fairface_variant(const std::string& name) {
  if (name == "7" || name == "race7") return FairFaceVariant::Race7;
  if (name == "4" || name == "race4") return FairFaceVariant::Race4;
  VLBIAS_FAIL(UsageError,
              "Unknown FairFace model '{}'; expected race7 (7 races, gender, age) or race4 (4 "
              "races).",
              name);
}

std::string fairface_variant_name(FairFaceVariant variant) {
  return variant == FairFaceVariant::Race7 ? "race7" : "race4";
}

std::vector<FairFaceHead> fairface_heads(FairFaceVariant variant) {
  // predict.py's result.loc[...] tables, in logit order.
  if (variant == FairFaceVariant::Race4) {
    return {{"race", 0, {"White", "Black", "Asian", "Indian"}}};
  }
  return {{"race",
           0,
           {"White", "Black", "Latino_Hispanic", "East Asian", "Southeast Asian", "Indian",
            "Middle Eastern"}},
          {"gender", 7, {"Male", "Female"}},
          {"age", 9, {"0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70+"}}};
}

void fairface_pixels(const RgbImage& chip, float* out) {
  ImagePreprocess p;
  p.do_resize = false;
  p.do_center_crop = false;
  p.crop_width = p.crop_height = kFairFaceInputSize;
  p.mean = kImageNetMean;
  p.std = kImageNetStd;
  preprocess_image(resize_bilinear_pil(chip, kFairFaceInputSize, kFairFaceInputSize), p, out);
}

std::vector<Matrix> fairface_probabilities(const Matrix& logits,
                                           const std::vector<FairFaceHead>& heads) {
  std::vector<Matrix> out;
  for (const FairFaceHead& head : heads) {
    const std::size_t k = head.classes.size();
    VLBIAS_CHECK(head.first + k <= logits.cols, InternalError,
                 "FairFace head '{}' reads logits {} to {} of {}", head.attribute, head.first,
                 head.first + k, logits.cols);
    Matrix p(logits.rows, k);
    for (std::size_t i = 0; i < logits.rows; ++i) {
      const float* l = &logits.data[i * logits.cols + head.first];
      const double top = *std::max_element(l, l + k);
      double sum = 0.0;
      for (std::size_t j = 0; j < k; ++j) sum += std::exp(static_cast<double>(l[j]) - top);
      for (std::size_t j = 0; j < k; ++j) {
        p.data[i * k + j] = static_cast<float>(std::exp(static_cast<double>(l[j]) - top) / sum);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

FairFaceClassifier::FairFaceClassifier(const std::filesystem::path& model,
                                       const FairFaceOptions& options)
    : options_(options),
      weights_file_(fairface_weights_path(model)),
      weights_sha256_(sha256_file(weights_file_.string())),
      heads_(fairface_heads(options.variant)),
      network_(load_fairface_network(weights_file_)) {
  VLBIAS_CHECK(options_.batch > 0, UsageError, "a FairFace batch of 0 chips; expected 1 or more");
  if (!options_.classes.empty()) rename_fairface_classes(options_.classes, heads_);
}

FairFaceResult FairFaceClassifier::classify_pixels(const float* pixels, std::size_t n) const {
  constexpr std::size_t kPer = 3 * kFairFaceInputSize * kFairFaceInputSize;
  Matrix logits(n, kFairFaceOutputs);
  for (std::size_t begin = 0; begin < n; begin += options_.batch) {
    const std::size_t count = std::min(options_.batch, n - begin);
    const Matrix part = network_.logits(pixels + begin * kPer, count, kFairFaceInputSize);
    std::copy(part.data.begin(), part.data.end(), logits.data.begin() + begin * kFairFaceOutputs);
  }
  std::vector<Matrix> probabilities = fairface_probabilities(logits, heads_);
  return {std::move(logits), std::move(probabilities)};
}

FairFaceResult FairFaceClassifier::classify(const std::vector<RgbImage>& chips) const {
  constexpr std::size_t kPer = 3 * kFairFaceInputSize * kFairFaceInputSize;
  FairFaceResult result{Matrix(chips.size(), kFairFaceOutputs), {}};
  std::vector<float> pixels;
  for (std::size_t begin = 0; begin < chips.size(); begin += options_.batch) {
    const std::size_t count = std::min(options_.batch, chips.size() - begin);
    pixels.resize(count * kPer);
    parallel_for(count,
                 [&](std::size_t i) { fairface_pixels(chips[begin + i], &pixels[i * kPer]); });
    const Matrix part = network_.logits(pixels.data(), count, kFairFaceInputSize);
    std::copy(part.data.begin(), part.data.end(),
              result.logits.data.begin() + begin * kFairFaceOutputs);
  }
  result.probabilities = fairface_probabilities(result.logits, heads_);
  return result;
}

}  // namespace vlbias
