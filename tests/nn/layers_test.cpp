// The packed layers (src/nn/layers.cpp): attention over packed variable-length sequences against
// a double-precision loop per sequence, and the embeddings gather.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "vlbias/nn/layers.h"

namespace vlbias {
namespace {
namespace in_layers_test {

// softmax(q k^T / sqrt(d) + mask) v in double for query i of a sequence of n tokens.
std::vector<double> attention_row(const std::vector<float>& qkv, std::size_t w, std::size_t heads,
                                  std::size_t offset, std::size_t n, std::size_t i, bool causal) {
  const std::size_t d = w / heads;
  std::vector<double> out(w, 0.0);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t keys = causal ? i + 1 : n;
    std::vector<double> s(keys);
    double mx = -1e300, sum = 0.0;
    for (std::size_t j = 0; j < keys; ++j) {
      double dot = 0.0;
      for (std::size_t c = 0; c < d; ++c) {
        dot += double{qkv[(offset + i) * 3 * w + h * d + c]} *
               qkv[(offset + j) * 3 * w + w + h * d + c];
      }
      s[j] = dot / std::sqrt(static_cast<double>(d));
      mx = std::max(mx, s[j]);
    }
    for (double& v : s) sum += (v = std::exp(v - mx));
    for (std::size_t j = 0; j < keys; ++j) {
      for (std::size_t c = 0; c < d; ++c) {
        out[h * d + c] += s[j] / sum * qkv[(offset + j) * 3 * w + 2 * w + h * d + c];
      }
    }
  }
  return out;
}

TEST(PackedAttention, EachSequenceAttendsOnlyToItsOwnTokens) {
  const std::size_t w = 16, heads = 4;
  const std::vector<std::size_t> lengths = {1, 7, 3, 12};
  std::vector<PackedSequence> seqs;
  std::size_t rows = 0;
  for (std::size_t n : lengths) {
    seqs.push_back({rows, n, n / 2});
    rows += n;
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> qkv(rows * 3 * w);
  for (float& v : qkv) v = normal(rng);
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "bidirectional");
    std::vector<float> all(rows * w), pooled(seqs.size() * w);
    packed_attention(qkv.data(), w, heads, seqs, causal, false, all.data());
    packed_attention(qkv.data(), w, heads, seqs, causal, true, pooled.data());
    for (std::size_t si = 0; si < seqs.size(); ++si) {
      SCOPED_TRACE(si);
      for (std::size_t i = 0; i < seqs[si].length; ++i) {
        const std::vector<double> want =
            attention_row(qkv, w, heads, seqs[si].offset, seqs[si].length, i, causal);
        for (std::size_t c = 0; c < w; ++c) {
          EXPECT_NEAR(all[(seqs[si].offset + i) * w + c], want[c], 1e-5);
        }
      }
      // The pooled-only query gives the same bits as the full pass's row.
      for (std::size_t c = 0; c < w; ++c) {
        EXPECT_EQ(pooled[si * w + c], all[(seqs[si].offset + seqs[si].pooled) * w + c]);
      }
    }
  }
}

TEST(PackedAttention, LongAndOddLengthsMatchTheNaiveLoop) {
  // Lengths of 1, around the row chunk and the 16 float lanes, and not multiples of either.
  const std::size_t w = 64, heads = 2;
  const std::vector<std::size_t> lengths = {1, 17, 64, 100, 203};
  std::vector<PackedSequence> seqs;
  std::size_t rows = 0;
  for (std::size_t n : lengths) {
    seqs.push_back({rows, n, 0});
    rows += n;
  }
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::vector<float> qkv(rows * 3 * w);
  for (float& v : qkv) v = normal(rng);
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "bidirectional");
    std::vector<float> out(rows * w);
    packed_attention(qkv.data(), w, heads, seqs, causal, false, out.data());
    for (const PackedSequence& s : seqs) {
      SCOPED_TRACE(s.length);
      for (std::size_t i = 0; i < s.length; ++i) {
        const std::vector<double> want =
            attention_row(qkv, w, heads, s.offset, s.length, i, causal);
        for (std::size_t c = 0; c < w; ++c) {
          EXPECT_NEAR(out[(s.offset + i) * w + c], want[c], 1e-5 + 1e-5 * std::abs(want[c]));
        }
      }
    }
  }
}

TEST(ResidualLayerNorm, NormalisesTheSublayerOutputPlusBiasPlusResidual) {
  const std::size_t rows = 70, w = 33;  // more rows than one chunk, a width off the lanes
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> x(rows * w), y(rows * w), bias(w), gamma(w), beta(w);
  for (float& v : x) v = normal(rng);
  for (float& v : y) v = 3.0f * normal(rng);
  for (std::size_t j = 0; j < w; ++j) {
    bias[j] = normal(rng);
    gamma[j] = 1.0f + 0.1f * normal(rng);
    beta[j] = normal(rng);
  }
  const std::vector<float> x0 = x, y0 = y;
  residual_layer_norm_rows(x.data(), y.data(), rows, w, bias, LayerNormWeights{gamma, beta},
                           1e-12f);
  for (std::size_t r = 0; r < rows; ++r) {
    SCOPED_TRACE(r);
    std::vector<double> t(w);
    double mean = 0.0, var = 0.0;
    for (std::size_t j = 0; j < w; ++j)
      mean += t[j] = double{y0[r * w + j]} + bias[j] + x0[r * w + j];
    mean /= w;
    for (double v : t) var += (v - mean) * (v - mean);
    var /= w;
    for (std::size_t j = 0; j < w; ++j) {
      const double want = (t[j] - mean) / std::sqrt(var + 1e-12) * gamma[j] + beta[j];
      EXPECT_NEAR(x[r * w + j], want, 4e-6 * (1.0 + std::abs(want)));
    }
  }
}

TEST(GatherEmbeddings, AddsTokenTypeAndPositionRowsPerSequence) {
  const std::size_t w = 2;
  const std::vector<float> table = {0, 1, 10, 11, 20, 21, 30, 31};      // 4 tokens
  const std::vector<float> positions = {100, 200, 300, 400, 500, 600};  // 3 positions
  const std::vector<float> type_row = {0.5f, 0.25f};
  const std::vector<PackedSequence> seqs = {{0, 2, 0}, {2, 1, 0}};
  const std::vector<std::int32_t> a = {3, 1}, b = {2}, pa = {2, 0}, pb = {1};
  std::vector<float> out(3 * w);
  gather_embeddings(seqs, {a.data(), b.data()}, {}, table.data(), positions.data(), nullptr, w,
                    out.data());
  EXPECT_EQ(out, (std::vector<float>{130, 231, 310, 411, 120, 221}));
  gather_embeddings(seqs, {a.data(), b.data()}, {pa.data(), pb.data()}, table.data(),
                    positions.data(), type_row.data(), w, out.data());
  EXPECT_EQ(out, (std::vector<float>{530.5f, 631.25f, 110.5f, 211.25f, 320.5f, 421.25f}));
}

}  // namespace in_layers_test
}  // namespace
}  // namespace vlbias
