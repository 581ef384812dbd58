// CLIP weights from .safetensors: tensor names of both layouts (checked and converted to float32
// by include/vlbias/nn/weights.h), q/k/v fusion. See include/vlbias/encode/models/clip_model.h.
//
// Names follow transformers' modeling_clip.py (CLIPModel state dict) and open_clip's model.py /
// transformer.py (CLIP state dict). Every tensor of the file must be used: a tensor left over
// means the config and the weights disagree (e.g. LayerScale gammas, an extra layer), which would
// otherwise be silently ignored.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "clip_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"
#include "vlbias/nn/weights.h"

namespace vlbias::encode_internal {

namespace {

// A [rows, cols] tensor stored as x @ P (open_clip's proj / text_projection), transposed to the
// nn.Linear layout [cols, rows].
Linear transposed_projection(WeightsReader& r, const std::string& name, std::size_t width,
                             std::size_t embed) {
  const std::vector<float> p = r.read(name, {width, embed});
  Linear l;
  l.out = embed;
  l.in = width;
  l.w.resize(embed * width);
  for (std::size_t i = 0; i < width; ++i) {
    for (std::size_t j = 0; j < embed; ++j) l.w[j * width + i] = p[i * embed + j];
  }
  return l;
}

Tower read_tower_hf(WeightsReader& r, const std::string& prefix, const ClipTowerConfig& cfg) {
  Tower t;
  t.cfg = cfg;
  const std::size_t w = cfg.width, m = cfg.mlp_width;
  for (std::size_t i = 0; i < cfg.layers; ++i) {
    const std::string p = fmt::format("{}encoder.layers.{}.", prefix, i);
    Block b;
    b.ln1 = r.layer_norm(p + "layer_norm1", w);
    b.ln2 = r.layer_norm(p + "layer_norm2", w);
    // q, k, v stacked into open_clip's in_proj layout.
    b.qkv = r.stacked_linear(
        {p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj"}, w, w);
    b.out = r.linear(p + "self_attn.out_proj", w, w);
    b.fc1 = r.linear(p + "mlp.fc1", m, w);
    b.fc2 = r.linear(p + "mlp.fc2", w, m);
    t.blocks.push_back(std::move(b));
  }
  return t;
}

Tower read_tower_open_clip(WeightsReader& r, const std::string& prefix,
                           const ClipTowerConfig& cfg) {
  Tower t;
  t.cfg = cfg;
  const std::size_t w = cfg.width, m = cfg.mlp_width;
  for (std::size_t i = 0; i < cfg.layers; ++i) {
    const std::string p = fmt::format("{}resblocks.{}.", prefix, i);
    Block b;
    b.ln1 = r.layer_norm(p + "ln_1", w);
    b.ln2 = r.layer_norm(p + "ln_2", w);
    b.qkv.out = 3 * w;
    b.qkv.in = w;
    b.qkv.w = r.read(p + "attn.in_proj_weight", {3 * w, w});
    b.qkv.b = r.read(p + "attn.in_proj_bias", {3 * w});
    b.out = r.linear(p + "attn.out_proj", w, w);
    b.fc1 = r.linear(p + "mlp.c_fc", m, w);
    b.fc2 = r.linear(p + "mlp.c_proj", w, m);
    t.blocks.push_back(std::move(b));
  }
  return t;
}

}  // namespace

void load_weights(const std::filesystem::path& path, ClipConfig& config, VisionWeights& vision,
                  TextWeights& text) {
  const SafetensorsFile file = open_weights_file(path);  // .safetensors, or PyTorch's .bin
  // Buffers transformers kept in old checkpoints; not parameters.
  WeightsReader r(file,
                  {fmt::format("a CLIP model as configured in '{}'",
                               encode_internal::config_name(config.layout)),
                   {"text_model.embeddings.position_ids", "vision_model.embeddings.position_ids"}});
  const std::size_t vw = config.vision.width, tw = config.text.width, e = config.embed_dim;
  const std::size_t p = config.patch_size, positions = config.image_tokens();
  const std::vector<std::size_t> patch_shape = {vw, 3, p, p};
  float log_scale = 0.0f;
  if (config.layout == ClipLayout::HuggingFace) {
    vision.patch = r.read("vision_model.embeddings.patch_embedding.weight", patch_shape);
    vision.class_emb = r.read("vision_model.embeddings.class_embedding", {vw});
    vision.pos_emb = r.read("vision_model.embeddings.position_embedding.weight", {positions, vw});
    vision.ln_pre = r.layer_norm("vision_model.pre_layrnorm", vw);  // sic (transformers' name)
    vision.tower = read_tower_hf(r, "vision_model.", config.vision);
    vision.ln_post = r.layer_norm("vision_model.post_layernorm", vw);
    vision.proj = r.linear("visual_projection", e, vw, /*bias=*/false);
    text.token_emb =
        r.read("text_model.embeddings.token_embedding.weight", {config.vocab_size, tw});
    text.pos_emb =
        r.read("text_model.embeddings.position_embedding.weight", {config.context_length, tw});
    text.tower = read_tower_hf(r, "text_model.", config.text);
    text.ln_final = r.layer_norm("text_model.final_layer_norm", tw);
    text.proj = r.linear("text_projection", e, tw, /*bias=*/false);
  } else {
    vision.patch = r.read("visual.conv1.weight", patch_shape);
    vision.class_emb = r.read("visual.class_embedding", {vw});
    vision.pos_emb = r.read("visual.positional_embedding", {positions, vw});
    vision.ln_pre = r.layer_norm("visual.ln_pre", vw);
    vision.tower = read_tower_open_clip(r, "visual.transformer.", config.vision);
    vision.ln_post = r.layer_norm("visual.ln_post", vw);
    vision.proj = transposed_projection(r, "visual.proj", vw, e);
    text.token_emb = r.read("token_embedding.weight", {config.vocab_size, tw});
    text.pos_emb = r.read("positional_embedding", {config.context_length, tw});
    text.tower = read_tower_open_clip(r, "transformer.", config.text);
    text.ln_final = r.layer_norm("ln_final", tw);
    text.proj = transposed_projection(r, "text_projection", tw, e);
  }
  log_scale = r.scalar("logit_scale");
  r.require_all_used();
  config.logit_scale = std::exp(log_scale);
  VLBIAS_CHECK(std::isfinite(config.logit_scale), InputError,
               "'{}': tensor 'logit_scale' is {}, whose exp() overflows float32", path.string(),
               log_scale);
}

}  // namespace vlbias::encode_internal
