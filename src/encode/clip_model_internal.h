#pragma once
// Internals of the native CLIP encoder (include/vlbias/encode/clip_model.h): the weights in float32
// and the loader's file names (the kernels are the nn stage's: include/vlbias/nn/layers.h).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "vlbias/encode/clip_model.h"
#include "vlbias/nn/layers.h"

namespace vlbias {

namespace encode_internal {
// "config.json" / "open_clip_config.json".
const char* config_name(ClipLayout layout);
// "model.safetensors" / "open_clip_model.safetensors".
const char* weights_name(ClipLayout layout);
const char* torch_weights_name(ClipLayout layout);  // the PyTorch .bin of the layout
}  // namespace encode_internal

namespace encode_internal {

// The shared layer types (include/vlbias/nn/kernels.h, layers.h).
using vlbias::FloatBuffer;
using vlbias::LayerNormWeights;
using vlbias::Linear;

// One pre-LN residual block. qkv is fused: rows [0, w) are q, [w, 2w) k, [2w, 3w) v, exactly
// open_clip's attn.in_proj_weight (and HF's q_proj, k_proj, v_proj stacked).
struct Block {
  LayerNormWeights ln1, ln2;
  Linear qkv, out, fc1, fc2;
};

struct Tower {
  ClipTowerConfig cfg;
  std::vector<Block> blocks;
};

struct VisionWeights {
  Tower tower;
  std::vector<float> patch;      // [width, 3 * p * p]: conv weight [width, 3, p, p] flattened
  std::vector<float> class_emb;  // [width]
  std::vector<float> pos_emb;    // [grid^2 + 1, width]
  LayerNormWeights ln_pre, ln_post;
  Linear proj;  // [embed, width], no bias (open_clip's proj [width, embed] transposed at load)
};

struct TextWeights {
  Tower tower;
  std::vector<float> token_emb;  // [vocab, width]
  std::vector<float> pos_emb;    // [context, width]
  LayerNormWeights ln_final;
  Linear proj;  // [embed, width], no bias
};

// Activation buffers of one forward call: the token matrix h, the LayerNorm output x, q/k/v,
// the attention output and the MLP hidden layer (also the im2col patches).
struct Scratch {
  FloatBuffer h, x, qkv, attn, mlp;
};

}  // namespace encode_internal

struct ClipModel::Impl {
  ClipConfig config;
  std::filesystem::path weights_path;
  encode_internal::VisionWeights vision;
  encode_internal::TextWeights text;
  // Scratch sets kept between calls (one per concurrent caller), so repeated calls do not pay
  // for fresh pages; taken and returned under the mutex.
  mutable std::mutex scratch_mutex;
  mutable std::vector<std::unique_ptr<encode_internal::Scratch>> scratch_pool;
};

namespace encode_internal {

// Loads and checks every tensor of `path` for `config` (clip_model_load.cpp).
void load_weights(const std::filesystem::path& path, ClipConfig& config, VisionWeights& vision,
                  TextWeights& text);

}  // namespace encode_internal
}  // namespace vlbias
