// The layers of the transformer forwards over packed token matrices: see
// include/vlbias/nn/layers.h.
#include "vlbias/nn/layers.h"

#include <algorithm>
#include <cmath>

#include "vlbias/core/blas.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

namespace {

// fn(begin, end) over [0, rows) in fixed chunks of kRowChunk, on the pool.
template <typename Fn>
void for_row_chunks(std::size_t rows, Fn fn) {
  parallel_chunks(rows, kRowChunk,
                  [&](std::size_t, std::size_t begin, std::size_t end) { fn(begin, end); });
}

// Attention of head `head` of sequence `s` for its queries [q0, q1) (all keys, or keys <= query
// when causal), written to out rows [out_row, out_row + q1 - q0) at columns head * d (stride w).
void attend(const float* qkv, std::size_t w, std::size_t heads, const PackedSequence& s,
            std::size_t head, std::size_t q0, std::size_t q1, bool causal, float* out,
            std::size_t out_row) {
  const std::size_t d = w / heads, n = s.length, m = q1 - q0, ld = 3 * w;
  const float* q = qkv + (s.offset + q0) * ld + head * d;
  const float* k = qkv + s.offset * ld + w + head * d;
  const float* v = qkv + s.offset * ld + 2 * w + head * d;
  thread_local std::vector<float> scores, inv_sum;
  scores.resize(m * n);
  inv_sum.resize(m);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  sgemm(Transpose::No, Transpose::Yes, m, n, d, scale, q, ld, k, ld, 0.0f, scores.data(), n);
  for (std::size_t i = 0; i < m; ++i) {
    float* row = scores.data() + i * n;
    const std::size_t keys = causal ? q0 + i + 1 : n;  // keys [0, keys) are visible
    inv_sum[i] = static_cast<float>(1.0 / softmax_unnormalized(row, keys));
    std::fill(row + keys, row + n, 0.0f);
  }
  // out = (e^(s - max) v) / sum: normalised on d outputs per query instead of n probabilities.
  float* o = out + out_row * w + head * d;
  sgemm(Transpose::No, Transpose::No, m, d, n, 1.0f, scores.data(), n, v, ld, 0.0f, o, w);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t c = 0; c < d; ++c) o[i * w + c] *= inv_sum[i];
  }
}

}  // namespace

void linear_rows(const float* x, std::size_t ldx, std::size_t rows, const Linear& l, float* y,
                 std::size_t ldy, bool accumulate) {
  sgemm(Transpose::No, Transpose::Yes, rows, l.out, l.in, 1.0f, x, ldx, l.w.data(), l.in,
        accumulate ? 1.0f : 0.0f, y, ldy);
}

void residual_layer_norm_rows(float* x, float* y, std::size_t rows, std::size_t width,
                              const std::vector<float>& bias, const LayerNormWeights& ln,
                              float eps) {
  for_row_chunks(rows, [&](std::size_t b, std::size_t e) {
    float* yc = y + b * width;
    const float* xc = x + b * width;
    add_bias(yc, width, e - b, width, bias.data());
    for (std::size_t i = 0; i < (e - b) * width; ++i) yc[i] += xc[i];
    layer_norm(yc, width, x + b * width, width, e - b, width, ln, eps);
  });
}

void layer_norm_rows(const float* x, float* y, std::size_t rows, std::size_t width,
                     const LayerNormWeights& ln, float eps) {
  for_row_chunks(rows, [&](std::size_t b, std::size_t e) {
    layer_norm(x + b * width, width, y + b * width, width, e - b, width, ln, eps);
  });
}

void add_bias_rows(float* y, std::size_t rows, std::size_t cols, const std::vector<float>& bias) {
  for_row_chunks(rows, [&](std::size_t b, std::size_t e) {
    add_bias(y + b * cols, cols, e - b, cols, bias.data());
  });
}

void bias_activation_rows(float* y, std::size_t rows, std::size_t cols,
                          const std::vector<float>& bias, Activation act) {
  for_row_chunks(rows, [&](std::size_t b, std::size_t e) {
    bias_activation(y + b * cols, cols, e - b, cols, bias.data(), act);
  });
}

void bias_swiglu_rows(const float* y, float* out, std::size_t rows, std::size_t hidden,
                      const std::vector<float>& bias) {
  for_row_chunks(rows, [&](std::size_t b, std::size_t e) {
    bias_swiglu(y + b * 2 * hidden, 2 * hidden, out + b * hidden, hidden, e - b, hidden,
                bias.data());
  });
}

void scaled_residual_add_rows(float* x, const float* y, std::size_t rows, std::size_t cols,
                              const std::vector<float>& bias, const std::vector<float>& scale) {
  for_row_chunks(rows, [&](std::size_t b, std::size_t e) {
    scaled_residual_add(x + b * cols, cols, y + b * cols, cols, e - b, cols, bias.data(),
                        scale.data());
  });
}

void packed_attention(const float* qkv, std::size_t width, std::size_t heads,
                      const std::vector<PackedSequence>& seqs, bool causal, bool pooled_only,
                      float* out) {
  if (!pooled_only) {
    parallel_for(seqs.size() * heads, [&](std::size_t task) {
      const PackedSequence& s = seqs[task / heads];
      attend(qkv, width, heads, s, task % heads, 0, s.length, causal, out, s.offset);
    });
  } else {
    parallel_for(seqs.size() * heads, [&](std::size_t task) {
      const std::size_t si = task / heads;
      const PackedSequence& s = seqs[si];
      attend(qkv, width, heads, s, task % heads, s.pooled, s.pooled + 1, causal, out, si);
    });
  }
}

void gather_embeddings(const std::vector<PackedSequence>& seqs,
                       const std::vector<const std::int32_t*>& ids,
                       const std::vector<const std::int32_t*>& position_ids, const float* table,
                       const float* positions, const float* type_row, std::size_t width,
                       float* out) {
  parallel_for(seqs.size(), [&](std::size_t si) {
    const PackedSequence& s = seqs[si];
    for (std::size_t t = 0; t < s.length; ++t) {
      const float* te = table + static_cast<std::size_t>(ids[si][t]) * width;
      const std::size_t pos =
          position_ids.empty() ? t : static_cast<std::size_t>(position_ids[si][t]);
      const float* pe = positions + pos * width;
      float* r = out + (s.offset + t) * width;
      // transformers' order: (word + token type) + position.
      if (type_row != nullptr) {
        for (std::size_t j = 0; j < width; ++j) r[j] = (te[j] + type_row[j]) + pe[j];
      } else {
        for (std::size_t j = 0; j < width; ++j) r[j] = te[j] + pe[j];
      }
    }
  });
}

}  // namespace vlbias
