#pragma once
// Internals of the native DINOv2 model (include/vlbias/encode/models/dinov2_model.h): the weights
// in float32 and the cache of resized position embeddings.
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/nn/layers.h"

namespace vlbias {

namespace encode_internal {

// One Dinov2Layer. qkv is query, key and value stacked ([3 width, width]; no bias when the config
// says qkv_bias false). fc1 / fc2 are mlp.fc1 / fc2, or for SwiGLU mlp.weights_in ([2 mlp, width],
// x1 then x2) / weights_out.
struct Dinov2Block {
  LayerNormWeights norm1, norm2;
  Linear qkv, out, fc1, fc2;
  std::vector<float> scale1, scale2;  // layer_scale1 / layer_scale2 .lambda1 [width]
};

struct Dinov2Weights {
  std::vector<float> patch;       // [width, 3 p p]: the conv weight [width, 3, p, p] flattened
  std::vector<float> patch_bias;  // [width]
  std::vector<float> cls;         // [width]
  std::vector<float> positions;   // [M^2 + 1, width], as trained
  std::vector<Dinov2Block> blocks;
  LayerNormWeights final_norm;
};

// Loads and checks every tensor of `path` for `config` (dinov2_model_load.cpp).
Dinov2Weights load_dinov2_weights(const std::filesystem::path& path, const Dinov2Config& config);

}  // namespace encode_internal

struct Dinov2Model::Impl {
  Dinov2Config config;
  std::filesystem::path weights_path;
  Dinov2Positions positions_mode = Dinov2Positions::ScaleFactor;
  encode_internal::Dinov2Weights weights;
  // Positions resized to an input grid (gh, gw), [gh gw + 1, width], made on first use.
  mutable std::mutex positions_mutex;
  mutable std::map<std::pair<std::size_t, std::size_t>, std::shared_ptr<const std::vector<float>>>
      positions;
};

}  // namespace vlbias
