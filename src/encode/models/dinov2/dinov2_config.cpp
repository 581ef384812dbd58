// transformers' Dinov2Config (config.json) parsed into a Dinov2Config. See
// include/vlbias/encode/models/dinov2_model.h. Defaults for absent keys are Dinov2Config's
// (models/dinov2/configuration_dinov2.py).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "models/config_node.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"

namespace vlbias {

namespace {

using encode_internal::kind;
using encode_internal::Node;

// Caps that keep a hostile config from asking for absurd allocations; far above ViT-g/14.
constexpr std::size_t kMaxDinoWidth = 1 << 16;
constexpr std::size_t kMaxDinoLayers = 1 << 10;
constexpr std::size_t kMaxDinoImageSize = 1 << 14;

// Refuses DINOv2 with registers (Darcet et al. 2024), whose extra tokens this forward lacks.
void refuse_registers(const Node& top, const std::string& model_type) {
  VLBIAS_CHECK(model_type != "dinov2_with_registers", InputError,
               "'{}': \"model_type\" is \"dinov2_with_registers\"; DINOv2 with registers "
               "(Dinov2WithRegistersModel) is not implemented, only \"dinov2\"",
               top.source);
  VLBIAS_CHECK(model_type == "dinov2", InputError,
               "'{}': \"model_type\" is \"{}\"; this encoder reads DINOv2 models (\"dinov2\") only",
               top.source, model_type);
  if (top.has("num_register_tokens")) {
    const Json& v = top.j.at("num_register_tokens");
    VLBIAS_CHECK(v.is_number_integer() && v.get<std::int64_t>() == 0, InputError,
                 "'{}': \"num_register_tokens\" is {}; register tokens (DINOv2 with registers) "
                 "are not implemented",
                 top.source, v.dump());
  }
}

// hidden_act of the plain MLP (transformers' ACT2FN names this runtime implements).
Activation mlp_activation(const Node& top, const std::string& act) {
  if (act == "gelu") return Activation::Gelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") return Activation::GeluTanh;
  if (act == "quick_gelu") return Activation::QuickGelu;
  VLBIAS_FAIL(InputError,
              "'{}': \"hidden_act\" is \"{}\"; this encoder implements \"gelu\" (exact erf), "
              "\"gelu_new\" / \"gelu_pytorch_tanh\" and \"quick_gelu\" for the MLP",
              top.source, act);
}

// A key whose transformers default changed between releases: required.
void require_key(const Node& top, const char* key, const char* why) {
  VLBIAS_CHECK(top.has(key), InputError,
               "'{}' has no \"{}\"; it is required because {}, so a config without it is "
               "ambiguous",
               top.source, key, why);
}

}  // namespace

Dinov2Config parse_dinov2_config(std::string_view json_text, std::string_view source) {
  const Json root = parse_json(json_text, source);
  VLBIAS_CHECK(root.is_object(), InputError, "'{}' is {}; expected a JSON object (Dinov2Config)",
               source, kind(root));
  const Node top{root, "", source};
  refuse_registers(top, top.string("model_type", "(absent)"));

  Dinov2Config c;
  c.width = top.size("hidden_size", 768, kMaxDinoWidth);
  c.layers = top.size("num_hidden_layers", 12, kMaxDinoLayers);
  c.heads = top.size("num_attention_heads", 12, kMaxDinoWidth);
  VLBIAS_CHECK(c.width % c.heads == 0, InputError,
               "'{}': \"hidden_size\" {} is not divisible by \"num_attention_heads\" {}", source,
               c.width, c.heads);
  c.mlp_ratio = top.number("mlp_ratio", 4.0);
  VLBIAS_CHECK(c.mlp_ratio > 0.0 && c.mlp_ratio <= 16.0, InputError,
               "'{}': \"mlp_ratio\" is {}; expected a ratio in (0, 16]", source, c.mlp_ratio);
  c.swiglu = top.boolean("use_swiglu_ffn", false);
  // Python's int(hidden_size * mlp_ratio) (Dinov2MLP), and for SwiGLU
  // (int(hidden * 2 / 3) + 7) // 8 * 8 (Dinov2SwiGLUFFN).
  c.mlp_width = static_cast<std::size_t>(static_cast<double>(c.width) * c.mlp_ratio);
  if (c.swiglu) {
    c.mlp_width =
        (static_cast<std::size_t>(static_cast<double>(c.mlp_width) * 2.0 / 3.0) + 7) / 8 * 8;
  }
  VLBIAS_CHECK(c.mlp_width > 0, InputError,
               "'{}': \"mlp_ratio\" {} gives an MLP of no hidden units for \"hidden_size\" {}",
               source, c.mlp_ratio, c.width);
  c.hidden_act = top.string("hidden_act", "gelu");
  // Dinov2SwiGLUFFN always uses SiLU; hidden_act only selects the plain MLP's activation.
  if (!c.swiglu) c.activation = mlp_activation(top, c.hidden_act);
  c.qkv_bias = top.boolean("qkv_bias", true);

  require_key(top, "layer_norm_eps", "transformers' default was 1e-12 at first and 1e-6 later");
  const double eps = top.number("layer_norm_eps", 1e-6);
  VLBIAS_CHECK(eps > 0.0 && eps < 1.0, InputError,
               "'{}': \"layer_norm_eps\" is {}; expected 0 < eps < 1", source, eps);
  c.layer_norm_eps = static_cast<float>(eps);
  require_key(top, "patch_size", "transformers' default was 16 at first and 14 later");
  c.image_size = top.size("image_size", 224, kMaxDinoImageSize);
  c.patch_size = top.size("patch_size", 14, kMaxDinoImageSize);
  VLBIAS_CHECK(c.patch_size <= c.image_size, InputError,
               "'{}': \"patch_size\" {} is larger than \"image_size\" {}", source, c.patch_size,
               c.image_size);
  const std::size_t channels = top.size("num_channels", 3, 1 << 10);
  VLBIAS_CHECK(channels == 3, InputError,
               "'{}': \"num_channels\" is {}; this encoder takes RGB images (3)", source, channels);
  (void)top.number("layerscale_value", 1.0);  // an initial value; the weights hold the scales
  return c;
}

Dinov2Config read_dinov2_config(const std::filesystem::path& config_json) {
  return parse_dinov2_config(read_file_text(config_json, "a DINOv2 configuration (JSON)"),
                             config_json.string());
}

}  // namespace vlbias
