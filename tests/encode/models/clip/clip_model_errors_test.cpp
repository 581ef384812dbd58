// ClipModel on hostile inputs: damaged weight files, configs that disagree with the weights,
// bad token ids and pixels. Every failure is an InputError naming the file / tensor / text.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "encode/clip_model_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_model.h"

namespace vlbias {
namespace {
namespace in_clip_model_errors_test {

using namespace clip_test;

template <typename Fn>
std::string input_error(Fn fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InputError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

void expect_words(const std::string& msg, const std::vector<std::string>& words) {
  for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

// Rewrites the HF fixture's weights through `edit`, then expects load to fail naming `words`.
template <typename Edit>
void expect_load_error(const char* fixture, const char* weights, Edit edit,
                       const std::vector<std::string>& words) {
  TempDir tmp;
  const fs::path dir = copy_model(fixture, tmp.path());
  std::vector<RawTensor> t = read_raw(dir / weights);
  edit(t);
  write_raw(dir / weights, t);
  expect_words(input_error([&] { ClipModel::load(dir); }), words);
}

RawTensor* find(std::vector<RawTensor>& t, const std::string& name) {
  for (RawTensor& x : t) {
    if (x.name == name) return &x;
  }
  ADD_FAILURE() << "fixture has no " << name;
  return nullptr;
}

TEST(ClipModelErrors, TruncatedWeights) {
  TempDir tmp;
  const fs::path dir = copy_model("hf_a_f32", tmp.path());
  const std::string bytes = read_text(dir / "model.safetensors");
  write_text(dir / "model.safetensors", bytes.substr(0, bytes.size() / 2));
  expect_words(input_error([&] { ClipModel::load(dir); }), {"model.safetensors"});
  write_text(dir / "model.safetensors", bytes.substr(0, 5));
  expect_words(input_error([&] { ClipModel::load(dir); }), {"model.safetensors"});
}

TEST(ClipModelErrors, MissingTensor) {
  expect_load_error("hf_a_f32", "model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      std::erase_if(t, [](const RawTensor& x) {
                        return x.name == "text_model.encoder.layers.1.self_attn.k_proj.bias";
                      });
                    },
                    {"model.safetensors", "text_model.encoder.layers.1.self_attn.k_proj.bias"});
  expect_load_error("oc_b_f32", "open_clip_model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      std::erase_if(t, [](const RawTensor& x) { return x.name == "logit_scale"; });
                    },
                    {"open_clip_model.safetensors", "logit_scale"});
}

TEST(ClipModelErrors, WrongShapeSaysExpectedAndFound) {
  expect_load_error(
      "hf_a_f32", "model.safetensors",
      [](std::vector<RawTensor>& t) {
        RawTensor* x = find(t, "visual_projection.weight");  // [24, 48]
        x->shape = {48, 24};
      },
      {"visual_projection.weight", "has shape [48, 24]", "expected [24, 48]", "config.json"});
  expect_load_error("oc_b_f32", "open_clip_model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      RawTensor* x = find(t, "visual.transformer.resblocks.0.attn.in_proj_weight");
                      x->shape = {32, 96};
                    },
                    {"in_proj_weight", "[32, 96]", "expected [96, 32]"});
}

TEST(ClipModelErrors, UnsupportedDtype) {
  expect_load_error("hf_a_f32", "model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      find(t, "text_model.final_layer_norm.weight")->dtype = "I32";
                    },
                    {"text_model.final_layer_norm.weight", "I32", "F32, F16 or BF16"});
  expect_load_error("hf_a_f32", "model.safetensors",
                    [](std::vector<RawTensor>& t) { find(t, "logit_scale")->dtype = "Q4"; },
                    {"unknown dtype", "Q4"});
}

TEST(ClipModelErrors, LeftoverTensorMeansConfigAndWeightsDisagree) {
  expect_load_error("oc_b_f32", "open_clip_model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      t.push_back(f32_tensor("visual.transformer.resblocks.0.ls_1.gamma", {32},
                                             std::vector<float>(32, 1.0f)));
                    },
                    {"ls_1.gamma", "does not have"});
  // A checkpoint with one more layer than the config says.
  expect_load_error("hf_a_f32", "model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      t.push_back(f32_tensor("text_model.encoder.layers.2.layer_norm1.weight", {32},
                                             std::vector<float>(32, 1.0f)));
                    },
                    {"layers.2.layer_norm1.weight"});
}

