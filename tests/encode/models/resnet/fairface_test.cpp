// The FairFace classifier and torchvision's ResNet family (src/encode/models/resnet/fairface.cpp,
// resnet_model*.cpp) against torchvision's own forward in float64
// (tests/fixtures/encode/fairface, written by tools/make_fairface_fixtures.py: random weights and
// batch norm statistics, widths reduced, torchvision's topology) on real photographs preprocessed
// as FairFace's predict.py does; checkpoints as torch.save writes them (zip and legacy, bare and
// "module." keys), safetensors and a model folder; hostile and invalid weights refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/fairface.h"
#include "vlbias/encode/models/resnet_model.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias {
namespace {
namespace in_fairface_test {

using testing_util::fixture_json;

const std::string kDir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/encode/fairface/";
const std::string kImages = std::string(VLBIAS_SOURCE_DIR) + "/tests/data/images/real/";
constexpr std::size_t kPixels = 3 * kFairFaceInputSize * kFairFaceInputSize;

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

std::vector<RgbImage> fixture_images(const nlohmann::json& expected) {
  std::vector<RgbImage> images;
  for (const auto& name : expected["images"]) {
    images.push_back(decode_image_file(kImages + name.get<std::string>()));
  }
  return images;
}

std::vector<float> flat(const nlohmann::json& rows) {
  std::vector<float> out;
  for (const auto& row : rows) {
    for (const auto& v : row) out.push_back(v.get<float>());
  }
  return out;
}

// The worst error of the logits and of every head's probabilities against `want`, each at the
// scale of its reference (testing_util::scaled_error).
double fairface_error(const FairFaceClassifier& model, const FairFaceResult& got,
                      const nlohmann::json& want) {
  double worst = testing_util::scaled_error(got.logits.data, flat(want["logits"]));
  for (std::size_t h = 0; h < model.heads().size(); ++h) {
    const std::string& attribute = model.heads()[h].attribute;
    std::vector<float> expected;
    for (const auto& image : want["probabilities"]) {
      for (const auto& v : image[attribute]) expected.push_back(v.get<float>());
    }
    worst = std::max(worst, testing_util::scaled_error(got.probabilities[h].data, expected));
  }
  return worst;
}

// `source`'s tensors as a safetensors image, without `drop` and with `reshape` given `shape`.
SafetensorsFile edited(const SafetensorsFile& source, const std::string& drop,
                       const std::string& reshape, const std::vector<std::size_t>& shape) {
  std::vector<SafetensorsEntry> entries;
  std::string data;
  for (const std::string& name : source.names()) {
    if (name == drop) continue;
    const auto& info = source.info(name);
    entries.push_back({name, info.dtype, name == reshape ? shape : info.shape});
    const auto bytes = source.bytes(name);
    data.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  const std::string header = safetensors_header("edited.safetensors", entries);
  std::vector<std::uint8_t> image(header.begin(), header.end());
  image.insert(image.end(), data.begin(), data.end());
  return SafetensorsFile::from_owned(std::move(image), "edited.safetensors");
}

TEST(FairFace, PreprocessingIsPredictPysBilinearResizeToTensorAndImageNetNormalize) {
  const auto& expected = fixture_json("encode/fairface/expected.json");
  const std::vector<RgbImage> images = fixture_images(expected);
  const std::size_t stride = expected["pixels_stride"];
  std::vector<float> px(kPixels);
  for (std::size_t i = 0; i < images.size(); ++i) {
    SCOPED_TRACE(expected["images"][i].get<std::string>());
    fairface_pixels(images[i], px.data());
    const auto& want = expected["pixels"][i];
    ASSERT_EQ(want.size(), (kPixels + stride - 1) / stride);
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_NEAR(px[k * stride], want[k].get<double>(), 1e-6) << "value " << k * stride;
    }
  }
}

TEST(FairFace, Race7ModelFromATorchSavedStateDictEqualsTorchvisionOnRealPhotos) {
  const auto& expected = fixture_json("encode/fairface/expected.json");
  const FairFaceClassifier model(kDir + "resnet34_w8.pt");
  EXPECT_EQ(model.network().architecture(), "resnet34");
  EXPECT_EQ(model.network().prefix(), "");
  EXPECT_EQ(model.network().feature_dim(), 64u);  // 512 / 8
  ASSERT_EQ(model.heads().size(), 3u);
  EXPECT_EQ(model.heads()[0].classes[2], "Latino_Hispanic");
  EXPECT_EQ(model.heads()[1].first, 7u);
  EXPECT_EQ(model.heads()[2].classes.back(), "70+");
  EXPECT_EQ(model.weights_sha256().size(), 64u);
  const FairFaceResult got = model.classify(fixture_images(expected));
  const double error = fairface_error(model, got, expected["resnet34_w8"]);
  EXPECT_LT(error, 1e-5);
  RecordProperty("race7_scaled_error", fmt::format("{:.3g}", error));
}

TEST(FairFace, Race4ModelSavedFromDataParallelInTheLegacyFormatEqualsTorchvision) {
  const auto& expected = fixture_json("encode/fairface/expected.json");
  FairFaceOptions options;
  options.variant = parse_fairface_variant("race4");
  options.batch = 2;  // two forwards: the batch size does not change the rows
  const FairFaceClassifier model(kDir + "race4_resnet18_w16.pt", options);
  EXPECT_EQ(model.network().architecture(), "resnet18");
  EXPECT_EQ(model.network().prefix(), "module.");
  ASSERT_EQ(model.heads().size(), 1u);
  EXPECT_EQ(model.heads()[0].classes,
            (std::vector<std::string>{"White", "Black", "Asian", "Indian"}));
  const FairFaceResult got = model.classify(fixture_images(expected));
  const double error = fairface_error(model, got, expected["race4_resnet18_w16"]);
  EXPECT_LT(error, 1e-5);
  RecordProperty("race4_scaled_error", fmt::format("{:.3g}", error));
}

TEST(FairFace, BottleneckResNet50FromSafetensorsEqualsTorchvision) {
  const auto& expected = fixture_json("encode/fairface/expected.json");
  const SafetensorsFile file = SafetensorsFile::open(kDir + "resnet50_w16.safetensors");
  const ResNetModel model = ResNetModel::load(file);
  EXPECT_EQ(model.architecture(), "resnet50");
  EXPECT_EQ(model.feature_dim(), 128u);  // 2048 / 16
  EXPECT_EQ(model.classes(), 10u);
  const std::vector<RgbImage> images = fixture_images(expected);
  std::vector<float> px(images.size() * kPixels);
  for (std::size_t i = 0; i < images.size(); ++i) fairface_pixels(images[i], &px[i * kPixels]);
  const Matrix logits = model.logits(px.data(), images.size(), kFairFaceInputSize);
  EXPECT_LT(testing_util::scaled_error(logits.data, flat(expected["resnet50_w16"]["logits"])),
            1e-5);
  EXPECT_GT(model.macs_per_image(kFairFaceInputSize), 1e6);
}

TEST(FairFace, AModelFolderWithPytorchModelBinOrConvertedSafetensorsGivesTheSameLogits) {
  const auto dir = testing_util::fresh_test_dir("fairface_folder");
  std::filesystem::copy_file(kDir + "resnet34_w8.pt", dir / "pytorch_model.bin");
  const auto& expected = fixture_json("encode/fairface/expected.json");
  const std::vector<RgbImage> images = fixture_images(expected);
  const FairFaceClassifier from_file(kDir + "resnet34_w8.pt");
  const FairFaceClassifier from_folder(dir);
  EXPECT_EQ(from_folder.weights_file(), dir / "pytorch_model.bin");
  EXPECT_EQ(from_folder.weights_sha256(), from_file.weights_sha256());
  const std::vector<float> want = from_file.classify(images).logits.data;
  EXPECT_EQ(from_folder.classify(images).logits.data, want);
  // The folder `vlbias convert-weights` makes (its library call), safetensors first.
  write_torch_as_safetensors(TorchCheckpoint::open(kDir + "resnet34_w8.pt"),
                             dir / "model.safetensors", WeightsDtype::Keep);
  const FairFaceClassifier converted(dir);
  EXPECT_EQ(converted.weights_file(), dir / "model.safetensors");
  EXPECT_EQ(converted.classify(images).logits.data, want);
  std::filesystem::remove_all(dir);
}

TEST(FairFace, ClassNamesCanBeRenamedAndAListOfAnotherSizeIsRefusedNamingTheFile) {
  const auto dir = testing_util::fresh_test_dir("fairface_classes");
  FairFaceOptions options;
  options.classes = dir / "classes.json";
  { std::ofstream(options.classes) << R"({"gender": ["man", "woman"]})"; }
  const FairFaceClassifier renamed(kDir + "resnet34_w8.pt", options);
  EXPECT_EQ(renamed.heads()[1].classes, (std::vector<std::string>{"man", "woman"}));
  EXPECT_EQ(renamed.heads()[0].classes[0], "White");
  { std::ofstream(options.classes) << R"({"race": ["a", "b", "c", "d", "e", "f"]})"; }
  std::string message =
      error_of<UsageError>([&] { FairFaceClassifier(kDir + "resnet34_w8.pt", options); });
  EXPECT_NE(message.find("classes.json"), std::string::npos) << message;
  EXPECT_NE(message.find("'race' lists 6 class names; its head has 7"), std::string::npos)
      << message;
  { std::ofstream(options.classes) << R"({"skin": ["a"]})"; }
  message = error_of<UsageError>([&] { FairFaceClassifier(kDir + "resnet34_w8.pt", options); });
  EXPECT_NE(message.find("'skin'"), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}

TEST(FairFace, APickleCallingAGlobalOutsideTheAllowListIsRefusedNeverRun) {
  const std::string message =
      error_of<InputError>([&] { FairFaceClassifier(kDir + "hostile_global.pt"); });
  EXPECT_NE(message.find("hostile_global.pt"), std::string::npos) << message;
  EXPECT_NE(message.find("system"), std::string::npos) << message;
}

TEST(FairFace, AMissingOrMisShapedTensorIsRefusedNamingTheFileAndTensor) {
  const SafetensorsFile file = open_weights_file(kDir + "resnet34_w8.pt");
  std::string message = error_of<InputError>(
      [&] { ResNetModel::load(edited(file, "layer3.1.bn2.running_var", "", {})); });
  EXPECT_NE(message.find("edited.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("layer3.1.bn2.running_var"), std::string::npos) << message;
  const auto& shape = file.info("layer2.0.conv2.weight").shape;
  message = error_of<InputError>([&] {
    ResNetModel::load(
        edited(file, "", "layer2.0.conv2.weight", {shape[0], shape[1], shape[2] * shape[3]}));
  });
  EXPECT_NE(message.find("layer2.0.conv2.weight"), std::string::npos) << message;
  // Without its downsample, a block that changes the shape cannot add its input.
  message = error_of<InputError>([&] {
    ResNetModel::load(edited(edited(file, "layer2.0.downsample.0.weight", "", {}),
                             "layer2.0.downsample.1.weight", "", {}));
  });
  EXPECT_NE(message.find("layer2.0.downsample.0.weight' is missing"), std::string::npos) << message;
}

TEST(FairFace, AModelOfAnotherArchitectureIsAUsageErrorNamingTheFile) {
  const std::string inception =
      std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/encode/inception/model.safetensors";
  std::string message = error_of<UsageError>([&] { FairFaceClassifier{inception}; });
  EXPECT_NE(message.find("inception/model.safetensors' holds no torchvision ResNet"),
            std::string::npos)
      << message;
  // A ResNet whose fc has 10 outputs is no FairFace model.
  message = error_of<UsageError>([&] { FairFaceClassifier(kDir + "resnet50_w16.safetensors"); });
  EXPECT_NE(message.find("has 10 outputs"), std::string::npos) << message;
  message = error_of<UsageError>([&] { parse_fairface_variant("5"); });
  EXPECT_NE(message.find("race7"), std::string::npos) << message;
}

// The full-size resnet34 (85 MB, not committed): `/usr/bin/python3
// tools/make_fairface_fixtures.py --full DIR`, then VLBIAS_FAIRFACE_FULL=DIR.
TEST(FairFace, FullSizeResNet34EqualsTorchvisionWhenGiven) {
  const char* dir = std::getenv("VLBIAS_FAIRFACE_FULL");
  if (dir == nullptr) GTEST_SKIP() << "VLBIAS_FAIRFACE_FULL is not set";
  const nlohmann::json expected =
      nlohmann::json::parse(read_file_text(std::filesystem::path(dir) / "expected.json", "JSON"));
  const FairFaceClassifier model(std::filesystem::path(dir) / "resnet34.pt");
  EXPECT_EQ(model.network().feature_dim(), 512u);
  const double error =
      fairface_error(model, model.classify(fixture_images(expected)), expected["resnet34"]);
  EXPECT_LT(error, 1e-5);
  RecordProperty("full_resnet34_scaled_error", fmt::format("{:.3g}", error));
}

}  // namespace in_fairface_test
}  // namespace
}  // namespace vlbias
