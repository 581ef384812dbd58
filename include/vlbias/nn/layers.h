#pragma once
// The layers of the transformer forwards, over a packed token matrix: the tokens of many
// sequences back to back, one row each, no padding (a 10-token text costs 10 rows however long
// its neighbours are). Every linear layer is one sgemm over all rows (include/vlbias/core/blas.h:
// fixed partition); row-wise kernels run over fixed chunks of kRowChunk rows; attention runs per
// (sequence, head) as pool tasks. No partition depends on the thread count, so neither do the
// results.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "vlbias/nn/kernels.h"

namespace vlbias {

// Rows per task of the row-wise kernels.
inline constexpr std::size_t kRowChunk = 64;

// One sequence in a packed token matrix: rows [offset, offset + length).
struct PackedSequence {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::size_t pooled = 0;  // the position read after the last block (CLS, EOS, ...)
};

// A float buffer that only grows and is never zeroed (every use writes before it reads).
class FloatBuffer {
 public:
  float* reserve(std::size_t n) {
    if (n > size_) {
      data_ = std::make_unique_for_overwrite<float[]>(n);
      size_ = n;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<float[]> data_;
  std::size_t size_ = 0;
};

// y = x W^T (+ the existing y when accumulate) for `rows` rows of x (stride ldx), one sgemm.
void linear_rows(const float* x, std::size_t ldx, std::size_t rows, const Linear& l, float* y,
                 std::size_t ldy, bool accumulate);

// layer_norm over rows x width (stride width) on the pool; x and y may be the same.
void layer_norm_rows(const float* x, float* y, std::size_t rows, std::size_t width,
                     const LayerNormWeights& ln, float eps);

// x = LayerNorm((y + bias) + x) over rows x width (stride width) on the pool: the residual add of a
// post-LN sublayer (BERT) in one pass over each chunk of rows; y is overwritten.
void residual_layer_norm_rows(float* x, float* y, std::size_t rows, std::size_t width,
                              const std::vector<float>& bias, const LayerNormWeights& ln,
                              float eps);

// y[i] += bias over rows x cols (stride cols) on the pool.
void add_bias_rows(float* y, std::size_t rows, std::size_t cols, const std::vector<float>& bias);

// y[i] = act(y[i] + bias) over rows x cols (stride cols) on the pool.
void bias_activation_rows(float* y, std::size_t rows, std::size_t cols,
                          const std::vector<float>& bias, Activation act);

// bias_swiglu over rows: y is rows x 2 hidden (stride 2 hidden), out rows x hidden (stride hidden);
// bias has 2 hidden values. On the pool.
void bias_swiglu_rows(const float* y, float* out, std::size_t rows, std::size_t hidden,
                      const std::vector<float>& bias);

// x[i] += scale * (y[i] + bias) over rows x cols (both stride cols) on the pool.
void scaled_residual_add_rows(float* x, const float* y, std::size_t rows, std::size_t cols,
                              const std::vector<float>& bias, const std::vector<float>& scale);

// Multi-head self-attention of packed sequences (transformers eager_attention_forward /
// torch.nn.functional.multi_head_attention_forward): per sequence and head,
// softmax(q k^T d^-1/2 + mask) v with d = width / heads and the mask -inf above the diagonal when
// causal. qkv holds per token row [q | k | v] (3 width floats, each split into heads of d).
//   all queries (pooled_only false): out row s.offset + i gets query i of sequence s;
//   pooled_only: out row si gets the query at seqs[si].pooled only (a last block whose
//   other outputs nobody reads: keys and values of all tokens, one query).
// out has stride width. Runs (sequence, head) tasks on the pool.
void packed_attention(const float* qkv, std::size_t width, std::size_t heads,
                      const std::vector<PackedSequence>& seqs, bool causal, bool pooled_only,
                      float* out);

// Embeddings gather: out row s.offset + t = table[ids[s][t]] (+ type_row when not null)
// + positions[position_ids[s][t]] (position t when position_ids is empty), every table
// [*, width] row-major; ids and position ids already checked against the tables by the caller.
// Runs per sequence on the pool.
void gather_embeddings(const std::vector<PackedSequence>& seqs,
                       const std::vector<const std::int32_t*>& ids,
                       const std::vector<const std::int32_t*>& position_ids, const float* table,
                       const float* positions, const float* type_row, std::size_t width,
                       float* out);

}  // namespace vlbias
