// Winograd F(m x m, 3 x 3) for m = 2 and m = 4 (Lavin & Gray 2016, "Fast Algorithms for
// Convolutional Neural Networks", section 4): each m x m output tile is A^T [(G g G^T) . (B^T d B)]
// A for the a x a input tile d (a = m + 2) and the 3 x 3 filter g; summed over input channels, the
// a^2 elementwise products become a^2 GEMMs (out x in) . (in x tiles).
// The interpolation points: F(2x2) Lavin's 0, 1, -1 (and infinity); F(4x4) 0, 1, -1, 2, -1/2,
// which Barabasz et al. 2020 ("Error analysis and improving the accuracy of Winograd convolution
// for deep neural networks", ACM TOMS 46(4), section 5) find about 3x more accurate in float32
// than Lavin's 0, +-1, +-2 (checked here: 1.0e-6 against 3.7e-6 of the output's scale over 128
// channels). B^T, G and A^T follow from the points by Toom-Cook: A^T[i][j] = p_j^i,
// G[j] = (1, p_j, p_j^2) / prod_{l != j} (p_j - p_l), B^T the unique matrix completing the
// identity.
#include "winograd.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"

namespace vlbias {

namespace {

// One tile size's transforms over streams: stream l of the input starts at in + l * ls and its
// element k is in[k * InStep]; output stream j at out[j], element k at out[j][k * OutStep]. Each
// loop writes one output stream, so the compiler vectorises it across elements.
struct TileF2 {
  static constexpr std::size_t m = 2, a = 4;
  static constexpr double g[a][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

  // B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
  template <std::size_t InStep, std::size_t OutStep>
  static void input(const float* __restrict in, std::size_t ls, float* const* out, std::size_t n) {
    const float* __restrict d0 = in, * __restrict d1 = in + ls, * __restrict d2 = in + 2 * ls, * __restrict d3 = in + 3 * ls;
    float* __restrict o0 = out[0], * __restrict o1 = out[1], * __restrict o2 = out[2], * __restrict o3 = out[3];
    for (std::size_t k = 0; k < n; ++k) o0[k * OutStep] = d0[k * InStep] - d2[k * InStep];
    for (std::size_t k = 0; k < n; ++k) o1[k * OutStep] = d1[k * InStep] + d2[k * InStep];
    for (std::size_t k = 0; k < n; ++k) o2[k * OutStep] = d2[k * InStep] - d1[k * InStep];
    for (std::size_t k = 0; k < n; ++k) o3[k * OutStep] = d1[k * InStep] - d3[k * InStep];
  }

  // A^T = [1 1 1 0; 0 1 -1 -1].
  template <std::size_t InStep, std::size_t OutStep>
  static void output(const float* __restrict in, std::size_t ls, float* const* out, std::size_t n) {
    const float* __restrict m0 = in, * __restrict m1 = in + ls, * __restrict m2 = in + 2 * ls, * __restrict m3 = in + 3 * ls;
    float* __restrict o0 = out[0], * __restrict o1 = out[1];
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o0[k * OutStep] = m0[i] + m1[i] + m2[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o1[k * OutStep] = m1[i] - m2[i] - m3[i];
    }
  }
};

struct TileF4 {
  static constexpr std::size_t m = 4, a = 6;
  static constexpr double g[a][3] = {{1, 0, 0},
                                     {-1.0 / 3, -1.0 / 3, -1.0 / 3},
                                     {1.0 / 3, -1.0 / 3, 1.0 / 3},
                                     {1.0 / 15, 2.0 / 15, 4.0 / 15},
                                     {-16.0 / 15, 8.0 / 15, -4.0 / 15},
                                     {0, 0, 1}};

