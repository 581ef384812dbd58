// ClipModel configs: the real ViT-B/32, B/16, L/14 (and H/14) shapes in both layouts, defaults,
// and every refusal of an option this encoder does not implement.
#include <gtest/gtest.h>

#include <string>

#include "encode/clip_model_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_model.h"

namespace vlbias {
namespace {
namespace in_clip_model_config_test {

using namespace clip_test;

// transformers' config.json of openai/clip-vit-*: the fields that matter (plus a few of the
// PretrainedConfig keys old dumps carry, which must be ignored).
std::string hf_json(int vw, int vl, int vh, int vm, int patch, int tw, int tl, int th, int tm,
                    int proj, int eos, const std::string& act = "quick_gelu") {
  return fmt::format(
      R"({{"architectures": ["CLIPModel"], "model_type": "clip", "projection_dim": {},
          "logit_scale_init_value": 2.6592, "initializer_factor": 1.0,
          "text_config": {{"hidden_size": {}, "num_hidden_layers": {}, "num_attention_heads": {},
            "intermediate_size": {}, "max_position_embeddings": 77, "vocab_size": 49408,
            "hidden_act": "{}", "layer_norm_eps": 1e-05, "eos_token_id": {}, "bos_token_id": 0,
            "pad_token_id": 1, "model_type": "clip_text_model", "bad_words_ids": null,
            "id2label": {{"0": "LABEL_0"}}, "torchscript": false}},
          "text_config_dict": null,
          "vision_config": {{"hidden_size": {}, "num_hidden_layers": {}, "num_attention_heads": {},
            "intermediate_size": {}, "image_size": 224, "patch_size": {}, "num_channels": 3,
            "hidden_act": "{}", "layer_norm_eps": 1e-05, "dropout": 0.0}},
          "vision_config_dict": null}})",
      proj, tw, tl, th, tm, act, eos, vw, vl, vh, vm, patch, act);
}

ClipConfig hf(const std::string& json) {
  return parse_clip_config(json, ClipLayout::HuggingFace, "config.json");
}
ClipConfig oc(const std::string& json) {
  return parse_clip_config(json, ClipLayout::OpenClip, "open_clip_config.json");
}

void expect_tower(const ClipTowerConfig& t, std::size_t w, std::size_t l, std::size_t h,
                  std::size_t m, Activation act) {
  EXPECT_EQ(t.width, w);
  EXPECT_EQ(t.layers, l);
  EXPECT_EQ(t.heads, h);
  EXPECT_EQ(t.mlp_width, m);
  EXPECT_EQ(t.activation, act);
  EXPECT_FLOAT_EQ(t.layer_norm_eps, 1e-5f);
}

TEST(ClipModelConfig, HuggingFaceRealShapes) {
  const ClipConfig b32 = hf(hf_json(768, 12, 12, 3072, 32, 512, 12, 8, 2048, 512, 2));
  EXPECT_EQ(b32.layout, ClipLayout::HuggingFace);
  expect_tower(b32.vision, 768, 12, 12, 3072, Activation::QuickGelu);
  expect_tower(b32.text, 512, 12, 8, 2048, Activation::QuickGelu);
  EXPECT_EQ(b32.image_size, 224u);
  EXPECT_EQ(b32.patch_size, 32u);
  EXPECT_EQ(b32.image_tokens(), 50u);
  EXPECT_EQ(b32.embed_dim, 512u);
  EXPECT_EQ(b32.context_length, 77u);
  EXPECT_EQ(b32.vocab_size, 49408u);
  EXPECT_TRUE(b32.pool_argmax);  // legacy eos_token_id 2
  EXPECT_EQ(b32.eos_token_id, 2);

  const ClipConfig b16 = hf(hf_json(768, 12, 12, 3072, 16, 512, 12, 8, 2048, 512, 49407));
  EXPECT_EQ(b16.image_tokens(), 197u);
  EXPECT_FALSE(b16.pool_argmax);
  EXPECT_EQ(b16.eos_token_id, 49407);

  const ClipConfig l14 = hf(hf_json(1024, 24, 16, 4096, 14, 768, 12, 12, 3072, 768, 2, "gelu"));
  expect_tower(l14.vision, 1024, 24, 16, 4096, Activation::Gelu);
  expect_tower(l14.text, 768, 12, 12, 3072, Activation::Gelu);
  EXPECT_EQ(l14.image_tokens(), 257u);
  EXPECT_EQ(l14.embed_dim, 768u);
}

