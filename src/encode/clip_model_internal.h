#pragma once
// Internals of the native CLIP encoder (include/vlbias/encode/clip_model.h): the weights in float32,
// the loader's file names and the forward's kernels.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "vlbias/encode/clip_model.h"

namespace vlbias {

namespace encode_internal {
// "config.json" / "open_clip_config.json".
const char* config_name(ClipLayout layout);
// "model.safetensors" / "open_clip_model.safetensors".
const char* weights_name(ClipLayout layout);
}  // namespace encode_internal

namespace encode_internal {

// y = x W^T + b (torch.nn.Linear): w is [out, in] row-major, b is [out] (empty: no bias).
struct Linear {
  std::size_t out = 0, in = 0;
  std::vector<float> w;
  std::vector<float> b;
};

struct LayerNormWeights {
  std::vector<float> gamma, beta;  // [width]
};

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

// A float buffer that only grows and is never zeroed (every use writes before it reads).
class FloatBuffer {
 public:
  float* reserve(std::size_t n) {
    if (n > size_) {
      data_ = std::make_unique_for_overwrite<float[]>(n);
      size_ = n;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<float[]> data_;
  std::size_t size_ = 0;
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

// ---- Kernels (clip_model_kernels.cpp). Plain loops written to vectorise; rows are
// independent, so callers may split rows over threads without changing any result.

// e^x for x in [-87, 88] (clamped there): Cephes expf (range reduction x = n ln2 + r, degree-6
// polynomial on |r| <= ln2 / 2), within 2 ulp of std::exp; vectorisable, unlike libm's.
float exp_approx(float x);

// y = LayerNorm(x) * gamma + beta over each of `rows` rows of `width` (torch.nn.LayerNorm,
// biased variance, eps inside the square root). Mean and variance two-pass with float lanes
// combined in double. x and y may be the same rows.
void layer_norm(const float* x, std::size_t ldx, float* y, std::size_t ldy, std::size_t rows,
                std::size_t width, const LayerNormWeights& ln, float eps);

// y[i][j] += b[j] over rows x cols at stride ld.
void add_bias(float* y, std::size_t ld, std::size_t rows, std::size_t cols, const float* b);

// y[i][j] = act(y[i][j] + b[j]):
//   QuickGelu: x * sigmoid(1.702 x) = x / (1 + e^(-1.702 x))   (OpenAI CLIP QuickGELU)
//   Gelu:      0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2), erfc by Numerical Recipes'
//              erfcc (Press et al., 2nd ed., sec. 6.2: fractional error < 1.2e-7)
void bias_activation(float* y, std::size_t ld, std::size_t rows, std::size_t cols, const float* b,
                     Activation act);

// Softmax of row[0..n) in place: e^(x - max) / sum (sum in double). n >= 1.
void softmax(float* row, std::size_t n);

}  // namespace encode_internal
}  // namespace vlbias
