#pragma once
// Bicubic resampling of a grid of vectors exactly as PyTorch's
// torch.nn.functional.interpolate(x, mode="bicubic", align_corners=False, antialias=False) computes
// it for float32 tensors (aten/src/ATen/native/UpSample.h and cpu/UpSampleKernel.cpp, torch 1.13):
// ViTs resize their learned position embeddings with it (DINOv2's interpolate_pos_encoding).
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace vlbias {

// The four source indices and weights of one output sample along one axis.
struct CubicTaps {
  std::array<std::size_t, 4> index{};
  std::array<float, 4> weight{};
};

// Taps of in_size -> out_size samples along one axis, torch's arithmetic (float, as for float32
// tensors): ratio r = float(1.0 / scale) when a scale factor is given (interpolate(scale_factor=s)
// with recompute_scale_factor unset passes s to the kernel, which then ignores the sizes), else
// float(in_size) / out_size; source position x = float(r (i + 0.5) - 0.5) (the product in
// double); taps floor(x) - 1 .. floor(x) + 2 clamped to [0, in_size - 1]; weights Keys' cubic
// convolution with A = -0.75 at t = x - floor(x). in_size, out_size >= 1.
std::vector<CubicTaps> bicubic_taps(std::size_t in_size, std::size_t out_size,
                                    std::optional<double> scale);

// out (out_h x out_w x channels) from in (in_h x in_w x channels), both channels last (a grid of
// vectors, e.g. position embeddings [h * w, dim]): out[y][x] = sum_i wy_i (sum_j wx_j in[y_i][x_j])
// in float, summed in that order (torch's upsample_generic_Nd kernel). The scales are
// interpolate's scale_factor per axis (see bicubic_taps).
void bicubic_resize(const float* in, std::size_t in_h, std::size_t in_w, std::size_t channels,
                    std::size_t out_h, std::size_t out_w, std::optional<double> scale_h,
                    std::optional<double> scale_w, float* out);

}  // namespace vlbias
