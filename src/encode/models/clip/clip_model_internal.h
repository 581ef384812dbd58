#pragma once
// Internals of the native CLIP encoder (include/vlbias/encode/models/clip_model.h): the weights in
// float32 and the loader's file names (the kernels are the nn stage's: include/vlbias/nn/layers.h).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "vlbias/encode/models/clip_model.h"
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

// The pieces of the forward (clip_model.cpp) that the explainers (clip_cam.cpp) run too, so that
// their forward is encode's, bit for bit.

// InputError naming the image, channel, row and column of the first non-finite pixel of n images
// (3 x image_size^2 floats each).
void check_pixels(const ClipConfig& c, const float* pixels, std::size_t n);

// The vision tower's input for b images: LN_pre([class_emb; patch embeddings] + pos_emb), b x
// image_tokens() rows of width, in sc.h (returned); sc.mlp and sc.attn are used as work space.
float* embed_images(const ClipModel::Impl& m, const float* pixels, std::size_t b, Scratch& sc);

// Blocks [0, stop) of `t` over every token of the packed matrix h (rows x width), in place.
void run_blocks(const Tower& t, float* h, std::size_t rows, const std::vector<PackedSequence>& seqs,
                bool causal, Scratch& sc, std::size_t stop);

// What the last block's forward computed, for a backward pass through it (clip_cam.cpp).
struct LastBlockTrace {
  std::vector<float> ln1;              // rows x width: LN1(h), the block's first LayerNorm output
  std::vector<float> qkv;              // rows x 3 width: [q | k | v] with bias
  std::vector<float> after_attention;  // seqs x width: the pooled rows after the attention add
  std::vector<float> fc1;              // seqs x mlp_width: LN2(.) W1^T, before bias and activation
};

// The last block of `t` for the pooled rows only (keys and values of every token): returns the
// pooled rows after it (seqs.size() x width), in sequence order; h is not changed. With a trace,
// also keeps what its backward needs.
std::vector<float> run_last_block_pooled(const Tower& t, const float* h, std::size_t rows,
                                         const std::vector<PackedSequence>& seqs, bool causal,
                                         Scratch& sc, LastBlockTrace* trace);

}  // namespace encode_internal
}  // namespace vlbias
