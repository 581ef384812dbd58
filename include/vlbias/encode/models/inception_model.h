#pragma once
// Inception-v3 exactly as FID tools compute it: the port of TensorFlow's 2015 graph
// ("inception-2015-12-05") that pytorch-fid (FIDInceptionA/C/E_1/E_2 in its inception.py) and
// clean-fid / StyleGAN's metrics (a TorchScript archive of the same graph) run. Output: the pool3
// features (2048 per image, the global average of Mixed_7c), and the 1008 ImageNet logits of
// the graph's final layer when the weights hold it (what the Inception Score needs).
//
// Topology (Szegedy et al. 2016, "Rethinking the Inception Architecture", Fig. 5-7, as
// torchvision's Inception3 with pytorch-fid's replacements): every convolution is conv (no bias) +
// batch norm (eps 1e-3, folded into the convolution at load) + ReLU.
//   stem    Conv2d_1a_3x3 (stride 2), 2a_3x3, 2b_3x3 (pad 1), max pool 3/2, 3b_1x1, 4a_3x3,
//           max pool 3/2
//   Mixed_5b, 5c, 5d   A blocks: 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | avg pool 3/1 pad 1 - 1x1
//   Mixed_6a           B block: 3x3/2 | 1x1-3x3-3x3/2 | max pool 3/2
//   Mixed_6b .. 6e     C blocks: 1x1 | 1x1-1x7-7x1 | 1x1-7x1-1x7-7x1-1x7 | avg pool - 1x1
//   Mixed_7a           D block: 1x1-3x3/2 | 1x1-1x7-7x1-3x3/2 | max pool 3/2
//   Mixed_7b, 7c       E blocks: 1x1 | 1x1-(1x3, 3x1) | 1x1-3x3-(1x3, 3x1) | pool - 1x1, where the
//                      pool is average in 7b and MAX in 7c (the TF graph's quirk FID keeps)
//   pool3   global average; fc (2048 -> 1008) for the logits
// The FID flavour differs from torchvision's classifier in the A/C/E blocks' average pools, which
// do not count the padding (count_include_pad=False), and in 7c's max pool.
//
// Channel counts are read from the weights (the topology is fixed), so the same code runs the
// real 2048-d network and the width-scaled random models the tests ship.
//
// Weight names: pytorch-fid's state dict (pt_inception-2015-12-05-6726825d.pth), which are
// torchvision's (Conv2d_1a_3x3.conv.weight, Conv2d_1a_3x3.bn.{weight, bias, running_mean,
// running_var}, Mixed_5b.branch1x1.conv.weight, ..., fc.weight, fc.bias).
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {

// The first layer's weight under pytorch-fid's names: a file holding it is read by name, any
// other Inception file by order (InceptionModel::load_by_order).
inline constexpr const char* kInceptionFirstWeight = "Conv2d_1a_3x3.conv.weight";

// What `vlbias features` writes for the Inception: pool3 (FID, KID, PRDC), the fc layer's
// logits, or the logits without the fc bias (what the Inception Score's reference code and
// torch-fidelity use: "logits_unbiased").
enum class InceptionOutput { Pool3, Logits, LogitsUnbiased };
// "pool3" | "logits" | "logits-unbiased" (UsageError naming them otherwise).
InceptionOutput parse_inception_output(const std::string& name);
std::string inception_output_name(InceptionOutput output);

class InceptionModel {
 public:
  // Loads the network from safetensors-compatible weights with pytorch-fid's names. InputError
  // naming the source and the tensor for a missing or mis-shaped tensor (a kernel size or input
  // width that does not fit the topology), NaN / inf, or a tensor left over.
  static InceptionModel load(const SafetensorsFile& weights);
  // The same for weights under other names, matched by order (clean-fid's and StyleGAN's
  // TorchScript port of the graph; src/encode/models/inception/inception_names.cpp): every layer is
  // still checked by shape, so a file in another order is refused, never mis-wired.
  static InceptionModel load_by_order(const SafetensorsFile& weights);

  InceptionModel(InceptionModel&&) noexcept;
  InceptionModel& operator=(InceptionModel&&) noexcept;
  ~InceptionModel();

  // The network's input side (299 for the FID graph; any size >= 75 runs).
  static constexpr std::size_t kInputSize = 299;

  // pool3 features of n images: pixels holds n tensors of 3 x size x size floats (CHW, the
  // network's input scale [-1, 1]) back to back; returns n x feature_dim(), row i = image i.
  // When logits is not null it receives n x classes() logits (InternalError when the weights
  // hold no fc layer). Not thread-safe (work buffers are reused): one call at a time.
  Matrix features(const float* pixels, std::size_t n, std::size_t size = kInputSize,
                  Matrix* logits = nullptr) const;

  // fc(pool3) for n x feature_dim() pool3 features: with or without the bias. InternalError
  // when the weights hold no fc layer.
  Matrix logits(const Matrix& pool3, bool bias) const;

  std::size_t feature_dim() const;  // 2048 for the real network
  std::size_t classes() const;      // 1008 for the FID graph; 0 without an fc layer
  // Multiply-adds per image at kInputSize (5.7e9 for the real network).
  double macs_per_image() const;

  // The layers and work buffers (src/encode/models/inception/inception_model_internal.h).
  struct Net;

 private:
  static InceptionModel load_with(const SafetensorsFile& weights,
                                  const std::map<std::string, std::string>& names);
  explicit InceptionModel(std::unique_ptr<Net> net);
  std::unique_ptr<Net> net_;
};

}  // namespace vlbias
