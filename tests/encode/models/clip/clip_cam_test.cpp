// Class activation maps of CLIP ViT (src/encode/models/clip/clip_cam*.cpp) against the float64
// PyTorch autograd reference of tools/make_clip_cam_fixtures.py (pytorch-grad-cam's GradCAM and
// GradCAM++ code on the target layer's activations and gradients; occlusion as a direct loop), on
// tiny random models and on real photographs through a ViT-B/32-shaped one; the gradient with
// respect to the last block's input by central finite differences; determinism over thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "encode/clip_model_test_util.h"
#include "models/clip/clip_cam_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/io/tensor/npy.h"

namespace vlbias {
namespace {
namespace in_clip_cam_test {

using namespace clip_test;

fs::path encode_fixtures() {
  return models_dir().parent_path();
}

fs::path cam_dir() {
  return encode_fixtures() / "cam";
}

// A case of cases.json with its model, pixels and target.
struct CamCase {
  nlohmann::json spec;
  ClipModel model;
  std::vector<float> pixels;
  std::size_t images = 0;
  TraitPairTarget target;
};

std::vector<float> real_pixels(const nlohmann::json& files, std::size_t side) {
  std::vector<float> out;
  ImagePreprocess p;  // CLIPImageProcessor's defaults: 224 short side, floor crop to 224
  p.shortest_edge = p.crop_width = p.crop_height = side;
  for (const auto& f : files) {
    const RgbImage img = decode_image_file(fs::path(VLBIAS_SOURCE_DIR) / "tests" / "data" /
                                           "images" / "real" / f.get<std::string>());
    const std::size_t at = out.size();
    out.resize(at + 3 * side * side);
    preprocess_image(img, p, out.data() + at);
  }
  return out;
}

Matrix rows_of(const Matrix& m, const nlohmann::json& indices) {
  Matrix out(indices.size(), m.cols);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    std::copy_n(m.row(indices[i].get<std::size_t>()), m.cols, out.row(i));
  }
  return out;
}

CamCase load_case(const nlohmann::json& spec) {
  const fs::path dir = encode_fixtures() / spec.at("model").get<std::string>();
  CamCase c{spec, ClipModel::load(dir), {}, 0, {}};
  const std::size_t side = c.model.config().image_size;
  if (spec.contains("pixels")) {
    const Matrix px = read_npy_matrix(encode_fixtures() / spec.at("pixels").get<std::string>());
    c.pixels = px.data;
  } else {
    c.pixels = real_pixels(spec.at("images"), side);
  }
  c.images = c.pixels.size() / (3 * side * side);
  const Matrix texts = c.model.encode_texts(read_texts(dir));
  c.target =
      make_trait_pair_target(rows_of(texts, spec.at("first")), rows_of(texts, spec.at("second")),
                             c.model.config().logit_scale);
  return c;
}

std::vector<nlohmann::json> case_specs() {
  const nlohmann::json j = read_json(cam_dir() / "cases.json");
  return {j.at("cases").begin(), j.at("cases").end()};
}

// max |got - want| / (max want - min want): the "within 1e-4 of the map's range".
double range_error(const float* got, const float* want, std::size_t n) {
  const auto [lo, hi] = std::minmax_element(want, want + n);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double{got[i]} - want[i]));
  return worst / std::max(double{*hi - *lo}, 1e-12);
}

TEST(ClipCam, TargetsAndGradientsMatchTheAutogradReference) {
  for (const nlohmann::json& spec : case_specs()) {
    const std::string name = spec.at("name");
    SCOPED_TRACE(name);
    const CamCase c = load_case(spec);
    EXPECT_NEAR(c.target.logit_scale, spec.at("logit_scale").get<double>(), 1e-4);
    const ClipTargetGradients g =
        clip_target_gradients(c.model, c.pixels.data(), c.images, c.target);
    ASSERT_EQ(g.target.size(), spec.at("target").size());
    for (std::size_t i = 0; i < g.target.size(); ++i) {
      EXPECT_NEAR(g.target[i], spec.at("target")[i].get<double>(), 2e-5) << "image " << i;
    }
    const Matrix ref = read_npy_matrix(cam_dir() / (name + ".grad.npy"));
    ASSERT_EQ(ref.data.size(), g.gradient.size());
    // Every token's gradient (the class token's too), relative to the largest.
    EXPECT_LE(range_error(g.gradient.data(), ref.data.data(), ref.data.size()), 1e-4);
    // The embeddings are encode's, bit for bit.
    EXPECT_TRUE(bitwise_equal(g.embeddings, c.model.encode_images(c.pixels.data(), c.images)));
  }
}

TEST(ClipCam, EveryMethodsMapsMatchPytorchGradCam) {
  for (const nlohmann::json& spec : case_specs()) {
    const std::string name = spec.at("name");
    const CamCase c = load_case(spec);
    const std::size_t stride = spec.at("stride"), side = c.model.config().image_size;
    const std::size_t cells = c.model.config().grid() * c.model.config().grid();
    for (const char* method : {"gradcam", "gradcampp", "occlusion"}) {
      SCOPED_TRACE(name + " " + method);
      const ClipCams cams =
          clip_cams(c.model, c.pixels.data(), c.images, c.target, parse_cam_method(method));
      const Matrix grid = read_npy_matrix(cam_dir() / (name + "." + method + ".grid.npy"));
      const Matrix maps = read_npy_matrix(cam_dir() / (name + "." + method + ".maps.npy"));
      ASSERT_EQ(grid.rows, c.images);
      ASSERT_EQ(grid.cols, cells);
      for (std::size_t i = 0; i < c.images; ++i) {
        EXPECT_NEAR(cams.target[i], spec.at("target")[i].get<double>(), 2e-5);
        EXPECT_LE(range_error(cams.grid_maps.data() + i * cells, grid.row(i), cells), 1e-4)
            << "image " << i;
        // The final maps at the fixture's stride.
        std::vector<float> got;
        for (std::size_t y = 0; y < side; y += stride) {
          for (std::size_t x = 0; x < side; x += stride) {
            got.push_back(cams.maps[(i * side + y) * side + x]);
          }
        }
        ASSERT_EQ(got.size(), maps.cols);
        EXPECT_LE(range_error(got.data(), maps.row(i), got.size()), 1e-4) << "image " << i;
      }
    }
  }
}

