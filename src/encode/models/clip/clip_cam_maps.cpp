// Class activation maps of CLIP ViT: the trait-pair target, GradCAM, GradCAM++ and occlusion (see
// include/vlbias/encode/models/clip_cam.h and docs/methods.md#clip-cam).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "clip_cam_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/nn/cam.h"

namespace vlbias {

namespace {

// Occluded copies per forward call (bounds the pixels held: 64 x 3 x 224^2 floats = 38 MB).
constexpr std::size_t kOcclusionBatch = 64;

// The mean of a pole's L2-normalised rows.
std::vector<float> pole_mean(MatrixView rows, const char* pole) {
  VLBIAS_CHECK(rows.rows > 0, InputError, "the {} pole of the trait pair has no prompt embedding",
               pole);
  std::vector<double> sum(rows.cols, 0.0);
  for (std::size_t i = 0; i < rows.rows; ++i) {
    const float* r = rows.row(i);
    double ss = 0.0;
    for (std::size_t j = 0; j < rows.cols; ++j) ss += static_cast<double>(r[j]) * r[j];
    const double norm = std::sqrt(ss);
    VLBIAS_CHECK(norm > 0.0 && std::isfinite(norm), InputError,
                 "prompt embedding {} of the {} pole is zero or not finite; it has no cosine", i,
                 pole);
    for (std::size_t j = 0; j < rows.cols; ++j) sum[j] += r[j] / norm;
  }
  std::vector<float> mean(rows.cols);
  for (std::size_t j = 0; j < rows.cols; ++j) {
    mean[j] = static_cast<float>(sum[j] / static_cast<double>(rows.rows));
  }
  return mean;
}

// GradCAM / GradCAM++ grid maps from the target layer's patch rows (the class token dropped:
// pytorch-grad-cam's reshape_transform).
void gradient_grid_maps(const ClipTargetGradients& g, CamMethod method, std::size_t i0,
                        ClipCams& out) {
  const std::size_t cells = g.tokens - 1;
  parallel_for(g.images, [&](std::size_t i) {
    const float* act = g.activation.data() + (i * g.tokens + 1) * g.width;
    const float* grad = g.gradient.data() + (i * g.tokens + 1) * g.width;
    const std::vector<double> w =
        method == CamMethod::GradCam
            ? grad_cam_weights(grad, g.width, cells, g.width)
            : grad_cam_plusplus_weights(act, grad, g.width, cells, g.width);
    const std::vector<float> cam = weighted_activation_map(act, g.width, cells, g.width, w);
    std::copy(cam.begin(), cam.end(), out.grid_maps.begin() + (i0 + i) * cells);
  });
}

// Occlusion of image `i`: T(image) - T(image with cell k's patch set to 0), per cell.
void occlusion_grid_map(const ClipModel& model, const float* image, const TraitPairTarget& target,
                        std::size_t i, ClipCams& out) {
  const ClipConfig& c = model.config();
  const std::size_t side = c.image_size, p = c.patch_size, g = c.grid(), cells = g * g;
  const std::size_t image_floats = 3 * side * side;
  std::vector<float> batch;
  std::vector<double> values;  // T of the image, then of each occluded copy
  values.reserve(cells + 1);
  for (std::size_t k0 = 0; k0 <= cells; k0 += kOcclusionBatch) {
    const std::size_t b = std::min(kOcclusionBatch, cells + 1 - k0);
    batch.resize(b * image_floats);
    for (std::size_t j = 0; j < b; ++j) {
      float* dst = batch.data() + j * image_floats;
      std::memcpy(dst, image, image_floats * sizeof(float));
      if (k0 + j == 0) continue;  // the image itself
      const std::size_t cell = k0 + j - 1, gy = cell / g, gx = cell % g;
      for (std::size_t ch = 0; ch < 3; ++ch) {
        for (std::size_t y = gy * p; y < (gy + 1) * p; ++y) {
          std::fill_n(dst + (ch * side + y) * side + gx * p, p, 0.0f);
        }
      }
    }
    const Matrix e = model.encode_images(batch.data(), b);
    const std::vector<double> v = trait_pair_values(e, target);
    values.insert(values.end(), v.begin(), v.end());
  }
  out.target[i] = values[0];
  for (std::size_t k = 0; k < cells; ++k) {
    out.grid_maps[i * cells + k] = static_cast<float>(values[0] - values[k + 1]);
  }
}

}  // namespace

CamMethod parse_cam_method(std::string_view name) {
  if (name == "gradcam") return CamMethod::GradCam;
  if (name == "gradcam++" || name == "gradcampp") return CamMethod::GradCamPlusPlus;
  if (name == "occlusion") return CamMethod::Occlusion;
  VLBIAS_FAIL(UsageError,
              "unknown explanation method '{}'; expected gradcam, gradcam++ or occlusion", name);
}

const char* to_string(CamMethod method) {
  switch (method) {
    case CamMethod::GradCam:
      return "gradcam";
    case CamMethod::GradCamPlusPlus:
      return "gradcam++";
    case CamMethod::Occlusion:
      return "occlusion";
  }
  return "gradcam";
}

TraitPairTarget make_trait_pair_target(MatrixView first, MatrixView second, double logit_scale) {
  VLBIAS_CHECK(std::isfinite(logit_scale) && logit_scale > 0, UsageError,
               "the logit scale must be a finite number > 0, not {}", logit_scale);
  VLBIAS_CHECK(first.cols == second.cols, InputError,
               "the trait pair's poles have text embeddings of {} and {} values; expected the same "
               "width",
               first.cols, second.cols);
  TraitPairTarget t;
  t.first = pole_mean(first, "first");
  t.second = pole_mean(second, "second");
  t.logit_scale = logit_scale;
  return t;
}

std::vector<double> trait_pair_values(MatrixView embeddings, const TraitPairTarget& target) {
  VLBIAS_CHECK(embeddings.cols == target.first.size(), InputError,
               "image embeddings have {} values; the trait pair's text embeddings have {}",
               embeddings.cols, target.first.size());
  std::vector<double> out(embeddings.rows);
  for (std::size_t i = 0; i < embeddings.rows; ++i) {
    out[i] = encode_internal::trait_pair_value(embeddings.row(i), target, i);
  }
  return out;
}

namespace encode_internal {

double trait_pair_value(const float* e, const TraitPairTarget& t, std::size_t row) {
  const std::size_t n = t.first.size();
  double ss = 0.0;
  for (std::size_t j = 0; j < n; ++j) ss += static_cast<double>(e[j]) * e[j];
  const double norm = std::sqrt(ss);
  VLBIAS_CHECK(norm > 0.0 && std::isfinite(norm), InputError,
               "the embedding of image {} is zero or not finite; it has no cosine", row);
  double c0 = 0.0, c1 = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    c0 += e[j] / norm * t.first[j];
    c1 += e[j] / norm * t.second[j];
  }
  // Baherwani and Vincent's confidence on the logit scale: 1 / (1 + exp(s (c1 - c0))).
  return 1.0 / (1.0 + std::exp(t.logit_scale * (c1 - c0)));
}

}  // namespace encode_internal

