// Dinov2Model: loading and the float32 forward. See include/vlbias/encode/models/dinov2_model.h.
//
// The work is laid out as ClipModel's (src/encode/models/clip/clip_model.cpp): the tokens of many
// images packed into one matrix, every linear layer one sgemm, attention per (image, head) on the
// pool (packed_attention), row-wise kernels over fixed chunks. Per block (transformers
// Dinov2Layer):
//   x = LN1(h); [q k v] = x Wqkv^T (+ b); a = softmax(q k^T / sqrt(d)) v per head
//   h += lambda1 * (a Wo^T + bo); x = LN2(h); h += lambda2 * (MLP(x) + b2)
// Only the CLS token is read after the last block and attention is the only place tokens mix, so
// the last block runs its attention output, MLP and residuals for the CLS rows only.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "dinov2_internal.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/nn/bicubic.h"
#include "vlbias/nn/layers.h"

namespace vlbias {

namespace {

using encode_internal::Dinov2Block;
using encode_internal::Dinov2Weights;

// Tokens per forward pass (bounds the activation memory: ~ rows x (5 width + 3 mlp) floats).
constexpr std::size_t kMaxDinoChunkTokens = 4096;

// Activation buffers of one call: tokens h, LayerNorm / projection output x, q|k|v, attention
// output, the MLP's hidden layer (also the im2col patches) and the SwiGLU gate.
struct DinoScratch {
  FloatBuffer h, x, qkv, attn, mlp, gate;
};

// Runs every block over the packed tokens h (rows x width) of `seqs` (CLS at position 0) and
// returns the CLS rows after the last block (seqs.size() x width).
std::vector<float> run_blocks(const Dinov2Config& c, const std::vector<Dinov2Block>& blocks,
                              float* h, std::size_t rows, const std::vector<PackedSequence>& seqs,
                              DinoScratch& sc) {
  const std::size_t w = c.width, m = c.mlp_width, ns = seqs.size();
  float* x = sc.x.reserve(rows * w);
  float* qkv = sc.qkv.reserve(rows * 3 * w);
  float* attn = sc.attn.reserve(rows * w);
  float* mlp = sc.mlp.reserve(rows * (c.swiglu ? 2 * m : m));
  float* gate = c.swiglu ? sc.gate.reserve(rows * m) : nullptr;
  std::vector<float> cls(ns * w);
  for (std::size_t li = 0; li < blocks.size(); ++li) {
    const Dinov2Block& b = blocks[li];
    const bool last = li + 1 == blocks.size();
    layer_norm_rows(h, x, rows, w, b.norm1, c.layer_norm_eps);
    linear_rows(x, w, rows, b.qkv, qkv, 3 * w, false);
    if (c.qkv_bias) add_bias_rows(qkv, rows, 3 * w, b.qkv.b);
    packed_attention(qkv, w, c.heads, seqs, /*causal=*/false, /*pooled_only=*/last, attn);
    float* stream = h;  // the residual stream the rest of the block updates
    std::size_t n = rows;
    if (last) {
      for (std::size_t si = 0; si < ns; ++si) {
        std::memcpy(cls.data() + si * w, h + seqs[si].offset * w, w * sizeof(float));
      }
      stream = cls.data();
      n = ns;
    }
    // h += lambda1 * (attn Wo^T + bo)
    linear_rows(attn, w, n, b.out, x, w, false);
    scaled_residual_add_rows(stream, x, n, w, b.out.b, b.scale1);
    // h += lambda2 * (MLP(LN2(h)) + b2)
    layer_norm_rows(stream, x, n, w, b.norm2, c.layer_norm_eps);
    if (c.swiglu) {
      linear_rows(x, w, n, b.fc1, mlp, 2 * m, false);
      bias_swiglu_rows(mlp, gate, n, m, b.fc1.b);
      linear_rows(gate, m, n, b.fc2, x, w, false);
    } else {
      linear_rows(x, w, n, b.fc1, mlp, m, false);
      bias_activation_rows(mlp, n, m, b.fc1.b, c.activation);
      linear_rows(mlp, m, n, b.fc2, x, w, false);
    }
    scaled_residual_add_rows(stream, x, n, w, b.fc2.b, b.scale2);
  }
  return cls;
}

void require_finite_pixels(const float* pixels, std::size_t n, std::size_t height,
                           std::size_t width) {
  const std::size_t plane = height * width, image_floats = 3 * plane;
  for (std::size_t i = 0; i < n; ++i) {
    const float* img = pixels + i * image_floats;
    for (std::size_t j = 0; j < image_floats; ++j) {
      VLBIAS_CHECK(std::isfinite(img[j]), InputError,
                   "image {} has a non-finite pixel value at channel {}, row {}, column {}", i,
                   j / plane, j % plane / width, j % width);
    }
  }
}

// im2col: patch (gy, gx) of each image as a row [ch][ky][kx] (the conv weight's order), so the
// stride-p convolution is one GEMM; pixels past the last whole patch are not read.
void gather_patches(const float* pixels, std::size_t b, std::size_t height, std::size_t width,
                    std::size_t p, std::size_t gh, std::size_t gw, float* cols) {
  const std::size_t kdim = 3 * p * p, image_floats = 3 * height * width;
  parallel_for(b, [&](std::size_t ii) {
    const float* img = pixels + ii * image_floats;
    for (std::size_t gy = 0; gy < gh; ++gy) {
      for (std::size_t gx = 0; gx < gw; ++gx) {
        float* dst = cols + (ii * gh * gw + gy * gw + gx) * kdim;
        for (std::size_t ch = 0; ch < 3; ++ch) {
          for (std::size_t ky = 0; ky < p; ++ky) {
            std::memcpy(dst + (ch * p + ky) * p, img + (ch * height + gy * p + ky) * width + gx * p,
                        p * sizeof(float));
          }
        }
      }
    }
  });
}

}  // namespace

Dinov2Model::Dinov2Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dinov2Model::Dinov2Model(Dinov2Model&&) noexcept = default;
Dinov2Model& Dinov2Model::operator=(Dinov2Model&&) noexcept = default;
Dinov2Model::~Dinov2Model() = default;

Dinov2Positions parse_dinov2_positions(const std::string& name) {
  if (name == "scale-factor") return Dinov2Positions::ScaleFactor;
  if (name == "size") return Dinov2Positions::Size;
  VLBIAS_FAIL(UsageError,
              "Unknown DINOv2 position interpolation '{}'; expected scale-factor "
              "(facebookresearch/dinov2, FD_DINOv2) or size (current transformers).",
              name);
}

const char* to_string(Dinov2Positions positions) {
  return positions == Dinov2Positions::ScaleFactor ? "scale-factor" : "size";
}

Dinov2Resize parse_dinov2_resize(const std::string& name) {
  if (name == "processor") return Dinov2Resize::Processor;
  if (name == "dgm-eval") return Dinov2Resize::DgmEval;
  if (name == "dgm-eval-clean") return Dinov2Resize::DgmEvalClean;
  VLBIAS_FAIL(UsageError,
              "Unknown DINOv2 preprocessing '{}'; expected processor (the folder's "
              "preprocessor_config.json), dgm-eval (FD_DINOv2: bicubic to 224 x 224 without "
              "cropping) or dgm-eval-clean (the same on float channels).",
              name);
}

const char* to_string(Dinov2Resize resize) {
  switch (resize) {
    case Dinov2Resize::Processor:
      return "processor";
    case Dinov2Resize::DgmEval:
      return "dgm-eval";
    case Dinov2Resize::DgmEvalClean:
      return "dgm-eval-clean";
  }
  return "";
}

Dinov2Model Dinov2Model::load(const std::filesystem::path& dir, Dinov2Positions positions) {
  std::error_code ec;
  VLBIAS_CHECK(std::filesystem::is_directory(dir, ec), InputError,
               "'{}' is not a directory; expected a DINOv2 model folder (config.json + "
               "model.safetensors)",
               dir.string());
  auto impl = std::make_unique<Impl>();
  impl->positions_mode = positions;
  impl->config = read_dinov2_config(dir / "config.json");
  impl->weights_path = model_weights_file(dir, "model.safetensors", "pytorch_model.bin");
  VLBIAS_CHECK(!impl->weights_path.empty(), InputError,
               "'{}' has no model.safetensors or pytorch_model.bin", dir.string());
  impl->weights = encode_internal::load_dinov2_weights(impl->weights_path, impl->config);
  return Dinov2Model(std::move(impl));
}

const Dinov2Config& Dinov2Model::config() const {
  return impl_->config;
}

const std::filesystem::path& Dinov2Model::weights_path() const {
  return impl_->weights_path;
}

Dinov2Positions Dinov2Model::positions() const {
  return impl_->positions_mode;
}

namespace {

// The position embeddings for an input grid of gh x gw patches of an image `height` x `width`
// (interpolate_pos_encoding: see the header).
std::vector<float> resize_positions(const Dinov2Config& c, Dinov2Positions mode,
                                    const std::vector<float>& trained, std::size_t gh,
                                    std::size_t gw, std::size_t height, std::size_t width) {
  const std::size_t w = c.width, grid = c.grid();
  if (gh * gw == grid * grid && height == width) return trained;
  std::vector<float> out((gh * gw + 1) * w);
  std::copy(trained.begin(), trained.begin() + static_cast<std::ptrdiff_t>(w), out.begin());
  std::optional<double> scale_h, scale_w;  // none: by the sizes
  if (mode == Dinov2Positions::ScaleFactor) {
    // Python floats: (gh + 0.1) / M in double.
    const double m = static_cast<double>(grid);
    scale_h = (static_cast<double>(gh) + 0.1) / m;
    scale_w = (static_cast<double>(gw) + 0.1) / m;
  }
  bicubic_resize(trained.data() + w, grid, grid, w, gh, gw, scale_h, scale_w, out.data() + w);
  return out;
}

}  // namespace

Matrix Dinov2Model::encode_images(const float* pixels, std::size_t n, std::size_t height,
                                  std::size_t width) const {
  const Dinov2Config& c = impl_->config;
  const Dinov2Weights& wt = impl_->weights;
  const std::size_t w = c.width, p = c.patch_size;
  VLBIAS_CHECK(height >= p && width >= p, UsageError,
               "images of {} x {} pixels are smaller than one {} x {} patch of the model", width,
               height, p, p);
  const std::size_t gh = height / p, gw = width / p, patches = gh * gw, tokens = patches + 1;
  const std::size_t kdim = 3 * p * p, image_floats = 3 * height * width;
  Matrix out(n, w);
  if (n == 0) return out;
  VLBIAS_CHECK(pixels != nullptr, InternalError, "encode_images: null pixels for {} images", n);
  require_finite_pixels(pixels, n, height, width);
  std::shared_ptr<const std::vector<float>> pos;
  {
    std::lock_guard<std::mutex> lock(impl_->positions_mutex);
    auto& slot = impl_->positions[{gh, gw}];
    if (!slot) {
      slot = std::make_shared<const std::vector<float>>(
          resize_positions(c, impl_->positions_mode, wt.positions, gh, gw, height, width));
    }
    pos = slot;
  }
  DinoScratch sc;
  const std::size_t per_chunk = std::max<std::size_t>(1, kMaxDinoChunkTokens / tokens);
  for (std::size_t i0 = 0; i0 < n; i0 += per_chunk) {
    const std::size_t b = std::min(per_chunk, n - i0), rows = b * tokens;
    float* cols = sc.mlp.reserve(b * patches * kdim);
    gather_patches(pixels + i0 * image_floats, b, height, width, p, gh, gw, cols);
    float* pe = sc.attn.reserve(rows * w);
    sgemm(Transpose::No, Transpose::Yes, b * patches, w, kdim, 1.0f, cols, kdim, wt.patch.data(),
          kdim, 0.0f, pe, w);
    // h = [cls; conv(x) + bias] + positions (Dinov2Embeddings.forward's order).
    float* h = sc.h.reserve(rows * w);
    parallel_for(b, [&](std::size_t ii) {
      float* hi = h + ii * tokens * w;
      const float* ps = pos->data();
      for (std::size_t j = 0; j < w; ++j) hi[j] = wt.cls[j] + ps[j];
      for (std::size_t t = 1; t < tokens; ++t) {
        const float* e = pe + (ii * patches + t - 1) * w;
        for (std::size_t j = 0; j < w; ++j) {
          hi[t * w + j] = (e[j] + wt.patch_bias[j]) + ps[t * w + j];
        }
      }
    });
    std::vector<PackedSequence> seqs(b);
    for (std::size_t ii = 0; ii < b; ++ii) seqs[ii] = PackedSequence{ii * tokens, tokens, 0};
    std::vector<float> cls = run_blocks(c, wt.blocks, h, rows, seqs, sc);
    layer_norm_rows(cls.data(), out.row(i0), b, w, wt.final_norm, c.layer_norm_eps);
    for (std::size_t i = i0; i < i0 + b; ++i) {
      for (std::size_t j = 0; j < w; ++j) {
        VLBIAS_CHECK(std::isfinite(out.row(i)[j]), InputError,
                     "the DINOv2 features of image {} are not finite: the forward overflowed "
                     "float32 (are the inputs normalised and the weights sane?)",
                     i);
      }
    }
  }
  return out;
}

}  // namespace vlbias
