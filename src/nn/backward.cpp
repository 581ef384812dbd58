// Backward kernels of the transformer layers: see include/vlbias/nn/backward.h.
#include "vlbias/nn/backward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "vlbias/core/blas.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

namespace {

// fn(begin, end) over [0, rows) in fixed chunks of kRowChunk, on the pool.
template <typename Fn>
void for_backward_chunks(std::size_t rows, Fn fn) {
  parallel_chunks(rows, kRowChunk,
                  [&](std::size_t, std::size_t begin, std::size_t end) { fn(begin, end); });
}

// One row of layer_norm_backward_rows.
void layer_norm_backward_row(const float* x, const float* dy, float* dx, std::size_t width,
                             const LayerNormWeights& ln, float eps, bool accumulate) {
  const double w = static_cast<double>(width);
  double sum = 0.0;
  for (std::size_t j = 0; j < width; ++j) sum += x[j];
  const double mean = sum / w;
  double ss = 0.0;
  for (std::size_t j = 0; j < width; ++j) ss += (x[j] - mean) * (x[j] - mean);
  const double rstd = 1.0 / std::sqrt(ss / w + static_cast<double>(eps));
  double sum_g = 0.0, sum_gx = 0.0;
  for (std::size_t j = 0; j < width; ++j) {
    const double g = static_cast<double>(dy[j]) * ln.gamma[j];
    sum_g += g;
    sum_gx += g * (x[j] - mean) * rstd;
  }
  const double mean_g = sum_g / w, mean_gx = sum_gx / w;
  for (std::size_t j = 0; j < width; ++j) {
    const double g = static_cast<double>(dy[j]) * ln.gamma[j];
    const double xhat = (x[j] - mean) * rstd;
    const float v = static_cast<float>(rstd * (g - mean_g - xhat * mean_gx));
    dx[j] = accumulate ? dx[j] + v : v;
  }
}

// act'(x) in double (see backward.h).
double activation_derivative(double x, Activation act) {
  switch (act) {
    case Activation::QuickGelu: {
      const double s = 1.0 / (1.0 + std::exp(-1.702 * x));
      return s + 1.702 * x * s * (1.0 - s);
    }
    case Activation::Gelu: {
      constexpr double kInvSqrt2 = 0.70710678118654752440;
      constexpr double kInvSqrt2Pi = 0.39894228040143267794;
      return 0.5 * std::erfc(-x * kInvSqrt2) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
    }
    case Activation::GeluTanh: {
      constexpr double kSqrt2OverPi = 0.79788456080286535588;
      const double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
      return 0.5 * (1.0 + t) +
             0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3 * 0.044715 * x * x);
    }
  }
  return 0.0;
}

// Attention backward of head `head` of sequence `s` for its queries [q0, q1), whose output
// gradients are rows [d_row, d_row + q1 - q0) of d_out (see packed_attention_backward).
void attend_backward(const float* qkv, std::size_t w, std::size_t heads, const PackedSequence& s,
                     std::size_t head, std::size_t q0, std::size_t q1, bool causal,
                     const float* d_out, std::size_t d_row, float* d_qkv) {
  const std::size_t d = w / heads, n = s.length, m = q1 - q0, ld = 3 * w;
  const float* q = qkv + (s.offset + q0) * ld + head * d;
  const float* k = qkv + s.offset * ld + w + head * d;
  const float* v = qkv + s.offset * ld + 2 * w + head * d;
  const float* dout = d_out + d_row * w + head * d;
  float* dq_all = d_qkv + s.offset * ld + head * d;
  float* dk = d_qkv + s.offset * ld + w + head * d;
  float* dv = d_qkv + s.offset * ld + 2 * w + head * d;
  thread_local std::vector<float> probs, dprobs;
  probs.resize(m * n);
  dprobs.resize(m * n);
  // P as the forward computes it (attend in layers.cpp), normalised.
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  sgemm(Transpose::No, Transpose::Yes, m, n, d, scale, q, ld, k, ld, 0.0f, probs.data(), n);
  for (std::size_t i = 0; i < m; ++i) {
    float* row = probs.data() + i * n;
    const std::size_t keys = causal ? q0 + i + 1 : n;
    const float inv = static_cast<float>(1.0 / softmax_unnormalized(row, keys));
    for (std::size_t j = 0; j < keys; ++j) row[j] *= inv;
    std::fill(row + keys, row + n, 0.0f);
  }
  // dP = dO V^T; dS = P (dP - rowsum(P dP)) (masked keys have P = 0, so dS = 0 there).
  sgemm(Transpose::No, Transpose::Yes, m, n, d, 1.0f, dout, w, v, ld, 0.0f, dprobs.data(), n);
  for (std::size_t i = 0; i < m; ++i) {
    softmax_backward(probs.data() + i * n, dprobs.data() + i * n, dprobs.data() + i * n, n);
  }
  // dV = P^T dO; dK = a dS^T Q (every key row of the sequence written).
  sgemm(Transpose::Yes, Transpose::No, n, d, m, 1.0f, probs.data(), n, dout, w, 0.0f, dv, ld);
  sgemm(Transpose::Yes, Transpose::No, n, d, m, scale, dprobs.data(), n, q, ld, 0.0f, dk, ld);
  // dQ = a dS K for the queries [q0, q1); 0 for the sequence's other rows.
  for (std::size_t t = 0; t < n; ++t) {
    if (t < q0 || t >= q1) std::fill(dq_all + t * ld, dq_all + t * ld + d, 0.0f);
  }
  sgemm(Transpose::No, Transpose::No, m, d, n, scale, dprobs.data(), n, k, ld, 0.0f,
        dq_all + q0 * ld, ld);
}

}  // namespace

