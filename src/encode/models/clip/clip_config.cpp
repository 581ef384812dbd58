// CLIP model configs: transformers' CLIPConfig (config.json) and open_clip's
// open_clip_config.json, parsed into one ClipConfig. See include/vlbias/encode/models/clip_model.h.
//
// HF defaults for absent keys are transformers' CLIPTextConfig / CLIPVisionConfig / CLIPConfig
// defaults (models/clip/configuration_clip.py); open_clip's are CLIPVisionCfg / CLIPTextCfg
// (src/open_clip/model.py). Every open_clip option is checked by name: the known ones must hold
// the value this encoder implements, unknown ones are refused.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "clip_model_internal.h"
#include "models/config_node.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_model.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"

namespace vlbias {

namespace {

// Caps that keep a hostile config from asking for absurd allocations; far above any CLIP.
constexpr std::size_t kMaxWidth = 1 << 16;
constexpr std::size_t kMaxLayers = 1 << 10;
constexpr std::size_t kMaxImageSize = 1 << 14;
constexpr std::size_t kMaxVocab = std::size_t{1} << 24;
constexpr std::size_t kMaxContext = 1 << 16;

using encode_internal::kind;
using encode_internal::Node;

Activation hf_activation(const Node& n) {
  const std::string act = n.string("hidden_act", "quick_gelu");
  if (act == "quick_gelu") return Activation::QuickGelu;
  if (act == "gelu") return Activation::Gelu;
  VLBIAS_FAIL(InputError,
              "'{}': \"{}\" is \"{}\"; this encoder implements \"quick_gelu\" and \"gelu\" "
              "(exact erf GELU) only",
              n.source, n.name("hidden_act"), act);
}

float layer_norm_eps(const Node& n, const char* key, double dflt) {
  const double eps = n.number(key, dflt);
  VLBIAS_CHECK(eps > 0.0 && eps < 1.0, InputError, "'{}': \"{}\" is {}; expected 0 < eps < 1",
               n.source, n.name(key), eps);
  return static_cast<float>(eps);
}

void check_tower(const ClipTowerConfig& t, std::string_view what, std::string_view source) {
  VLBIAS_CHECK(t.width % t.heads == 0, InputError,
               "'{}': the {} width {} is not divisible by its {} attention heads", source, what,
               t.width, t.heads);
  VLBIAS_CHECK(t.mlp_width > 0 && t.mlp_width <= 16 * kMaxWidth, InputError,
               "'{}': the {} MLP width {} is out of range (1 to {})", source, what, t.mlp_width,
               16 * kMaxWidth);
}

void check_image(const ClipConfig& c, std::string_view source) {
  VLBIAS_CHECK(c.patch_size <= c.image_size, InputError,
               "'{}': patch size {} is larger than the image size {}", source, c.patch_size,
               c.image_size);
}

// A special token id of text_config (default `dflt` when absent or null): an id of the
// vocabulary, [0, vocab_size). An eos_token_id past it never occurs in a text, so every text
// embedding would silently pool position 0 (issue 19).
std::int64_t token_id(const Node& text, const char* key, std::int64_t dflt,
                      std::size_t vocab_size) {
  if (!text.has(key)) return dflt;
  const Json& v = text.j.at(key);
  VLBIAS_CHECK(v.is_number_integer(), InputError,
               "'{}': \"{}\" is {}; expected an integer token id", text.source, text.name(key),
               kind(v));
  const bool in_vocab = v.is_number_unsigned()
                            ? v.get<std::uint64_t>() < vocab_size
                            : v.get<std::int64_t>() >= 0 && v.get<std::uint64_t>() < vocab_size;
  VLBIAS_CHECK(in_vocab, InputError,
               "'{}': \"{}\" is {}, outside the vocabulary of {} token ids (\"{}vocab_size\"); "
               "the config does not describe these weights",
               text.source, text.name(key), v.dump(), vocab_size, text.path);
  return v.get<std::int64_t>();
}

// transformers CLIPConfig. Old dumps carry text_config_dict / vision_config_dict, which
// transformers lays over text_config / vision_config; we do the same.
ClipConfig parse_hf(const Json& root, std::string_view source) {
  const Node top{root, "", source};
  const std::string model_type = top.string("model_type", "clip");
  VLBIAS_CHECK(model_type == "clip", InputError,
               "'{}': \"model_type\" is \"{}\"; this encoder reads CLIP models (\"clip\") only",
               source, model_type);
  auto merged = [&](const char* key, const char* dict_key) {
    const bool has_cfg = top.has(key), has_dict = top.has(dict_key);
    VLBIAS_CHECK(has_cfg || has_dict, InputError,
                 "'{}' has no \"{}\" object; a CLIPConfig needs text_config and vision_config",
                 source, key);
    Json out = Json::object();
    for (const char* k : {key, dict_key}) {
      if (!top.has(k)) continue;
      const Json& v = root.at(k);
      VLBIAS_CHECK(v.is_object(), InputError, "'{}': \"{}\" is {}; expected an object", source, k,
                   kind(v));
      for (const auto& [name, value] : v.items()) out[name] = value;
    }
    return out;
  };
  const Json text_json = merged("text_config", "text_config_dict");
  const Json vision_json = merged("vision_config", "vision_config_dict");
  const Node text{text_json, "text_config.", source};
  const Node vision{vision_json, "vision_config.", source};

  ClipConfig c;
  c.layout = ClipLayout::HuggingFace;
  // CLIPVisionConfig defaults.
  c.vision.width = vision.size("hidden_size", 768, kMaxWidth);
  c.vision.mlp_width = vision.size("intermediate_size", 3072, 16 * kMaxWidth);
  c.vision.layers = vision.size("num_hidden_layers", 12, kMaxLayers);
  c.vision.heads = vision.size("num_attention_heads", 12, kMaxWidth);
  c.vision.layer_norm_eps = layer_norm_eps(vision, "layer_norm_eps", 1e-5);
  c.vision.activation = hf_activation(vision);
  const std::size_t channels = vision.size("num_channels", 3, 1 << 10);
  VLBIAS_CHECK(channels == 3, InputError,
               "'{}': \"vision_config.num_channels\" is {}; this encoder takes RGB images (3)",
               source, channels);
  c.image_size = vision.size("image_size", 224, kMaxImageSize);
  c.patch_size = vision.size("patch_size", 32, kMaxImageSize);
  // CLIPTextConfig defaults.
  c.text.width = text.size("hidden_size", 512, kMaxWidth);
  c.text.mlp_width = text.size("intermediate_size", 2048, 16 * kMaxWidth);
  c.text.layers = text.size("num_hidden_layers", 12, kMaxLayers);
  c.text.heads = text.size("num_attention_heads", 8, kMaxWidth);
  c.text.layer_norm_eps = layer_norm_eps(text, "layer_norm_eps", 1e-5);
  c.text.activation = hf_activation(text);
  c.vocab_size = text.size("vocab_size", 49408, kMaxVocab);
  c.context_length = text.size("max_position_embeddings", 77, kMaxContext);
  c.embed_dim = top.size("projection_dim", 512, kMaxWidth);
  // eos_token_id: transformers' current default is 49407; configs written before PR #24773
  // say 2, and modeling_clip then pools the argmax of the ids (the EOT 49407 is the largest id).
  const std::int64_t eos = token_id(text, "eos_token_id", 49407, c.vocab_size);
  // bos and pad are not used here, but an id past the vocabulary says the config does not
  // belong to these weights: refused likewise.
  (void)token_id(text, "bos_token_id", 0, c.vocab_size);
  (void)token_id(text, "pad_token_id", 0, c.vocab_size);
  c.eos_token_id = static_cast<std::int32_t>(eos);
  c.pool_argmax = eos == 2;
  check_tower(c.vision, "vision", source);
  check_tower(c.text, "text", source);
  check_image(c, source);
  return c;
}

// An open_clip option that must hold its default: refused by name otherwise.
struct OptionRule {
  enum Kind { Ignored, FalseOrNull, Null, NullOrEmpty, StringIs, IntIs };
  const char* key;
  Kind kind;
  const char* feature = "";  // what a non-default value asks for; StringIs: the accepted value
  std::int64_t value = 0;    // IntIs: the accepted value
};

// Refuses keys of `n` that are neither in `fields` nor in `rules`, and rule keys that do not
// hold their default.
void check_options(const Node& n, const std::vector<OptionRule>& rules,
                   std::initializer_list<const char*> fields) {
  std::set<std::string_view> known(fields.begin(), fields.end());
  for (const OptionRule& r : rules) known.insert(r.key);
  for (const auto& item : n.j.items()) {
    VLBIAS_CHECK(known.count(item.key()) > 0, InputError,
                 "'{}': unknown open_clip option \"{}\"; this encoder implements plain CLIP ViT "
                 "towers and refuses options it does not know",
                 n.source, n.path + item.key());
  }
  for (const OptionRule& r : rules) {
    if (!n.j.contains(r.key)) continue;
    const Json& v = n.j.at(r.key);
    bool ok = true;
    std::string want;
    switch (r.kind) {
      case OptionRule::Ignored:
        break;
      case OptionRule::FalseOrNull:
        ok = v.is_null() || (v.is_boolean() && !v.get<bool>());
        want = "false";
        break;
      case OptionRule::Null:
        ok = v.is_null();
        want = "null";
        break;
      case OptionRule::NullOrEmpty:
        ok = v.is_null() || (v.is_object() && v.empty());
        want = "null or {}";
        break;
      case OptionRule::StringIs:
        ok = v.is_null() || (v.is_string() && v.get<std::string>() == r.feature);
        want = fmt::format("\"{}\"", r.feature);
        break;
      case OptionRule::IntIs:
        ok = v.is_null() || (v.is_number_integer() && v.get<std::int64_t>() == r.value);
        want = std::to_string(r.value);
        break;
    }
    const bool named = r.kind != OptionRule::StringIs && *r.feature != '\0';
    VLBIAS_CHECK(ok, InputError,
                 "'{}': open_clip option \"{}\" is {}; this encoder implements only {} (the "
                 "default){}",
                 n.source, n.path + r.key, v.dump(), want,
                 named ? fmt::format(", {} is not supported", r.feature) : std::string());
  }
}

// Options both towers' configs share in recent open_clip versions.
std::vector<OptionRule> block_rules() {
  return {
      {"ls_init_value", OptionRule::Null, "LayerScale"},
      {"act_kwargs", OptionRule::NullOrEmpty, "activation arguments"},
      {"norm_kwargs", OptionRule::NullOrEmpty, "normalisation arguments"},
      {"output_tokens", OptionRule::FalseOrNull, "token outputs"},
      {"final_ln_after_pool", OptionRule::FalseOrNull, "a final LayerNorm after pooling"},
      {"block_type", OptionRule::Null, "custom residual blocks"},
      {"qk_norm", OptionRule::FalseOrNull, "query/key normalisation"},
      {"scaled_cosine_attn", OptionRule::FalseOrNull, "scaled cosine attention"},
      {"scale_heads", OptionRule::FalseOrNull, "head scaling"},
      {"scale_attn_inner", OptionRule::FalseOrNull, "an inner attention LayerNorm"},
      {"scale_attn", OptionRule::FalseOrNull, "an attention output LayerNorm"},
      {"scale_fc", OptionRule::FalseOrNull, "an MLP LayerNorm"},
  };
}

// image_size / patch_size: an integer or a [h, w] pair with h == w.
std::size_t square_size(const Node& n, const char* key, std::size_t dflt) {
  if (n.has(key) && n.j.at(key).is_array()) {
    const Json& v = n.j.at(key);
    VLBIAS_CHECK(v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer(), InputError,
                 "'{}': \"{}\" is {}; expected an integer or a [height, width] pair", n.source,
                 n.name(key), v.dump());
    VLBIAS_CHECK(v[0] == v[1], InputError,
                 "'{}': \"{}\" is {}; non-square images and patches are not supported", n.source,
                 n.name(key), v.dump());
    Json one = Json::object();
    one[key] = v[0];
    return Node{one, n.path, n.source}.size(key, dflt, kMaxImageSize);
  }
  return n.size(key, dflt, kMaxImageSize);
}

// Python's int(width * mlp_ratio) (open_clip ResidualAttentionBlock).
std::size_t mlp_width(const Node& n, std::size_t width) {
  const double ratio = n.number("mlp_ratio", 4.0);
  VLBIAS_CHECK(ratio > 0.0 && ratio <= 16.0, InputError,
               "'{}': \"{}\" is {}; expected a ratio in (0, 16]", n.source, n.name("mlp_ratio"),
               ratio);
  return static_cast<std::size_t>(static_cast<double>(width) * ratio);
}

// The vision tower's options: open_clip's CLIPVisionCfg, ViT with token pooling only.
void check_open_clip_vision_options(const Node& vision) {
  std::vector<OptionRule> vision_rules = block_rules();
  vision_rules.insert(
      vision_rules.end(),
      {
          {"patch_dropout", OptionRule::Ignored},  // training only
          {"attentional_pool", OptionRule::FalseOrNull, "attentional pooling"},
          {"attn_pooler_queries", OptionRule::Ignored},  // used by attentional_pool only
          {"attn_pooler_heads", OptionRule::Ignored},
          {"no_ln_pre", OptionRule::FalseOrNull, "a tower without ln_pre"},
          {"pos_embed_type", OptionRule::StringIs, "learnable"},
          {"pool_type", OptionRule::StringIs, "tok"},
          {"input_patchnorm", OptionRule::FalseOrNull, "patch normalisation"},
          {"global_average_pool", OptionRule::FalseOrNull, "global average pooling"},
          {"timm_model_name", OptionRule::Null, "a timm vision tower"},
          {"timm_model_pretrained", OptionRule::Ignored},  // used by timm towers only
          {"timm_pool", OptionRule::Ignored},
          {"timm_proj", OptionRule::Ignored},
          {"timm_proj_bias", OptionRule::Ignored},
          {"timm_drop", OptionRule::Ignored},
          {"timm_drop_path", OptionRule::Ignored},
      });
  check_options(vision, vision_rules,
                {"layers", "width", "head_width", "mlp_ratio", "patch_size", "image_size"});
}

// The text tower's options: open_clip's CLIPTextCfg, argmax pooling and a linear projection only.
void check_open_clip_text_options(const Node& text) {
  std::vector<OptionRule> text_rules = block_rules();
  text_rules.insert(
      text_rules.end(),
      {
          {"hf_tokenizer_name", OptionRule::Ignored},  // the tokenizer's business
          {"tokenizer_kwargs", OptionRule::Ignored},
          {"tokenizer_mode", OptionRule::Ignored},
          {"embed_cls", OptionRule::FalseOrNull, "a CLS token embedding (CoCa)"},
          {"pad_id", OptionRule::IntIs, "", 0},
          {"eos_id", OptionRule::Ignored},  // used by pool_type "eos" only
          {"no_causal_mask", OptionRule::FalseOrNull, "a text tower without causal mask"},
          {"pool_type", OptionRule::StringIs, "argmax"},
          {"proj_bias", OptionRule::FalseOrNull, "a text projection bias"},
          {"proj_type", OptionRule::StringIs, "linear"},
          {"ln_post_emb", OptionRule::FalseOrNull, "a LayerNorm after the embeddings"},
          {"hf_model_name", OptionRule::Null, "a Hugging Face text tower"},
          {"hf_model_pretrained", OptionRule::Ignored},  // used by HF text towers only
          {"hf_proj_type", OptionRule::Ignored},
          {"hf_pooler_type", OptionRule::Ignored},
      });
  check_options(text, text_rules,
                {"context_length", "vocab_size", "width", "heads", "layers", "mlp_ratio"});
}

ClipConfig parse_open_clip(const Json& root, std::string_view source) {
  const Node top{root, "", source};
  const Node model = top.child("model_cfg", true);
  check_options(model,
                {{"quick_gelu", OptionRule::Ignored},
                 {"cast_dtype", OptionRule::Ignored},
                 {"init_logit_scale", OptionRule::Ignored},
                 {"init_logit_bias", OptionRule::Null, "a logit bias (SigLIP)"},
                 {"nonscalar_logit_scale", OptionRule::FalseOrNull, "a non-scalar logit scale"},
                 {"custom_text", OptionRule::FalseOrNull, "a custom text tower (CustomTextCLIP)"},
                 {"multimodal_cfg", OptionRule::Null, "a multimodal decoder (CoCa)"}},
                {"embed_dim", "vision_cfg", "text_cfg"});
  bool quick_gelu = false;
  if (model.has("quick_gelu")) {
    const Json& v = model.j.at("quick_gelu");
    VLBIAS_CHECK(v.is_boolean(), InputError,
                 "'{}': \"model_cfg.quick_gelu\" is {}; expected a boolean", source, kind(v));
    quick_gelu = v.get<bool>();
  }
  const Node vision = model.child("vision_cfg", true);
  const Node text = model.child("text_cfg", true);
  VLBIAS_CHECK(!vision.has("layers") || !vision.j.at("layers").is_array(), InputError,
               "'{}': \"model_cfg.vision_cfg.layers\" is a list: ModifiedResNet vision towers "
               "are not supported (ViT only)",
               source);

  check_open_clip_vision_options(vision);
  check_open_clip_text_options(text);

  ClipConfig c;
  c.layout = ClipLayout::OpenClip;
  const Activation act = quick_gelu ? Activation::QuickGelu : Activation::Gelu;
  // CLIPVisionCfg defaults; heads = width // head_width (open_clip CLIP.__init__).
  c.vision.width = vision.size("width", 768, kMaxWidth);
  c.vision.layers = vision.size("layers", 12, kMaxLayers);
  const std::size_t head_width = vision.size("head_width", 64, kMaxWidth);
  VLBIAS_CHECK(c.vision.width % head_width == 0, InputError,
               "'{}': the vision width {} is not divisible by \"model_cfg.vision_cfg.head_width\" "
               "{}",
               source, c.vision.width, head_width);
  c.vision.heads = c.vision.width / head_width;
  c.vision.mlp_width = mlp_width(vision, c.vision.width);
  c.vision.layer_norm_eps = 1e-5f;  // nn.LayerNorm's default
  c.vision.activation = act;
  c.image_size = square_size(vision, "image_size", 224);
  c.patch_size = square_size(vision, "patch_size", 16);
  // CLIPTextCfg defaults.
  c.text.width = text.size("width", 512, kMaxWidth);
  c.text.layers = text.size("layers", 12, kMaxLayers);
  c.text.heads = text.size("heads", 8, kMaxWidth);
  c.text.mlp_width = mlp_width(text, c.text.width);
  c.text.layer_norm_eps = 1e-5f;
  c.text.activation = act;
  c.context_length = text.size("context_length", 77, kMaxContext);
  c.vocab_size = text.size("vocab_size", 49408, kMaxVocab);
  c.embed_dim = model.size("embed_dim", 0, kMaxWidth, /*required=*/true);
  c.eos_token_id = -1;
  c.pool_argmax = true;  // text_global_pool(..., 'argmax')
  check_tower(c.vision, "vision", source);
  check_tower(c.text, "text", source);
  check_image(c, source);
  return c;
}

}  // namespace

ClipConfig parse_clip_config(std::string_view json_text, ClipLayout layout,
                             std::string_view source) {
  const Json root = parse_json(json_text, fmt::format("'{}'", source));
  VLBIAS_CHECK(root.is_object(), InputError, "'{}' holds {}; expected a JSON object", source,
               kind(root));
  return layout == ClipLayout::HuggingFace ? parse_hf(root, source) : parse_open_clip(root, source);
}

namespace encode_internal {
const char* config_name(ClipLayout layout) {
  return layout == ClipLayout::HuggingFace ? "config.json" : "open_clip_config.json";
}
const char* weights_name(ClipLayout layout) {
  return layout == ClipLayout::HuggingFace ? "model.safetensors" : "open_clip_model.safetensors";
}
const char* torch_weights_name(ClipLayout layout) {
  return layout == ClipLayout::HuggingFace ? "pytorch_model.bin" : "open_clip_pytorch_model.bin";
}
}  // namespace encode_internal

ClipLayout detect_clip_layout(const std::filesystem::path& dir) {
  std::error_code ec;
  VLBIAS_CHECK(std::filesystem::is_directory(dir, ec), InputError,
               "'{}' is not a directory; expected a CLIP model directory (config.json + "
               "model.safetensors, or open_clip_config.json + open_clip_model.safetensors)",
               dir.string());
  auto has = [&](const char* name) { return std::filesystem::exists(dir / name, ec); };
  for (ClipLayout layout : {ClipLayout::OpenClip, ClipLayout::HuggingFace}) {
    if (has(encode_internal::config_name(layout)) &&
        (has(encode_internal::weights_name(layout)) ||
         has(encode_internal::torch_weights_name(layout)))) {
      return layout;
    }
  }
  VLBIAS_CHECK(!has("model.safetensors.index.json"), InputError,
               "'{}' holds a sharded checkpoint (model.safetensors.index.json); only a single "
               "model.safetensors is supported",
               dir.string());
  VLBIAS_FAIL(InputError,
              "'{}' is not a CLIP model directory: expected config.json + model.safetensors or "
              "pytorch_model.bin (Hugging Face) or open_clip_config.json + "
              "open_clip_model.safetensors or open_clip_pytorch_model.bin (open_clip)",
              dir.string());
}

ClipConfig read_clip_config(const std::filesystem::path& dir, ClipLayout layout) {
  const std::filesystem::path path = dir / encode_internal::config_name(layout);
  return parse_clip_config(read_file_text(path, "a CLIP configuration (JSON)"), layout,
                           path.string());
}

ClipConfig read_clip_config(const std::filesystem::path& dir) {
  return read_clip_config(dir, detect_clip_layout(dir));
}

}  // namespace vlbias
