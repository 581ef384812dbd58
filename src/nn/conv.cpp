// Convolution, pooling and resizing over CNHW feature maps: see include/vlbias/nn/conv.h.
#include "vlbias/nn/conv.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "winograd.h"

namespace vlbias {

namespace {

// im2col of the output columns [col0, col1) of the batch (column j = (n, oy, ox) in that order):
// cols[r * (col1 - col0) + j - col0] for the rows r = (ci, ky, kx) in [r0, r1), torch's weight
// order. Serial (the caller runs chunks of columns or rows in parallel). Along an output row the
// valid input columns form one range, copied without per-element bounds checks (a memcpy at
// stride 1).
void im2col(const Conv2d& c, const float* x, std::size_t images, std::size_t h, std::size_t w,
            std::size_t col0, std::size_t col1, std::size_t r0, std::size_t r1, float* cols) {
  const std::size_t oh = c.out_height(h), ow = c.out_width(w), plane = oh * ow;
  const std::size_t nc = col1 - col0;
  const auto sw = static_cast<std::ptrdiff_t>(w), s = static_cast<std::ptrdiff_t>(c.stride);
  for (std::size_t r = r0; r < r1; ++r) {
    const std::size_t ci = r / (c.kernel_h * c.kernel_w);
    const std::size_t ky = (r / c.kernel_w) % c.kernel_h, kx = r % c.kernel_w;
    // Output columns ox whose input column ox * s + kx - pad_w lies in [0, w): [lo, hi).
    const std::ptrdiff_t shift =
        static_cast<std::ptrdiff_t>(kx) - static_cast<std::ptrdiff_t>(c.pad_w);
    const std::ptrdiff_t lo_raw = shift >= 0 ? 0 : (-shift + s - 1) / s;
    const std::ptrdiff_t hi_raw = sw - shift <= 0 ? 0 : (sw - shift - 1) / s + 1;
    const auto lo =
        static_cast<std::size_t>(std::min<std::ptrdiff_t>(lo_raw, static_cast<std::ptrdiff_t>(ow)));
    const auto hi = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(
        hi_raw, static_cast<std::ptrdiff_t>(lo), static_cast<std::ptrdiff_t>(ow)));
    float* out = cols + r * nc;
    for (std::size_t j = col0; j < col1;) {
      const std::size_t n = j / plane, oy = (j % plane) / ow, ox0 = j % ow;
      const std::size_t ox1 = std::min(ow, ox0 + (col1 - j));  // this output row's part
      float* o = out + (j - col0) - ox0;                       // o[ox] is column (n, oy, ox)
      const std::ptrdiff_t iy =
          static_cast<std::ptrdiff_t>(oy * c.stride + ky) - static_cast<std::ptrdiff_t>(c.pad_h);
      if (iy < 0 || iy >= static_cast<std::ptrdiff_t>(h)) {
        std::fill(o + ox0, o + ox1, 0.0f);
      } else {
        const float* in = x + ((ci * images + n) * h + static_cast<std::size_t>(iy)) * w;
        const std::size_t a = std::clamp(lo, ox0, ox1), b = std::clamp(hi, a, ox1);
        std::fill(o + ox0, o + a, 0.0f);
        if (c.stride == 1) {
          std::memcpy(o + a, in + static_cast<std::ptrdiff_t>(a) + shift, (b - a) * sizeof(float));
        } else {
          for (std::size_t ox = a; ox < b; ++ox)
            o[ox] = in[static_cast<std::ptrdiff_t>(ox) * s + shift];
        }
        std::fill(o + b, o + ox1, 0.0f);
      }
      j += ox1 - ox0;
    }
  }
}

// row[j] = act(row[j] + b[c]) for rows c of `channels`, `cols` floats each, `stride` apart;
// plus residual's row (the same layout) before act when `residual` is not null.
void bias_relu_rows(float* y, std::size_t channels, std::size_t cols, std::size_t stride,
                    const float* b, bool relu, const float* residual = nullptr) {
  for (std::size_t c = 0; c < channels; ++c) {
    float* row = y + c * stride;
    const float bias = b[c];
    if (residual != nullptr) {
      const float* res = residual + c * stride;
      for (std::size_t j = 0; j < cols; ++j) row[j] += bias + res[j];
      if (relu) {
        for (std::size_t j = 0; j < cols; ++j) row[j] = std::max(row[j], 0.0f);
      }
    } else if (relu) {
      for (std::size_t j = 0; j < cols; ++j) row[j] = std::max(row[j] + bias, 0.0f);
    } else {
      for (std::size_t j = 0; j < cols; ++j) row[j] += bias;
    }
  }
}

// At most this many output columns (and at least 128 output channels): conv2d_whole. Measured on
// ResNet-34's 14 x 14 -> 7 x 7 layers in batches of 16 (784 columns): 13.9 -> 11.5 ms; its 28 x 28
// -> 14 x 14 ones (3,136 columns) are faster in chunks.
constexpr std::size_t kWholeColumns = 1024;

// conv2d for few output columns and many weights (the late strided convolutions of a ResNet):
// im2col of every column once (in blocks of rows), then the GEMM in blocks of output channels,
// so that each weight is packed once rather than once per chunk of columns. Each task's
// arithmetic depends on the shapes only: bitwise the same for any thread count.
void conv2d_whole(const Conv2d& c, const float* x, std::size_t images, std::size_t h, std::size_t w,
                  float* y, const float* residual) {
  constexpr std::size_t rows_per_task = 64, channels_per_task = 64;
  const std::size_t total = images * c.out_height(h) * c.out_width(w);
  const std::size_t k = c.in * c.kernel_h * c.kernel_w;
  // The calling thread's buffer, handed to the tasks by pointer.
  thread_local std::vector<float> buffer;
  buffer.resize(k * total);
  float* cols = buffer.data();
  parallel_for((k + rows_per_task - 1) / rows_per_task, [&](std::size_t t) {
    const std::size_t r0 = t * rows_per_task;
    im2col(c, x, images, h, w, 0, total, r0, std::min(k, r0 + rows_per_task), cols);
  });
  const std::size_t live = c.out - c.linear_tail;
  parallel_for((c.out + channels_per_task - 1) / channels_per_task, [&](std::size_t t) {
    const std::size_t o0 = t * channels_per_task, o1 = std::min(c.out, o0 + channels_per_task);
    sgemm(Transpose::No, Transpose::No, o1 - o0, total, k, 1.0f, c.w.data() + o0 * k, k, cols,
          total, 0.0f, y + o0 * total, total);
    if (o0 < live) {
      bias_relu_rows(y + o0 * total, std::min(o1, live) - o0, total, total, c.b.data() + o0, c.relu,
                     residual != nullptr ? residual + o0 * total : nullptr);
    }
  });
}

}  // namespace

