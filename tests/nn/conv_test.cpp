// The CNHW convolution, pooling and resize kernels (src/nn/conv.cpp) against PyTorch
// (tests/fixtures/nn/conv.json, written by tools/make_conv_fixtures.py: F.conv2d + batch_norm +
// relu in float64, F.max_pool2d / avg_pool2d, F.interpolate bilinear in float32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/nn/conv.h"

namespace vlbias {
namespace {
namespace in_conv_test {

using testing_util::fixture_json;

std::vector<float> floats(const nlohmann::json& j) {
  return j.get<std::vector<float>>();
}

// The error relative to the output's scale (at least 1e-3).
double scaled_error(const std::vector<float>& got, const std::vector<float>& want) {
  return testing_util::scaled_error(got, want, 1e-3);
}

Conv2d conv_of(const nlohmann::json& c) {
  Conv2d conv;
  conv.out = c["out"];
  conv.in = c["in"];
  conv.kernel_h = c["kernel_h"];
  conv.kernel_w = c["kernel_w"];
  conv.stride = c["stride"];
  conv.pad_h = c["pad_h"];
  conv.pad_w = c["pad_w"];
  conv.relu = c["relu"];
  conv.w = floats(c["weight"]);
  fold_batch_norm(conv, floats(c["gamma"]), floats(c["beta"]), floats(c["mean"]), floats(c["var"]),
                  c["eps"].get<double>());
  return conv;
}

std::vector<float> run_conv(const nlohmann::json& c, const Conv2d& conv) {
  const std::vector<float> x = floats(c["x"]);
  const std::size_t images = c["images"], h = c["height"], w = c["width"];
  std::vector<float> y(conv.out * images * conv.out_height(h) * conv.out_width(w), NAN);
  conv2d(conv, x.data(), images, h, w, y.data());
  return y;
}

TEST(NnConv, ConvolutionWithFoldedBatchNormMatchesTorchOnEveryInceptionShape) {
  for (const auto& c : fixture_json("nn/conv.json")["conv"]) {
    SCOPED_TRACE(fmt::format("{}x{} stride {} pad {}x{} over {}x{}", c["kernel_h"].get<int>(),
                             c["kernel_w"].get<int>(), c["stride"].get<int>(),
                             c["pad_h"].get<int>(), c["pad_w"].get<int>(), c["height"].get<int>(),
                             c["width"].get<int>()));
    const Conv2d conv = conv_of(c);
    EXPECT_EQ(conv.out_height(c["height"]), c["out_height"].get<std::size_t>());
    EXPECT_EQ(conv.out_width(c["width"]), c["out_width"].get<std::size_t>());
    EXPECT_LT(scaled_error(run_conv(c, conv), floats(c["y"])), 2e-6);
  }
}

// F(2x2) stays within the direct product's error; F(4x4) within about 2e-6 of the output's scale
// (include/vlbias/nn/conv.h).
double winograd_tolerance(std::size_t tile) {
  return tile == 2 ? 2e-6 : 5e-6;
}

TEST(NnConv, WinogradConvolutionMatchesTorchOnEveryThreeByThreeStrideOneShape) {
  for (const std::size_t tile : {2, 4}) {
    int checked = 0;
    for (const auto& c : fixture_json("nn/conv.json")["conv"]) {
      if (c["kernel_h"] != 3 || c["kernel_w"] != 3 || c["stride"] != 1) continue;
      SCOPED_TRACE(fmt::format("F({0}x{0}), pad {1} over {2}x{3}", tile, c["pad_h"].get<int>(),
                               c["height"].get<int>(), c["width"].get<int>()));
      Conv2d conv = conv_of(c);
      prepare_winograd(conv, tile);
      EXPECT_EQ(conv.winograd.size(), (tile + 2) * (tile + 2) * conv.out * conv.in);
      EXPECT_LT(scaled_error(run_conv(c, conv), floats(c["y"])), winograd_tolerance(tile));
      ++checked;
    }
    EXPECT_GE(checked, 2);  // padded and valid
  }
}

// A 3 x 3 convolution of `in` -> `out` channels with fixed pseudo-random weights and biases.
Conv2d patterned_conv(std::size_t out, std::size_t in, std::size_t pad, bool relu) {
  Conv2d conv;
  conv.out = out, conv.in = in, conv.kernel_h = conv.kernel_w = 3, conv.relu = relu;
  conv.pad_h = conv.pad_w = pad;
  conv.w.resize(conv.out * conv.in * 9);
  for (std::size_t i = 0; i < conv.w.size(); ++i) conv.w[i] = std::sin(0.37f * i);
  conv.b.resize(out);
  for (std::size_t o = 0; o < out; ++o) conv.b[o] = 0.1f * std::cos(1.3f * o);
  return conv;
}

std::vector<float> patterned_maps(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.011f * i * i);
  return x;
}

// Small maps run as one whole-layer pass (a few tiles), 56 x 56 maps of 16 images in chunks of
// tiles (3,136 tiles of F(4x4), 12,544 of F(2x2)): both against the im2col product, bitwise the
// same for 1 and 2 threads; 7 x 9 maps have a last tile row and column partly outside.
TEST(NnConv, WinogradHandlesOddMapsBothSchedulesAndIsBitwiseTheSameForOneAndTwoThreads) {
  struct Case {
    std::size_t images, h, w, pad;
  };
  for (const Case& m : {Case{12, 7, 9, 0}, Case{12, 7, 9, 1}, Case{16, 56, 56, 1}}) {
    for (const std::size_t tile : {2, 4}) {
      SCOPED_TRACE(fmt::format("F({0}x{0}), {1} images of {2}x{3}, pad {4}", tile, m.images, m.h,
                               m.w, m.pad));
      Conv2d conv = patterned_conv(5, 4, m.pad, true);
      const std::vector<float> x = patterned_maps(conv.in * m.images * m.h * m.w);
      const std::size_t n = conv.out * m.images * conv.out_height(m.h) * conv.out_width(m.w);
      std::vector<float> direct(n, NAN), one(n, NAN), two(n, NAN);
      conv2d(conv, x.data(), m.images, m.h, m.w, direct.data());
      prepare_winograd(conv, tile);
      set_thread_count(1);
      conv2d(conv, x.data(), m.images, m.h, m.w, one.data());
      set_thread_count(2);
      conv2d(conv, x.data(), m.images, m.h, m.w, two.data());
      set_thread_count(0);
      EXPECT_EQ(one, two);
      EXPECT_LT(scaled_error(one, direct), tile == 2 ? 1e-6 : 3e-6);
    }
  }
}

// y = act(conv(x) + b + residual), a ResNet block's fused shortcut: the same as adding the
// residual to the linear convolution and applying the ReLU after, for im2col and Winograd.
TEST(NnConv, AResidualIsAddedBeforeTheReluOnEveryPath) {
  const std::size_t images = 3, h = 9, w = 10;
  for (const std::size_t tile : {0, 2, 4}) {
    SCOPED_TRACE(tile == 0 ? std::string("im2col") : fmt::format("F({0}x{0})", tile));
    Conv2d linear = patterned_conv(6, 5, 1, false);
    Conv2d fused = patterned_conv(6, 5, 1, true);
    if (tile != 0) prepare_winograd(linear, tile), prepare_winograd(fused, tile);
    const std::vector<float> x = patterned_maps(linear.in * images * h * w);
    const std::size_t n = linear.out * images * h * w;
    std::vector<float> residual(n);
    for (std::size_t i = 0; i < n; ++i) residual[i] = 0.8f * std::sin(0.05f * i);
    std::vector<float> want(n, NAN), got(n, NAN);
    conv2d(linear, x.data(), images, h, w, want.data());
    for (std::size_t i = 0; i < n; ++i) want[i] = std::max(want[i] + residual[i], 0.0f);
    conv2d(fused, x.data(), images, h, w, got.data(), residual.data());
    EXPECT_LT(scaled_error(got, want), 1e-6);
    EXPECT_GT(std::count(got.begin(), got.end(), 0.0f), 0);  // the ReLU cut some
    EXPECT_GT(std::count_if(got.begin(), got.end(), [](float v) { return v > 0; }), 0);
  }
}

TEST(NnConv, WinogradRefusesAnyOtherConvolution) {
  Conv2d conv;
  conv.out = 2, conv.in = 2, conv.kernel_h = conv.kernel_w = 3, conv.stride = 2;
  conv.w.resize(2 * 2 * 9, 1.0f);
  conv.b = {0.0f, 0.0f};
  EXPECT_THROW(prepare_winograd(conv), InternalError);
  conv.stride = 1;
  EXPECT_THROW(prepare_winograd(conv, 3), InternalError);  // F(2x2) and F(4x4) only
  EXPECT_THROW(prepare_winograd(conv, 6), InternalError);
  conv.kernel_w = 1;
  conv.w.resize(2 * 2 * 3);
  EXPECT_THROW(prepare_winograd(conv), InternalError);
}

TEST(NnConv, ConvolutionIsBitwiseTheSameForOneAndTwoThreads) {
  const auto& c = fixture_json("nn/conv.json")["conv"][1];
  const Conv2d conv = conv_of(c);
  set_thread_count(1);
  const std::vector<float> one = run_conv(c, conv);
  set_thread_count(2);
  const std::vector<float> two = run_conv(c, conv);
  set_thread_count(0);
  EXPECT_EQ(one, two);
}

// A direct double-precision sum for output element `o` of conv (CNHW y of images x h x w input).
double direct_output(const Conv2d& conv, const std::vector<float>& x, std::size_t images,
                     std::size_t h, std::size_t w, std::size_t o) {
  const std::size_t oh = conv.out_height(h), ow = conv.out_width(w);
  const std::size_t co = o / (images * oh * ow), n = (o / (oh * ow)) % images;
  const std::size_t oy = (o / ow) % oh, ox = o % ow;
  double sum = 0.0;
  for (std::size_t ci = 0; ci < conv.in; ++ci) {
    for (std::size_t ky = 0; ky < conv.kernel_h; ++ky) {
      for (std::size_t kx = 0; kx < conv.kernel_w; ++kx) {
        const long iy = static_cast<long>(oy * conv.stride + ky) - static_cast<long>(conv.pad_h);
        const long ix = static_cast<long>(ox * conv.stride + kx) - static_cast<long>(conv.pad_w);
        if (iy < 0 || ix < 0 || iy >= static_cast<long>(h) || ix >= static_cast<long>(w)) continue;
        sum += double{conv.w[((co * conv.in + ci) * conv.kernel_h + ky) * conv.kernel_w + kx]} *
               x[((ci * images + n) * h + static_cast<std::size_t>(iy)) * w +
                 static_cast<std::size_t>(ix)];
      }
    }
  }
  return sum;
}

// Few output columns of many channels (a ResNet's late strided layers) run as one im2col and a
// GEMM per block of 64 output channels: 130 channels (a partial block), 2 of them a linear tail,
// with and without a residual, bitwise the same for 1 and 2 threads.
TEST(NnConv, FewColumnsOfManyChannelsMatchADirectSumWithTailAndResidual) {
  Conv2d conv = patterned_conv(130, 8, 1, true);
  conv.stride = 2;
  for (float& v : conv.w) v *= 0.1f;
  const std::size_t images = 2, h = 20, w = 19, oh = conv.out_height(h), ow = conv.out_width(w);
  const std::vector<float> x = patterned_maps(conv.in * images * h * w);
  const std::size_t n = conv.out * images * oh * ow;
  std::vector<float> residual(n);
  for (std::size_t i = 0; i < n; ++i) residual[i] = 0.3f * std::sin(0.05f * i);
  for (const bool with_residual : {false, true}) {
    SCOPED_TRACE(with_residual ? "residual" : "no residual");
    conv.linear_tail = with_residual ? 0 : 2;
    const float* res = with_residual ? residual.data() : nullptr;
    std::vector<float> one(n, NAN), two(n, NAN);
    set_thread_count(1);
    conv2d(conv, x.data(), images, h, w, one.data(), res);
    set_thread_count(2);
    conv2d(conv, x.data(), images, h, w, two.data(), res);
    set_thread_count(0);
    EXPECT_EQ(one, two);
    double worst = 0.0;
    for (std::size_t o = 0; o < n; ++o) {
      const std::size_t co = o / (images * oh * ow);
      double want = direct_output(conv, x, images, h, w, o);
      if (co < conv.out - conv.linear_tail) {
        want = std::max(want + conv.b[co] + (res != nullptr ? res[o] : 0.0f), 0.0);
      }
      worst = std::max(worst, std::abs(one[o] - want));
    }
    EXPECT_LT(worst, 1e-5);
  }
}

TEST(NnConv, ChunkedIm2colGivesTheUnchunkedResult) {
  // 300 input channels x 3 x 3 = 2700 rows: kConvScratchFloats / 2700 columns per chunk, so a
  // 40 x 40 map of 2 images (3200 columns) takes two chunks, the second one partial.
  Conv2d conv;
  conv.out = 3, conv.in = 300, conv.kernel_h = conv.kernel_w = 3, conv.pad_h = conv.pad_w = 1;
  conv.w.resize(conv.out * conv.in * 9);
  for (std::size_t i = 0; i < conv.w.size(); ++i) conv.w[i] = std::sin(0.37f * i) * 0.05f;
  conv.b = {0.1f, -0.2f, 0.0f};
  const std::size_t images = 2, h = 40, w = 40;
  ASSERT_GT(images * h * w, kConvScratchFloats / (conv.in * 9));
  std::vector<float> x(conv.in * images * h * w);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.011f * i);
  std::vector<float> y(conv.out * images * h * w);
  conv2d(conv, x.data(), images, h, w, y.data());
  // Every 97th output against a direct double-precision sum.
  for (std::size_t o = 0; o < y.size(); o += 97) {
    const double want = conv.b[o / (images * h * w)] + direct_output(conv, x, images, h, w, o);
    ASSERT_NEAR(y[o], want, 1e-4 * (std::abs(want) + 1)) << o;
  }
}

TEST(NnConv, PoolingMatchesTorchWithAndWithoutPaddingCounted) {
  for (const auto& c : fixture_json("nn/conv.json")["pool"]) {
    SCOPED_TRACE(fmt::format("{} planes {}x{} kernel {} stride {} pad {}", c["planes"].get<int>(),
                             c["height"].get<int>(), c["width"].get<int>(), c["kernel"].get<int>(),
                             c["stride"].get<int>(), c["pad"].get<int>()));
    const Pool2d pool{c["kernel"], c["stride"], c["pad"]};
    const std::vector<float> x = floats(c["x"]);
    const std::size_t planes = c["planes"], h = c["height"], w = c["width"];
    std::vector<float> y(planes * pool.out_size(h) * pool.out_size(w), NAN);
    max_pool2d(x.data(), planes, h, w, pool, y.data());
    EXPECT_EQ(scaled_error(y, floats(c["max"])), 0.0);  // a max is one of the inputs
    avg_pool2d(x.data(), planes, h, w, pool, true, y.data());
    EXPECT_LT(scaled_error(y, floats(c["avg_include_pad"])), 1e-6);
    avg_pool2d(x.data(), planes, h, w, pool, false, y.data());
    EXPECT_LT(scaled_error(y, floats(c["avg_exclude_pad"])), 1e-6);
  }
}

TEST(NnConv, GlobalAveragePoolingGivesOneRowPerImage) {
  // 2 channels x 3 images of 2 x 2, CNHW: plane (c, n) holds c * 10 + n + {0, 1, 2, 3} / 4.
  std::vector<float> x;
  for (int c = 0; c < 2; ++c) {
    for (int n = 0; n < 3; ++n) {
      for (int i = 0; i < 4; ++i) x.push_back(static_cast<float>(c * 10 + n) + i / 4.0f);
    }
  }
  std::vector<float> out(6);
  global_avg_pool(x.data(), 2, 3, 2, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.375f, 10.375f, 1.375f, 11.375f, 2.375f, 12.375f}));
}

