#pragma once
// torchvision ResNet's layers (include/vlbias/encode/models/resnet_model.h), shared by its loader
// (resnet_model_load.cpp) and its forward (resnet_model.cpp).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "vlbias/encode/models/resnet_model.h"
#include "vlbias/nn/conv.h"
#include "vlbias/nn/layers.h"

namespace vlbias::encode_internal {

// One residual block with its batch norms folded: BasicBlock uses c1, c2; Bottleneck c1, c2, c3.
// The last convolution's ReLU comes after the shortcut's add (conv2d's residual).
struct ResNetBlock {
  Conv2d c1, c2, c3;
  bool has_downsample = false;
  Conv2d downsample;  // 1 x 1 / stride, when the block changes the shape
};

}  // namespace vlbias::encode_internal

namespace vlbias {

struct ResNetModel::Net {
  Conv2d stem;  // conv1 + bn1 + ReLU
  bool bottleneck = false;
  std::array<std::size_t, 4> counts{};               // blocks per layer
  std::vector<encode_internal::ResNetBlock> blocks;  // layer1.0, layer1.1, ..., layer4.*
  Linear fc;
  std::string prefix;

  // Work buffers of logits(): the block input, two temporaries, the downsampled input.
  mutable FloatBuffer buffers[4];
};

}  // namespace vlbias