void add_bias_relu(float* y, std::size_t channels, std::size_t cols, const float* bias, bool relu) {
  parallel_chunks(channels, 4, [&](std::size_t, std::size_t c0, std::size_t c1) {
    bias_relu_rows(y + c0 * cols, c1 - c0, cols, cols, bias + c0, relu);
  });
}

Conv2d stack_pointwise(const std::vector<const Conv2d*>& parts, bool last_is_linear_tail) {
  VLBIAS_CHECK(!parts.empty(), InternalError, "stack_pointwise: no convolutions");
  Conv2d s;
  s.in = parts[0]->in;
  s.relu = parts[0]->relu;
  for (const Conv2d* p : parts) {
    VLBIAS_CHECK(p->in == s.in && p->relu == s.relu && p->kernel_h == 1 && p->kernel_w == 1 &&
                     p->stride == 1 && p->pad_h == 0 && p->pad_w == 0 && p->linear_tail == 0 &&
                     p->w.size() == p->out * p->in && p->b.size() == p->out,
                 InternalError,
                 "stack_pointwise: a {}x{} convolution of {} channels among 1x1 "
                 "ones of {}",
                 p->kernel_h, p->kernel_w, p->in, s.in);
    s.out += p->out;
    s.w.insert(s.w.end(), p->w.begin(), p->w.end());
    s.b.insert(s.b.end(), p->b.begin(), p->b.end());
  }
  if (last_is_linear_tail) s.linear_tail = parts.back()->out;
  return s;
}

