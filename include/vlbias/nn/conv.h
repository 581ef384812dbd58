#pragma once
// The convolutional layers of the image models (the FID Inception-v3 and the ResNets in
// src/encode): 2-D convolution as im2col + sgemm or Winograd, batch norm folded into the
// convolution at load, a residual added before the ReLU, max and average pooling, global average
// pooling, and torch's bilinear resize.
//
// Data convention: a batch of feature maps is one float32 buffer in "CNHW" order,
//   x[((c * images + n) * height + y) * width + x]
// (channel-major: all images' plane of channel 0, then channel 1, ...). A convolution over the
// batch is then one GEMM, out[out_c, n*Ho*Wo] = W[out_c, in_c*kh*kw] x cols[in_c*kh*kw, n*Ho*Wo],
// whose result is already in CNHW, and a concatenation along channels is placing blocks side by
// side. Buffers are owned by the caller; functions write every output element.
//
// Determinism: the GEMM goes through vlbias::sgemm (fixed partition: bitwise the same for every
// thread count); im2col is chunked by a column count that depends only on the shapes. Results can
// differ in the last bits with the batch size (a column's place in a GEMM tile), as in PyTorch.
#include <cstddef>
#include <string>
#include <vector>

#include "vlbias/nn/layers.h"

namespace vlbias {

// y = conv(x, w) + b (torch.nn.Conv2d, groups 1, dilation 1), then ReLU when `relu`.
struct Conv2d {
  std::size_t out = 0, in = 0;  // channels
  std::size_t kernel_h = 1, kernel_w = 1;
  std::size_t stride = 1;            // the same along both axes
  std::size_t pad_h = 0, pad_w = 0;  // zero padding on each side
  bool relu = false;
  // The last `linear_tail` output channels get neither the bias nor the ReLU: the caller finishes
  // them (add_bias_relu) after an average pool, which commutes with a 1x1 convolution.
  std::size_t linear_tail = 0;
  std::vector<float> w;  // [out, in * kernel_h * kernel_w], torch's [out, in, kh, kw] row-major
  std::vector<float> b;  // [out]
  // Winograd-transformed weights [(m + 2)^2, out, in] for F(m x m, 3 x 3) (prepare_winograd),
  // empty otherwise; m = winograd_tile (2 or 4).
  std::vector<float> winograd;
  std::size_t winograd_tile = 0;

