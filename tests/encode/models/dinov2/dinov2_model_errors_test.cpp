// Dinov2Model / Dinov2Encoder on configs and weights they must refuse: a tensor missing, of the
// wrong shape or left over, registers, an activation the runtime lacks, keys whose defaults are
// ambiguous, preprocessing without one input size, non-finite pixels. Each refusal names the file
// and the key or tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "encode/clip_model_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/dinov2_model.h"

namespace vlbias {
namespace {
namespace in_dinov2_model_errors_test {

using namespace clip_test;

template <typename Error, typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

void expect_words(const std::string& msg, const std::vector<std::string>& words) {
  for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << msg;
}

// A copy of fixture model `name` (tests/fixtures/encode/dinov2/) in `dst`.
fs::path copy_dinov2(const std::string& name, const fs::path& dst) {
  const fs::path from =
      fs::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" / "encode" / "dinov2" / name;
  const fs::path to = dst / name;
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) {
    fs::copy_file(e.path(), to / e.path().filename());
  }
  return to;
}

// Loads a copy of `fixture` whose config.json went through `edit`; expects an InputError
// naming `words`.
template <typename Edit>
void expect_config_error(const char* fixture, Edit edit, const std::vector<std::string>& words) {
  TempDir tmp;
  const fs::path dir = copy_dinov2(fixture, tmp.path());
  nlohmann::json config = read_json(dir / "config.json");
  edit(config);
  write_text(dir / "config.json", config.dump(1));
  expect_words(error_of<InputError>([&] { Dinov2Model::load(dir); }), words);
}

// The same with the weights rewritten through `edit`.
template <typename Edit>
void expect_weights_error(const char* fixture, Edit edit, const std::vector<std::string>& words) {
  TempDir tmp;
  const fs::path dir = copy_dinov2(fixture, tmp.path());
  std::vector<RawTensor> t = read_raw(dir / "model.safetensors");
  edit(t);
  write_raw(dir / "model.safetensors", t);
  expect_words(error_of<InputError>([&] { Dinov2Model::load(dir); }), words);
}

TEST(Dinov2ModelErrors, AMissingTensorIsNamed) {
  const std::string name = "encoder.layer.1.layer_scale2.lambda1";
  expect_weights_error("gelu_p4",
                       [&](std::vector<RawTensor>& t) {
                         std::erase_if(t, [&](const RawTensor& x) { return x.name == name; });
                       },
                       {name, "model.safetensors"});
}

TEST(Dinov2ModelErrors, PositionEmbeddingsOfAnotherGridAreAWrongShape) {
  // config.json says image_size 20 / patch 4 (26 positions); the weights hold 37.
  expect_weights_error("gelu_p4",
                       [](std::vector<RawTensor>& t) {
                         for (RawTensor& x : t) {
                           if (x.name != "embeddings.position_embeddings") continue;
                           x.shape = {1, 37, 32};
                           x.bytes.resize(37 * 32 * 4);
                         }
                       },
                       {"embeddings.position_embeddings", "26", "37"});
}

TEST(Dinov2ModelErrors, ATensorLeftOverIsRefused) {
  // A third layer the config does not have.
  expect_weights_error(
      "gelu_p4",
      [](std::vector<RawTensor>& t) {
        t.push_back(f32_tensor("encoder.layer.2.norm1.weight", {32}, std::vector<float>(32, 1)));
      },
      {"encoder.layer.2.norm1.weight"});
}

TEST(Dinov2ModelErrors, SwigluWeightsUnderAPlainMlpConfigAreRefused) {
  expect_config_error("swiglu_p3", [](nlohmann::json& c) { c["use_swiglu_ffn"] = false; },
                      {"mlp.fc1"});
}

TEST(Dinov2ModelErrors, RegistersAreRefusedByName) {
  expect_config_error("gelu_p4",
                      [](nlohmann::json& c) { c["model_type"] = "dinov2_with_registers"; },
                      {"config.json", "dinov2_with_registers", "registers", "not implemented"});
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c["num_register_tokens"] = 4; },
                      {"num_register_tokens", "register tokens"});
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c["model_type"] = "vit"; },
                      {"\"vit\"", "dinov2"});
}

TEST(Dinov2ModelErrors, AnUnknownActivationIsRefusedForThePlainMlpOnly) {
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c["hidden_act"] = "relu"; },
                      {"hidden_act", "relu"});
  // Dinov2SwiGLUFFN ignores hidden_act (always SiLU): the model loads.
  TempDir tmp;
  const fs::path dir = copy_dinov2("swiglu_p3", tmp.path());
  nlohmann::json config = read_json(dir / "config.json");
  config["hidden_act"] = "relu";
  write_text(dir / "config.json", config.dump(1));
  EXPECT_EQ(Dinov2Model::load(dir).config().mlp_width, 56u);
}