TEST(ClipModelConfig, HuggingFaceDefaultsAndDictOverlay) {
  // transformers' defaults: ViT-B/32 vision, 512-wide text, projection 512, eos 49407.
  const ClipConfig c = hf(R"({"text_config": {}, "vision_config": {}})");
  expect_tower(c.vision, 768, 12, 12, 3072, Activation::QuickGelu);
  expect_tower(c.text, 512, 12, 8, 2048, Activation::QuickGelu);
  EXPECT_EQ(c.patch_size, 32u);
  EXPECT_EQ(c.embed_dim, 512u);
  EXPECT_EQ(c.eos_token_id, 49407);
  EXPECT_FALSE(c.pool_argmax);
  // Old dumps: *_config_dict overrides *_config.
  const ClipConfig d = hf(
      R"({"text_config": {"hidden_size": 64}, "text_config_dict": {"hidden_size": 128,
          "num_attention_heads": 4}, "vision_config_dict": {"patch_size": 16}})");
  EXPECT_EQ(d.text.width, 128u);
  EXPECT_EQ(d.text.heads, 4u);
  EXPECT_EQ(d.patch_size, 16u);
}

std::string oc_json(const std::string& vision, const std::string& text, int embed,
                    const std::string& extra = "") {
  return fmt::format(
      R"({{"model_cfg": {{"embed_dim": {}{}, "vision_cfg": {{{}}}, "text_cfg": {{{}}}}},
          "preprocess_cfg": {{"mean": [0.48145466, 0.4578275, 0.40821073]}}}})",
      embed, extra, vision, text);
}

TEST(ClipModelConfig, OpenClipRealShapes) {
  // open_clip/model_configs/ViT-B-32-quickgelu.json, ViT-B-16.json, ViT-L-14.json, ViT-H-14.json.
  const std::string text512 =
      R"("context_length": 77, "vocab_size": 49408, "width": 512, "heads": 8, "layers": 12)";
  const ClipConfig b32 =
      oc(oc_json(R"("image_size": 224, "layers": 12, "width": 768, "patch_size": 32)", text512, 512,
                 R"(, "quick_gelu": true)"));
  EXPECT_EQ(b32.layout, ClipLayout::OpenClip);
  expect_tower(b32.vision, 768, 12, 12, 3072, Activation::QuickGelu);
  expect_tower(b32.text, 512, 12, 8, 2048, Activation::QuickGelu);
  EXPECT_EQ(b32.image_tokens(), 50u);
  EXPECT_TRUE(b32.pool_argmax);
  EXPECT_EQ(b32.eos_token_id, -1);

  const ClipConfig b16 = oc(
      oc_json(R"("image_size": 224, "layers": 12, "width": 768, "patch_size": 16)", text512, 512));
  expect_tower(b16.vision, 768, 12, 12, 3072, Activation::Gelu);
  EXPECT_EQ(b16.image_tokens(), 197u);

  const ClipConfig l14 = oc(oc_json(
      R"("image_size": [224, 224], "layers": 24, "width": 1024, "patch_size": 14)",
      R"("context_length": 77, "vocab_size": 49408, "width": 768, "heads": 12, "layers": 12)",
      768));
  expect_tower(l14.vision, 1024, 24, 16, 4096, Activation::Gelu);
  expect_tower(l14.text, 768, 12, 12, 3072, Activation::Gelu);
  EXPECT_EQ(l14.image_tokens(), 257u);
  EXPECT_EQ(l14.embed_dim, 768u);

  const ClipConfig h14 = oc(oc_json(
      R"("image_size": 224, "layers": 32, "width": 1280, "head_width": 80, "patch_size": 14)",
      R"("context_length": 77, "vocab_size": 49408, "width": 1024, "heads": 16, "layers": 24)",
      1024));
  expect_tower(h14.vision, 1280, 32, 16, 5120, Activation::Gelu);
  // int(1408 * 4.3637) = 6144 (ViT-g-14's mlp_ratio).
  const ClipConfig g14 = oc(oc_json(
      R"("image_size": 224, "layers": 40, "width": 1408, "head_width": 88, "mlp_ratio": 4.3637,
         "patch_size": 14)",
      text512, 1024));
  EXPECT_EQ(g14.vision.mlp_width, 6144u);
}

