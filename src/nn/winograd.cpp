// Winograd F(2x2, 3x3) (Lavin & Gray 2016, "Fast Algorithms for Convolutional Neural Networks",
// section 4.1): each 2 x 2 output tile is A^T [(G g G^T) . (B^T d B)] A for the 4 x 4 input tile
// d and the 3 x 3 filter g; summed over input channels, the 16 elementwise products become 16
// GEMMs (out x in) . (in x tiles).
#include "winograd.h"

#include <algorithm>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

namespace {

constexpr std::size_t kPoints = 16;  // the 4 x 4 transformed tile

// The geometry of one call: tiles t = (image, ty, tx) in that order.
struct Tiling {
  std::size_t images, h, w, pad, oh, ow, th, tw;
  std::size_t tiles() const { return images * th * tw; }
};

// Calls fn(n, ty, tx0, tx1, j0) for the runs of tiles [t0, t1) along tile rows (image n, tile
// row ty, tiles tx0..tx1 - 1, the first one the chunk's j0-th): the transforms work on a run at
// a time, vectorised across its tiles.
template <typename Fn>
void for_tile_runs(const Tiling& g, std::size_t t0, std::size_t t1, Fn fn) {
  for (std::size_t t = t0; t < t1;) {
    const std::size_t row = t / g.tw, tx0 = t % g.tw, tx1 = std::min(g.tw, tx0 + (t1 - t));
    fn(row / g.th, row % g.th, tx0, tx1, t - t0);
    t += tx1 - tx0;
  }
}

// V[p][c][j] = (B^T d B)[p] for channel c of the chunk's tiles [t0, t1) (nt = t1 - t0),
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
void transform_inputs(const Tiling& g, std::size_t channels, const float* x, std::size_t t0,
                      std::size_t t1, float* v) {
  const std::size_t nt = t1 - t0, stride = channels * nt;
  thread_local std::vector<float> rows;  // the run's 4 input rows, zero-padded
  for (std::size_t c = 0; c < channels; ++c) {
    for_tile_runs(
        g, t0, t1,
        [&](std::size_t n, std::size_t ty, std::size_t tx0, std::size_t tx1, std::size_t j0) {
          const std::size_t tiles = tx1 - tx0, width = 2 * tiles + 2;
          rows.resize(8 * width);
          const float* plane = x + (c * g.images + n) * g.h * g.w;
          // Input columns 2 tx0 - pad + q for q in [0, width): the part inside the map.
          const auto first =
              static_cast<std::ptrdiff_t>(2 * tx0) - static_cast<std::ptrdiff_t>(g.pad);
          const std::ptrdiff_t q0 = std::max<std::ptrdiff_t>(0, -first);
          const std::ptrdiff_t q1 = std::min<std::ptrdiff_t>(
              static_cast<std::ptrdiff_t>(width), static_cast<std::ptrdiff_t>(g.w) - first);
          for (std::size_t i = 0; i < 4; ++i) {
            const std::ptrdiff_t iy =
                static_cast<std::ptrdiff_t>(2 * ty + i) - static_cast<std::ptrdiff_t>(g.pad);
            float* row = rows.data() + i * width;
            if (iy < 0 || iy >= static_cast<std::ptrdiff_t>(g.h) || q1 <= q0) {
              std::fill(row, row + width, 0.0f);
              continue;
            }
            const float* src = plane + iy * static_cast<std::ptrdiff_t>(g.w) + first;
            std::fill(row, row + q0, 0.0f);
            std::copy(src + q0, src + q1, row + q0);
            std::fill(row + q1, row + width, 0.0f);
          }
          // T_i = (B^T d)_i across the run's columns, then V = T B column pairs by column pairs:
          // each loop one output stream, so the compiler vectorises them across tiles.
          float* __restrict tr = rows.data() + 4 * width;
          const float* __restrict r = rows.data();
          for (std::size_t q = 0; q < width; ++q) {
            tr[q] = r[q] - r[2 * width + q];
            tr[width + q] = r[width + q] + r[2 * width + q];
            tr[2 * width + q] = r[2 * width + q] - r[width + q];
            tr[3 * width + q] = r[width + q] - r[3 * width + q];
          }
          for (std::size_t i = 0; i < 4; ++i) {
            const float* __restrict ti = tr + i * width;
            float* __restrict v0 = v + (4 * i) * stride + c * nt + j0;
            float* __restrict v1 = v0 + stride;
            float* __restrict v2 = v1 + stride;
            float* __restrict v3 = v2 + stride;
            for (std::size_t k = 0; k < tiles; ++k) v0[k] = ti[2 * k] - ti[2 * k + 2];
            for (std::size_t k = 0; k < tiles; ++k) v1[k] = ti[2 * k + 1] + ti[2 * k + 2];
            for (std::size_t k = 0; k < tiles; ++k) v2[k] = ti[2 * k + 2] - ti[2 * k + 1];
            for (std::size_t k = 0; k < tiles; ++k) v3[k] = ti[2 * k + 1] - ti[2 * k + 3];
          }
        });
  }
}

// y from M[p][o][j] for the chunk's tiles [t0, t1): A^T m A with A^T = [1 1 1 0; 0 1 -1 -1],
// bias and ReLU; outputs past the map (an odd size's last tile row or column) are dropped.
void transform_outputs(const Conv2d& c, const Tiling& g, const float* m, std::size_t t0,
                       std::size_t t1, float* y) {
  const std::size_t nt = t1 - t0, stride = c.out * nt;
  thread_local std::vector<float> rows;  // the run's 2 output rows
  for (std::size_t o = 0; o < c.out; ++o) {
    const float bias = c.b[o];
    const bool relu = c.relu;
    for_tile_runs(
        g, t0, t1,
        [&](std::size_t n, std::size_t ty, std::size_t tx0, std::size_t tx1, std::size_t j0) {
          const std::size_t tiles = tx1 - tx0;
          rows.resize(12 * tiles);
          // T = A^T m (2 x 4 per tile) across the run's tiles, then the two output rows.
          float* __restrict t = rows.data() + 4 * tiles;
          const float* __restrict in = m + o * nt + j0;
          for (std::size_t j = 0; j < 4; ++j) {
            const float* __restrict m0 = in + j * stride;
            const float* __restrict m1 = m0 + 4 * stride;
            const float* __restrict m2 = m1 + 4 * stride;
            const float* __restrict m3 = m2 + 4 * stride;
            float* __restrict ta = t + j * tiles;
            float* __restrict tb = t + (4 + j) * tiles;
            for (std::size_t k = 0; k < tiles; ++k) ta[k] = m0[k] + m1[k] + m2[k];
            for (std::size_t k = 0; k < tiles; ++k) tb[k] = m1[k] - m2[k] - m3[k];
          }
          float* __restrict y0 = rows.data();
          float* __restrict y1 = y0 + 2 * tiles;
          for (std::size_t r = 0; r < 2; ++r) {
            const float* __restrict a = t + 4 * r * tiles;
            float* __restrict yr = r == 0 ? y0 : y1;
            for (std::size_t k = 0; k < tiles; ++k) {
              float e0 = a[k] + a[tiles + k] + a[2 * tiles + k] + bias;
              float e1 = a[tiles + k] - a[2 * tiles + k] - a[3 * tiles + k] + bias;
              if (relu) e0 = std::max(e0, 0.0f), e1 = std::max(e1, 0.0f);
              yr[2 * k] = e0;
              yr[2 * k + 1] = e1;
            }
          }
          const std::size_t oy = 2 * ty, ox = 2 * tx0, cols = std::min(2 * tiles, g.ow - ox);
          float* out = y + (o * g.images + n) * g.oh * g.ow + oy * g.ow + ox;
          std::copy(y0, y0 + cols, out);
          if (oy + 1 < g.oh) std::copy(y1, y1 + cols, out + g.ow);
        });
  }
}

}  // namespace

