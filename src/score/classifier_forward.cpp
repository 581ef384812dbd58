// The forward of the sequence classifiers over packed texts. See include/vlbias/score/classifier.h.
//
// Texts are packed back to back into one token matrix (no padding); every linear layer is one
// sgemm over all tokens, attention runs per (text, head) over the text's own tokens
// (include/vlbias/nn/layers.h). Per layer (post-LN, transformers BertLayer):
//   qkv = x Wqkv^T + b;  a = softmax(q k^T / sqrt(d)) v;  x = LN1(x + a Wo^T + bo)
//   x = LN2(x + act(x W1^T + b1) W2^T + b2)
// Only the first token of each text is read after the last layer and attention is the only
// place tokens mix, so the last layer computes keys and values of all tokens but the rest for
// the first token only (the same values).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "classifier_internal.h"
#include "vlbias/core/parallel.h"

namespace vlbias::score_internal {

namespace {

// Tokens per forward pass (bounds the activation memory: ~ rows x (6 hidden + intermediate)
// floats, 126 MB for BERT-base).
constexpr std::size_t kMaxChunkTokens = 4096;

struct Buffers {
  FloatBuffer x, qkv, attn, y, mlp;
};

// Position ids of one text: 0, 1, ... (BERT, DistilBERT), or RoBERTa's
// create_position_ids_from_input_ids: padding_idx + the running count of non-padding tokens,
// padding_idx itself for padding tokens.
void position_ids(const ClassifierConfig& c, const std::vector<std::int32_t>& ids,
                  std::vector<std::int32_t>& out) {
  out.resize(ids.size());
  const bool roberta = c.architecture == ClassifierArchitecture::Roberta ||
                       c.architecture == ClassifierArchitecture::XlmRoberta;
  std::int32_t count = 0;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (!roberta) {
      out[t] = static_cast<std::int32_t>(t);
    } else if (ids[t] == c.pad_token_id) {
      out[t] = c.pad_token_id;
    } else {
      out[t] = c.pad_token_id + ++count;
    }
  }
}

// x = LN(x + a W^T + b) over n rows: the residual add and post-LN of a BERT sublayer.
void residual_layer_norm(float* x, const float* a, std::size_t lda, std::size_t n, const Linear& l,
                         const LayerNormWeights& ln, float eps, float* y) {
  linear_rows(a, lda, n, l, y, l.out, false);
  residual_layer_norm_rows(x, y, n, l.out, l.b, ln, eps);
}

// One encoder layer over x (rows x hidden). The last layer leaves the first token of each text
// in x rows [0, seqs.size()) and returns that row count; others return `rows`.
std::size_t encoder_layer(const ClassifierConfig& c, const EncoderLayer& l, float* x,
                          std::size_t rows, const std::vector<PackedSequence>& seqs, bool last,
                          Buffers& b) {
  const std::size_t w = c.hidden, mw = c.intermediate;
  float* qkv = b.qkv.reserve(rows * 3 * w);
  float* attn = b.attn.reserve(rows * w);
  float* y = b.y.reserve(rows * w);
  linear_rows(x, w, rows, l.qkv, qkv, 3 * w, false);
  add_bias_rows(qkv, rows, 3 * w, l.qkv.b);
  packed_attention(qkv, w, c.heads, seqs, /*causal=*/false, /*pooled_only=*/last, attn);
  std::size_t n = rows;
  if (last) {  // the first tokens move to rows [0, n): row si's offset is >= si
    n = seqs.size();
    for (std::size_t si = 0; si < n; ++si) {
      std::memmove(x + si * w, x + (seqs[si].offset + seqs[si].pooled) * w, w * sizeof(float));
    }
  }
  residual_layer_norm(x, attn, w, n, l.out, l.ln_attn, c.layer_norm_eps, y);
  float* mlp = b.mlp.reserve(n * mw);
  linear_rows(x, w, n, l.fc1, mlp, mw, false);
  bias_activation_rows(mlp, n, mw, l.fc1.b, c.hidden_act);
  residual_layer_norm(x, mlp, mw, n, l.fc2, l.ln_out, c.layer_norm_eps, y);
  return n;
}

// logits rows [row0, row0 + n) = out(act(dense(pooled))).
void head(const ClassifierWeights& wts, float* pooled, std::size_t n, std::size_t w, Buffers& b,
          Matrix& logits, std::size_t row0) {
  float* hidden = b.y.reserve(n * w);
  linear_rows(pooled, w, n, wts.head_dense, hidden, w, false);
  add_bias_rows(hidden, n, w, wts.head_dense.b);
  for (std::size_t i = 0; i < n * w; ++i) {
    hidden[i] =
        wts.head_act == HeadActivation::Tanh ? std::tanh(hidden[i]) : std::max(hidden[i], 0.0f);
  }
  const std::size_t labels = wts.head_out.out;
  linear_rows(hidden, w, n, wts.head_out, logits.row(row0), labels, false);
  add_bias_rows(logits.row(row0), n, labels, wts.head_out.b);
}

}  // namespace

Matrix classifier_forward(const ClassifierConfig& c, const ClassifierWeights& wts,
                          const std::vector<std::vector<std::int32_t>>& ids) {
  const std::size_t n = ids.size(), w = c.hidden;
  Matrix logits(n, c.labels.size());
  Buffers b;
  std::vector<std::vector<std::int32_t>> positions(n);
  for (std::size_t i = 0; i < n; ++i) position_ids(c, ids[i], positions[i]);
  for (std::size_t i0 = 0; i0 < n;) {
    // Chunk: consecutive texts up to kMaxChunkTokens tokens (at least one text).
    std::size_t i1 = i0, rows = 0;
    while (i1 < n && (i1 == i0 || rows + ids[i1].size() <= kMaxChunkTokens)) {
      rows += ids[i1++].size();
    }
    std::vector<PackedSequence> seqs(i1 - i0);
    std::vector<const std::int32_t*> seq_ids(i1 - i0), seq_pos(i1 - i0);
    std::size_t offset = 0;
    for (std::size_t i = i0; i < i1; ++i) {
      seqs[i - i0] = PackedSequence{offset, ids[i].size(), 0};
      seq_ids[i - i0] = ids[i].data();
      seq_pos[i - i0] = positions[i].data();
      offset += ids[i].size();
    }
    float* x = b.x.reserve(rows * w);
    gather_embeddings(seqs, seq_ids, seq_pos, wts.word_emb.data(), wts.pos_emb.data(),
                      wts.type_row.empty() ? nullptr : wts.type_row.data(), w, x);
    layer_norm_rows(x, x, rows, w, wts.ln_emb, c.layer_norm_eps);
    std::size_t live = rows;
    for (std::size_t li = 0; li < wts.layers.size(); ++li) {
      live = encoder_layer(c, wts.layers[li], x, live, seqs, li + 1 == wts.layers.size(), b);
    }
    head(wts, x, seqs.size(), w, b, logits, i0);
    i0 = i1;
  }
  return logits;
}

}  // namespace vlbias::score_internal
