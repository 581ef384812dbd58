// The FID Inception-v3 forward over a batch of CNHW maps (see
// include/vlbias/encode/models/inception_model.h and include/vlbias/nn/conv.h): every branch of a
// block writes its channels straight into its place in the block's output (a concatenation along
// channels is an offset in CNHW).
#include "vlbias/encode/models/inception_model.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "inception_model_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

namespace {

using encode_internal::InceptionA;
using encode_internal::InceptionB;
using encode_internal::InceptionC;
using encode_internal::InceptionD;
using encode_internal::InceptionE;

// A batch of maps in CNHW.
struct Maps {
  const float* data = nullptr;
  std::size_t channels = 0, images = 0, height = 0, width = 0;
  std::size_t plane() const { return images * height * width; }
};

// Runs layers over one batch, with the model's work buffers.
class Runner {
 public:
  explicit Runner(const InceptionModel::Net& net) : net_(net) {}

  // conv(x) into out (conv.out channels of out_h x out_w); the output maps.
  Maps conv(const Conv2d& c, const Maps& x, float* out) {
    conv2d(c, x.data, x.images, x.height, x.width, out);
    return {out, c.out, x.images, c.out_height(x.height), c.out_width(x.width)};
  }
  // conv into the buffer `buf` (grown to fit).
  Maps conv(const Conv2d& c, const Maps& x, FloatBuffer& buf) {
    return conv(c, x,
                buf.reserve(c.out * x.images * c.out_height(x.height) * c.out_width(x.width)));
  }
  Maps pool(const Maps& x, const Pool2d& p, bool max, FloatBuffer& buf) {
    const std::size_t oh = p.out_size(x.height), ow = p.out_size(x.width);
    float* y = buf.reserve(x.channels * x.images * oh * ow);
    if (max) {
      max_pool2d(x.data, x.channels * x.images, x.height, x.width, p, y);
    } else {
      avg_pool2d(x.data, x.channels * x.images, x.height, x.width, p, false, y);
    }
    return {y, x.channels, x.images, oh, ow};
  }

  // Channels [c0, c0 + n) of m.
  static Maps slice(const Maps& m, std::size_t c0, std::size_t n) {
    return {m.data + c0 * m.plane(), n, m.images, m.height, m.width};
  }
  // Copies m to `at`; the floats copied.
  static std::size_t copy(const Maps& m, float* at) {
    std::memcpy(at, m.data, m.channels * m.plane() * sizeof(float));
    return m.channels * m.plane();
  }
  // The pool branch from a head's linear tail h (channels of conv(x) without bias): the 3 x 3
  // average pool (padding not counted) into `at`, then bias and ReLU; the floats written.
  static std::size_t pooled_tail(const Conv2d& head, const Maps& h, float* at) {
    const std::size_t n = head.linear_tail, c0 = head.out - n;
    const Maps t = slice(h, c0, n);
    avg_pool2d(t.data, n * t.images, t.height, t.width, {3, 1, 1}, false, at);
    add_bias_relu(at, n, t.plane(), head.b.data() + c0, head.relu);
    return n * t.plane();
  }

  Maps block_a(const InceptionA& a, const Maps& x, FloatBuffer& out_buf) {
    const std::size_t plane = x.plane();
    float* out =
        out_buf.reserve((a.b1x1.out + a.b5x5_2.out + a.b3x3dbl_3.out + a.pool.out) * plane);
    float* at = out;
    const Maps h = conv(a.head, x, net_.t3);
    at += copy(slice(h, 0, a.b1x1.out), at);
    at += conv(a.b5x5_2, slice(h, a.b1x1.out, a.b5x5_1.out), at).channels * plane;
    const Maps dbl = slice(h, a.b1x1.out + a.b5x5_1.out, a.b3x3dbl_1.out);
    at += conv(a.b3x3dbl_3, conv(a.b3x3dbl_2, dbl, net_.t1), at).channels * plane;
    at += pooled_tail(a.head, h, at);
    return {out, static_cast<std::size_t>(at - out) / plane, x.images, x.height, x.width};
  }