TEST(ClipModelConfig, OpenClipAcceptsDefaultValuedOptions) {
  const ClipConfig c = oc(oc_json(
      R"("image_size": 224, "layers": 12, "width": 768, "patch_size": 32, "ls_init_value": null,
         "patch_dropout": 0.5, "attentional_pool": false, "pool_type": "tok",
         "no_ln_pre": false, "final_ln_after_pool": false, "output_tokens": false,
         "timm_model_name": null, "act_kwargs": {}, "norm_kwargs": null)",
      R"("width": 512, "heads": 8, "layers": 12, "pad_id": 0, "pool_type": "argmax",
         "proj_bias": false, "embed_cls": false, "no_causal_mask": false,
         "hf_tokenizer_name": "x", "proj_type": "linear")",
      512, R"(, "cast_dtype": "fp16", "init_logit_scale": 2.65)"));
  EXPECT_EQ(c.vision.width, 768u);
}

void expect_refused(const std::string& json, ClipLayout layout,
                    const std::vector<std::string>& words) {
  try {
    parse_clip_config(json, layout, "cfg.json");
    ADD_FAILURE() << "accepted: " << json;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cfg.json"), std::string::npos) << msg;
    for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
  }
}

TEST(ClipModelConfig, OpenClipRefusesUnimplementedOptionsByName) {
  const std::string v = R"("image_size": 224, "layers": 12, "width": 768, "patch_size": 32)";
  const std::string t = R"("width": 512, "heads": 8, "layers": 12)";
  const auto o = ClipLayout::OpenClip;
  expect_refused(oc_json(v + R"(, "ls_init_value": 1e-5)", t, 512), o,
                 {"vision_cfg.ls_init_value", "LayerScale"});
  expect_refused(oc_json(v, t + R"(, "ls_init_value": 0.1)", 512), o, {"text_cfg.ls_init_value"});
  expect_refused(oc_json(v + R"(, "attentional_pool": true)", t, 512), o, {"attentional_pool"});
  expect_refused(oc_json(v + R"(, "pool_type": "avg")", t, 512), o, {"pool_type", "\"tok\""});
  expect_refused(oc_json(v, t + R"(, "pool_type": "last")", 512), o, {"pool_type", "argmax"});
  expect_refused(oc_json(v + R"(, "no_ln_pre": true)", t, 512), o, {"no_ln_pre"});
  expect_refused(oc_json(v + R"(, "final_ln_after_pool": true)", t, 512), o,
                 {"final_ln_after_pool"});
  expect_refused(oc_json(v + R"(, "timm_model_name": "vit_base")", t, 512), o, {"timm_model_name"});
  expect_refused(oc_json(v, t + R"(, "hf_model_name": "roberta-base")", 512), o, {"hf_model_name"});
  expect_refused(oc_json(v, t + R"(, "proj_bias": true)", 512), o, {"proj_bias"});
  expect_refused(oc_json(v, t + R"(, "embed_cls": true)", 512), o, {"embed_cls"});
  expect_refused(oc_json(v, t + R"(, "pad_id": 1)", 512), o, {"pad_id"});
  expect_refused(oc_json(v, t + R"(, "no_causal_mask": true)", 512), o, {"no_causal_mask"});
  expect_refused(oc_json(v + R"(, "norm_kwargs": {"eps": 1e-6})", t, 512), o, {"norm_kwargs"});
  expect_refused(oc_json(v + R"(, "act_kwargs": {"approximate": "tanh"})", t, 512), o,
                 {"act_kwargs"});
  expect_refused(oc_json(v + R"(, "output_tokens": true)", t, 512), o, {"output_tokens"});
  expect_refused(oc_json(v + R"(, "pos_embed_type": "sin_cos_2d")", t, 512), o, {"pos_embed_type"});
  expect_refused(oc_json(v + R"(, "frobnicate": 1)", t, 512), o,
                 {"unknown open_clip option", "vision_cfg.frobnicate"});
  expect_refused(oc_json(v, t, 512, R"(, "init_logit_bias": -10)"), o, {"init_logit_bias"});
  expect_refused(oc_json(v, t, 512, R"(, "custom_text": true)"), o, {"custom_text"});
  expect_refused(oc_json(v, t, 512, R"(, "multimodal_cfg": {"width": 512})"), o,
                 {"multimodal_cfg"});
  expect_refused(oc_json(R"("image_size": [224, 192], "layers": 12, "width": 768,
                            "patch_size": 32)",
                         t, 512),
                 o, {"image_size", "non-square"});
  expect_refused(oc_json(R"("layers": [3, 4, 6, 3], "width": 64)", t, 1024), o, {"ModifiedResNet"});
  expect_refused(oc_json(R"("layers": 12, "width": 768, "head_width": 100)", t, 512), o,
                 {"head_width"});
  expect_refused(R"({"vision_cfg": {}})", o, {"model_cfg"});
  expect_refused(oc_json(v, t, 512, R"(, "quick_gelu": "yes")"), o, {"quick_gelu", "boolean"});
}

