// The FID Inception-v3 (src/encode/models/inception/inception_*.cpp) against an independent PyTorch
// forward of the same random weights (tests/fixtures/encode/inception, written by
// tools/make_inception_fixtures.py: a width-scaled network, every channel count / 16, the real
// topology), after each FID preprocessing mode, on odd-sized, grey, RGBA, large and 299-pixel
// images.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/image_model.h"
#include "vlbias/encode/models/inception_model.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_inception_model_test {

using testing_util::fixture_json;

const std::string kDir = std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/encode/inception/";

// The error of `got` at the scale of `want`, shapes checked (testing_util::scaled_error).
double scaled_error(const Matrix& got, const Matrix& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  return testing_util::scaled_error(got.data, want.data);
}

// The preprocessed tensors of the fixture's images, back to back.
std::vector<float> fixture_pixels(const ImageFeatureModel& model) {
  const auto& names = fixture_json("encode/inception/expected.json")["images"];
  std::vector<float> px(names.size() * model.pixels_per_image());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const RgbImage image = decode_image_file(kDir + "images/" + names[i].get<std::string>());
    model.pixels(image, px.data() + i * model.pixels_per_image());
  }
  return px;
}

TEST(InceptionModel, ReadsTheWidthScaledFidNetworkWithItsTopology) {
  const SafetensorsFile file = SafetensorsFile::open(kDir + "model.safetensors");
  const InceptionModel model = InceptionModel::load(file);
  EXPECT_EQ(model.feature_dim(), 128u);  // 2048 / 16
  EXPECT_EQ(model.classes(), 10u);
  EXPECT_EQ(detect_image_model(kDir + "model.safetensors"), ImageModelKind::Inception);
  EXPECT_EQ(detect_image_model(kDir), ImageModelKind::Inception);
}

TEST(InceptionModel, EachPreprocessingModeMatchesItsToolOnOddGreyAndRgbaImages) {
  const auto& expected = fixture_json("encode/inception/expected.json");
  for (const char* mode : {"pytorch-fid", "clean-fid"}) {
    SCOPED_TRACE(mode);
    ImageModelOptions options;
    options.fid = parse_fid_preprocess(mode);
    const auto model = open_image_model(kDir + "model.safetensors", options);
    const std::vector<float> px = fixture_pixels(*model);
    const auto& want = expected["preprocess"][mode];
    const std::size_t stride = want["stride"];
    double worst = 0.0;
    for (std::size_t i = 0; i < want["pixels"].size(); ++i) {
      SCOPED_TRACE(expected["images"][i].get<std::string>());
      const auto& values = want["pixels"][i];
      for (std::size_t k = 0; k < values.size(); ++k) {
        const double d =
            std::abs(px[i * model->pixels_per_image() + k * stride] - values[k].get<double>());
        worst = std::max(worst, d);
        ASSERT_LT(d, 5e-7) << "value " << k * stride;
      }
    }
    RecordProperty(std::string("max_abs_pixel_error_") + mode, fmt::format("{:.3g}", worst));
  }
}

TEST(InceptionModel, FeaturesEqualAnIndependentTorchForwardWithinOneInTenThousand) {
  const auto& expected = fixture_json("encode/inception/expected.json");
  const std::size_t n = expected["images"].size();
  for (const char* mode : {"pytorch-fid", "clean-fid"}) {
    SCOPED_TRACE(mode);
    ImageModelOptions options;
    options.fid = parse_fid_preprocess(mode);
    const auto model = open_image_model(kDir, options);
    const std::vector<float> px = fixture_pixels(*model);
    const Matrix want = read_npy_matrix(kDir + fmt::format("features_{}.npy", mode));
    const Matrix got = model->encode(px.data(), n);
    const double err = scaled_error(got, want);
    EXPECT_LT(err, 1e-4);
    RecordProperty(std::string("feature_error_") + mode, fmt::format("{:.3g}", err));
    // One image at a time gives the same features (up to the last bits of a GEMM tile).
    const Matrix one = model->encode(px.data() + 2 * model->pixels_per_image(), 1);
    Matrix row(1, got.cols);
    std::copy(got.row(2), got.row(2) + got.cols, row.data.begin());
    EXPECT_LT(scaled_error(one, row), 1e-5);
  }
}

TEST(InceptionModel, LogitsOfTheFinalLayerMatchTorch) {
  const SafetensorsFile file = SafetensorsFile::open(kDir + "model.safetensors");
  const InceptionModel inception = InceptionModel::load(file);
  ImageModelOptions options;
  const auto model = open_image_model(kDir, options);
  const std::vector<float> px = fixture_pixels(*model);
  Matrix logits;
  (void)inception.features(px.data(), 5, InceptionModel::kInputSize, &logits);
  EXPECT_LT(scaled_error(logits, read_npy_matrix(kDir + "logits_pytorch-fid.npy")), 1e-4);
}

// The fixture's weights with their header edited by `edit` (same length: offsets stay valid).
std::string edited_weights(const std::string& from, const std::string& to) {
  std::ifstream in(kDir + "model.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(from.size(), to.size());
  const std::size_t at = bytes.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  bytes.replace(at, from.size(), to);
  return bytes;
}

std::string load_error(const std::string& bytes) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  return testing_util::error_of<InputError>([&] {
    const SafetensorsFile file = SafetensorsFile::from_bytes({p, bytes.size()}, "edited");
    (void)InceptionModel::load(file);
  });
}