  // B^T = [1 3/2 -2 -3/2 1 0; 0 -1 -5/2 -1/2 1 0; 0 1 1/2 -5/2 1 0; 0 -1/2 -1 1/2 1 0;
  //        0 2 -1 -2 1 0; 0 1 3/2 -2 -3/2 1].
  template <std::size_t InStep, std::size_t OutStep>
  static void input(const float* __restrict in, std::size_t ls, float* const* out, std::size_t n) {
    const float* __restrict d0 = in, * __restrict d1 = in + ls, * __restrict d2 = in + 2 * ls, * __restrict d3 = in + 3 * ls, * __restrict d4 = in + 4 * ls, * __restrict d5 = in + 5 * ls;
    float* __restrict o0 = out[0], * __restrict o1 = out[1], * __restrict o2 = out[2], * __restrict o3 = out[3], * __restrict o4 = out[4], * __restrict o5 = out[5];
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o0[k * OutStep] = d0[i] + 1.5f * d1[i] - 2.0f * d2[i] - 1.5f * d3[i] + d4[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o1[k * OutStep] = d4[i] - d1[i] - 2.5f * d2[i] - 0.5f * d3[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o2[k * OutStep] = d1[i] + 0.5f * d2[i] - 2.5f * d3[i] + d4[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o3[k * OutStep] = d4[i] - 0.5f * d1[i] - d2[i] + 0.5f * d3[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o4[k * OutStep] = 2.0f * d1[i] - d2[i] - 2.0f * d3[i] + d4[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o5[k * OutStep] = d1[i] + 1.5f * d2[i] - 2.0f * d3[i] - 1.5f * d4[i] + d5[i];
    }
  }

  // A^T = [1 1 1 1 1 0; 0 1 -1 2 -1/2 0; 0 1 1 4 1/4 0; 0 1 -1 8 -1/8 1].
  template <std::size_t InStep, std::size_t OutStep>
  static void output(const float* __restrict in, std::size_t ls, float* const* out, std::size_t n) {
    const float* __restrict m0 = in, * __restrict m1 = in + ls, * __restrict m2 = in + 2 * ls, * __restrict m3 = in + 3 * ls, * __restrict m4 = in + 4 * ls, * __restrict m5 = in + 5 * ls;
    float* __restrict o0 = out[0], * __restrict o1 = out[1], * __restrict o2 = out[2], * __restrict o3 = out[3];
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o0[k * OutStep] = m0[i] + m1[i] + m2[i] + m3[i] + m4[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o1[k * OutStep] = m1[i] - m2[i] + 2.0f * m3[i] - 0.5f * m4[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o2[k * OutStep] = m1[i] + m2[i] + 4.0f * m3[i] + 0.25f * m4[i];
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = k * InStep;
      o3[k * OutStep] = m1[i] - m2[i] + 8.0f * m3[i] - 0.125f * m4[i] + m5[i];
    }
  }
};

// Chunks of fewer tiles than this mean a map with few tiles: run_winograd_whole.
constexpr std::size_t kWholeLayerBelowChunk = 256;

// The geometry of one call: tiles t = (image, ty, tx) in that order.
struct Tiling {
  std::size_t m, images, h, w, pad, oh, ow, th, tw;
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

// Input rows m ty - pad + i (i < a) of plane `plane`, columns m tx0 - pad + q (q < width), zero
// outside the map, into rows[i * width + q].
void copy_tile_rows(const Tiling& g, std::size_t a, const float* plane, std::size_t ty,
                    std::size_t tx0, std::size_t width, float* rows) {
  const auto first = static_cast<std::ptrdiff_t>(g.m * tx0) - static_cast<std::ptrdiff_t>(g.pad);
  const std::ptrdiff_t q0 = std::max<std::ptrdiff_t>(0, -first);
  const std::ptrdiff_t q1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(width),
                                                     static_cast<std::ptrdiff_t>(g.w) - first);
  for (std::size_t i = 0; i < a; ++i) {
    const std::ptrdiff_t iy =
        static_cast<std::ptrdiff_t>(g.m * ty + i) - static_cast<std::ptrdiff_t>(g.pad);
    float* row = rows + i * width;
    if (iy < 0 || iy >= static_cast<std::ptrdiff_t>(g.h) || q1 <= q0) {
      std::fill(row, row + width, 0.0f);
      continue;
    }
    const float* src = plane + iy * static_cast<std::ptrdiff_t>(g.w) + first;
    std::fill(row, row + q0, 0.0f);
    std::copy(src + q0, src + q1, row + q0);
    std::fill(row + q1, row + width, 0.0f);
  }
}

// V[p][c][j] = (B^T d B)[p] for the channels [c0, c1) of `channels` and the chunk's tiles
// [t0, t1) (nt = t1 - t0).
template <typename Tile>
void transform_inputs(const Tiling& g, std::size_t channels, std::size_t c0, std::size_t c1,
                      const float* x, std::size_t t0, std::size_t t1, float* v) {
  constexpr std::size_t m = Tile::m, a = Tile::a;
  const std::size_t nt = t1 - t0, stride = channels * nt;
  thread_local std::vector<float> rows;  // the run's a input rows, then B^T d
  for (std::size_t c = c0; c < c1; ++c) {
    for_tile_runs(
        g, t0, t1,
        [&](std::size_t n, std::size_t ty, std::size_t tx0, std::size_t tx1, std::size_t j0) {
          const std::size_t tiles = tx1 - tx0, width = m * tiles + 2;
          rows.resize(2 * a * width);
          copy_tile_rows(g, a, x + (c * g.images + n) * g.h * g.w, ty, tx0, width, rows.data());
          float* tr = rows.data() + a * width;
          float* tr_rows[a];
          for (std::size_t i = 0; i < a; ++i) tr_rows[i] = tr + i * width;
          Tile::template input<1, 1>(rows.data(), width, tr_rows, width);  // B^T d, row by row
          for (std::size_t i = 0; i < a; ++i) {  // then (B^T d) B: tile k's columns m k + l
            float* points[a];
            for (std::size_t j = 0; j < a; ++j) points[j] = v + (a * i + j) * stride + c * nt + j0;
            Tile::template input<m, 1>(tr_rows[i], 1, points, tiles);
          }
        });
  }
}

// y from M[p][o][j] for the output channels [o0, o1) and the chunk's tiles [t0, t1): A^T M A,
// bias, the residual (when not null) and ReLU; outputs past the map (an odd size's last tile
// rows or columns) are dropped.
template <typename Tile>
void transform_outputs(const Conv2d& c, const Tiling& g, const float* mm, std::size_t o0,
                       std::size_t o1, std::size_t t0, std::size_t t1, float* y,
                       const float* residual) {
  constexpr std::size_t m = Tile::m, a = Tile::a;
  const std::size_t nt = t1 - t0, stride = c.out * nt;
  thread_local std::vector<float> rows;  // A^T M (m x a per tile), then the m output rows
  for (std::size_t o = o0; o < o1; ++o) {
    const float bias = c.b[o];
    for_tile_runs(
        g, t0, t1,
        [&](std::size_t n, std::size_t ty, std::size_t tx0, std::size_t tx1, std::size_t j0) {
          const std::size_t tiles = tx1 - tx0, row_len = m * tiles;
          rows.resize((m * a + m * m) * tiles);
          float* t = rows.data();
          float* out_rows = t + m * a * tiles;
          for (std::size_t j = 0; j < a; ++j) {  // T[r][j] = sum_i A^T[r][i] M[a i + j]
            float* tj[m];
            for (std::size_t r = 0; r < m; ++r) tj[r] = t + (r * a + j) * tiles;
            Tile::template output<1, 1>(mm + j * stride + o * nt + j0, a * stride, tj, tiles);
          }
          for (std::size_t r = 0; r < m; ++r) {  // row r, column m k + col: sum_j T[r][j] A[j][col]
            float* yr = out_rows + r * row_len;
            float* cols[m];
            for (std::size_t col = 0; col < m; ++col) cols[col] = yr + col;
            Tile::template output<1, m>(t + r * a * tiles, tiles, cols, tiles);
            for (std::size_t k = 0; k < row_len; ++k) yr[k] += bias;
          }
          const std::size_t oy = m * ty, ox = m * tx0, cols = std::min(row_len, g.ow - ox);
          const std::size_t at = (o * g.images + n) * g.oh * g.ow + oy * g.ow + ox;
          for (std::size_t r = 0; r < m && oy + r < g.oh; ++r) {
            const float* __restrict yr = out_rows + r * row_len;
            float* __restrict out = y + at + r * g.ow;
            if (residual != nullptr) {
              const float* __restrict res = residual + at + r * g.ow;
              for (std::size_t k = 0; k < cols; ++k) out[k] = yr[k] + res[k];
            } else {
              std::copy(yr, yr + cols, out);
            }
            if (c.relu) {
              for (std::size_t k = 0; k < cols; ++k) out[k] = std::max(out[k], 0.0f);
            }
          }
        });
  }
}

// U = G g G^T for every (out, in) filter, in double, stored [a * a][out][in].
template <typename Tile>
void transform_weights(Conv2d& c) {
  constexpr std::size_t a = Tile::a;
  c.winograd.assign(a * a * c.out * c.in, 0.0f);
  parallel_for(c.out, [&](std::size_t o) {  // each output channel's entries are its own
    for (std::size_t i = 0; i < c.in; ++i) {
      const float* f = c.w.data() + (o * c.in + i) * 9;
      double gf[a][3];  // G f
      for (std::size_t r = 0; r < a; ++r) {
        for (std::size_t k = 0; k < 3; ++k) {
          gf[r][k] = Tile::g[r][0] * f[k] + Tile::g[r][1] * f[3 + k] + Tile::g[r][2] * f[6 + k];
        }
      }
      for (std::size_t r = 0; r < a; ++r) {
        for (std::size_t s = 0; s < a; ++s) {
          const double u =
              gf[r][0] * Tile::g[s][0] + gf[r][1] * Tile::g[s][1] + gf[r][2] * Tile::g[s][2];
          c.winograd[((a * r + s) * c.out + o) * c.in + i] = static_cast<float>(u);
        }
      }
    }
  });
}

// The whole layer at once, for maps with few tiles (the late 14 x 14 and 7 x 7 ones): each
// point's GEMM then spans every tile, so the weights are packed once per point rather than once
// per chunk. The transforms run in blocks of channels and the GEMMs one point per task; every
// task's arithmetic is the same for any thread count.
template <typename Tile>
void run_winograd_whole(const Conv2d& c, const Tiling& g, const float* x, float* y,
                        const float* residual) {
  constexpr std::size_t points = Tile::a * Tile::a, block = 16;
  const std::size_t nt = g.tiles();
  // The calling thread's buffers, handed to the tasks by pointer (a thread_local named inside a
  // task would be the worker's own).
  thread_local std::vector<float> v_buffer, m_buffer;
  v_buffer.resize(points * c.in * nt);
  m_buffer.resize(points * c.out * nt);
  float* v = v_buffer.data();
  float* mm = m_buffer.data();
  parallel_for((c.in + block - 1) / block, [&](std::size_t b) {
    transform_inputs<Tile>(g, c.in, b * block, std::min(c.in, b * block + block), x, 0, nt, v);
  });
  parallel_for(points, [&](std::size_t p) {
    sgemm(Transpose::No, Transpose::No, c.out, nt, c.in, 1.0f, c.winograd.data() + p * c.out * c.in,
          c.in, v + p * c.in * nt, nt, 0.0f, mm + p * c.out * nt, nt);
  });
  parallel_for((c.out + block - 1) / block, [&](std::size_t b) {
    transform_outputs<Tile>(c, g, mm, b * block, std::min(c.out, b * block + block), 0, nt, y,
                            residual);
  });
}

template <typename Tile>
void run_winograd(const Conv2d& c, const float* x, std::size_t images, std::size_t h, std::size_t w,
                  float* y, const float* residual) {
  constexpr std::size_t m = Tile::m, points = Tile::a * Tile::a;
  const Tiling g{m,
                 images,
                 h,
                 w,
                 c.pad_h,
                 c.out_height(h),
                 c.out_width(w),
                 (c.out_height(h) + m - 1) / m,
                 (c.out_width(w) + m - 1) / m};
  const std::size_t total = g.tiles();
  // Chunks of tiles as pool tasks (transforms and the serial GEMMs each); the chunk size depends
  // on the shapes only, so the result is bitwise the same for any thread count.
  const std::size_t per_tile = points * (c.in + c.out);
  const std::size_t spread = std::max<std::size_t>(64, (total / 8 + 15) / 16 * 16);
  const std::size_t chunk =
      std::clamp<std::size_t>(std::min(kConvScratchFloats / per_tile / 16 * 16, spread), 16, 1024);
  if (chunk < kWholeLayerBelowChunk) return run_winograd_whole<Tile>(c, g, x, y, residual);
  parallel_for((total + chunk - 1) / chunk, [&](std::size_t task) {
    thread_local std::vector<float> v, mm;
    const std::size_t t0 = task * chunk, t1 = std::min(total, t0 + chunk), nt = t1 - t0;
    v.resize(points * c.in * nt);
    mm.resize(points * c.out * nt);
    transform_inputs<Tile>(g, c.in, 0, c.in, x, t0, t1, v.data());
    for (std::size_t p = 0; p < points; ++p) {
      sgemm(Transpose::No, Transpose::No, c.out, nt, c.in, 1.0f,
            c.winograd.data() + p * c.out * c.in, c.in, v.data() + p * c.in * nt, nt, 0.0f,
            mm.data() + p * c.out * nt, nt);
    }
    transform_outputs<Tile>(c, g, mm.data(), 0, c.out, t0, t1, y, residual);
  });
}

}  // namespace

void prepare_winograd(Conv2d& c, std::size_t output_tile) {
  VLBIAS_CHECK(c.kernel_h == 3 && c.kernel_w == 3 && c.stride == 1 && c.pad_h == c.pad_w &&
                   c.pad_h <= 1 && c.linear_tail == 0 && c.w.size() == c.out * c.in * 9 &&
                   (output_tile == 2 || output_tile == 4),
               InternalError, "prepare_winograd: F({0}x{0}) for a {1}x{2} stride-{3} convolution",
               output_tile, c.kernel_h, c.kernel_w, c.stride);
  c.winograd_tile = output_tile;
  if (output_tile == 2) {
    transform_weights<TileF2>(c);
  } else {
    transform_weights<TileF4>(c);
  }
}

namespace nn_internal {

void winograd_conv2d(const Conv2d& c, const float* x, std::size_t images, std::size_t h,
                     std::size_t w, float* y, const float* residual) {
  if (c.winograd_tile == 4) {
    run_winograd<TileF4>(c, x, images, h, w, y, residual);
  } else {
    assert(c.winograd_tile == 2);
    run_winograd<TileF2>(c, x, images, h, w, y, residual);
  }
}

}  // namespace nn_internal
}  // namespace vlbias
