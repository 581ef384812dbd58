// The backward kernels (src/nn/backward.cpp) against central finite differences of
// double-precision forwards: for a random output weighting r, L = sum r y, and each kernel's dx
// must equal dL/dx by (L(x + h e) - L(x - h e)) / 2h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "vlbias/core/parallel.h"
#include "vlbias/nn/backward.h"

namespace vlbias {
namespace {
namespace in_backward_test {

using Forward = std::function<double(const std::vector<double>&)>;

std::vector<float> random_floats(std::size_t n, double scale, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> nd(0.0, scale);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(nd(gen));
  return v;
}

std::vector<double> to_double(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// Central differences of f at x, step h.
std::vector<double> numeric_gradient(const Forward& f, std::vector<double> x, double h = 1e-5) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double x0 = x[i];
    x[i] = x0 + h;
    const double up = f(x);
    x[i] = x0 - h;
    const double down = f(x);
    x[i] = x0;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// max |got - want| / max(max |want|, 1e-3): the kernels run in float32.
double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double scale = 1e-3, worst = 0.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  return worst / scale;
}

LayerNormWeights random_layer_norm(std::size_t width, unsigned seed) {
  LayerNormWeights ln;
  ln.gamma = random_floats(width, 0.3, seed);
  for (float& g : ln.gamma) g += 1.0f;
  ln.beta = random_floats(width, 0.2, seed + 1);
  return ln;
}

double layer_norm_loss(const std::vector<double>& x, const std::vector<float>& r, std::size_t rows,
                       std::size_t width, const LayerNormWeights& ln, double eps) {
  double loss = 0.0;
  for (std::size_t i = 0; i < rows; ++i) {
    const double* xr = x.data() + i * width;
    double mean = 0.0, var = 0.0;
    for (std::size_t j = 0; j < width; ++j) mean += xr[j] / width;
    for (std::size_t j = 0; j < width; ++j) var += (xr[j] - mean) * (xr[j] - mean) / width;
    for (std::size_t j = 0; j < width; ++j) {
      const double y = (xr[j] - mean) / std::sqrt(var + eps) * ln.gamma[j] + ln.beta[j];
      loss += r[i * width + j] * y;
    }
  }
  return loss;
}

TEST(NnBackward, LayerNormMatchesFiniteDifferences) {
  const std::size_t rows = 70, width = 24;  // more rows than one chunk
  const float eps = 1e-5f;
  std::vector<float> x = random_floats(rows * width, 1.5, 1);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += static_cast<float>(i / width) * 0.1f;
  const std::vector<float> r = random_floats(rows * width, 1.0, 2);
  const LayerNormWeights ln = random_layer_norm(width, 3);
  std::vector<float> dx(rows * width, 0.0f);
  layer_norm_backward_rows(x.data(), r.data(), dx.data(), rows, width, ln, eps, false);
  const auto f = [&](const std::vector<double>& xv) {
    return layer_norm_loss(xv, r, rows, width, ln, eps);
  };
  EXPECT_LE(relative_error(dx, numeric_gradient(f, to_double(x))), 1e-5);
  // accumulate adds to what is there.
  std::vector<float> acc(rows * width, 0.5f);
  layer_norm_backward_rows(x.data(), r.data(), acc.data(), rows, width, ln, eps, true);
  for (std::size_t i = 0; i < acc.size(); ++i) EXPECT_FLOAT_EQ(acc[i], dx[i] + 0.5f);
}

double activation_double(double x, Activation act) {
  if (act == Activation::QuickGelu) return x / (1.0 + std::exp(-1.702 * x));
  if (act == Activation::Gelu) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST(NnBackward, EveryActivationMatchesFiniteDifferences) {
  const std::size_t rows = 3, cols = 40;
  const std::vector<float> z = random_floats(rows * cols, 2.5, 4);
  const std::vector<float> bias = random_floats(cols, 0.5, 5);
  const std::vector<float> r = random_floats(rows * cols, 1.0, 6);
  for (Activation act : {Activation::QuickGelu, Activation::Gelu, Activation::GeluTanh}) {
    std::vector<float> dz(rows * cols);
    bias_activation_backward_rows(z.data(), bias, r.data(), dz.data(), rows, cols, act);
    const auto f = [&](const std::vector<double>& zv) {
      double loss = 0.0;
      for (std::size_t i = 0; i < zv.size(); ++i) {
        loss += r[i] * activation_double(zv[i] + bias[i % cols], act);
      }
      return loss;
    };
    EXPECT_LE(relative_error(dz, numeric_gradient(f, to_double(z))), 1e-5) << static_cast<int>(act);
    // In place (dz = dy) gives the same values.
    std::vector<float> in_place = r;
    bias_activation_backward_rows(z.data(), bias, in_place.data(), in_place.data(), rows, cols,
                                  act);
    EXPECT_EQ(in_place, dz);
  }
}

TEST(NnBackward, LinearIsTheTransposedProduct) {
  Linear l;
  l.out = 5;
  l.in = 7;
  l.w = random_floats(l.out * l.in, 1.0, 7);
  const std::size_t rows = 4;
  const std::vector<float> x = random_floats(rows * l.in, 1.0, 8);
  const std::vector<float> r = random_floats(rows * l.out, 1.0, 9);
  std::vector<float> dx(rows * l.in);
  linear_backward(r.data(), l.out, rows, l, dx.data(), l.in, false);
  const auto f = [&](const std::vector<double>& xv) {
    double loss = 0.0;
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t o = 0; o < l.out; ++o) {
        double y = 0.0;
        for (std::size_t k = 0; k < l.in; ++k) y += xv[i * l.in + k] * l.w[o * l.in + k];
        loss += r[i * l.out + o] * y;
      }
    }
    return loss;
  };
  EXPECT_LE(relative_error(dx, numeric_gradient(f, to_double(x))), 1e-6);
}

TEST(NnBackward, SoftmaxAndL2NormalisationMatchFiniteDifferences) {
  const std::size_t n = 9;
  const std::vector<float> s = random_floats(n, 2.0, 10);
  const std::vector<float> r = random_floats(n, 1.0, 11);
  std::vector<float> p = s;
  softmax(p.data(), n);
  std::vector<float> ds(n);
  softmax_backward(p.data(), r.data(), ds.data(), n);
  const auto fs = [&](const std::vector<double>& sv) {
    const double mx = *std::max_element(sv.begin(), sv.end());
    double sum = 0.0, loss = 0.0;
    for (double v : sv) sum += std::exp(v - mx);
    for (std::size_t j = 0; j < n; ++j) loss += r[j] * std::exp(sv[j] - mx) / sum;
    return loss;
  };
  EXPECT_LE(relative_error(ds, numeric_gradient(fs, to_double(s))), 1e-5);

  std::vector<float> dx(n);
  l2_normalize_backward(s.data(), r.data(), dx.data(), n);
  const auto fn = [&](const std::vector<double>& xv) {
    double ss = 0.0, loss = 0.0;
    for (double v : xv) ss += v * v;
    for (std::size_t j = 0; j < n; ++j) loss += r[j] * xv[j] / std::sqrt(ss);
    return loss;
  };
  EXPECT_LE(relative_error(dx, numeric_gradient(fn, to_double(s))), 1e-5);
}

// packed_attention's forward in double, weighted by r (r's rows in the out layout).
double attention_loss(const std::vector<double>& qkv, std::size_t w, std::size_t heads,
                      const std::vector<PackedSequence>& seqs, bool causal, bool pooled_only,
                      const std::vector<float>& r) {
  const std::size_t d = w / heads, ld = 3 * w;
  double loss = 0.0;
  for (std::size_t si = 0; si < seqs.size(); ++si) {
    const PackedSequence& s = seqs[si];
    for (std::size_t i = 0; i < s.length; ++i) {
      if (pooled_only && i != s.pooled) continue;
      const std::size_t out_row = pooled_only ? si : s.offset + i;
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t keys = causal ? i + 1 : s.length;
        std::vector<double> p(keys);
        double mx = -1e300, sum = 0.0;
        for (std::size_t j = 0; j < keys; ++j) {
          double dot = 0.0;
          for (std::size_t c = 0; c < d; ++c) {
            dot += qkv[(s.offset + i) * ld + h * d + c] * qkv[(s.offset + j) * ld + w + h * d + c];
          }
          p[j] = dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, p[j]);
        }
        for (double& v : p) sum += (v = std::exp(v - mx));
        for (std::size_t c = 0; c < d; ++c) {
          double o = 0.0;
          for (std::size_t j = 0; j < keys; ++j) {
            o += p[j] / sum * qkv[(s.offset + j) * ld + 2 * w + h * d + c];
          }
          loss += r[out_row * w + h * d + c] * o;
        }
      }
    }
  }
  return loss;
}

