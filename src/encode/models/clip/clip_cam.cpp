// The CLIP explainers' forward and backward: see include/vlbias/encode/models/clip_cam.h and
// docs/methods.md#clip-cam.
//
// Per chunk of images (packed as encode_images packs them): the vision tower up to the last block
// with encode's own functions (embed_images, run_blocks), then the last block for the class token
// with a trace (run_last_block_pooled), the post-LayerNorm and the projection: the embedding is
// encode's, bit for bit. The backward then runs from T to the last block's input:
//   T -> e / |e| -> e = LN_post(h2) P^T -> h2 = h1 + fc2(act(fc1(LN2(h1))))
//     -> h1 = h_cls + out(attention of the class token) -> qkv = LN1(h) Wqkv^T -> h
// where only the class token's row continues past the attention, and every token's key and value
// (so every row of LN1(h), the target layer) receives gradient through the class token's query.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "clip_cam_internal.h"
#include "clip_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/nn/backward.h"
#include "vlbias/nn/layers.h"

namespace vlbias {

namespace {

using encode_internal::Block;
using encode_internal::LastBlockTrace;
using encode_internal::Scratch;

// Tokens per chunk, as encode_images packs images (clip_model.cpp's kMaxChunkTokens).
constexpr std::size_t kCamChunkTokens = 4096;

// dT/de for one embedding row e (T = trait_pair_value, docs/methods.md#clip-cam step 3):
// dT/dc0 = s T (1 - T) = -dT/dc1 with c_p = <e / |e|, u_p>, then through e / |e|.
void pair_target_gradient(const float* e, const TraitPairTarget& t, float* de, std::size_t row) {
  const std::size_t n = t.first.size();
  const double value = encode_internal::trait_pair_value(e, t, row);
  const double k = t.logit_scale * value * (1.0 - value);
  std::vector<float> dy(n);
  for (std::size_t j = 0; j < n; ++j) {
    dy[j] = static_cast<float>(k * (static_cast<double>(t.first[j]) - t.second[j]));
  }
  l2_normalize_backward(e, dy.data(), de, n);
}

std::vector<PackedSequence> image_sequences(std::size_t b, std::size_t tokens) {
  std::vector<PackedSequence> seqs(b);
  for (std::size_t i = 0; i < b; ++i) seqs[i] = PackedSequence{i * tokens, tokens, 0};
  return seqs;
}

// What last_block_forward gives for b images whose last block receives hin (b x tokens x width):
// T, the embeddings, the block's trace and, with the backward, dT/dLN1(hin) and dT/dhin.
struct LastBlockResult {
  std::vector<double> target;
  Matrix embeddings;
  LastBlockTrace trace;
  std::vector<float> grad_ln1, grad_input;  // rows x width
};

void last_block_backward(const ClipModel::Impl& m, const float* hin, std::size_t b,
                         const std::vector<float>& h2, const Matrix& e, const TraitPairTarget& t,
                         std::size_t row0, LastBlockResult& r) {
  const ClipConfig& c = m.config;
  const encode_internal::VisionWeights& vw = m.vision;
  const Block& blk = vw.tower.blocks.back();
  const std::size_t w = c.vision.width, mw = c.vision.mlp_width, emb = c.embed_dim;
  const std::size_t tokens = c.image_tokens(), rows = b * tokens;
  const float eps = c.vision.layer_norm_eps;
  // dT/de, then the projection and the post-LayerNorm: dh2.
  std::vector<float> de(b * emb), dpooled(b * w), dh2(b * w);
  for (std::size_t i = 0; i < b; ++i) {
    pair_target_gradient(e.row(i), t, de.data() + i * emb, row0 + i);
  }
  linear_backward(de.data(), emb, b, vw.proj, dpooled.data(), w, false);
  layer_norm_backward_rows(h2.data(), dpooled.data(), dh2.data(), b, w, vw.ln_post, eps, false);
  // MLP branch: d(fc1 output) = (dh2 W2) act'(fc1 + b1); dh1 = dh2 + LN2'(d(fc1 output) W1).
  std::vector<float> dmlp(b * mw), dx2(b * w);
  linear_backward(dh2.data(), w, b, blk.fc2, dmlp.data(), mw, false);
  bias_activation_backward_rows(r.trace.fc1.data(), blk.fc1.b, dmlp.data(), dmlp.data(), b, mw,
                                c.vision.activation);
  linear_backward(dmlp.data(), mw, b, blk.fc1, dx2.data(), w, false);
  std::vector<float> dh1 = dh2;
  layer_norm_backward_rows(r.trace.after_attention.data(), dx2.data(), dh1.data(), b, w, blk.ln2,
                           eps, true);
  // Attention branch: d(attention output) = dh1 Wo; then the class token's attention to qkv, and
  // qkv to LN1's output (the target layer) for every token.
  std::vector<float> dattn(b * w), dqkv(rows * 3 * w);
  linear_backward(dh1.data(), w, b, blk.out, dattn.data(), w, false);
  packed_attention_backward(r.trace.qkv.data(), w, c.vision.heads, image_sequences(b, tokens),
                            false, /*pooled_only=*/true, dattn.data(), dqkv.data());
  r.grad_ln1.assign(rows * w, 0.0f);
  linear_backward(dqkv.data(), 3 * w, rows, blk.qkv, r.grad_ln1.data(), w, false);
  // The block's input: through LN1, plus the residual into the class token's row.
  r.grad_input.assign(rows * w, 0.0f);
  layer_norm_backward_rows(hin, r.grad_ln1.data(), r.grad_input.data(), rows, w, blk.ln1, eps,
                           false);
  for (std::size_t i = 0; i < b; ++i) {
    float* g = r.grad_input.data() + i * tokens * w;
    for (std::size_t j = 0; j < w; ++j) g[j] += dh1[i * w + j];
  }
}

LastBlockResult last_block_forward(const ClipModel::Impl& m, const float* hin, std::size_t b,
                                   const TraitPairTarget& t, Scratch& sc, std::size_t row0,
                                   bool backward) {
  const ClipConfig& c = m.config;
  const encode_internal::VisionWeights& vw = m.vision;
  const std::size_t w = c.vision.width, tokens = c.image_tokens();
  LastBlockResult r;
  std::vector<float> h2 = encode_internal::run_last_block_pooled(
      vw.tower, hin, b * tokens, image_sequences(b, tokens), false, sc, &r.trace);
  // LN_post(h2) P^T, as encode_images projects (clip_model.cpp's project()).
  std::vector<float> pooled(b * w);
  layer_norm_rows(h2.data(), pooled.data(), b, w, vw.ln_post, c.vision.layer_norm_eps);
  r.embeddings = Matrix(b, c.embed_dim);
  linear_rows(pooled.data(), w, b, vw.proj, r.embeddings.data.data(), c.embed_dim, false);
  r.target.resize(b);
  for (std::size_t i = 0; i < b; ++i) {
    r.target[i] = encode_internal::trait_pair_value(r.embeddings.row(i), t, row0 + i);
  }
  if (backward) last_block_backward(m, hin, b, h2, r.embeddings, t, row0, r);
  return r;
}

void check_target_width(const ClipConfig& c, const TraitPairTarget& t) {
  VLBIAS_CHECK(t.first.size() == c.embed_dim && t.second.size() == c.embed_dim, InputError,
               "the trait pair's text embeddings have {} and {} values; the model's image "
               "embeddings have {} (are the texts from the same model?)",
               t.first.size(), t.second.size(), c.embed_dim);
}

}  // namespace

namespace encode_internal {

double target_from_block_input(const ClipModel& model, const float* block_input,
                               const TraitPairTarget& target) {
  check_target_width(model.config(), target);
  Scratch sc;
  return last_block_forward(model.impl(), block_input, 1, target, sc, 0, false).target[0];
}

std::vector<float> last_block_input(const ClipModel& model, const float* pixels) {
  const ClipModel::Impl& m = model.impl();
  check_pixels(m.config, pixels, 1);
  const std::size_t rows = m.config.image_tokens();
  Scratch sc;
  float* h = embed_images(m, pixels, 1, sc);
  run_blocks(m.vision.tower, h, rows, image_sequences(1, rows), false, sc,
             m.vision.tower.blocks.size() - 1);
  return std::vector<float>(h, h + rows * m.config.vision.width);
}

}  // namespace encode_internal

ClipTargetGradients clip_target_gradients(const ClipModel& model, const float* pixels,
                                          std::size_t n, const TraitPairTarget& target) {
  const ClipModel::Impl& m = model.impl();
  const ClipConfig& c = m.config;
  check_target_width(c, target);
  encode_internal::check_pixels(c, pixels, n);
  const std::size_t w = c.vision.width, tokens = c.image_tokens();
  const std::size_t image_floats = 3 * c.image_size * c.image_size;
  ClipTargetGradients out;
  out.images = n;
  out.tokens = tokens;
  out.width = w;
  out.target.resize(n);
  out.embeddings = Matrix(n, c.embed_dim);
  out.activation.resize(n * tokens * w);
  out.gradient.resize(n * tokens * w);
  out.block_input_gradient.resize(n * tokens * w);
  const std::size_t per_chunk = std::max<std::size_t>(1, kCamChunkTokens / tokens);
  Scratch sc;
  for (std::size_t i0 = 0; i0 < n; i0 += per_chunk) {
    const std::size_t b = std::min(per_chunk, n - i0), rows = b * tokens;
    float* h = encode_internal::embed_images(m, pixels + i0 * image_floats, b, sc);
    encode_internal::run_blocks(m.vision.tower, h, rows, image_sequences(b, tokens), false, sc,
                                m.vision.tower.blocks.size() - 1);
    // h (the last block's input) stays in sc.h: the last block writes other buffers.
    LastBlockResult r = last_block_forward(m, h, b, target, sc, i0, true);
    std::copy(r.target.begin(), r.target.end(), out.target.begin() + i0);
    std::copy(r.embeddings.data.begin(), r.embeddings.data.end(), out.embeddings.row(i0));
    std::copy(r.trace.ln1.begin(), r.trace.ln1.end(), out.activation.begin() + i0 * tokens * w);
    std::copy(r.grad_ln1.begin(), r.grad_ln1.end(), out.gradient.begin() + i0 * tokens * w);
    std::copy(r.grad_input.begin(), r.grad_input.end(),
              out.block_input_gradient.begin() + i0 * tokens * w);
  }
  return out;
}

}  // namespace vlbias