  Maps block_b(const InceptionB& b, const Maps& x, FloatBuffer& out_buf) {
    const Pool2d p{3, 2, 0};
    const std::size_t plane = x.images * p.out_size(x.height) * p.out_size(x.width);
    float* out = out_buf.reserve((b.b3x3.out + b.b3x3dbl_3.out + x.channels) * plane);
    float* at = out;
    at += conv(b.b3x3, x, at).channels * plane;
    at +=
        conv(b.b3x3dbl_3, conv(b.b3x3dbl_2, conv(b.b3x3dbl_1, x, net_.t1), net_.t2), at).channels *
        plane;
    max_pool2d(x.data, x.channels * x.images, x.height, x.width, p, at);
    at += x.channels * plane;
    return {out, static_cast<std::size_t>(at - out) / plane, x.images, p.out_size(x.height),
            p.out_size(x.width)};
  }

  Maps block_c(const InceptionC& c, const Maps& x, FloatBuffer& out_buf) {
    const std::size_t plane = x.plane();
    float* out =
        out_buf.reserve((c.b1x1.out + c.b7x7_3.out + c.b7x7dbl_5.out + c.pool.out) * plane);
    float* at = out;
    const Maps h = conv(c.head, x, net_.t3);
    at += copy(slice(h, 0, c.b1x1.out), at);
    const Maps b7 = slice(h, c.b1x1.out, c.b7x7_1.out);
    at += conv(c.b7x7_3, conv(c.b7x7_2, b7, net_.t1), at).channels * plane;
    Maps d = conv(c.b7x7dbl_2, slice(h, c.b1x1.out + c.b7x7_1.out, c.b7x7dbl_1.out), net_.t1);
    d = conv(c.b7x7dbl_4, conv(c.b7x7dbl_3, d, net_.t2), net_.t1);
    at += conv(c.b7x7dbl_5, d, at).channels * plane;
    at += pooled_tail(c.head, h, at);
    return {out, static_cast<std::size_t>(at - out) / plane, x.images, x.height, x.width};
  }

  Maps block_d(const InceptionD& d, const Maps& x, FloatBuffer& out_buf) {
    const Pool2d p{3, 2, 0};
    const std::size_t plane = x.images * p.out_size(x.height) * p.out_size(x.width);
    float* out = out_buf.reserve((d.b3x3_2.out + d.b7x7x3_4.out + x.channels) * plane);
    float* at = out;
    at += conv(d.b3x3_2, conv(d.b3x3_1, x, net_.t1), at).channels * plane;
    Maps m = conv(d.b7x7x3_2, conv(d.b7x7x3_1, x, net_.t1), net_.t2);
    at += conv(d.b7x7x3_4, conv(d.b7x7x3_3, m, net_.t1), at).channels * plane;
    max_pool2d(x.data, x.channels * x.images, x.height, x.width, p, at);
    at += x.channels * plane;
    return {out, static_cast<std::size_t>(at - out) / plane, x.images, p.out_size(x.height),
            p.out_size(x.width)};
  }

  Maps block_e(const InceptionE& e, const Maps& x, FloatBuffer& out_buf) {
    const std::size_t plane = x.plane();
    float* out = out_buf.reserve((e.b1x1.out + e.b3x3_2a.out + e.b3x3_2b.out + e.b3x3dbl_3a.out +
                                  e.b3x3dbl_3b.out + e.pool.out) *
                                 plane);
    float* at = out;
    const Maps h = conv(e.head, x, net_.t3);
    at += copy(slice(h, 0, e.b1x1.out), at);
    const Maps b3 = slice(h, e.b1x1.out, e.b3x3_1.out);
    at += conv(e.b3x3_2a, b3, at).channels * plane;
    at += conv(e.b3x3_2b, b3, at).channels * plane;
    const Maps dbl =
        conv(e.b3x3dbl_2, slice(h, e.b1x1.out + e.b3x3_1.out, e.b3x3dbl_1.out), net_.t1);
    at += conv(e.b3x3dbl_3a, dbl, at).channels * plane;
    at += conv(e.b3x3dbl_3b, dbl, at).channels * plane;
    if (e.max_pool) {  // a max pool does not commute with the convolution
      at += conv(e.pool, pool(x, {3, 1, 1}, true, net_.t2), at).channels * plane;
    } else {
      at += pooled_tail(e.head, h, at);
    }
    return {out, static_cast<std::size_t>(at - out) / plane, x.images, x.height, x.width};
  }