TEST(NnConv, BilinearResizeMatchesTorchInterpolateWithoutAlignedCorners) {
  for (const auto& c : fixture_json("nn/conv.json")["resize"]) {
    SCOPED_TRACE(fmt::format("{}x{} to {}x{}", c["height"].get<int>(), c["width"].get<int>(),
                             c["out_height"].get<int>(), c["out_width"].get<int>()));
    const std::vector<float> x = floats(c["x"]);
    const std::size_t oh = c["out_height"], ow = c["out_width"];
    std::vector<float> y(oh * ow, NAN);
    resize_bilinear(x.data(), c["height"], c["width"], y.data(), oh, ow);
    // torch computes in float32 too; the last bit can differ where its build contracts a * b + c
    // into one fused multiply-add.
    EXPECT_LT(scaled_error(y, floats(c["y"])), 2.5e-7);
  }
}

// Deterministic pseudo-random 1x1 convolution of `in` -> `out` channels.
Conv2d pointwise(std::size_t in, std::size_t out, unsigned seed) {
  Conv2d c;
  c.in = in, c.out = out, c.relu = true;
  for (std::size_t i = 0; i < in * out; ++i) c.w.push_back(std::sin(0.37f * (i + seed)));
  for (std::size_t o = 0; o < out; ++o) c.b.push_back(0.1f * std::cos(1.3f * (o + seed)));
  return c;
}

