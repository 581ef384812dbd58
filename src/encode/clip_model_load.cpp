// CLIP weights from .safetensors: tensor names of both layouts, shape and dtype checks,
// conversion to float32, q/k/v fusion. See include/vlbias/encode/clip_model.h.
//
// Names follow transformers' modeling_clip.py (CLIPModel state dict) and open_clip's model.py /
// transformer.py (CLIP state dict). Every tensor of the file must be used: a tensor left over
// means the config and the weights disagree (e.g. LayerScale gammas, an extra layer), which would
// otherwise be silently ignored.
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "clip_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/io/safetensors.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace vlbias::encode_internal {

namespace {

// Drops the whole pages of a tensor already converted from the file's read-only private mapping
// (SafetensorsFile::open), so loading peaks near the converted weights rather than weights + file.
// A later read pages them in again from the file. Never call it on memory that is not a file
// mapping: MADV_DONTNEED zeroes anonymous pages.
void release_file_pages(std::span<const std::uint8_t> bytes) {
#if defined(__linux__)
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data());
  const std::uintptr_t b = (begin + page - 1) / page * page;
  const std::uintptr_t e = (begin + bytes.size()) / page * page;
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);  // a hint: errors ignored
#else
  (void)bytes;
#endif
}

using Shape = std::vector<std::size_t>;

std::string shape_text(const Shape& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

// Reads tensors by name with the checks every weight gets, and records what was used.
class Reader {
 public:
  Reader(const SafetensorsFile& file, std::string config_name)
      : file_(file), config_name_(std::move(config_name)) {}

  // The tensor `name` of shape `shape` as float32, row-major.
  std::vector<float> read(const std::string& name, const Shape& shape) {
    const SafetensorsTensorInfo& t = file_.info(name);  // InputError naming a missing tensor
    VLBIAS_CHECK(t.dtype == SafetensorsDtype::F32 || t.dtype == SafetensorsDtype::F16 ||
                     t.dtype == SafetensorsDtype::BF16,
                 InputError, "'{}': tensor '{}' has dtype {}; expected F32, F16 or BF16",
                 file_.source(), name, dtype_name(t.dtype));
    VLBIAS_CHECK(t.shape == shape, InputError,
                 "'{}': tensor '{}' has shape {}; expected {} for the model in '{}'",
                 file_.source(), name, shape_text(t.shape), shape_text(shape), config_name_);
    used_.insert(name);
    std::vector<float> out = file_.read_floats(name, NonFinite::Reject);
    release_file_pages(file_.bytes(name));
    return out;
  }

  LayerNormWeights layer_norm(const std::string& prefix, std::size_t width) {
    LayerNormWeights ln;
    ln.gamma = read(prefix + ".weight", {width});
    ln.beta = read(prefix + ".bias", {width});
    return ln;
  }

  Linear linear(const std::string& prefix, std::size_t out, std::size_t in, bool bias = true) {
    Linear l;
    l.out = out;
    l.in = in;
    l.w = read(prefix + ".weight", {out, in});
    if (bias) l.b = read(prefix + ".bias", {out});
    return l;
  }

  // A [rows, cols] tensor stored as x @ P (open_clip's proj / text_projection), transposed to
  // the nn.Linear layout [cols, rows].
  Linear transposed_projection(const std::string& name, std::size_t width, std::size_t embed) {
    const std::vector<float> p = read(name, {width, embed});
    Linear l;
    l.out = embed;
    l.in = width;
    l.w.resize(embed * width);
    for (std::size_t i = 0; i < width; ++i) {
      for (std::size_t j = 0; j < embed; ++j) l.w[j * width + i] = p[i * embed + j];
    }
    return l;
  }

  float scalar(const std::string& name) {
    const SafetensorsTensorInfo& t = file_.info(name);
    const bool scalar_shape = t.shape.empty() || (t.shape.size() == 1 && t.shape[0] == 1);
    VLBIAS_CHECK(scalar_shape, InputError,
                 "'{}': tensor '{}' has shape {}; expected a scalar ([] or [1])", file_.source(),
                 name, shape_text(t.shape));
    return read(name, t.shape).at(0);
  }

  // InputError for the first tensor not read (buffers transformers kept in old checkpoints
  // excepted).
  void require_all_used() const {
    static const std::set<std::string> kIgnored = {"text_model.embeddings.position_ids",
                                                   "vision_model.embeddings.position_ids"};
    for (const std::string& name : file_.names()) {
      VLBIAS_CHECK(used_.count(name) > 0 || kIgnored.count(name) > 0, InputError,
                   "'{}' holds tensor '{}', which a CLIP model as configured in '{}' does not "
                   "have; the config and the weights disagree, or the model has parts this "
                   "encoder does not implement",
                   file_.source(), name, config_name_);
    }
  }

 private:
  const SafetensorsFile& file_;
  std::string config_name_;
  std::set<std::string> used_;
};

Tower read_tower_hf(Reader& r, const std::string& prefix, const ClipTowerConfig& cfg) {
  Tower t;
  t.cfg = cfg;
  const std::size_t w = cfg.width, m = cfg.mlp_width;
  for (std::size_t i = 0; i < cfg.layers; ++i) {
    const std::string p = fmt::format("{}encoder.layers.{}.", prefix, i);
    Block b;
    b.ln1 = r.layer_norm(p + "layer_norm1", w);
    b.ln2 = r.layer_norm(p + "layer_norm2", w);
    // q, k, v stacked into open_clip's in_proj layout.
    b.qkv.out = 3 * w;
    b.qkv.in = w;
    b.qkv.w.reserve(3 * w * w);
    b.qkv.b.reserve(3 * w);
    for (const char* name : {"q_proj", "k_proj", "v_proj"}) {
      const Linear l = r.linear(p + "self_attn." + name, w, w);
      b.qkv.w.insert(b.qkv.w.end(), l.w.begin(), l.w.end());
      b.qkv.b.insert(b.qkv.b.end(), l.b.begin(), l.b.end());
    }
    b.out = r.linear(p + "self_attn.out_proj", w, w);
    b.fc1 = r.linear(p + "mlp.fc1", m, w);
    b.fc2 = r.linear(p + "mlp.fc2", w, m);
    t.blocks.push_back(std::move(b));
  }
  return t;
}

Tower read_tower_open_clip(Reader& r, const std::string& prefix, const ClipTowerConfig& cfg) {
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
  const SafetensorsFile file = SafetensorsFile::open(path);
  Reader r(file, encode_internal::config_name(config.layout));
  const std::size_t vw = config.vision.width, tw = config.text.width, e = config.embed_dim;
  const std::size_t p = config.patch_size, positions = config.image_tokens();
  const Shape patch_shape = {vw, 3, p, p};
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
    vision.proj = r.transposed_projection("visual.proj", vw, e);
    text.token_emb = r.read("token_embedding.weight", {config.vocab_size, tw});
    text.pos_emb = r.read("positional_embedding", {config.context_length, tw});
    text.tower = read_tower_open_clip(r, "transformer.", config.text);
    text.ln_final = r.layer_norm("ln_final", tw);
    text.proj = r.transposed_projection("text_projection", tw, e);
  }
  log_scale = r.scalar("logit_scale");
  r.require_all_used();
  config.logit_scale = std::exp(log_scale);
  VLBIAS_CHECK(std::isfinite(config.logit_scale), InputError,
               "'{}': tensor 'logit_scale' is {}, whose exp() overflows float32", path.string(),
               log_scale);
}

}  // namespace vlbias::encode_internal