  std::size_t out_height(std::size_t h) const { return (h + 2 * pad_h - kernel_h) / stride + 1; }
  std::size_t out_width(std::size_t w_) const { return (w_ + 2 * pad_w - kernel_w) / stride + 1; }
};

// Folds an inference batch norm (torch.nn.BatchNorm2d in eval: (y - mean) / sqrt(var + eps) *
// gamma + beta) into the bias-free convolution before it: w' = w s, b' = beta - mean s with
// s = gamma / sqrt(var + eps), per output channel, computed in double. Each vector has conv.out
// entries (InternalError otherwise); `gamma` may be empty for a norm without scale (TF's
// batchnorm with scale=False: gamma = 1).
void fold_batch_norm(Conv2d& conv, const std::vector<float>& gamma, const std::vector<float>& beta,
                     const std::vector<float>& mean, const std::vector<float>& var, double eps);

// The convolution of `images` maps of conv.in channels, height x width, CNHW at x, into y
// (conv.out channels, out_height x out_width, CNHW). The im2col columns live in per-thread
// buffers (at most kConvScratchFloats each unless one output column needs more). A 1x1 stride-1
// convolution without padding reads x directly.
// `residual`: null, or maps of y's shape (not y itself) added before the ReLU, y = act(conv(x) + b
// + residual): a ResNet block's shortcut, fused so that the block's output is written once.
// Not with linear_tail. Pool-parallel (call outside pool tasks for speed; inside one it runs
// serially).
void conv2d(const Conv2d& conv, const float* x, std::size_t images, std::size_t height,
            std::size_t width, float* y, const float* residual = nullptr);

// Prepares a 3 x 3 stride-1 convolution (padding 0 or 1, bias folded) for Winograd's
// F(m x m, 3 x 3), m = output_tile (Lavin & Gray 2016; src/nn/winograd.cpp): conv2d then computes
// each m x m output tile from an (m + 2)^2 input tile with (m + 2)^2 GEMMs (out x in) . (in x
// tiles).
//  - m = 2: 2.25x fewer multiplications than im2col's; results within about 4e-7 of the output's
//    scale of the exact convolution (float32, 64-512 channels), as the direct product's 3e-7.
//  - m = 4: 4x fewer; within about 2e-6 of the output's scale (points 0, +-1, 2, -1/2, the most
//    accurate known for F(4x4, 3x3)). For classifiers whose outputs are probabilities (ResNet).
// InternalError for any other convolution or tile. The caller may then free conv.w (conv2d
// needs only the transformed weights).
void prepare_winograd(Conv2d& conv, std::size_t output_tile = 2);

// y[c][j] = act(y[c][j] + bias[c]) for `channels` rows of `cols` floats at y (act = ReLU or
// identity). Pool-parallel.
void add_bias_relu(float* y, std::size_t channels, std::size_t cols, const float* bias, bool relu);

// Stacks 1x1 stride-1 convolutions without padding that read the same input into one (their
// output channels in the given order), for one GEMM instead of several. The last one may be
// marked `linear_tail` (see Conv2d). InternalError when the parts differ in input channels or
// are not 1x1.
Conv2d stack_pointwise(const std::vector<const Conv2d*>& parts, bool last_is_linear_tail);

// Floats of im2col columns one conv2d chunk holds at most (16 MiB), and the most output columns
// per chunk: chunks run as pool tasks, each an im2col and a single-threaded sgemm, so a chunk is
// big enough to amortise packing the weights and small enough to spread over the cores.
inline constexpr std::size_t kConvScratchFloats = std::size_t{1} << 22;
inline constexpr std::size_t kConvChunkColumns = 4096;

// Pooling window: kernel x kernel, stride, zero-width padding on each side (pad < kernel).
struct Pool2d {
  std::size_t kernel = 3, stride = 1, pad = 0;
  std::size_t out_size(std::size_t n) const { return (n + 2 * pad - kernel) / stride + 1; }
};

// Max over each window of `planes` planes (height x width, back to back) into y: padded cells
// never win (torch's max_pool2d pads with -inf).
void max_pool2d(const float* x, std::size_t planes, std::size_t height, std::size_t width,
                const Pool2d& pool, float* y);

// Mean over each window (torch's avg_pool2d, ceil_mode false). count_include_pad: divide by
// kernel^2 always; otherwise by the number of cells inside the image (the FID Inception's
// blocks use count_include_pad=False, as TensorFlow's graph did).
void avg_pool2d(const float* x, std::size_t planes, std::size_t height, std::size_t width,
                const Pool2d& pool, bool count_include_pad, float* y);

// Global average pooling of CNHW maps into features: out[n * channels + c] = mean of the plane
// (c, n) (torch's adaptive_avg_pool2d to 1 x 1, then flatten: row n = image n). Sums in double.
void global_avg_pool(const float* x, std::size_t channels, std::size_t images, std::size_t height,
                     std::size_t width, float* out);

// torch.nn.functional.interpolate(x, size=(out_h, out_w), mode="bilinear", align_corners=False,
// antialias=False) of one plane: source coordinate (i + 0.5) * scale - 0.5 clamped at 0 (scale =
// in / out in float, the coordinate in double, the weights rounded to float, as torch's CPU
// kernel), neighbours clamped at the last row and column. Upsampling and downsampling alike (no
// antialiasing filter, as torch).
void resize_bilinear(const float* x, std::size_t height, std::size_t width, float* y,
                     std::size_t out_height, std::size_t out_width);

}  // namespace vlbias