void linear_backward(const float* dy, std::size_t ldy, std::size_t rows, const Linear& l, float* dx,
                     std::size_t ldx, bool accumulate) {
  sgemm(Transpose::No, Transpose::No, rows, l.in, l.out, 1.0f, dy, ldy, l.w.data(), l.in,
        accumulate ? 1.0f : 0.0f, dx, ldx);
}

void layer_norm_backward_rows(const float* x, const float* dy, float* dx, std::size_t rows,
                              std::size_t width, const LayerNormWeights& ln, float eps,
                              bool accumulate) {
  for_backward_chunks(rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e; ++r) {
      layer_norm_backward_row(x + r * width, dy + r * width, dx + r * width, width, ln, eps,
                              accumulate);
    }
  });
}

void bias_activation_backward_rows(const float* z, const std::vector<float>& bias, const float* dy,
                                   float* dz, std::size_t rows, std::size_t cols, Activation act) {
  for_backward_chunks(rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e; ++r) {
      for (std::size_t j = 0; j < cols; ++j) {
        // The forward's argument: z + b rounded to float, as bias_activation computes it.
        const float x = z[r * cols + j] + bias[j];
        dz[r * cols + j] = static_cast<float>(dy[r * cols + j] * activation_derivative(x, act));
      }
    }
  });
}

void softmax_backward(const float* p, const float* dp, float* ds, std::size_t n) {
  double dot = 0.0;
  for (std::size_t j = 0; j < n; ++j) dot += static_cast<double>(p[j]) * dp[j];
  const float c = static_cast<float>(dot);
  for (std::size_t j = 0; j < n; ++j) ds[j] = p[j] * (dp[j] - c);
}

void l2_normalize_backward(const float* x, const float* dy, float* dx, std::size_t n) {
  double ss = 0.0;
  for (std::size_t j = 0; j < n; ++j) ss += static_cast<double>(x[j]) * x[j];
  const double norm = std::sqrt(ss);
  double dot = 0.0;  // <y, dy> with y = x / |x|
  for (std::size_t j = 0; j < n; ++j) dot += x[j] / norm * dy[j];
  for (std::size_t j = 0; j < n; ++j) {
    dx[j] = static_cast<float>((dy[j] - x[j] / norm * dot) / norm);
  }
}

void packed_attention_backward(const float* qkv, std::size_t width, std::size_t heads,
                               const std::vector<PackedSequence>& seqs, bool causal,
                               bool pooled_only, const float* d_out, float* d_qkv) {
  parallel_for(seqs.size() * heads, [&](std::size_t task) {
    const std::size_t si = task / heads;
    const PackedSequence& s = seqs[si];
    if (pooled_only) {
      attend_backward(qkv, width, heads, s, task % heads, s.pooled, s.pooled + 1, causal, d_out, si,
                      d_qkv);
    } else {
      attend_backward(qkv, width, heads, s, task % heads, 0, s.length, causal, d_out, s.offset,
                      d_qkv);
    }
  });
}

}  // namespace vlbias