  // The whole network from CNHW input maps to pool3's Mixed_7c maps (in net_.ping or pong).
  Maps run(const Maps& input) {
    Maps x = conv(net_.conv2a, conv(net_.conv1a, input, net_.ping), net_.pong);
    x = pool(conv(net_.conv2b, x, net_.ping), {3, 2, 0}, true, net_.pong);
    x = pool(conv(net_.conv4a, conv(net_.conv3b, x, net_.ping), net_.t3), {3, 2, 0}, true,
             net_.ping);
    FloatBuffer* in = &net_.ping;
    FloatBuffer* out = &net_.pong;
    const auto next = [&](const Maps& m) {
      std::swap(in, out);
      return m;
    };
    for (const InceptionA& a : net_.mixed_5) x = next(block_a(a, x, *out));
    x = next(block_b(net_.mixed_6a, x, *out));
    for (const InceptionC& c : net_.mixed_6) x = next(block_c(c, x, *out));
    x = next(block_d(net_.mixed_7a, x, *out));
    for (const InceptionE& e : net_.mixed_7) x = next(block_e(e, x, *out));
    return x;
  }

 private:
  const InceptionModel::Net& net_;
};

// The stacked parts keep their shapes; their weights live in the head only.
void keep_shapes_only(std::initializer_list<Conv2d*> parts) {
  for (Conv2d* p : parts) {
    std::vector<float>().swap(p->w);
    std::vector<float>().swap(p->b);
  }
}

}  // namespace

namespace encode_internal {

void stack_block_heads(InceptionA& a) {
  a.head = stack_pointwise({&a.b1x1, &a.b5x5_1, &a.b3x3dbl_1, &a.pool}, true);
  keep_shapes_only({&a.b1x1, &a.b5x5_1, &a.b3x3dbl_1, &a.pool});
}

void stack_block_heads(InceptionC& c) {
  c.head = stack_pointwise({&c.b1x1, &c.b7x7_1, &c.b7x7dbl_1, &c.pool}, true);
  keep_shapes_only({&c.b1x1, &c.b7x7_1, &c.b7x7dbl_1, &c.pool});
}

void stack_block_heads(InceptionE& e) {
  if (e.max_pool) {
    e.head = stack_pointwise({&e.b1x1, &e.b3x3_1, &e.b3x3dbl_1}, false);
    keep_shapes_only({&e.b1x1, &e.b3x3_1, &e.b3x3dbl_1});
  } else {
    e.head = stack_pointwise({&e.b1x1, &e.b3x3_1, &e.b3x3dbl_1, &e.pool}, true);
    keep_shapes_only({&e.b1x1, &e.b3x3_1, &e.b3x3dbl_1, &e.pool});
  }
}

}  // namespace encode_internal

InceptionModel::InceptionModel(std::unique_ptr<Net> net) : net_(std::move(net)) {}
InceptionModel::InceptionModel(InceptionModel&&) noexcept = default;
InceptionModel& InceptionModel::operator=(InceptionModel&&) noexcept = default;
InceptionModel::~InceptionModel() = default;

std::size_t InceptionModel::feature_dim() const {
  const InceptionE& e = net_->mixed_7[1];
  return e.b1x1.out + e.b3x3_2a.out + e.b3x3_2b.out + e.b3x3dbl_3a.out + e.b3x3dbl_3b.out +
         e.pool.out;
}

std::size_t InceptionModel::classes() const {
  return net_->fc.out;
}

InceptionOutput parse_inception_output(const std::string& name) {
  if (name == "pool3") return InceptionOutput::Pool3;
  if (name == "logits") return InceptionOutput::Logits;
  if (name == "logits-unbiased") return InceptionOutput::LogitsUnbiased;
  VLBIAS_FAIL(UsageError,
              "Unknown Inception output '{}'; expected pool3 (FID, KID, PRDC), logits or "
              "logits-unbiased (the Inception Score's).",
              name);
}

std::string inception_output_name(InceptionOutput output) {
  switch (output) {
    case InceptionOutput::Pool3:
      return "pool3";
    case InceptionOutput::Logits:
      return "logits";
    case InceptionOutput::LogitsUnbiased:
      return "logits-unbiased";
  }
  return "";
}