TEST(ClipModelConfig, HuggingFaceRefusals) {
  const auto h = ClipLayout::HuggingFace;
  expect_refused(hf_json(768, 12, 12, 3072, 32, 512, 12, 8, 2048, 512, 2, "relu"), h,
                 {"hidden_act", "relu"});
  expect_refused(R"({"model_type": "siglip", "text_config": {}, "vision_config": {}})", h,
                 {"model_type", "siglip"});
  expect_refused(R"({"text_config": {}, "vision_config": {"num_channels": 1}})", h,
                 {"num_channels"});
  expect_refused(R"({"text_config": {"hidden_size": 100, "num_attention_heads": 8},
                     "vision_config": {}})",
                 h, {"text width 100", "8 attention heads"});
  expect_refused(R"({"text_config": {"hidden_size": "512"}, "vision_config": {}})", h,
                 {"text_config.hidden_size", "a string", "positive integer"});
  expect_refused(R"({"text_config": {"num_hidden_layers": 0}, "vision_config": {}})", h,
                 {"text_config.num_hidden_layers"});
  expect_refused(R"({"text_config": {}, "vision_config": {"hidden_size": 1e9}})", h,
                 {"vision_config.hidden_size"});
  expect_refused(R"({"text_config": {}, "vision_config": {"image_size": 16,
                     "patch_size": 32}})",
                 h, {"patch size 32"});
  expect_refused(R"({"vision_config": {}})", h, {"text_config"});
  expect_refused(R"({"text_config": [], "vision_config": {}})", h, {"text_config", "array"});
  expect_refused(R"({"text_config": {"eos_token_id": -3}, "vision_config": {}})", h,
                 {"eos_token_id"});
  // issue 19: an id past the vocabulary (ids 0..99 here) never occurs in a text.
  expect_refused(
      R"({"text_config": {"vocab_size": 100, "eos_token_id": 100}, "vision_config": {}})", h,
      {"text_config.eos_token_id", "outside the vocabulary of 100 token ids"});
  expect_refused(R"({"text_config": {"eos_token_id": 49408}, "vision_config": {}})", h,
                 {"eos_token_id", "49408"});
  expect_refused(
      R"({"text_config": {"vocab_size": 100, "bos_token_id": 4000}, "vision_config": {}})", h,
      {"text_config.bos_token_id"});
  expect_refused(R"({"text_config": {"pad_token_id": 1e20}, "vision_config": {}})", h,
                 {"text_config.pad_token_id", "integer"});
  expect_refused(R"({"text_config": {"pad_token_id": 18446744073709551615}, "vision_config": {}})",
                 h, {"text_config.pad_token_id"});
  EXPECT_EQ(hf(R"({"text_config": {"vocab_size": 100, "eos_token_id": 99, "bos_token_id": null},
                 "vision_config": {}})")
                .eos_token_id,
            99);
  expect_refused(R"({"text_config": {"layer_norm_eps": 0}, "vision_config": {}})", h,
                 {"layer_norm_eps"});
}