ClipCams clip_cams(const ClipModel& model, const float* pixels, std::size_t n,
                   const TraitPairTarget& target, CamMethod method) {
  const ClipConfig& c = model.config();
  const std::size_t g = c.grid(), cells = g * g, side = c.image_size;
  const std::size_t image_floats = 3 * side * side;
  ClipCams out;
  out.images = n;
  out.grid = g;
  out.height = out.width = side;
  out.target.resize(n);
  out.grid_maps.resize(n * cells);
  out.maps.resize(n * side * side);
  if (method == CamMethod::Occlusion) {
    VLBIAS_CHECK(target.first.size() == c.embed_dim, InputError,
                 "the trait pair's text embeddings have {} values; the model's image embeddings "
                 "have {}",
                 target.first.size(), c.embed_dim);
    for (std::size_t i = 0; i < n; ++i) {
      occlusion_grid_map(model, pixels + i * image_floats, target, i, out);
    }
  } else {
    // One chunk of images at a time (encode's packing), so the gradients held stay bounded.
    const std::size_t per_chunk = std::max<std::size_t>(1, 4096 / c.image_tokens());
    for (std::size_t i0 = 0; i0 < n; i0 += per_chunk) {
      const std::size_t b = std::min(per_chunk, n - i0);
      const ClipTargetGradients grads =
          clip_target_gradients(model, pixels + i0 * image_floats, b, target);
      std::copy(grads.target.begin(), grads.target.end(), out.target.begin() + i0);
      gradient_grid_maps(grads, method, i0, out);
    }
  }
  parallel_for(n, [&](std::size_t i) {
    scale_cam(out.grid_maps.data() + i * cells, g, g, out.maps.data() + i * side * side, side,
              side);
  });
  return out;
}

RgbImage clip_cam_overlay(const RgbImage& crop, const float* map) {
  VLBIAS_CHECK(
      crop.width > 0 && crop.height > 0 && crop.pixels.size() == crop.width * crop.height * 3,
      InputError, "clip_cam_overlay: the crop is empty or not {} x {} RGB pixels", crop.width,
      crop.height);
  RgbImage out;
  out.width = crop.width;
  out.height = crop.height;
  out.pixels = overlay_cam(crop.pixels.data(), map, crop.width, crop.height);
  return out;
}

}  // namespace vlbias