TEST(ClipModelErrors, OldPositionIdsBuffersAreIgnored) {
  TempDir tmp;
  const fs::path dir = copy_model("hf_a_f32", tmp.path());
  std::vector<RawTensor> t = read_raw(dir / "model.safetensors");
  RawTensor ids{"text_model.embeddings.position_ids", "I64", {1, 77}, {}};
  ids.bytes.resize(77 * 8);
  t.push_back(ids);
  write_raw(dir / "model.safetensors", t);
  EXPECT_NO_THROW(ClipModel::load(dir));
}

TEST(ClipModelErrors, NonFiniteWeight) {
  expect_load_error("oc_b_f32", "open_clip_model.safetensors",
                    [](std::vector<RawTensor>& t) {
                      RawTensor* x = find(t, "ln_final.weight");
                      const float nan = std::numeric_limits<float>::quiet_NaN();
                      std::memcpy(x->bytes.data() + 8, &nan, 4);
                    },
                    {"ln_final.weight", "NaN"});
}

TEST(ClipModelErrors, ConfigProblemsNameTheFile) {
  TempDir tmp;
  const fs::path dir = copy_model("oc_b_f32", tmp.path());
  write_text(dir / "open_clip_config.json", "{\"model_cfg\": ");
  expect_words(input_error([&] { ClipModel::load(dir); }),
               {"open_clip_config.json", "not valid JSON"});
  nlohmann::json cfg = read_json(models_dir() / "oc_b_f32" / "open_clip_config.json");
  cfg["model_cfg"]["vision_cfg"]["ls_init_value"] = 1e-5;
  write_text(dir / "open_clip_config.json", cfg.dump());
  expect_words(input_error([&] { ClipModel::load(dir); }),
               {"open_clip_config.json", "ls_init_value", "LayerScale"});
  // A config whose shapes disagree with the weights.
  cfg = read_json(models_dir() / "oc_b_f32" / "open_clip_config.json");
  cfg["model_cfg"]["embed_dim"] = 20;
  write_text(dir / "open_clip_config.json", cfg.dump());
  expect_words(input_error([&] { ClipModel::load(dir); }),
               {"visual.proj", "[32, 16]", "expected [32, 20]"});
  // Explicit layout whose files are missing.
  expect_words(input_error([&] { ClipModel::load(dir, ClipLayout::HuggingFace); }),
               {"config.json"});
}

TEST(ClipModelErrors, BadTokenIdsNameTheText) {
  const ClipModel model = ClipModel::load(models_dir() / "oc_b_f32");
  const std::vector<std::int32_t> ok = {598, 5, 599};
  expect_words(input_error([&] { model.encode_texts({ok, {}}); }), {"text 1", "0 tokens"});
  expect_words(input_error([&] {
                 model.encode_texts({ok, ok, std::vector<std::int32_t>(78, 3)});
               }),
               {"text 2", "78 tokens", "1 to 77"});
  expect_words(input_error([&] {
                 model.encode_texts({{598, 600, 599}});
               }),
               {"text 0", "token id 600", "position 1", "600"});
  expect_words(input_error([&] {
                 model.encode_texts({ok, {598, -1}});
               }),
               {"text 1", "token id -1"});
  // Exactly the context length is fine.
  std::vector<std::int32_t> full(77, 7);
  full.back() = 599;
  EXPECT_NO_THROW(model.encode_texts({full}));
}

TEST(ClipModelErrors, NonFinitePixelNamesTheImage) {
  const ClipModel model = ClipModel::load(models_dir() / "oc_b_f32");
  std::vector<float> pixels(2 * 3 * 24 * 24, 0.25f);
  pixels[3 * 24 * 24 + 24 * 24 + 5 * 24 + 7] = std::numeric_limits<float>::infinity();
  expect_words(input_error([&] { model.encode_images(pixels.data(), 2); }),
               {"image 1", "channel 1", "row 5", "column 7"});
}

}  // namespace in_clip_model_errors_test
}  // namespace
}  // namespace vlbias
