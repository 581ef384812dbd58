// torchvision's ResNet forward over a batch of CNHW maps (see
// include/vlbias/encode/models/resnet_model.h and include/vlbias/nn/conv.h): each block's
// convolutions, the last one adding the shortcut before its ReLU; four work buffers rotate so no
// map is copied.
#include "vlbias/encode/models/resnet_model.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "resnet_model_internal.h"
#include "vlbias/core/error.h"

namespace vlbias {

namespace {

using encode_internal::ResNetBlock;

// A batch of CNHW maps in one of the work buffers.
struct ResMaps {
  std::size_t buffer = 0;  // index into Net::buffers
  std::size_t channels = 0, height = 0, width = 0;
};

class ResNetRunner {
 public:
  ResNetRunner(const ResNetModel::Net& net, std::size_t images) : net_(net), images_(images) {}

  float* data(const ResMaps& m) const { return ptr_[m.buffer]; }

  // Grows buffer `b` (its contents are dead) to hold `floats`.
  float* take(std::size_t b, std::size_t floats) {
    ptr_[b] = net_.buffers[b].reserve(floats);
    return ptr_[b];
  }

  // The convolution c of x into buffer `into`, plus `residual` (maps of the output's shape in
  // another buffer, or null) before c's ReLU.
  ResMaps conv(const Conv2d& c, const ResMaps& x, std::size_t into,
               const float* residual = nullptr) {
    const ResMaps y{into, c.out, c.out_height(x.height), c.out_width(x.width)};
    float* out = take(into, y.channels * images_ * y.height * y.width);
    conv2d(c, data(x), images_, x.height, x.width, out, residual);
    return y;
  }

  // One residual block reading x; the result is in another buffer than x's.
  ResMaps block(const ResNetBlock& b, const ResMaps& x) {
    // The three buffers other than x's, in order.
    std::size_t free[3], k = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      if (i != x.buffer) free[k++] = i;
    }
    // The shortcut first: the last convolution adds it before its ReLU (torch's `out +=
    // identity; out = relu(out)`).
    const float* identity = data(x);
    if (b.has_downsample) identity = data(conv(b.downsample, x, free[2]));
    if (net_.bottleneck) {
      const ResMaps t1 = conv(b.c1, x, free[0]);
      const ResMaps t2 = conv(b.c2, t1, free[1]);
      return conv(b.c3, t2, free[0], identity);
    }
    const ResMaps t1 = conv(b.c1, x, free[0]);
    return conv(b.c2, t1, free[1], identity);
  }

  ResMaps run(const ResMaps& input) {
    ResMaps x = conv(net_.stem, input, 1);
    const Pool2d pool{3, 2, 1};
    const ResMaps pooled{2, x.channels, pool.out_size(x.height), pool.out_size(x.width)};
    float* y = take(2, pooled.channels * images_ * pooled.height * pooled.width);
    max_pool2d(data(x), x.channels * images_, x.height, x.width, pool, y);
    x = pooled;
    for (const ResNetBlock& b : net_.blocks) x = block(b, x);
    return x;
  }

  void set_input(float* input) { ptr_[0] = input; }

 private:
  const ResNetModel::Net& net_;
  std::size_t images_;
  float* ptr_[4] = {nullptr, nullptr, nullptr, nullptr};
};

}  // namespace

ResNetModel::ResNetModel(std::unique_ptr<Net> net) : net_(std::move(net)) {}
ResNetModel::ResNetModel(ResNetModel&&) noexcept = default;
ResNetModel& ResNetModel::operator=(ResNetModel&&) noexcept = default;
ResNetModel::~ResNetModel() = default;

std::size_t ResNetModel::classes() const {
  return net_->fc.out;
}
std::size_t ResNetModel::feature_dim() const {
  return net_->fc.in;
}
const std::string& ResNetModel::prefix() const {
  return net_->prefix;
}

std::string ResNetModel::architecture() const {
  using Counts = std::array<std::size_t, 4>;
  const Counts& c = net_->counts;
  if (!net_->bottleneck && c == Counts{2, 2, 2, 2}) return "resnet18";
  if (!net_->bottleneck && c == Counts{3, 4, 6, 3}) return "resnet34";
  if (net_->bottleneck && c == Counts{3, 4, 6, 3}) return "resnet50";
  if (net_->bottleneck && c == Counts{3, 4, 23, 3}) return "resnet101";
  if (net_->bottleneck && c == Counts{3, 8, 36, 3}) return "resnet152";
  return fmt::format("resnet({}: {},{},{},{})", net_->bottleneck ? "Bottleneck" : "BasicBlock",
                     c[0], c[1], c[2], c[3]);
}

Matrix ResNetModel::logits(const float* pixels, std::size_t n, std::size_t size) const {
  VLBIAS_CHECK(size >= 32, InternalError, "ResNet input of {} pixels; at least 32", size);
  Matrix out(n, net_->fc.out);
  if (n == 0) return out;
  // NCHW images to CNHW maps, in buffer 0.
  const std::size_t plane = size * size;
  float* input = net_->buffers[0].reserve(3 * n * plane);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < 3; ++c) {
      std::memcpy(input + (c * n + i) * plane, pixels + (i * 3 + c) * plane, plane * sizeof(float));
    }
  }
  ResNetRunner runner(*net_, n);
  runner.set_input(input);
  const ResMaps x = runner.run({0, 3, size, size});
  Matrix pooled(n, x.channels);
  global_avg_pool(runner.data(x), x.channels, n, x.height, x.width, pooled.data.data());
  linear_rows(pooled.data.data(), pooled.cols, n, net_->fc, out.data.data(), out.cols, false);
  add_bias_rows(out.data.data(), out.rows, out.cols, net_->fc.b);
  return out;
}

double ResNetModel::macs_per_image(std::size_t size) const {
  // Every convolution's weights times its output positions.
  double macs = 0.0;
  const auto add = [&](const Conv2d& c, std::size_t at) {
    const std::size_t o = c.out_height(at);
    macs +=
        static_cast<double>(c.out * c.in * c.kernel_h * c.kernel_w) * static_cast<double>(o * o);
    return o;
  };
  std::size_t h = Pool2d{3, 2, 1}.out_size(add(net_->stem, size));
  for (const ResNetBlock& b : net_->blocks) {
    const std::size_t in = h;
    h = add(b.c1, h);
    h = add(b.c2, h);
    if (net_->bottleneck) h = add(b.c3, h);
    if (b.has_downsample) add(b.downsample, in);
  }
  return macs + static_cast<double>(net_->fc.w.size());
}

}  // namespace vlbias