void fold_batch_norm(Conv2d& conv, const std::vector<float>& gamma, const std::vector<float>& beta,
                     const std::vector<float>& mean, const std::vector<float>& var, double eps) {
  VLBIAS_CHECK(beta.size() == conv.out && mean.size() == conv.out && var.size() == conv.out &&
                   (gamma.empty() || gamma.size() == conv.out) && conv.b.empty(),
               InternalError, "fold_batch_norm: {} output channels, norm of {}", conv.out,
               beta.size());
  const std::size_t per = conv.w.size() / conv.out;
  conv.b.resize(conv.out);
  for (std::size_t o = 0; o < conv.out; ++o) {
    const double g = gamma.empty() ? 1.0 : gamma[o];
    const double s = g / std::sqrt(static_cast<double>(var[o]) + eps);
    float* row = conv.w.data() + o * per;
    for (std::size_t k = 0; k < per; ++k) row[k] = static_cast<float>(row[k] * s);
    conv.b[o] = static_cast<float>(beta[o] - mean[o] * s);
  }
}

void conv2d(const Conv2d& c, const float* x, std::size_t images, std::size_t h, std::size_t w,
            float* y, const float* residual) {
  VLBIAS_CHECK(h + 2 * c.pad_h >= c.kernel_h && w + 2 * c.pad_w >= c.kernel_w && c.stride > 0 &&
                   (c.w.size() == c.out * c.in * c.kernel_h * c.kernel_w ||
                    (c.w.empty() && !c.winograd.empty())) &&
                   c.b.size() == c.out,
               InternalError, "conv2d: a {}x{} kernel over a {}x{} map, or inconsistent weights",
               c.kernel_h, c.kernel_w, h, w);
  assert(c.linear_tail <= c.out && (residual == nullptr || c.linear_tail == 0));
  if (!c.winograd.empty()) return nn_internal::winograd_conv2d(c, x, images, h, w, y, residual);
  const std::size_t total = images * c.out_height(h) * c.out_width(w);
  const std::size_t k = c.in * c.kernel_h * c.kernel_w;
  // Chunks of output columns, each im2col'd (a 1x1 stride-1 convolution without padding reads x
  // directly) and multiplied by one task, a serial sgemm inside it: no synchronisation between
  // the two steps, and the chunk size (a multiple of 16 within the scratch budget, independent of
  // the thread count) keeps the results bitwise the same for any number of threads.
  const bool direct =
      c.kernel_h == 1 && c.kernel_w == 1 && c.stride == 1 && c.pad_h == 0 && c.pad_w == 0;
  // At least 8 chunks where the columns allow (the late 8 x 8 maps have few), at most
  // kConvChunkColumns columns each.
  const std::size_t spread = std::max<std::size_t>(256, (total / 8 + 15) / 16 * 16);
  const std::size_t chunk = std::clamp<std::size_t>(
      std::min(kConvScratchFloats / k / 16 * 16, spread), 16, kConvChunkColumns);
  if (!direct && total <= kWholeColumns && total * k <= 4 * kConvScratchFloats && c.out >= 128) {
    return conv2d_whole(c, x, images, h, w, y, residual);
  }
  parallel_for((total + chunk - 1) / chunk, [&](std::size_t t) {
    thread_local std::vector<float> cols;
    const std::size_t col0 = t * chunk, col1 = std::min(total, col0 + chunk), nc = col1 - col0;
    const float* b = x + col0;
    std::size_t ldb = total;
    if (!direct) {
      cols.resize(k * nc);
      im2col(c, x, images, h, w, col0, col1, 0, k, cols.data());
      b = cols.data();
      ldb = nc;
    }
    sgemm(Transpose::No, Transpose::No, c.out, nc, k, 1.0f, c.w.data(), k, b, ldb, 0.0f, y + col0,
          total);
    // While the chunk's outputs are still in cache.
    bias_relu_rows(y + col0, c.out - c.linear_tail, nc, total, c.b.data(), c.relu,
                   residual != nullptr ? residual + col0 : nullptr);
  });
}

