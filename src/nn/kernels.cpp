// Element-wise and row-wise kernels of the transformer forwards: see include/vlbias/nn/kernels.h.
// Plain loops with no cross-iteration dependences (or fixed float lanes for sums), so GCC -O3
// vectorises them without -ffast-math; results do not depend on how rows are split over threads.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "vlbias/nn/kernels.h"

namespace vlbias {

namespace {

// c ? a : b through bit masks. GCC 12 does not if-convert float ?: inside loops under the default
// -ftrapping-math, which keeps the loops below scalar; integer masks vectorise.
[[gnu::always_inline]] inline float select(bool c, float a, float b) {
  const std::int32_t m = -static_cast<std::int32_t>(c);
  return std::bit_cast<float>((std::bit_cast<std::int32_t>(a) & m) |
                              (std::bit_cast<std::int32_t>(b) & ~m));
}

// exp_approx's body, inlined into the loops below (an out-of-line call keeps them scalar).
[[gnu::always_inline]] inline float exp_inline(float x) {
  // Cephes expf (S. L. Moshier, Cephes Math Library, expf.c): e^x = 2^n e^r with
  // n = round(x / ln2), r = x - n ln2 (ln2 split in two so n * C1 is exact), and
  // e^r = 1 + r + r^2 P(r) on |r| <= ln2 / 2.
  x = select(x < -87.0f, -87.0f, x);  // keeps 2^n a normal float: n in [-126, 127]
  x = select(x > 88.0f, 88.0f, x);
  // n = round-to-nearest(x / ln2) by the 1.5 * 2^23 shifter: t's low mantissa bits hold n.
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  const std::uint32_t n_bits = std::bit_cast<std::uint32_t>(t) - 0x4B400000u;  // n mod 2^32
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const std::uint32_t bits = (n_bits + 127u) << 23;  // 2^n
  return er * std::bit_cast<float>(bits);
}

}  // namespace

float exp_approx(float x) {
  return exp_inline(x);
}

namespace {

// Sum of x[0..n) with 16 float lanes combined in double (vectorisable, deterministic).
[[gnu::always_inline]] inline double lane_sum(const float* x, std::size_t n) {
  float lanes[16] = {};
  std::size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    for (std::size_t k = 0; k < 16; ++k) lanes[k] += x[j + k];
  }
  double s = 0.0;
  for (float v : lanes) s += v;
  for (; j < n; ++j) s += x[j];
  return s;
}

// Sums of d = x - mean and d^2 the same way (the second pass of a two-pass variance).
void lane_sums_centered(const float* x, std::size_t n, float mean, double& sum_d, double& sum_d2) {
  float l1[16] = {}, l2[16] = {};
  std::size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    for (std::size_t k = 0; k < 16; ++k) {
      const float d = x[j + k] - mean;
      l1[k] += d;
      l2[k] += d * d;
    }
  }
  sum_d = 0.0;
  sum_d2 = 0.0;
  for (std::size_t k = 0; k < 16; ++k) {
    sum_d += l1[k];
    sum_d2 += l2[k];
  }
  for (; j < n; ++j) {
    const double d = static_cast<double>(x[j]) - mean;
    sum_d += d;
    sum_d2 += d * d;
  }
}

[[gnu::always_inline]] inline float quick_gelu(float x) {
  // x * sigmoid(1.702 x) (OpenAI CLIP model.py QuickGELU).
  return x / (1.0f + exp_inline(-1.702f * x));
}

[[gnu::always_inline]] inline float gelu_tanh(float x) {
  // 0.5 x (1 + tanh u) = x sigmoid(2 u) = x / (1 + e^(-2 u)), u = sqrt(2 / pi) (x + 0.044715 x^3)
  // (transformers NewGELUActivation).
  const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_inline(-2.0f * u));
}

[[gnu::always_inline]] inline float gelu(float x) {
  // 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(u), u = -x / sqrt 2 (torch.nn.GELU, exact form).
  // erfc by Numerical Recipes' erfcc: for z = |u|, t = 1 / (1 + z / 2),
  // erfc(z) = t exp(-z^2 - 1.26551223 + t (1.00002368 + ...)), erfc(-z) = 2 - erfc(z).
  const float u = -0.70710678118654752f * x;
  const float z = std::fabs(u);
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float tail = t * exp_inline(p - z * z);
  const float erfc_u = select(u >= 0.0f, tail, 2.0f - tail);
  return 0.5f * x * erfc_u;
}

[[gnu::always_inline]] inline void layer_norm_body(const float* x, std::size_t ldx, float* y,
                                                   std::size_t ldy, std::size_t rows,
                                                   std::size_t width, const LayerNormWeights& ln,
                                                   float eps) {
  const float* gamma = ln.gamma.data();
  const float* beta = ln.beta.data();
  const double w = static_cast<double>(width);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    float* yr = y + r * ldy;
    // Two passes: m0 = the mean rounded to float; then d = x - m0 (exact when x is near m0),
    // mean = m0 + delta with delta = sum(d) / w, var = sum(d^2) / w - delta^2. A float-rounded
    // mean alone would cost up to ulp(mean) / std in every output when |mean| >> std.
    const float m0 = static_cast<float>(lane_sum(xr, width) / w);
    double sum_d = 0.0, sum_d2 = 0.0;
    lane_sums_centered(xr, width, m0, sum_d, sum_d2);
    const double delta = sum_d / w;
    const double var = std::max(sum_d2 / w - delta * delta, 0.0);
    const float rstd = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
    const float df = static_cast<float>(delta);
    for (std::size_t j = 0; j < width; ++j) {
      yr[j] = ((xr[j] - m0) - df) * rstd * gamma[j] + beta[j];
    }
  }
}