TEST(ClipModelConfig, MalformedJson) {
  expect_refused(R"({"text_config": {)", ClipLayout::HuggingFace, {"not valid JSON"});
  expect_refused("[1, 2]", ClipLayout::HuggingFace, {"an array", "JSON object"});
  expect_refused("", ClipLayout::OpenClip, {"not valid JSON"});
}

TEST(ClipModelConfig, ReadsAndDetectsFixtureDirectories) {
  EXPECT_EQ(detect_clip_layout(models_dir() / "hf_a_f32"), ClipLayout::HuggingFace);
  EXPECT_EQ(detect_clip_layout(models_dir() / "oc_b_f32"), ClipLayout::OpenClip);
  const ClipConfig a = read_clip_config(models_dir() / "hf_a_f32");
  expect_tower(a.vision, 48, 2, 4, 192, Activation::QuickGelu);
  expect_tower(a.text, 32, 2, 2, 128, Activation::QuickGelu);
  EXPECT_EQ(a.logit_scale, 0.0f);  // no weights read
  const ClipConfig b = read_clip_config(models_dir() / "oc_b_f32");
  expect_tower(b.vision, 32, 2, 2, 64, Activation::Gelu);  // mlp_ratio 2.0
  expect_tower(b.text, 24, 2, 2, 96, Activation::Gelu);
  EXPECT_EQ(b.image_tokens(), 17u);
}

TEST(ClipModelConfig, LayoutDetectionPrefersOpenClipAndNamesWhatIsMissing) {
  TempDir tmp;
  // Both layouts present: open_clip's own files win.
  const fs::path both = tmp.path() / "both";
  fs::create_directories(both);
  for (const char* f : {"config.json", "model.safetensors", "open_clip_config.json",
                        "open_clip_model.safetensors"}) {
    write_text(both / f, "{}");
  }
  EXPECT_EQ(detect_clip_layout(both), ClipLayout::OpenClip);
  const fs::path bin = tmp.path() / "bin";
  fs::create_directories(bin);
  write_text(bin / "config.json", "{}");
  write_text(bin / "pytorch_model.bin", "x");
  // PyTorch's weights are read as data (include/vlbias/io/tensor/torch_checkpoint.h).
  EXPECT_EQ(detect_clip_layout(bin), ClipLayout::HuggingFace);
  fs::remove(bin / "config.json");
  try {
    detect_clip_layout(bin);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pytorch_model.bin"), std::string::npos) << e.what();
  }
  const fs::path sharded = tmp.path() / "sharded";
  fs::create_directories(sharded);
  write_text(sharded / "config.json", "{}");
  write_text(sharded / "model.safetensors.index.json", "{}");
  EXPECT_THROW(detect_clip_layout(sharded), InputError);
  EXPECT_THROW(detect_clip_layout(tmp.path() / "missing"), InputError);
  EXPECT_THROW(detect_clip_layout(both / "config.json"), InputError);  // a file, not a dir
}

}  // namespace in_clip_model_config_test
}  // namespace
}  // namespace vlbias
