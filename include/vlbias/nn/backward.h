#pragma once
// Backward kernels of the transformer layers (include/vlbias/nn/kernels.h, layers.h): the
// gradient of a scalar with respect to each layer's INPUT, given the gradient with respect to its
// output ("dY in, dX out"). No parameter gradients: they serve explanations (class activation
// maps, docs/methods.md#clip-cam), which differentiate a model's output with respect to its
// activations, never train it. Row-major float32 matrices as in the forward; each function
// recomputes what it needs from the forward's inputs (LayerNorm statistics, attention
// probabilities) rather than keeping it. Every sum runs in a fixed order (rows over fixed chunks,
// GEMMs through the one BLAS wrapper's fixed partition, attention per (sequence, head)), so the
// results do not depend on the thread count.
//
// The formulas are PyTorch autograd's for the same forward (torch/csrc/autograd/FunctionsManual.cpp
// and derivatives.yaml): tests/nn/backward_test.cpp checks each against central finite differences.
#include <cstddef>
#include <vector>

#include "vlbias/nn/kernels.h"
#include "vlbias/nn/layers.h"

namespace vlbias {

// y = x W^T + b  =>  dx = dy W: dy is rows x l.out (stride ldy), dx rows x l.in (stride ldx);
// with accumulate, dx += dy W. One sgemm.
void linear_backward(const float* dy, std::size_t ldy, std::size_t rows, const Linear& l, float* dx,
                     std::size_t ldx, bool accumulate);

// y = LayerNorm(x) gamma + beta (layer_norm)  =>  with xhat = (x - mean) / sqrt(var + eps) and
// g = dy gamma (Ba et al. 2016; torch's layer_norm_backward):
//   dx = (g - mean(g) - xhat mean(g xhat)) / sqrt(var + eps)
// over rows x width (strides width); mean and variance recomputed from x in double as the forward
// does. With accumulate, dx += that. dx must not overlap x or dy. On the pool.
void layer_norm_backward_rows(const float* x, const float* dy, float* dx, std::size_t rows,
                              std::size_t width, const LayerNormWeights& ln, float eps,
                              bool accumulate);

// y = act(z + b) (bias_activation)  =>  dz = dy act'(z + b), over rows x cols (strides cols); z is
// the forward's input before the bias. act' in double:
//   QuickGelu: s + 1.702 x s (1 - s), s = sigmoid(1.702 x)
//   Gelu:      Phi(x) + x phi(x)   (the standard normal's cdf and density)
//   GeluTanh:  0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2 / pi) (1 + 3 * 0.044715 x^2)
// dz may be dy (in place). On the pool.
void bias_activation_backward_rows(const float* z, const std::vector<float>& bias, const float* dy,
                                   float* dz, std::size_t rows, std::size_t cols, Activation act);

// p = softmax(s) over n entries  =>  ds = p (dp - sum_j p_j dp_j). ds may be dp.
void softmax_backward(const float* p, const float* dp, float* ds, std::size_t n);

// y = x / |x| over n entries  =>  dx = (dy - y <y, dy>) / |x| (sums in double). |x| > 0; dx may
// be dy.
void l2_normalize_backward(const float* x, const float* dy, float* dx, std::size_t n);

// packed_attention's backward: d_out has packed_attention's out layout (row s.offset + i for query
// i, or row si for the pooled query of sequence si when pooled_only; stride width); d_qkv gets
// rows x 3 width, [dq | dk | dv] per token row, like qkv. Per (sequence, head), with the
// probabilities P recomputed from qkv as the forward computes them and a = d^-1/2:
//   dP = dO V^T;  dS = P (dP - rowsum(P dP));  dQ = a dS K;  dK = a dS^T Q;  dV = P^T dO
// Every value of d_qkv in the sequences' rows is written (dq is 0 for queries without an output
// gradient). Runs (sequence, head) tasks on the pool.
void packed_attention_backward(const float* qkv, std::size_t width, std::size_t heads,
                               const std::vector<PackedSequence>& seqs, bool causal,
                               bool pooled_only, const float* d_out, float* d_qkv);

}  // namespace vlbias
