#pragma once
// Class activation maps for CLIP ViT image towers (paper 004, A.3; docs/methods.md#clip-cam):
// GradCAM and GradCAM++ exactly as pytorch-grad-cam's CLIP example computes them (target layer:
// the last encoder block's LN1 output, class token dropped, patch tokens on the grid; target: the
// trait pair's softmax probability), from a native backward pass through the last block, the
// post-LayerNorm, the projection, the L2 normalisation and the pair's softmax
// (include/vlbias/nn/backward.h); and occlusion sensitivity (no gradients) as a cross-check.
//
// The forward is encode_images' (the same kernels, so the embeddings are the same bits for the
// same batch). Determinism: results do not depend on the thread count. Memory: the gradients of
// one chunk of images (as encode_images packs them, <= 4096 tokens) at a time, about
// 8 x tokens x width floats per image of the chunk, plus the maps.
#include <cstddef>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/clip_model.h"

namespace vlbias {

enum class CamMethod { GradCam, GradCamPlusPlus, Occlusion };
// "gradcam" | "gradcam++" (also "gradcampp") | "occlusion"; UsageError naming them otherwise.
CamMethod parse_cam_method(std::string_view name);
const char* to_string(CamMethod method);

// The target of one image for a trait pair (docs/methods.md#trait-confidence, logit scale):
//   T = 1 / (1 + exp(s (<e, u1> - <e, u0>))),  e = the image embedding / |e|,
// u_p = the mean over pole p's prompts of their L2-normalised text embeddings (so <e, u_p> is the
// mean cosine), s = the logit scale. With one prompt per pole this is the 2-way softmax
// probability of the first pole, pytorch-grad-cam's CLIP example target.
struct TraitPairTarget {
  std::vector<float> first, second;  // u0, u1: embed_dim each
  double logit_scale = 0.0;          // s
};

// u0 and u1 from the poles' prompt embeddings (one row per prompt, not necessarily normalised).
// InputError for an empty pole, a zero or non-finite row, or poles of different widths;
// UsageError for a logit scale that is not finite and > 0.
TraitPairTarget make_trait_pair_target(MatrixView first, MatrixView second, double logit_scale);

// T for each row of `embeddings` (n x embed_dim, not necessarily normalised); InputError for a
// width other than the target's or a zero row.
std::vector<double> trait_pair_values(MatrixView embeddings, const TraitPairTarget& target);

// The forward and the backward of n images: the target layer's activation and its gradient.
struct ClipTargetGradients {
  std::size_t images = 0, tokens = 0, width = 0;  // tokens = 1 + grid^2 (the class token first)
  std::vector<double> target;                     // n: T per image
  Matrix embeddings;                              // n x embed_dim, projected, not normalised
  std::vector<float> activation;                  // n x tokens x width: the last block's LN1 output
  std::vector<float> gradient;                    // n x tokens x width: dT / d activation
  // n x tokens x width: dT / d (the last block's input: the residual stream entering it).
  std::vector<float> block_input_gradient;
};

// pixels: n images, 3 x image_size^2 floats each (CHW, normalised), as encode_images. InputError
// for a non-finite pixel or a target whose width is not the model's embed_dim.
ClipTargetGradients clip_target_gradients(const ClipModel& model, const float* pixels,
                                          std::size_t n, const TraitPairTarget& target);

struct ClipCams {
  std::size_t images = 0, grid = 0;   // grid = image_size / patch_size
  std::size_t height = 0, width = 0;  // the model's input size
  std::vector<double> target;         // n: T of each (unoccluded) image
  // n x grid x grid (row-major cells): the map before the ReLU and scaling: sum_c w_c A_c for
  // GradCAM / GradCAM++, T(image) - T(image with the cell occluded) for occlusion.
  std::vector<float> grid_maps;
  std::vector<float> maps;  // n x height x width, scaled to [0, 1] as scale_cam_image (nn/cam.h)
};

// The maps of n images (pixels as clip_target_gradients). Occlusion sets a cell's patch to 0 in
// the normalised input (the preprocessing mean colour) and runs grid^2 + 1 forwards per image.
ClipCams clip_cams(const ClipModel& model, const float* pixels, std::size_t n,
                   const TraitPairTarget& target, CamMethod method);

// One map laid over the image the model saw, as pytorch-grad-cam's show_cam_on_image(img, mask,
// use_rgb=True) (overlay_cam in include/vlbias/nn/cam.h, image weight 0.5): `crop` is the model's
// input crop of the image (preprocess_geometry), `map` its crop.height x crop.width values of
// ClipCams::maps. InputError for an empty crop or a map value outside [0, 1].
RgbImage clip_cam_overlay(const RgbImage& crop, const float* map);

}  // namespace vlbias