void prepare_winograd(Conv2d& c) {
  VLBIAS_CHECK(c.kernel_h == 3 && c.kernel_w == 3 && c.stride == 1 && c.pad_h == c.pad_w &&
                   c.pad_h <= 1 && c.linear_tail == 0 && c.w.size() == c.out * c.in * 9,
               InternalError, "prepare_winograd: a {}x{} stride-{} convolution", c.kernel_h,
               c.kernel_w, c.stride);
  // U = G g G^T, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double.
  static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  c.winograd.assign(kPoints * c.out * c.in, 0.0f);
  for (std::size_t o = 0; o < c.out; ++o) {
    for (std::size_t i = 0; i < c.in; ++i) {
      const float* g = c.w.data() + (o * c.in + i) * 9;
      double gt[4][3];  // G g
      for (int r = 0; r < 4; ++r) {
        for (int k = 0; k < 3; ++k) {
          gt[r][k] = G[r][0] * g[k] + G[r][1] * g[3 + k] + G[r][2] * g[6 + k];
        }
      }
      for (int r = 0; r < 4; ++r) {
        for (int s = 0; s < 4; ++s) {
          const double u = gt[r][0] * G[s][0] + gt[r][1] * G[s][1] + gt[r][2] * G[s][2];
          c.winograd[(static_cast<std::size_t>(4 * r + s) * c.out + o) * c.in + i] =
              static_cast<float>(u);
        }
      }
    }
  }
}

namespace nn_internal {

void winograd_conv2d(const Conv2d& c, const float* x, std::size_t images, std::size_t h,
                     std::size_t w, float* y) {
  const Tiling g{images,
                 h,
                 w,
                 c.pad_h,
                 c.out_height(h),
                 c.out_width(w),
                 (c.out_height(h) + 1) / 2,
                 (c.out_width(w) + 1) / 2};
  const std::size_t total = g.tiles();
  // Chunks of tiles as pool tasks (transforms and 16 serial GEMMs each); the chunk size depends
  // on the shapes only, so the result is bitwise the same for any thread count.
  const std::size_t per_tile = kPoints * (c.in + c.out);
  const std::size_t spread = std::max<std::size_t>(64, (total / 8 + 15) / 16 * 16);
  const std::size_t chunk =
      std::clamp<std::size_t>(std::min(kConvScratchFloats / per_tile / 16 * 16, spread), 16, 1024);
  parallel_for((total + chunk - 1) / chunk, [&](std::size_t task) {
    thread_local std::vector<float> v, m;
    const std::size_t t0 = task * chunk, t1 = std::min(total, t0 + chunk), nt = t1 - t0;
    v.resize(kPoints * c.in * nt);
    m.resize(kPoints * c.out * nt);
    transform_inputs(g, c.in, x, t0, t1, v.data());
    for (std::size_t p = 0; p < kPoints; ++p) {
      sgemm(Transpose::No, Transpose::No, c.out, nt, c.in, 1.0f,
            c.winograd.data() + p * c.out * c.in, c.in, v.data() + p * c.in * nt, nt, 0.0f,
            m.data() + p * c.out * nt, nt);
    }
    transform_outputs(c, g, m.data(), t0, t1, y);
  });
}

}  // namespace nn_internal
}  // namespace vlbias
