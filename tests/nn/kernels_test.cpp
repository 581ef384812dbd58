// The transformer kernels (src/nn/kernels.cpp) against double-precision formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "vlbias/nn/kernels.h"

namespace vlbias {
namespace {
namespace in_kernels_test {

double ulp_distance(float a, double exact) {
  const float e = static_cast<float>(exact);
  return std::abs(a - exact) / std::abs(std::nextafter(e, INFINITY) - e);
}

TEST(NnKernels, ExpWithinTwoUlp) {
  double worst = 0.0;
  for (double x = -87.0; x <= 88.0; x += 0.0007) {
    const float xf = static_cast<float>(x);
    worst = std::max(worst, ulp_distance(exp_approx(xf), std::exp(static_cast<double>(xf))));
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(exp_approx(0.0f), 1.0f);
  // Clamped outside [-87, 88]: finite, positive, monotone enough for softmax / sigmoid.
  EXPECT_GT(exp_approx(-1000.0f), 0.0f);
  EXPECT_LT(exp_approx(-1000.0f), 1e-37f);
  EXPECT_TRUE(std::isfinite(exp_approx(1000.0f)));
}

double quick_gelu_exact(double x) {
  return x / (1.0 + std::exp(-1.702 * x));
}
double gelu_exact(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double gelu_tanh_exact(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
const char* activation_name(Activation act) {
  return act == Activation::Gelu ? "gelu" : act == Activation::GeluTanh ? "gelu_new" : "quick_gelu";
}

TEST(NnKernels, ActivationsMatchDoubleFormulas) {
  std::vector<float> xs;
  for (double x = -30.0; x <= 30.0; x += 0.00731) xs.push_back(static_cast<float>(x));
  const std::vector<float> bias(xs.size(), 0.0f);
  for (Activation act : {Activation::QuickGelu, Activation::Gelu, Activation::GeluTanh}) {
    std::vector<float> y = xs;
    bias_activation(y.data(), y.size(), 1, y.size(), bias.data(), act);
    double worst = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      const double want = act == Activation::Gelu       ? gelu_exact(x)
                          : act == Activation::GeluTanh ? gelu_tanh_exact(x)
                                                        : quick_gelu_exact(x);
      // Relative to max(|x|, 1): the activations' own scale.
      worst = std::max(worst, std::abs(y[i] - want) / std::max(std::abs(x), 1.0));
    }
    EXPECT_LE(worst, 4e-7) << activation_name(act);
  }
}

TEST(NnKernels, BiasIsAddedBeforeTheActivation) {
  std::vector<float> y = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -3.0f};  // 2 rows x 3
  const std::vector<float> b = {0.25f, 1.0f, -2.0f};
  bias_activation(y.data(), 3, 2, 3, b.data(), Activation::Gelu);
  EXPECT_NEAR(y[0], gelu_exact(0.75), 1e-7);
  EXPECT_NEAR(y[1], 0.0, 1e-7);
  EXPECT_NEAR(y[5], gelu_exact(-5.0), 1e-7);
  std::vector<float> z = {1.0f, 2.0f, 3.0f, 4.0f};
  add_bias(z.data(), 2, 2, 2, b.data());
  EXPECT_EQ(z, (std::vector<float>{1.25f, 3.0f, 3.25f, 5.0f}));
}

TEST(NnKernels, LayerNormMatchesDouble) {
  const std::size_t w = 77;  // not a multiple of the 16 lanes
  std::vector<float> x(3 * w), gamma(w), beta(w);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(std::sin(0.37 * i) * 3.0 + (i / w) * 100.0);  // row 2 offset 200
  }
  for (std::size_t j = 0; j < w; ++j) {
    gamma[j] = 1.0f + 0.01f * static_cast<float>(j);
    beta[j] = 0.1f * static_cast<float>(j % 5);
  }
  const LayerNormWeights ln{gamma, beta};
  std::vector<float> y(x.size());
  layer_norm(x.data(), w, y.data(), w, 3, w, ln, 1e-5f);
  for (std::size_t r = 0; r < 3; ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t j = 0; j < w; ++j) mean += x[r * w + j];
    mean /= w;
    for (std::size_t j = 0; j < w; ++j) var += (x[r * w + j] - mean) * (x[r * w + j] - mean);
    var /= w;
    for (std::size_t j = 0; j < w; ++j) {
      const double want = (x[r * w + j] - mean) / std::sqrt(var + 1e-5) * gamma[j] + beta[j];
      EXPECT_NEAR(y[r * w + j], want, 2e-6) << r << "," << j;
    }
  }
  // In place gives the same result.
  std::vector<float> z = x;
  layer_norm(z.data(), w, z.data(), w, 3, w, ln, 1e-5f);
  EXPECT_EQ(z, y);
}

TEST(NnKernels, SoftmaxMatchesDouble) {
  std::vector<float> row = {1.0f, -2.0f, 30.0f, 29.5f, -100.0f};
  softmax(row.data(), row.size());
  double sum = 0.0;
  std::vector<double> want(row.size());
  const double m = 30.0;
  for (std::size_t j = 0; j < row.size(); ++j) {
    want[j] = std::exp(std::vector<double>{1, -2, 30, 29.5, -100}[j] - m);
    sum += want[j];
  }
  for (std::size_t j = 0; j < row.size(); ++j) EXPECT_NEAR(row[j], want[j] / sum, 1e-7);
  float one = 5.0f;
  softmax(&one, 1);
  EXPECT_EQ(one, 1.0f);
}

TEST(NnKernels, SoftmaxNumeratorsAndTheirSumMatchDoubleAndGiveSoftmaxBits) {
  for (std::size_t n : {1u, 5u, 16u, 37u, 203u}) {  // below, at and past the 16 lanes
    SCOPED_TRACE(n);
    std::vector<float> x(n);
    for (std::size_t j = 0; j < n; ++j) x[j] = static_cast<float>(std::sin(1.3 * j + 0.2) * 9.0);
    std::vector<float> e = x;
    const double sum = softmax_unnormalized(e.data(), n);
    float mx = x[0];
    for (float v : x) mx = std::max(mx, v);
    double want_sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      const double want = std::exp(double{x[j] - mx});  // the float difference, then exact exp
      want_sum += want;
      EXPECT_LE(ulp_distance(e[j], want), 4.0) << j;
    }
    EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum);
    // softmax is the numerators times 1 / sum, bit for bit.
    std::vector<float> p = x;
    softmax(p.data(), n);
    const float inv = static_cast<float>(1.0 / sum);
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(p[j], e[j] * inv) << j;
  }
}

}  // namespace in_kernels_test
}  // namespace
}  // namespace vlbias
