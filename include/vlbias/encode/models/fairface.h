#pragma once
// The FairFace attribute classifier (Kärkkäinen & Joo 2021, "FairFace: Face Attribute Dataset for
// Balanced Race, Gender, and Age"; the released predict.py of github.com/dchen236/FairFace) as a
// library call: face chips in, per-head probabilities and class names out.
//
// The network is torchvision's resnet34 with fc replaced by 18 outputs (ResNetModel). Its heads
// are slices of the 18 logits, each with its own softmax (predict.py: np.exp(x) / sum(np.exp(x))
// over the slice):
//   Race7 model (res34_fair_align_multi_7_20190809.pt, fairface_alldata_20191111.pt)
//     race    logits 0-6   White, Black, Latino_Hispanic, East Asian, Southeast Asian, Indian,
//                          Middle Eastern
//     gender  logits 7-8   Male, Female
//     age     logits 9-17  0-2, 3-9, 10-19, 20-29, 30-39, 40-49, 50-59, 60-69, 70+
//   Race4 model (res34_fair_align_multi_4_20190809.pt, fairface_alldata_4race_20191111.pt)
//     race    logits 0-3   White, Black, Asian, Indian   (predict.py reads only this slice)
// Preprocessing (predict.py's transforms under torchvision 0.x): the 8-bit RGB chip, PIL's
// bilinear resize to 224 x 224 (transforms.Resize((224, 224)) on a PIL image: Image.BILINEAR,
// antialiased by Pillow), ToTensor (/ 255), Normalize with ImageNet's mean and std. The chip is
// dlib's get_face_chips(size=300, padding=0.25), which `vlbias faces` writes.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/resnet_model.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {

inline constexpr std::size_t kFairFaceOutputs = 18;
inline constexpr std::size_t kFairFaceInputSize = 224;

enum class FairFaceVariant { Race7, Race4 };
// "7" | "race7" -> Race7, "4" | "race4" -> Race4; UsageError naming them otherwise.
FairFaceVariant parse_fairface_variant(const std::string& name);
std::string fairface_variant_name(FairFaceVariant variant);  // "race7" | "race4"

// One head: logits [first, first + classes.size()) with their softmax.
struct FairFaceHead {
  std::string attribute;             // "race", "gender", "age"
  std::size_t first = 0;             // its first logit
  std::vector<std::string> classes;  // in logit order
};

// The heads predict.py reads from a model of `variant`, with its class names.
std::vector<FairFaceHead> fairface_heads(FairFaceVariant variant);

// The network input of one chip: 3 x 224 x 224 floats (CHW) written to out.
void fairface_pixels(const RgbImage& chip, float* out);

struct FairFaceOptions {
  FairFaceVariant variant = FairFaceVariant::Race7;
  // Optional JSON file renaming the classes: {"race": ["W", "B", ...], "gender": [...], ...};
  // every attribute named must be a head of the variant and list exactly its class count
  // (UsageError naming the file and the attribute otherwise). Heads it omits keep their names.
  std::filesystem::path classes;
  std::size_t batch = 16;  // chips per forward
};

// The network's outputs for n chips.
struct FairFaceResult {
  Matrix logits;                      // n x 18
  std::vector<Matrix> probabilities;  // one per head (heads() order): n x classes, rows sum to 1
};

class FairFaceClassifier {
 public:
  // `model`: a torch.save'd state_dict (.pt / .pth / .bin: read as data by the safe unpickler,
  // never executed; keys bare or under "module."), a .safetensors file, or a folder holding
  // model.safetensors or pytorch_model.bin (`vlbias convert-weights`). UsageError naming the
  // file for a model of another architecture (no ResNet, or fc without 18 outputs); InputError
  // naming the file and tensor for a missing, mis-shaped or non-finite tensor.
  explicit FairFaceClassifier(const std::filesystem::path& model,
                              const FairFaceOptions& options = {});

  const std::vector<FairFaceHead>& heads() const { return heads_; }
  FairFaceVariant variant() const { return options_.variant; }

  // Logits and per-head probabilities of the chips (any size; each resized as predict.py).
  // Not thread-safe: one call at a time (it runs on the pool).
  FairFaceResult classify(const std::vector<RgbImage>& chips) const;
  // The same from preprocessed inputs (n x fairface_pixels' 3 x 224 x 224 floats).
  FairFaceResult classify_pixels(const float* pixels, std::size_t n) const;

  // The weights file read and its SHA-256 (hex), for the labels table's provenance.
  const std::filesystem::path& weights_file() const { return weights_file_; }
  const std::string& weights_sha256() const { return weights_sha256_; }
  const ResNetModel& network() const { return network_; }

 private:
  FairFaceOptions options_;
  std::filesystem::path weights_file_;
  std::string weights_sha256_;
  std::vector<FairFaceHead> heads_;
  ResNetModel network_;
};

// Softmax of each head's slice of `logits` (n x 18), computed in double (predict.py's
// np.exp(x) / np.sum(np.exp(x)), shifted by the slice's maximum for range).
std::vector<Matrix> fairface_probabilities(const Matrix& logits,
                                           const std::vector<FairFaceHead>& heads);

}  // namespace vlbias
