// DINOv2 weights from .safetensors in transformers' Dinov2Model names, checked and converted to
// float32 by include/vlbias/nn/weights.h. See include/vlbias/encode/models/dinov2_model.h.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dinov2_internal.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/nn/weights.h"

namespace vlbias::encode_internal {

namespace {

// attention.attention.{query,key,value} stacked into one [3 width, width] layer.
Linear read_qkv(WeightsReader& r, const std::string& prefix, std::size_t w, bool bias) {
  if (bias) return r.stacked_linear({prefix + "query", prefix + "key", prefix + "value"}, w, w);
  Linear qkv;
  qkv.out = 3 * w;
  qkv.in = w;
  for (const char* part : {"query", "key", "value"}) {
    const Linear l = r.linear(prefix + part, w, w, /*bias=*/false);
    qkv.w.insert(qkv.w.end(), l.w.begin(), l.w.end());
  }
  return qkv;
}

Dinov2Block read_block(WeightsReader& r, const Dinov2Config& c, std::size_t i) {
  const std::string p = fmt::format("encoder.layer.{}.", i);
  const std::size_t w = c.width, m = c.mlp_width;
  Dinov2Block b;
  b.norm1 = r.layer_norm(p + "norm1", w);
  b.qkv = read_qkv(r, p + "attention.attention.", w, c.qkv_bias);
  b.out = r.linear(p + "attention.output.dense", w, w);
  b.scale1 = r.read(p + "layer_scale1.lambda1", {w});
  b.norm2 = r.layer_norm(p + "norm2", w);
  if (c.swiglu) {
    b.fc1 = r.linear(p + "mlp.weights_in", 2 * m, w);
    b.fc2 = r.linear(p + "mlp.weights_out", w, m);
  } else {
    b.fc1 = r.linear(p + "mlp.fc1", m, w);
    b.fc2 = r.linear(p + "mlp.fc2", w, m);
  }
  b.scale2 = r.read(p + "layer_scale2.lambda1", {w});
  return b;
}

}  // namespace

Dinov2Weights load_dinov2_weights(const std::filesystem::path& path, const Dinov2Config& c) {
  const SafetensorsFile file = open_weights_file(path);  // .safetensors, or PyTorch's .bin
  // mask_token replaces masked patches in training (bool_masked_pos); never used for features.
  WeightsReader r(file, {"the DINOv2 model described by config.json", {"embeddings.mask_token"}});
  const std::size_t w = c.width, p = c.patch_size;
  Dinov2Weights out;
  out.cls = r.read("embeddings.cls_token", {1, 1, w});
  out.positions = r.read("embeddings.position_embeddings", {1, c.positions(), w});
  out.patch = r.read("embeddings.patch_embeddings.projection.weight", {w, 3, p, p});
  out.patch_bias = r.read("embeddings.patch_embeddings.projection.bias", {w});
  for (std::size_t i = 0; i < c.layers; ++i) out.blocks.push_back(read_block(r, c, i));
  out.final_norm = r.layer_norm("layernorm", w);
  r.require_all_used();
  return out;
}

}  // namespace vlbias::encode_internal