TEST(NnBackward, AttentionMatchesFiniteDifferencesInEveryMode) {
  const std::size_t w = 8, heads = 2;
  const std::vector<PackedSequence> seqs = {{0, 3, 0}, {3, 5, 2}, {8, 1, 0}};
  const std::size_t rows = 9;
  const std::vector<float> qkv = random_floats(rows * 3 * w, 1.0, 12);
  for (bool causal : {false, true}) {
    for (bool pooled_only : {false, true}) {
      SCOPED_TRACE(testing::Message() << "causal " << causal << " pooled_only " << pooled_only);
      const std::size_t out_rows = pooled_only ? seqs.size() : rows;
      const std::vector<float> r = random_floats(out_rows * w, 1.0, 13);
      std::vector<float> d_qkv(rows * 3 * w, 99.0f);  // every value must be written
      packed_attention_backward(qkv.data(), w, heads, seqs, causal, pooled_only, r.data(),
                                d_qkv.data());
      const auto f = [&](const std::vector<double>& x) {
        return attention_loss(x, w, heads, seqs, causal, pooled_only, r);
      };
      EXPECT_LE(relative_error(d_qkv, numeric_gradient(f, to_double(qkv))), 1e-5);
    }
  }
}

TEST(NnBackward, AttentionGradientsHaveTheSameBitsOnOneAndTwoThreads) {
  const std::size_t w = 64, heads = 4, rows = 3 * 50;
  const std::vector<PackedSequence> seqs = {{0, 50, 0}, {50, 50, 0}, {100, 50, 0}};
  const std::vector<float> qkv = random_floats(rows * 3 * w, 1.0, 14);
  const std::vector<float> r = random_floats(seqs.size() * w, 1.0, 15);
  std::vector<float> one(rows * 3 * w), two(rows * 3 * w);
  const unsigned before = thread_count();
  set_thread_count(1);
  packed_attention_backward(qkv.data(), w, heads, seqs, false, true, r.data(), one.data());
  set_thread_count(2);
  packed_attention_backward(qkv.data(), w, heads, seqs, false, true, r.data(), two.data());
  set_thread_count(before);
  EXPECT_EQ(one, two);
}

}  // namespace in_backward_test
}  // namespace
}  // namespace vlbias
