// ClipModel: loading and the float32 forward of both towers. See
// include/vlbias/encode/models/clip_model.h.
//
// Layout of the work: many images (or texts) are packed into one token matrix h (rows = tokens
// of all sequences back to back, no padding), so every linear layer is one large sgemm (fixed
// partition, spread over the pool). Attention runs per (sequence, head) as pool tasks with small
// single-threaded GEMMs. Row-wise kernels (LayerNorm, bias + activation) run over fixed row
// chunks. None of these partitions depends on the thread count, so neither do the results.
//
// Per block (transformers CLIPEncoderLayer / open_clip ResidualAttentionBlock):
//   x = LN1(h); [q k v] = x Wqkv^T + bqkv; a_s,h = softmax(q k^T / sqrt(d) + mask) v
//   h += a Wo^T + bo; x = LN2(h); h += act(x W1^T + b1) W2^T + b2
// Only the pooled token of each sequence is read after the last block, and attention is the
// only place tokens mix, so the last block computes keys/values for all tokens but its
// attention output, out-projection and MLP for the pooled rows only (exactly the same values).
// For the same reason a text runs only up to its pooled position: later tokens cannot reach it
// through the causal mask.
#include "vlbias/encode/models/clip_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "clip_model_internal.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/nn/layers.h"

namespace vlbias {

namespace {

using encode_internal::Block;
using encode_internal::Linear;
using encode_internal::Tower;

// Tokens per forward pass (bounds the activation memory: ~ rows x (5 width + mlp) floats).
constexpr std::size_t kMaxChunkTokens = 4096;

using Seq = PackedSequence;

// A Scratch set taken from the model's pool for one call, returned on destruction.
class ScratchLease {
 public:
  explicit ScratchLease(const ClipModel::Impl& m) : m_(m) {
    std::lock_guard<std::mutex> lock(m_.scratch_mutex);
    if (!m_.scratch_pool.empty()) {
      s_ = std::move(m_.scratch_pool.back());
      m_.scratch_pool.pop_back();
    }
    if (!s_) s_ = std::make_unique<encode_internal::Scratch>();
  }
  ~ScratchLease() {
    std::lock_guard<std::mutex> lock(m_.scratch_mutex);
    m_.scratch_pool.push_back(std::move(s_));
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  encode_internal::Scratch& operator*() { return *s_; }

 private:
  const ClipModel::Impl& m_;
  std::unique_ptr<encode_internal::Scratch> s_;
};

}  // namespace

namespace encode_internal {

void run_blocks(const Tower& t, float* h, std::size_t rows, const std::vector<Seq>& seqs,
                bool causal, Scratch& sc, std::size_t stop) {
  const ClipTowerConfig& c = t.cfg;
  const std::size_t w = c.width, mw = c.mlp_width;
  float* x = sc.x.reserve(rows * w);
  float* qkv = sc.qkv.reserve(rows * 3 * w);
  float* attn = sc.attn.reserve(rows * w);
  float* mlp = sc.mlp.reserve(rows * mw);
  for (std::size_t li = 0; li < stop; ++li) {
    const Block& b = t.blocks[li];
    // x = LN1(h); qkv = x Wqkv^T + b; h += attn Wo^T + bo
    layer_norm_rows(h, x, rows, w, b.ln1, c.layer_norm_eps);
    linear_rows(x, w, rows, b.qkv, qkv, 3 * w, false);
    add_bias_rows(qkv, rows, 3 * w, b.qkv.b);
    packed_attention(qkv, w, c.heads, seqs, causal, /*pooled_only=*/false, attn);
    add_bias_rows(h, rows, w, b.out.b);
    linear_rows(attn, w, rows, b.out, h, w, true);
    // h += act(LN2(h) W1^T + b1) W2^T + b2
    layer_norm_rows(h, x, rows, w, b.ln2, c.layer_norm_eps);
    linear_rows(x, w, rows, b.fc1, mlp, mw, false);
    bias_activation_rows(mlp, rows, mw, b.fc1.b, c.activation);
    add_bias_rows(h, rows, w, b.fc2.b);
    linear_rows(mlp, mw, rows, b.fc2, h, w, true);
  }
}

std::vector<float> run_last_block_pooled(const Tower& t, const float* h, std::size_t rows,
                                         const std::vector<Seq>& seqs, bool causal, Scratch& sc,
                                         LastBlockTrace* trace) {
  const ClipTowerConfig& c = t.cfg;
  const std::size_t w = c.width, mw = c.mlp_width, ns = seqs.size();
  const Block& b = t.blocks.back();
  float* x = sc.x.reserve(rows * w);
  float* qkv = sc.qkv.reserve(rows * 3 * w);
  float* attn = sc.attn.reserve(rows * w);
  float* mlp = sc.mlp.reserve(rows * mw);
  // Keys and values of every token are needed; the attention output, out-projection and MLP
  // only for the pooled rows (nothing else is read after the last block).
  layer_norm_rows(h, x, rows, w, b.ln1, c.layer_norm_eps);
  linear_rows(x, w, rows, b.qkv, qkv, 3 * w, false);
  add_bias_rows(qkv, rows, 3 * w, b.qkv.b);
  packed_attention(qkv, w, c.heads, seqs, causal, /*pooled_only=*/true, attn);
  std::vector<float> hp(ns * w);  // the pooled rows, updated by the rest of the block
  for (std::size_t si = 0; si < ns; ++si) {
    std::memcpy(hp.data() + si * w, h + (seqs[si].offset + seqs[si].pooled) * w, w * sizeof(float));
  }
  add_bias_rows(hp.data(), ns, w, b.out.b);
  linear_rows(attn, w, ns, b.out, hp.data(), w, true);
  if (trace != nullptr) {
    trace->ln1.assign(x, x + rows * w);
    trace->qkv.assign(qkv, qkv + rows * 3 * w);
    trace->after_attention = hp;
  }
  layer_norm_rows(hp.data(), x, ns, w, b.ln2, c.layer_norm_eps);
  linear_rows(x, w, ns, b.fc1, mlp, mw, false);
  if (trace != nullptr) trace->fc1.assign(mlp, mlp + ns * mw);
  bias_activation_rows(mlp, ns, mw, b.fc1.b, c.activation);
  add_bias_rows(hp.data(), ns, w, b.fc2.b);
  linear_rows(mlp, mw, ns, b.fc2, hp.data(), w, true);
  return hp;
}

void check_pixels(const ClipConfig& c, const float* pixels, std::size_t n) {
  const std::size_t side = c.image_size, image_floats = 3 * side * side;
  VLBIAS_CHECK(n == 0 || pixels != nullptr, InternalError, "null pixels for {} images", n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* img = pixels + i * image_floats;
    for (std::size_t j = 0; j < image_floats; ++j) {
      VLBIAS_CHECK(std::isfinite(img[j]), InputError,
                   "image {} has a non-finite pixel value at channel {}, row {}, column {}", i,
                   j / (side * side), j / side % side, j % side);
    }
  }
}

float* embed_images(const ClipModel::Impl& m, const float* pixels, std::size_t b, Scratch& sc) {
  const ClipConfig& c = m.config;
  const VisionWeights& vw = m.vision;
  const std::size_t w = c.vision.width, p = c.patch_size, g = c.grid(), side = c.image_size;
  const std::size_t patches = g * g, tokens = patches + 1, kdim = 3 * p * p, rows = b * tokens;
  const std::size_t image_floats = 3 * side * side;
  // im2col into the MLP buffer: patch (gy, gx) of image ii as a row [ch][ky][kx], the conv
  // weight's order, so Conv2d(3, width, kernel = stride = patch, bias = False) is one GEMM.
  float* cols = sc.mlp.reserve(std::max(b * patches * kdim, rows * c.vision.mlp_width));
  parallel_for(b, [&](std::size_t ii) {
    const float* img = pixels + ii * image_floats;
    for (std::size_t gy = 0; gy < g; ++gy) {
      for (std::size_t gx = 0; gx < g; ++gx) {
        float* dst = cols + (ii * patches + gy * g + gx) * kdim;
        for (std::size_t ch = 0; ch < 3; ++ch) {
          for (std::size_t ky = 0; ky < p; ++ky) {
            std::memcpy(dst + (ch * p + ky) * p, img + (ch * side + gy * p + ky) * side + gx * p,
                        p * sizeof(float));
          }
        }
      }
    }
  });
  // Patch embeddings of all images (into the attention buffer), then per image
  // h = [class_emb; patch embeddings] + pos_emb (CLIPVisionEmbeddings.forward).
  float* pe = sc.attn.reserve(rows * w);
  sgemm(Transpose::No, Transpose::Yes, b * patches, w, kdim, 1.0f, cols, kdim, vw.patch.data(),
        kdim, 0.0f, pe, w);
  float* h = sc.h.reserve(rows * w);
  parallel_for(b, [&](std::size_t ii) {
    float* hi = h + ii * tokens * w;
    for (std::size_t j = 0; j < w; ++j) hi[j] = vw.class_emb[j] + vw.pos_emb[j];
    for (std::size_t t = 1; t < tokens; ++t) {
      float* r = hi + t * w;
      const float* e = pe + (ii * patches + t - 1) * w;
      const float* pos = vw.pos_emb.data() + t * w;
      for (std::size_t j = 0; j < w; ++j) r[j] = e[j] + pos[j];
    }
  });
  layer_norm_rows(h, h, rows, w, vw.ln_pre, c.vision.layer_norm_eps);
  return h;
}

}  // namespace encode_internal

namespace {

// Runs all blocks of `t` over the packed token matrix h (rows x width) and returns the pooled
// rows after the last block (seqs.size() x width), in sequence order.
std::vector<float> run_tower(const Tower& t, float* h, std::size_t rows,
                             const std::vector<Seq>& seqs, bool causal,
                             encode_internal::Scratch& sc) {
  encode_internal::run_blocks(t, h, rows, seqs, causal, sc, t.blocks.size() - 1);
  return encode_internal::run_last_block_pooled(t, h, rows, seqs, causal, sc, nullptr);
}

// LN(pooled) P^T: the projected embeddings (seqs x embed) written to out rows [row0, ...).
void project(std::vector<float>& pooled, std::size_t n, const LayerNormWeights& ln, float eps,
             const Linear& proj, Matrix& out, std::size_t row0) {
  const std::size_t w = proj.in;
  layer_norm_rows(pooled.data(), pooled.data(), n, w, ln, eps);
  linear_rows(pooled.data(), w, n, proj, out.row(row0), out.cols, false);
}

void require_finite_rows(const Matrix& out, std::size_t row0, std::size_t n, const char* what) {
  for (std::size_t i = row0; i < row0 + n; ++i) {
    const float* r = out.row(i);
    for (std::size_t j = 0; j < out.cols; ++j) {
      VLBIAS_CHECK(std::isfinite(r[j]), InputError,
                   "the embedding of {} {} is not finite: the forward overflowed float32 (are the "
                   "inputs normalised and the weights sane?)",
                   what, i);
    }
  }
}

}  // namespace

ClipModel::ClipModel(std::unique_ptr<const Impl> impl) : impl_(std::move(impl)) {}
ClipModel::ClipModel(ClipModel&&) noexcept = default;
ClipModel& ClipModel::operator=(ClipModel&&) noexcept = default;
ClipModel::~ClipModel() = default;

ClipModel ClipModel::load(const std::filesystem::path& dir, std::optional<ClipLayout> layout) {
  const ClipLayout l = layout ? *layout : detect_clip_layout(dir);
  auto impl = std::make_unique<Impl>();
  impl->config = read_clip_config(dir, l);
  impl->weights_path = model_weights_file(dir, encode_internal::weights_name(l),
                                          encode_internal::torch_weights_name(l));
  encode_internal::load_weights(impl->weights_path, impl->config, impl->vision, impl->text);
  return ClipModel(std::move(impl));
}

const ClipConfig& ClipModel::config() const {
  return impl_->config;
}

const ClipModel::Impl& ClipModel::impl() const {
  return *impl_;
}

const std::filesystem::path& ClipModel::weights_path() const {
  return impl_->weights_path;
}

std::size_t ClipModel::pooled_position(const std::vector<std::int32_t>& ids) const {
  if (ids.empty()) return 0;
  if (impl_->config.pool_argmax) {
    // ids.argmax(): the first position of the largest id (torch.argmax returns the first).
    return static_cast<std::size_t>(std::max_element(ids.begin(), ids.end()) - ids.begin());
  }
  // (ids == eos_token_id).int().argmax(): the first EOS, or 0 when there is none.
  const auto it = std::find(ids.begin(), ids.end(), impl_->config.eos_token_id);
  return it == ids.end() ? 0 : static_cast<std::size_t>(it - ids.begin());
}

Matrix ClipModel::encode_images(const float* pixels, std::size_t n) const {
  const ClipConfig& c = impl_->config;
  const encode_internal::VisionWeights& vw = impl_->vision;
  const std::size_t tokens = c.image_tokens(), image_floats = 3 * c.image_size * c.image_size;
  Matrix out(n, c.embed_dim);
  if (n == 0) return out;
  encode_internal::check_pixels(c, pixels, n);
  const std::size_t per_chunk = std::max<std::size_t>(1, kMaxChunkTokens / tokens);
  ScratchLease lease(*impl_);
  encode_internal::Scratch& sc = *lease;
  for (std::size_t i0 = 0; i0 < n; i0 += per_chunk) {
    const std::size_t b = std::min(per_chunk, n - i0), rows = b * tokens;
    float* h = encode_internal::embed_images(*impl_, pixels + i0 * image_floats, b, sc);
    std::vector<Seq> seqs(b);
    for (std::size_t ii = 0; ii < b; ++ii) seqs[ii] = Seq{ii * tokens, tokens, 0};  // class token
    std::vector<float> pooled = run_tower(vw.tower, h, rows, seqs, /*causal=*/false, sc);
    project(pooled, b, vw.ln_post, c.vision.layer_norm_eps, vw.proj, out, i0);
    require_finite_rows(out, i0, b, "image");
  }
  return out;
}

Matrix ClipModel::encode_texts(const std::vector<std::vector<std::int32_t>>& ids) const {
  const ClipConfig& c = impl_->config;
  const encode_internal::TextWeights& tw = impl_->text;
  const std::size_t w = c.text.width, n = ids.size();
  Matrix out(n, c.embed_dim);
  // Each text runs up to its pooled position (inclusive).
  std::vector<std::size_t> run_length(n), pooled(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<std::int32_t>& t = ids[i];
    VLBIAS_CHECK(!t.empty() && t.size() <= c.context_length, InputError,
                 "text {} has {} tokens; expected 1 to {} (the model's context length)", i,
                 t.size(), c.context_length);
    for (std::size_t j = 0; j < t.size(); ++j) {
      VLBIAS_CHECK(t[j] >= 0 && static_cast<std::size_t>(t[j]) < c.vocab_size, InputError,
                   "text {} has token id {} at position {}; expected 0 <= id < {} (the model's "
                   "vocabulary size)",
                   i, t[j], j, c.vocab_size);
    }
    pooled[i] = pooled_position(t);
    run_length[i] = pooled[i] + 1;
  }
  ScratchLease lease(*impl_);
  encode_internal::Scratch& sc = *lease;
  for (std::size_t i0 = 0; i0 < n;) {
    // Chunk: consecutive texts up to kMaxChunkTokens tokens (at least one text).
    std::size_t i1 = i0, rows = 0;
    while (i1 < n && (i1 == i0 || rows + run_length[i1] <= kMaxChunkTokens)) {
      rows += run_length[i1++];
    }
    std::vector<Seq> seqs(i1 - i0);
    std::size_t offset = 0;
    for (std::size_t i = i0; i < i1; ++i) {
      seqs[i - i0] = Seq{offset, run_length[i], pooled[i]};
      offset += run_length[i];
    }
    // h = token_emb[id] + pos_emb[position]
    float* h = sc.h.reserve(rows * w);
    std::vector<const std::int32_t*> seq_ids(seqs.size());
    for (std::size_t si = 0; si < seqs.size(); ++si) seq_ids[si] = ids[i0 + si].data();
    gather_embeddings(seqs, seq_ids, {}, tw.token_emb.data(), tw.pos_emb.data(), nullptr, w, h);
    std::vector<float> pooled_rows = run_tower(tw.tower, h, rows, seqs, /*causal=*/true, sc);
    project(pooled_rows, seqs.size(), tw.ln_final, c.text.layer_norm_eps, tw.proj, out, i0);
    require_finite_rows(out, i0, seqs.size(), "text");
    i0 = i1;
  }
  return out;
}

}  // namespace vlbias
