#pragma once
// The element-wise and row-wise kernels of the transformer forwards vlbias runs natively (CLIP in
// src/encode, the sequence classifiers in src/score): one copy of each, in src/nn/kernels.cpp.
// Plain loops written to vectorise (AVX2 chosen at run time, identical bits either way); rows are
// independent, so callers may split rows over threads without changing any result.
#include <cstddef>
#include <vector>

namespace vlbias {

// MLP activations:
//   QuickGelu: x * sigmoid(1.702 x) = x / (1 + e^(-1.702 x))   (OpenAI CLIP QuickGELU)
//   Gelu:      0.5 x (1 + erf(x / sqrt 2))   (torch.nn.GELU, transformers "gelu")
//   GeluTanh:  0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))   (transformers "gelu_new")
enum class Activation { QuickGelu, Gelu, GeluTanh };

// y = x W^T + b (torch.nn.Linear): w is [out, in] row-major, b is [out] (empty: no bias).
struct Linear {
  std::size_t out = 0, in = 0;
  std::vector<float> w;
  std::vector<float> b;
};

struct LayerNormWeights {
  std::vector<float> gamma, beta;  // [width]
};

// e^x for x in [-87, 88] (clamped there): Cephes expf (range reduction x = n ln2 + r, degree-6
// polynomial on |r| <= ln2 / 2), within 2 ulp of std::exp; vectorisable, unlike libm's.
float exp_approx(float x);

// y = LayerNorm(x) * gamma + beta over each of `rows` rows of `width` (torch.nn.LayerNorm,
// biased variance, eps inside the square root). Mean and variance two-pass with float lanes
// combined in double. x and y may be the same rows.
void layer_norm(const float* x, std::size_t ldx, float* y, std::size_t ldy, std::size_t rows,
                std::size_t width, const LayerNormWeights& ln, float eps);

// y[i][j] += b[j] over rows x cols at stride ld.
void add_bias(float* y, std::size_t ld, std::size_t rows, std::size_t cols, const float* b);

// y[i][j] = act(y[i][j] + b[j]) (see Activation). Gelu's erf by Numerical Recipes' erfcc
// (Press et al., 2nd ed., sec. 6.2: fractional error < 1.2e-7); GeluTanh as x sigmoid(2 u),
// the same value as 0.5 x (1 + tanh u) without tanh's cancellation near 0.
void bias_activation(float* y, std::size_t ld, std::size_t rows, std::size_t cols, const float* b,
                     Activation act);

// The SwiGLU gate (Shazeer 2020, "GLU Variants Improve Transformer", eq. 6; DINOv2's SwiGLUFFN and
// transformers' Dinov2SwiGLUFFN): for j < hidden,
//   out[i][j] = silu(y[i][j] + b[j]) * (y[i][hidden + j] + b[hidden + j]),  silu(x) = x / (1 +
//   e^-x)
// where row i of y holds 2 hidden values, x1 then x2 (torch.chunk(2, dim=-1) of weights_in's
// output) and b their 2 hidden biases. out must not overlap y.
void bias_swiglu(const float* y, std::size_t ldy, float* out, std::size_t ldo, std::size_t rows,
                 std::size_t hidden, const float* b);

// A layer-scaled residual add (Touvron et al. 2021, "Going deeper with Image Transformers", CaiT's
// LayerScale; DINOv2's layer_scale1 / layer_scale2): x[i][j] += scale[j] * (y[i][j] + b[j]), the
// rounding order of PyTorch's (linear output + bias) * lambda1 + residual.
void scaled_residual_add(float* x, std::size_t ldx, const float* y, std::size_t ldy,
                         std::size_t rows, std::size_t cols, const float* b, const float* scale);

// Softmax of row[0..n) in place: e^(x - max) / sum (sum in double). n >= 1.
void softmax(float* row, std::size_t n);

// Softmax's numerators: row[j] = e^(row[j] - max row) in place; returns their sum (float lanes
// combined in double, as softmax's). n >= 1. Attention divides its output rows by the sum instead
// of every probability (d values per query instead of n).
double softmax_unnormalized(float* row, std::size_t n);

}  // namespace vlbias