namespace {

enum class PoolKind { Max, AvgIncludePad, AvgExcludePad };

// One output of a pooling window clipped to the plane (torch's order: rows outside, columns
// inside; the sum in the tensor's type).
float pool_window(const float* in, std::size_t h, std::size_t w, const Pool2d& p, PoolKind kind,
                  std::size_t oy, std::size_t ox) {
  const std::size_t y0 = oy * p.stride > p.pad ? oy * p.stride - p.pad : 0;
  const std::size_t y1 = std::min(h, oy * p.stride + p.kernel - p.pad);
  const std::size_t x0 = ox * p.stride > p.pad ? ox * p.stride - p.pad : 0;
  const std::size_t x1 = std::min(w, ox * p.stride + p.kernel - p.pad);
  float acc = kind == PoolKind::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (std::size_t yy = y0; yy < y1; ++yy) {
    for (std::size_t xx = x0; xx < x1; ++xx) {
      acc = kind == PoolKind::Max ? std::max(acc, in[yy * w + xx]) : acc + in[yy * w + xx];
    }
  }
  if (kind == PoolKind::Max) return acc;
  const std::size_t count =
      kind == PoolKind::AvgIncludePad ? p.kernel * p.kernel : (y1 - y0) * (x1 - x0);
  return acc / static_cast<float>(count);
}

// The pool over `planes` planes. Windows wholly inside a plane take a straight-line path for
// 3 x 3 kernels (the Inception's; the same operations in the same order, so the same bits),
// which the compiler vectorises over the output columns.
void pool(const float* x, std::size_t planes, std::size_t h, std::size_t w, const Pool2d& p,
          PoolKind kind, float* y) {
  const std::size_t oh = p.out_size(h), ow = p.out_size(w), s = p.stride;
  // Output columns [ax, bx) and rows [ay, by) whose window lies inside the plane.
  const auto first = [&](std::size_t) { return (p.pad + s - 1) / s; };
  const auto last = [&](std::size_t n, std::size_t outs) {
    return n + p.pad < p.kernel ? std::size_t{0} : std::min(outs, (n + p.pad - p.kernel) / s + 1);
  };
  const std::size_t ax = std::min(first(w), ow), bx = std::max(ax, last(w, ow));
  const std::size_t ay = std::min(first(h), oh), by = std::max(ay, last(h, oh));
  const bool fast = p.kernel == 3;
  parallel_chunks(planes, 8, [&](std::size_t, std::size_t p0, std::size_t p1) {
    for (std::size_t q = p0; q < p1; ++q) {
      const float* in = x + q * h * w;
      float* out = y + q * oh * ow;
      for (std::size_t oy = 0; oy < oh; ++oy) {
        float* o = out + oy * ow;
        const bool row_inside = fast && oy >= ay && oy < by;
        for (std::size_t ox = 0; ox < ow; ++ox) {
          if (row_inside && ox == ax) {
            const float* r0 = in + (oy * s - p.pad) * w - p.pad;
            const float* r1 = r0 + w;
            const float* r2 = r1 + w;
            if (kind == PoolKind::Max) {
              for (; ox < bx; ++ox) {
                const std::size_t c = ox * s;
                o[ox] = std::max({r0[c], r0[c + 1], r0[c + 2], r1[c], r1[c + 1], r1[c + 2], r2[c],
                                  r2[c + 1], r2[c + 2]});
              }
            } else {
              for (; ox < bx; ++ox) {
                const std::size_t c = ox * s;
                float sum = 0.0f;
                sum += r0[c], sum += r0[c + 1], sum += r0[c + 2];
                sum += r1[c], sum += r1[c + 1], sum += r1[c + 2];
                sum += r2[c], sum += r2[c + 1], sum += r2[c + 2];
                o[ox] = sum / 9.0f;
              }
            }
            if (ox >= ow) break;
          }
          o[ox] = pool_window(in, h, w, p, kind, oy, ox);
        }
      }
    }
  });
}

}  // namespace