TEST(InceptionModel, MissingMisshapedAndLeftoverTensorsAreRefusedByName) {
  // A missing tensor: renamed in the header.
  std::string msg = load_error(edited_weights("\"Mixed_6e.branch7x7dbl_5.conv.weight\"",
                                              "\"Mixed_6e.branch7x7dbl_5.conv.weighx\""));
  EXPECT_NE(msg.find("has no tensor 'Mixed_6e.branch7x7dbl_5.conv.weight'"), std::string::npos)
      << msg;
  // A 7x1 kernel where the topology has 1x7.
  const std::string shape = "\"Mixed_6e.branch7x7dbl_5.conv.weight\":{\"dtype\":\"F32\",\"shape\":";
  std::ifstream in(kDir + "model.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = bytes.find(shape);
  ASSERT_NE(at, std::string::npos);
  const std::size_t open = at + shape.size(), close = bytes.find(']', open);
  std::string dims = bytes.substr(open, close - open + 1);  // [12,12,1,7]
  std::string swapped = dims;
  const std::size_t k = swapped.rfind(",1,7]");
  ASSERT_NE(k, std::string::npos) << dims;
  swapped.replace(k, 5, ",7,1]");
  msg = load_error(edited_weights(shape + dims, shape + swapped));
  EXPECT_NE(msg.find("expected [12, 12, 1, 7]"), std::string::npos) << msg;
  // A tensor the network does not have.
  msg = load_error(edited_weights("\"fc.bias\"", "\"fc.bia2\""));
  EXPECT_NE(msg.find("fc.bias"), std::string::npos) << msg;
}

TEST(InceptionModel, AnUnknownFolderOrPreprocessingIsRefusedWithWhatWasExpected) {
  const std::string msg = testing_util::error_of<InputError>(
      [] { (void)detect_image_model(std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/nn"); });
  EXPECT_NE(msg.find("not a model this tool reads"), std::string::npos) << msg;
  EXPECT_THROW((void)parse_fid_preprocess("tf-fid"), UsageError);
}

}  // namespace in_inception_model_test
}  // namespace
}  // namespace vlbias

namespace vlbias {
namespace {
namespace in_inception_model_test {

// The fixture's weights as PyTorch saved them (tools/make_inception_fixtures.py): pytorch-fid's
// state dict in the zip and the legacy formats, and a TorchScript archive under TF-graph names
// with the batch norms' gamma folded into the kernels (TF's scale=False).
TEST(InceptionModel, EveryPytorchWeightsFormatGivesTheSameFeatures) {
  const auto& expected = fixture_json("encode/inception/expected.json");
  const std::size_t n = expected["images"].size();
  const Matrix want = read_npy_matrix(kDir + "features_pytorch-fid.npy");
  const auto reference = open_image_model(kDir + "model.safetensors");
  const std::vector<float> px = fixture_pixels(*reference);
  const Matrix base = reference->encode(px.data(), n);
  for (const char* file : {"model_zip.pth", "model_legacy.pth", "model_torchscript.pt"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(detect_image_model(kDir + file), ImageModelKind::Inception);
    const Matrix got = open_image_model(kDir + file)->encode(px.data(), n);
    EXPECT_LT(scaled_error(got, want), 1e-4);
    // The state dicts hold the very same floats: the same bits.
    if (std::string(file).ends_with(".pth")) {
      EXPECT_EQ(got.data, base.data);
    }
  }
}

// The fixture's tensors rewritten in `order` (names kept) as an in-memory safetensors file.
SafetensorsFile reordered(const SafetensorsFile& src, const std::vector<std::string>& order) {
  std::vector<SafetensorsEntry> entries;
  for (const std::string& name : order) {
    entries.push_back({name, src.info(name).dtype, src.info(name).shape});
  }
  const std::string header = safetensors_header("reordered", entries);
  std::vector<std::uint8_t> bytes(header.begin(), header.end());
  for (const std::string& name : order) {
    const auto b = src.bytes(name);
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  return SafetensorsFile::from_owned(std::move(bytes), "reordered");
}

TEST(InceptionModel, LayersMatchedByOrderEqualTheNamedOnesAndAnotherOrderIsRefused) {
  const SafetensorsFile file = SafetensorsFile::open(kDir + "model.safetensors");
  // pytorch-fid's state dict is in the graph's order too: matched by order it is the same net.
  const InceptionModel named = InceptionModel::load(file);
  const InceptionModel by_order = InceptionModel::load_by_order(file);
  std::vector<float> px(3 * InceptionModel::kInputSize * InceptionModel::kInputSize);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = std::sin(0.001f * static_cast<float>(i));
  EXPECT_EQ(named.features(px.data(), 1).data, by_order.features(px.data(), 1).data);
  // Mixed_7b's 1x3 and 3x1 kernels swapped: refused at that layer, not mis-wired.
  std::vector<std::string> order = file.names();
  std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return file.info(a).begin < file.info(b).begin;
  });
  const auto at = [&](const std::string& name) {
    return std::find(order.begin(), order.end(), name) - order.begin();
  };
  const auto a = at("Mixed_7b.branch3x3_2a.conv.weight");
  const auto b = at("Mixed_7b.branch3x3_2b.conv.weight");
  std::swap_ranges(order.begin() + a, order.begin() + b, order.begin() + b);
  const SafetensorsFile swapped = reordered(file, order);
  const std::string msg =
      testing_util::error_of<InputError>([&] { (void)InceptionModel::load_by_order(swapped); });
  EXPECT_NE(msg.find("Mixed_7b.branch3x3_2b.conv.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected ["), std::string::npos) << msg;
  // A kernel too few: the count is named.
  order.erase(order.begin() + at("Conv2d_1a_3x3.conv.weight"));
  const std::string count = testing_util::error_of<InputError>(
      [&] { (void)InceptionModel::load_by_order(reordered(file, order)); });
  EXPECT_NE(count.find("holds 93 convolution kernels"), std::string::npos) << count;
}

}  // namespace in_inception_model_test
}  // namespace
}  // namespace vlbias