TEST(Dinov2ModelErrors, KeysWithChangingDefaultsAreRequired) {
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c.erase("patch_size"); },
                      {"patch_size", "required"});
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c.erase("layer_norm_eps"); },
                      {"layer_norm_eps", "required"});
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c["num_attention_heads"] = 5; },
                      {"hidden_size", "num_attention_heads", "divisible"});
  expect_config_error("gelu_p4", [](nlohmann::json& c) { c["use_swiglu_ffn"] = "yes"; },
                      {"use_swiglu_ffn", "true or false"});
}

TEST(Dinov2ModelErrors, AFolderWithoutWeightsOrWithADamagedBinIsNamed) {
  TempDir tmp;
  const fs::path dir = copy_dinov2("gelu_p4", tmp.path());
  fs::remove(dir / "model.safetensors");
  expect_words(error_of<InputError>([&] { Dinov2Model::load(dir); }),
               {"model.safetensors", "pytorch_model.bin"});
  write_text(dir / "pytorch_model.bin", "x");
  expect_words(error_of<InputError>([&] { Dinov2Model::load(dir); }),
               {"pytorch_model.bin", "is not a PyTorch checkpoint"});
}

// A folder with only PyTorch's pytorch_model.bin (tests/fixtures/encode/dinov2/gelu_p4_torch:
// the same weights torch.save wrote) is read as data and gives the same features.
TEST(Dinov2ModelErrors, AFolderWithOnlyPytorchModelBinGivesTheSameFeatures) {
  TempDir tmp;
  const fs::path dir = copy_dinov2("gelu_p4", tmp.path());
  fs::remove(dir / "model.safetensors");
  fs::copy_file(
      fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/dinov2/gelu_p4_torch/pytorch_model.bin",
      dir / "pytorch_model.bin");
  const Dinov2Model from_bin = Dinov2Model::load(dir);
  const Dinov2Model from_safetensors =
      Dinov2Model::load(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/dinov2/gelu_p4");
  std::vector<float> px(3 * 20 * 20);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = std::cos(0.01f * static_cast<float>(i));
  EXPECT_EQ(from_bin.encode_images(px.data(), 1, 20, 20).data,
            from_safetensors.encode_images(px.data(), 1, 20, 20).data);
  EXPECT_EQ(from_bin.weights_path().filename(), "pytorch_model.bin");
}

TEST(Dinov2ModelErrors, PreprocessingMustGiveOneInputSize) {
  TempDir tmp;
  const fs::path dir = copy_dinov2("gelu_p4", tmp.path());
  nlohmann::json pre = read_json(dir / "preprocessor_config.json");
  pre["do_center_crop"] = false;
  write_text(dir / "preprocessor_config.json", pre.dump(1));
  expect_words(error_of<UsageError>([&] { Dinov2Encoder::open(dir); }),
               {"do_center_crop", "--image-size"});
  // --image-size restores a fixed size; one below the patch size is refused.
  EXPECT_EQ(Dinov2Encoder::open(dir, {.image_size = 8}).pixels_per_image(), 3u * 8 * 8);
  expect_words(error_of<UsageError>([&] { Dinov2Encoder::open(dir, {.image_size = 3}); }),
               {"3 x 3", "4 x 4 patch"});
  pre["image_processor_type"] = "ViTImageProcessor";
  write_text(dir / "preprocessor_config.json", pre.dump(1));
  expect_words(error_of<UsageError>([&] { Dinov2Encoder::open(dir); }),
               {"ViTImageProcessor", "BitImageProcessor"});
}

TEST(Dinov2ModelErrors, ANonFinitePixelNamesTheImage) {
  const Dinov2Encoder enc = Dinov2Encoder::open(fs::path(VLBIAS_SOURCE_DIR) / "tests" / "fixtures" /
                                                "encode" / "dinov2" / "gelu_p4");
  std::vector<float> px(2 * enc.pixels_per_image(), 0.0f);
  px[enc.pixels_per_image() + 5] = std::numeric_limits<float>::quiet_NaN();
  expect_words(error_of<InputError>([&] { enc.encode_pixels(px.data(), 2); }),
               {"image 1", "non-finite"});
}

}  // namespace in_dinov2_model_errors_test
}  // namespace
}  // namespace vlbias