void max_pool2d(const float* x, std::size_t planes, std::size_t h, std::size_t w, const Pool2d& p,
                float* y) {
  pool(x, planes, h, w, p, PoolKind::Max, y);
}

void avg_pool2d(const float* x, std::size_t planes, std::size_t h, std::size_t w, const Pool2d& p,
                bool count_include_pad, float* y) {
  pool(x, planes, h, w, p, count_include_pad ? PoolKind::AvgIncludePad : PoolKind::AvgExcludePad,
       y);
}

void global_avg_pool(const float* x, std::size_t channels, std::size_t images, std::size_t h,
                     std::size_t w, float* out) {
  const std::size_t plane = h * w;
  parallel_chunks(channels, 16, [&](std::size_t, std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      for (std::size_t n = 0; n < images; ++n) {
        const float* in = x + (c * images + n) * plane;
        double sum = 0.0;
        for (std::size_t i = 0; i < plane; ++i) sum += in[i];
        out[n * channels + c] = static_cast<float>(sum / static_cast<double>(plane));
      }
    }
  });
}

namespace {

// torch's compute_source_index_and_lambda for one axis (float arithmetic, as for float tensors).
struct LinearTap {
  std::size_t i0 = 0, i1 = 0;
  float w0 = 1.0f, w1 = 0.0f;
};

std::vector<LinearTap> linear_taps(std::size_t in, std::size_t out) {
  std::vector<LinearTap> taps(out);
  if (in == out) {
    for (std::size_t i = 0; i < out; ++i) taps[i].i0 = taps[i].i1 = i;
    return taps;
  }
  // The scale in the tensor's type; the source index in double (CPU's accumulate type).
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (std::size_t i = 0; i < out; ++i) {
    double src = double{scale} * (static_cast<double>(i) + 0.5) - 0.5;
    if (src < 0.0) src = 0.0;
    const std::size_t i0 = std::min(static_cast<std::size_t>(std::floor(src)), in - 1);
    const auto lambda = static_cast<float>(std::clamp(src - static_cast<double>(i0), 0.0, 1.0));
    taps[i] = {i0, i0 + (i0 < in - 1 ? 1 : 0), 1.0f - lambda, lambda};
  }
  return taps;
}

}  // namespace

void resize_bilinear(const float* x, std::size_t h, std::size_t w, float* y, std::size_t oh,
                     std::size_t ow) {
  VLBIAS_CHECK(h > 0 && w > 0 && oh > 0 && ow > 0, InternalError, "resize_bilinear: {}x{} to {}x{}",
               h, w, oh, ow);
  const std::vector<LinearTap> ty = linear_taps(h, oh), tx = linear_taps(w, ow);
  for (std::size_t oy = 0; oy < oh; ++oy) {
    const LinearTap& a = ty[oy];
    const float* r0 = x + a.i0 * w;
    const float* r1 = x + a.i1 * w;
    for (std::size_t ox = 0; ox < ow; ++ox) {
      const LinearTap& b = tx[ox];
      // torch's Interpolate<2>: the height taps outside, each a width interpolation.
      const float t0 = r0[b.i0] * b.w0 + r0[b.i1] * b.w1;
      const float t1 = r1[b.i0] * b.w0 + r1[b.i1] * b.w1;
      y[oy * ow + ox] = t0 * a.w0 + t1 * a.w1;
    }
  }
}

}  // namespace vlbias
