#pragma once
// Class activation maps over any layer's activations and gradients, as Gildenblat's
// pytorch-grad-cam computes them (docs/methods.md#clip-cam: base_cam.py, grad_cam.py,
// grad_cam_plusplus.py, utils/image.py). Model-independent: a caller supplies a layer's output A
// and the gradient G of its target with respect to it, both as `cells` rows (the spatial grid,
// row-major: cell y * grid_width + x) of `channels` values, row stride ld. The CLIP ViT caller is
// include/vlbias/encode/models/clip_cam.h.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vlbias {

// GradCAM's channel weights (grad_cam.py): w_c = mean over the cells of G[., c] (sums in double).
std::vector<double> grad_cam_weights(const float* grad, std::size_t ld, std::size_t cells,
                                     std::size_t channels);

// GradCAM++'s channel weights (grad_cam_plusplus.py; Chattopadhay et al. 2018, eq. 19): with
// S_c = sum over the cells of A[., c],
//   alpha = G^2 / (2 G^2 + S_c G^3 + 1e-6)   (0 where G == 0)
//   w_c   = sum over the cells of max(G, 0) alpha
// in double.
std::vector<double> grad_cam_plusplus_weights(const float* act, const float* grad, std::size_t ld,
                                              std::size_t cells, std::size_t channels);

// The map before the ReLU (BaseCAM.get_cam_image): cam[cell] = sum_c w_c A[cell, c] (double sums,
// stored as float).
std::vector<float> weighted_activation_map(const float* act, std::size_t ld, std::size_t cells,
                                           std::size_t channels,
                                           const std::vector<double>& weights);

// cv2.resize(src, (out_width, out_height)) with OpenCV's default INTER_LINEAR for a float plane
// (row-major, width x height): half-pixel centres, source x = (x + 0.5) width / out_width - 0.5
// (likewise y), the two neighbours weighted 1 - f and f; a coordinate before the first node or at
// or past the last takes that node alone. Horizontal pass, then vertical, in float as OpenCV.
// Same size: a copy. Sizes > 0.
void resize_linear(const float* src, std::size_t width, std::size_t height, float* dst,
                   std::size_t out_width, std::size_t out_height);

// pytorch-grad-cam's map from a grid (compute_cam_per_layer, scale_cam_image,
// aggregate_multi_layers): max(cam, 0); cam - min; / (1e-7 + max); resize_linear to
// out_width x out_height; then - min and / (1e-7 + max) again. `out` gets out_width x out_height
// floats in [0, 1] (all 0 when the ReLU leaves nothing).
void scale_cam(const float* grid, std::size_t grid_width, std::size_t grid_height, float* out,
               std::size_t out_width, std::size_t out_height);

// OpenCV's COLORMAP_JET as RGB: cv2.applyColorMap of the levels 0..255, BGR turned to RGB
// (OpenCV 4.6; the table is written by tools/make_clip_cam_fixtures.py's overlay case).
const std::array<std::array<std::uint8_t, 3>, 256>& jet_colormap();

// pytorch-grad-cam's show_cam_on_image(rgb / 255, mask, use_rgb=True, COLORMAP_JET,
// image_weight) in numpy's float32 operations: level = uint8(255 mask) (truncated), heatmap =
// jet[level] / 255, cam = (1 - image_weight) heatmap + image_weight rgb / 255, cam / max(cam),
// uint8(255 cam) (truncated). rgb: width x height pixels, 3 interleaved bytes each; mask: width x
// height values in [0, 1] (a map of scale_cam). Returns width x height x 3 bytes. UsageError for
// an image_weight outside [0, 1]; InputError for a mask value outside [0, 1].
std::vector<std::uint8_t> overlay_cam(const std::uint8_t* rgb, const float* mask, std::size_t width,
                                      std::size_t height, float image_weight = 0.5f);

}  // namespace vlbias