TEST(ClipCam, BlockInputGradientMatchesFiniteDifferences) {
  const CamCase c = load_case(case_specs().at(0));  // hf_a_f32: a float32 model
  const ClipTargetGradients g = clip_target_gradients(c.model, c.pixels.data(), 1, c.target);
  std::vector<float> hin = encode_internal::last_block_input(c.model, c.pixels.data());
  ASSERT_EQ(hin.size(), g.block_input_gradient.size());
  double worst = 0.0, scale = 0.0;
  const float h = 1e-2f;
  for (std::size_t k = 0; k < hin.size(); ++k) {
    const float x0 = hin[k];
    hin[k] = x0 + h;
    const double up = encode_internal::target_from_block_input(c.model, hin.data(), c.target);
    hin[k] = x0 - h;
    const double down = encode_internal::target_from_block_input(c.model, hin.data(), c.target);
    hin[k] = x0;
    // The steps as float32 represents them.
    const double numeric = (up - down) / (double{x0 + h} - double{x0 - h});
    worst = std::max(worst, std::abs(numeric - g.block_input_gradient[k]));
    scale = std::max(scale, std::abs(numeric));
  }
  EXPECT_GT(scale, 1e-3);          // the target does depend on the block's input
  EXPECT_LE(worst, 2e-3 * scale);  // measured 2.3e-4: float32 forwards, steps of 1e-2
}

TEST(ClipCam, MapsHaveTheSameBitsOnOneAndTwoThreads) {
  const CamCase c = load_case(case_specs().at(0));
  const unsigned before = thread_count();
  for (CamMethod m : {CamMethod::GradCam, CamMethod::GradCamPlusPlus, CamMethod::Occlusion}) {
    set_thread_count(1);
    const ClipCams one = clip_cams(c.model, c.pixels.data(), c.images, c.target, m);
    set_thread_count(2);
    const ClipCams two = clip_cams(c.model, c.pixels.data(), c.images, c.target, m);
    EXPECT_EQ(one.maps, two.maps) << to_string(m);
    EXPECT_EQ(one.grid_maps, two.grid_maps) << to_string(m);
    EXPECT_EQ(one.target, two.target) << to_string(m);
  }
  set_thread_count(before);
}

TEST(ClipCam, BadInputsAreRefusedWithTheirReason) {
  const CamCase c = load_case(case_specs().at(0));
  EXPECT_THROW(parse_cam_method("scorecam"), UsageError);
  EXPECT_EQ(parse_cam_method("gradcampp"), CamMethod::GradCamPlusPlus);
  EXPECT_EQ(to_string(parse_cam_method("gradcam++")), std::string("gradcam++"));
  // A target from another model's texts (another width).
  TraitPairTarget wrong = c.target;
  wrong.first.pop_back();
  wrong.second.pop_back();
  EXPECT_THROW(clip_target_gradients(c.model, c.pixels.data(), 1, wrong), InputError);
  EXPECT_THROW(clip_cams(c.model, c.pixels.data(), 1, wrong, CamMethod::Occlusion), InputError);
  // A non-finite pixel.
  std::vector<float> px(c.pixels.begin(), c.pixels.begin() + c.pixels.size() / c.images);
  px[5] = NAN;
  EXPECT_THROW(clip_cams(c.model, px.data(), 1, c.target, CamMethod::GradCam), InputError);
  // Poles: empty, a zero prompt embedding, different widths, a bad scale.
  Matrix one_row(1, 4), wide(1, 5);
  const Matrix zero_row(1, 4), none(0, 4);
  std::fill(one_row.data.begin(), one_row.data.end(), 1.0f);
  std::fill(wide.data.begin(), wide.data.end(), 1.0f);
  EXPECT_THROW(make_trait_pair_target(none, one_row, 100.0), InputError);
  EXPECT_THROW(make_trait_pair_target(one_row, zero_row, 100.0), InputError);
  EXPECT_THROW(make_trait_pair_target(one_row, wide, 100.0), InputError);
  EXPECT_THROW(make_trait_pair_target(one_row, one_row, 0.0), UsageError);
}

TEST(ClipCam, TargetIsTheTraitConfidenceOfTheMeanCosine) {
  // Poles of two prompts each: T = 1 / (1 + exp(s (mean cos1 - mean cos0))).
  Matrix first(2, 2), second(2, 2), image(1, 2);
  first.data = {1.0f, 0.0f, 3.0f, 4.0f};    // unit (1, 0) and (0.6, 0.8)
  second.data = {0.0f, 2.0f, -1.0f, 0.0f};  // unit (0, 1) and (-1, 0)
  image.data = {2.0f, 1.0f};
  const TraitPairTarget t = make_trait_pair_target(first, second, 10.0);
  const double n = std::sqrt(5.0);
  const double c0 = (2.0 / n + (1.2 + 0.8) / n) / 2.0, c1 = (1.0 / n - 2.0 / n) / 2.0;
  EXPECT_NEAR(trait_pair_values(image, t).at(0), 1.0 / (1.0 + std::exp(10.0 * (c1 - c0))), 1e-7);
}

}  // namespace in_clip_cam_test
}  // namespace
}  // namespace vlbias
