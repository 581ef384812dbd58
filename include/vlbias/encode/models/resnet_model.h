#pragma once
// torchvision's ResNet family (He et al. 2016, "Deep Residual Learning for Image Recognition";
// torchvision.models.resnet, the "v1.5" variant that strides the 3 x 3 convolution of a
// Bottleneck) as an inference forward on the shared convolution runtime (include/vlbias/nn/conv.h):
//   stem     conv1 7 x 7 / 2 pad 3, bn1, ReLU, max pool 3 / 2 pad 1
//   layer1-4 residual blocks, the first block of layers 2-4 with stride 2:
//              BasicBlock (resnet18/34): 3 x 3 - bn - ReLU - 3 x 3 - bn
//              Bottleneck (resnet50/101/152): 1 x 1 - bn - ReLU - 3 x 3 - bn - ReLU - 1 x 1 - bn
//            plus the input, or downsample(x) = 1 x 1 / stride conv - bn where the shape changes,
//            then ReLU
//   head     global average pool, fc (a linear layer with bias)
// Every batch norm (BatchNorm2d, eps 1e-5, eval mode) is folded into its convolution at load.
//
// Weights: torchvision's state_dict names (conv1.weight, bn1.{weight, bias, running_mean,
// running_var}, layer1.0.conv1.weight, layer1.0.bn1.*, ..., layer2.0.downsample.0.weight,
// layer2.0.downsample.1.*, fc.weight, fc.bias), optionally all under one prefix ("module." as
// nn.DataParallel saves them). The block kind, the number of blocks per layer and every channel
// count are read from the weights, so the same code runs resnet18 to resnet152 and the
// width-reduced random models the tests ship.
#include <cstddef>
#include <memory>
#include <string>

#include "vlbias/core/matrix.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {

class ResNetModel {
 public:
  // Loads the network from weights under torchvision's names. InputError naming the source and
  // the tensor for a missing or mis-shaped tensor (a width that does not chain), NaN / inf, or a
  // tensor left over (num_batches_tracked is ignored); UsageError when the file holds no ResNet
  // (no conv1.weight under any prefix: a model of another architecture).
  static ResNetModel load(const SafetensorsFile& weights);

  ResNetModel(ResNetModel&&) noexcept;
  ResNetModel& operator=(ResNetModel&&) noexcept;
  ~ResNetModel();

  // fc(pool) of n images: pixels holds n tensors of 3 x size x size floats (CHW, normalised as
  // the model expects) back to back; returns n x classes(), row i = image i. size >= 32. Not
  // thread-safe (work buffers are reused): one call at a time. Pool-parallel.
  Matrix logits(const float* pixels, std::size_t n, std::size_t size) const;

  std::size_t classes() const;      // fc's outputs (18 for FairFace, 1000 for ImageNet)
  std::size_t feature_dim() const;  // fc's inputs (512 for resnet18/34, 2048 for resnet50+)
  // "resnet34", "resnet50", ... from the block kind and counts; "resnet(BasicBlock: 1,1,1,1)"
  // for a layout torchvision does not name.
  std::string architecture() const;
  // The tensor-name prefix the weights use ("" or "module.").
  const std::string& prefix() const;
  // Multiply-adds per image at size x size.
  double macs_per_image(std::size_t size) const;

  // The layers and work buffers (src/encode/models/resnet/resnet_model_internal.h).
  struct Net;

 private:
  explicit ResNetModel(std::unique_ptr<Net> net);
  std::unique_ptr<Net> net_;
};

}  // namespace vlbias