Matrix InceptionModel::logits(const Matrix& pool3, bool bias) const {
  VLBIAS_CHECK(net_->fc.out > 0 && pool3.cols == net_->fc.in, InternalError,
               "the Inception weights hold no fc layer: no logits");
  Matrix out(pool3.rows, net_->fc.out);
  linear_rows(pool3.data.data(), pool3.cols, pool3.rows, net_->fc, out.data.data(), out.cols,
              false);
  if (bias) add_bias_rows(out.data.data(), out.rows, out.cols, net_->fc.b);
  return out;
}

Matrix InceptionModel::features(const float* pixels, std::size_t n, std::size_t size,
                                Matrix* logits) const {
  VLBIAS_CHECK(logits == nullptr || net_->fc.out > 0, InternalError,
               "the Inception weights hold no fc layer: no logits");
  VLBIAS_CHECK(size >= 75, InternalError, "Inception input of {} pixels; at least 75", size);
  Matrix out(n, feature_dim());
  if (n == 0) return out;
  // NCHW images to CNHW maps.
  const std::size_t plane = size * size;
  float* input = net_->t3.reserve(3 * n * plane);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < 3; ++c) {
      std::memcpy(input + (c * n + i) * plane, pixels + (i * 3 + c) * plane, plane * sizeof(float));
    }
  }
  Runner runner(*net_);
  const Maps x = runner.run({input, 3, n, size, size});
  global_avg_pool(x.data, x.channels, n, x.height, x.width, out.data.data());
  if (logits != nullptr) *logits = this->logits(out, true);
  return out;
}

double InceptionModel::macs_per_image() const {
  // Every layer's weights times its output positions at kInputSize.
  double macs = 0.0;
  std::size_t h = kInputSize;
  const auto add = [&](const Conv2d& c, std::size_t at) {
    const std::size_t o = c.out_height(at);
    const std::size_t weights = c.out * c.in * c.kernel_h * c.kernel_w;  // stacked parts too
    macs += static_cast<double>(weights) * static_cast<double>(o * o);
    return o;
  };
  h = add(net_->conv1a, h);
  h = add(net_->conv2a, h);
  h = add(net_->conv2b, h);
  h = Pool2d{3, 2, 0}.out_size(h);
  h = add(net_->conv3b, h);
  h = add(net_->conv4a, h);
  h = Pool2d{3, 2, 0}.out_size(h);
  for (const InceptionA& a : net_->mixed_5) {
    for (const Conv2d* c :
         {&a.b1x1, &a.b5x5_1, &a.b5x5_2, &a.b3x3dbl_1, &a.b3x3dbl_2, &a.b3x3dbl_3, &a.pool}) {
      add(*c, h);
    }
  }
  const InceptionB& b = net_->mixed_6a;
  add(b.b3x3, h), add(b.b3x3dbl_1, h), add(b.b3x3dbl_2, h), add(b.b3x3dbl_3, h);
  h = Pool2d{3, 2, 0}.out_size(h);
  for (const InceptionC& c : net_->mixed_6) {
    for (const Conv2d* l : {&c.b1x1, &c.b7x7_1, &c.b7x7_2, &c.b7x7_3, &c.b7x7dbl_1, &c.b7x7dbl_2,
                            &c.b7x7dbl_3, &c.b7x7dbl_4, &c.b7x7dbl_5, &c.pool}) {
      add(*l, h);
    }
  }
  const InceptionD& d = net_->mixed_7a;
  add(d.b3x3_1, h), add(d.b3x3_2, h), add(d.b7x7x3_1, h), add(d.b7x7x3_2, h);
  add(d.b7x7x3_3, h), add(d.b7x7x3_4, h);
  h = Pool2d{3, 2, 0}.out_size(h);
  for (const InceptionE& e : net_->mixed_7) {
    for (const Conv2d* l : {&e.b1x1, &e.b3x3_1, &e.b3x3_2a, &e.b3x3_2b, &e.b3x3dbl_1, &e.b3x3dbl_2,
                            &e.b3x3dbl_3a, &e.b3x3dbl_3b, &e.pool}) {
      add(*l, h);
    }
  }
  return macs + static_cast<double>(net_->fc.w.size());
}

}  // namespace vlbias