TEST(NnConv, StackedPointwiseConvolutionsGiveEachPartsOutputAndALinearTail) {
  const std::size_t images = 2, h = 5, w = 4, in = 6, plane = images * h * w;
  std::vector<float> x(in * plane);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * i) * 2.0f;
  const Conv2d a = pointwise(in, 3, 1), b = pointwise(in, 5, 2), tail = pointwise(in, 2, 3);
  const Conv2d s = stack_pointwise({&a, &b, &tail}, true);
  ASSERT_EQ(s.out, 10u);
  ASSERT_EQ(s.linear_tail, 2u);
  std::vector<float> ys(s.out * plane, NAN), ya(a.out * plane), yb(b.out * plane);
  conv2d(s, x.data(), images, h, w, ys.data());
  conv2d(a, x.data(), images, h, w, ya.data());
  conv2d(b, x.data(), images, h, w, yb.data());
  EXPECT_EQ(std::vector<float>(ys.begin(), ys.begin() + 3 * plane), ya);
  EXPECT_EQ(std::vector<float>(ys.begin() + 3 * plane, ys.begin() + 8 * plane), yb);
  // The tail: the plain products, neither bias nor ReLU (some are negative); add_bias_relu
  // finishes them as the separate convolution would.
  Conv2d bare = tail;
  bare.relu = false;
  std::fill(bare.b.begin(), bare.b.end(), 0.0f);
  std::vector<float> yt(tail.out * plane), yfull(tail.out * plane);
  conv2d(bare, x.data(), images, h, w, yt.data());
  std::vector<float> got(ys.begin() + 8 * plane, ys.end());
  EXPECT_EQ(got, yt);
  EXPECT_TRUE(std::any_of(got.begin(), got.end(), [](float v) { return v < 0.0f; }));
  add_bias_relu(got.data(), tail.out, plane, tail.b.data(), true);
  conv2d(tail, x.data(), images, h, w, yfull.data());
  EXPECT_LT(scaled_error(got, yfull), 1e-6);
}

TEST(NnConv, StackingRefusesAConvolutionThatIsNotPointwise) {
  const Conv2d a = pointwise(4, 3, 1);
  Conv2d k3 = pointwise(4, 3, 2);
  k3.kernel_h = k3.kernel_w = 3;
  k3.w.resize(4 * 3 * 9, 0.5f);
  EXPECT_THROW(stack_pointwise({&a, &k3}, false), InternalError);
  const Conv2d other_input = pointwise(5, 3, 3);
  EXPECT_THROW(stack_pointwise({&a, &other_input}, false), InternalError);
}

}  // namespace in_conv_test
}  // namespace
}  // namespace vlbias