[[gnu::always_inline]] inline void bias_activation_body(float* y, std::size_t ld, std::size_t rows,
                                                        std::size_t cols, const float* b,
                                                        Activation act) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* yr = y + r * ld;
    if (act == Activation::QuickGelu) {
      for (std::size_t j = 0; j < cols; ++j) yr[j] = quick_gelu(yr[j] + b[j]);
    } else if (act == Activation::GeluTanh) {
      for (std::size_t j = 0; j < cols; ++j) yr[j] = gelu_tanh(yr[j] + b[j]);
    } else {
      for (std::size_t j = 0; j < cols; ++j) yr[j] = gelu(yr[j] + b[j]);
    }
  }
}

[[gnu::always_inline]] inline void bias_swiglu_body(const float* y, std::size_t ldy, float* out,
                                                    std::size_t ldo, std::size_t rows,
                                                    std::size_t hidden, const float* b) {
  const float* b2 = b + hidden;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x1 = y + r * ldy;
    const float* x2 = x1 + hidden;
    float* o = out + r * ldo;
    for (std::size_t j = 0; j < hidden; ++j) {
      const float a = x1[j] + b[j];
      // silu(a) = a sigmoid(a) = a / (1 + e^-a) (torch.nn.functional.silu).
      o[j] = a / (1.0f + exp_inline(-a)) * (x2[j] + b2[j]);
    }
  }
}

[[gnu::always_inline]] inline double softmax_unnormalized_body(float* row, std::size_t n) {
  float mx = row[0];
  for (std::size_t j = 1; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
  // One pass: the exponentials and their sum in lane_sum's lanes (the same sum, bit for bit).
  float lanes[16] = {};
  std::size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    for (std::size_t k = 0; k < 16; ++k) {
      const float e = exp_inline(row[j + k] - mx);
      row[j + k] = e;
      lanes[k] += e;
    }
  }
  double s = 0.0;
  for (float v : lanes) s += v;
  for (; j < n; ++j) s += (row[j] = exp_inline(row[j] - mx));
  return s;
}

// The same loops compiled for AVX2 (8 floats a vector instead of SSE2's 4), chosen at run time.
// No FMA and the same operation order, so both paths give identical bits.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VLBIAS_NN_AVX2 1
[[gnu::target("avx2")]] void layer_norm_avx2(const float* x, std::size_t ldx, float* y,
                                             std::size_t ldy, std::size_t rows, std::size_t width,
                                             const LayerNormWeights& ln, float eps) {
  layer_norm_body(x, ldx, y, ldy, rows, width, ln, eps);
}
[[gnu::target("avx2")]] void bias_activation_avx2(float* y, std::size_t ld, std::size_t rows,
                                                  std::size_t cols, const float* b,
                                                  Activation act) {
  bias_activation_body(y, ld, rows, cols, b, act);
}
[[gnu::target("avx2")]] void bias_swiglu_avx2(const float* y, std::size_t ldy, float* out,
                                              std::size_t ldo, std::size_t rows, std::size_t hidden,
                                              const float* b) {
  bias_swiglu_body(y, ldy, out, ldo, rows, hidden, b);
}
[[gnu::target("avx2")]] double softmax_unnormalized_avx2(float* row, std::size_t n) {
  return softmax_unnormalized_body(row, n);
}
bool use_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

void add_bias(float* y, std::size_t ld, std::size_t rows, std::size_t cols, const float* b) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* yr = y + r * ld;
    for (std::size_t j = 0; j < cols; ++j) yr[j] += b[j];
  }
}

void layer_norm(const float* x, std::size_t ldx, float* y, std::size_t ldy, std::size_t rows,
                std::size_t width, const LayerNormWeights& ln, float eps) {
#ifdef VLBIAS_NN_AVX2
  if (use_avx2()) return layer_norm_avx2(x, ldx, y, ldy, rows, width, ln, eps);
#endif
  layer_norm_body(x, ldx, y, ldy, rows, width, ln, eps);
}

void bias_activation(float* y, std::size_t ld, std::size_t rows, std::size_t cols, const float* b,
                     Activation act) {
#ifdef VLBIAS_NN_AVX2
  if (use_avx2()) return bias_activation_avx2(y, ld, rows, cols, b, act);
#endif
  bias_activation_body(y, ld, rows, cols, b, act);
}

void bias_swiglu(const float* y, std::size_t ldy, float* out, std::size_t ldo, std::size_t rows,
                 std::size_t hidden, const float* b) {
#ifdef VLBIAS_NN_AVX2
  if (use_avx2()) return bias_swiglu_avx2(y, ldy, out, ldo, rows, hidden, b);
#endif
  bias_swiglu_body(y, ldy, out, ldo, rows, hidden, b);
}

void scaled_residual_add(float* x, std::size_t ldx, const float* y, std::size_t ldy,
                         std::size_t rows, std::size_t cols, const float* b, const float* scale) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* xr = x + r * ldx;
    const float* yr = y + r * ldy;
    for (std::size_t j = 0; j < cols; ++j) xr[j] += (yr[j] + b[j]) * scale[j];
  }
}

double softmax_unnormalized(float* row, std::size_t n) {
#ifdef VLBIAS_NN_AVX2
  if (use_avx2()) return softmax_unnormalized_avx2(row, n);
#endif
  return softmax_unnormalized_body(row, n);
}

void softmax(float* row, std::size_t n) {
  const float inv = static_cast<float>(1.0 / softmax_unnormalized(row, n));
  for (std::size_t j = 0; j < n; ++j) row[j] *= inv;
}

}  // namespace vlbias
