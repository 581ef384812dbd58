#pragma once
// Precision, recall, density and coverage of generated features against real ones
// (Kynkaanniemi et al. 2019 improved precision/recall; Naeem et al. 2020 density/coverage;
// DIG-In's realism and diversity indicators, docs/methods.md#prdc), with exact nearest neighbours.
//
// Definitions (Euclidean distance d, k >= 1):
//   r_i        radius of real i: distance to its k-th nearest *other* real row (others by
//              index, so an exact duplicate counts, at distance 0: duplicates give radius 0).
//              f_j likewise among the generated ("fake") rows.
//   inside     fake j is inside real ball i when d(i, j) < r_i (strict, prdc's code and the
//              default) or d(i, j) <= r_i (BallRule::Inclusive).
//   precision  share of fakes inside at least one real ball.
//   recall     share of reals inside at least one fake ball (d(i, j) < f_j, same rule).
//   density    (1/k) * mean over fakes of the number of real balls containing it.
//   coverage   share of reals whose ball contains a fake (= whose nearest fake is inside).
//
// How it is computed. Never the n x n distance matrix: squared distances come in tiles of
// one float32 GEMM (|x|^2 + |y|^2 - 2 x.y, through the BLAS wrapper), streamed through a
// top-k per row for the radii and through the ball tests for the rest. Memory is
// O((n_real + n_fake) * k) plus one tile per thread. GEMM distances are rounded, so every
// tile value carries a rigorous error bound (float32 dot product of d terms:
// |error| <= gamma_d |x||y|, gamma_d = d u / (1 - d u), u = 2^-24, plus the double parts);
// a comparison whose outcome the bound cannot settle, and every candidate k-th neighbour,
// is recomputed exactly as sum_k (x_k - y_k)^2 in double. So ties are decided on exact
// squared distances: duplicates give radius 0, and integer grids whose distances tie
// exactly behave as the definition says, whatever the thread count or tiling.
//
// Data convention: row-major float32 matrices, row i = item i, the same number of columns
// (features) in both. Inputs are only read; they must outlive the call.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"

namespace vlbias {

enum class BallRule { Strict, Inclusive };
const char* to_string(BallRule rule);  // "strict (d < r)", "inclusive (d <= r)"

// Squared distance of each row of `x` to its k-th nearest other row (exact, see above).
// InputError: k == 0, x with k rows or fewer (no k-th other row), a non-finite value, or a
// value beyond +-1e17 (float32 squared distances would overflow). `what` names the set in
// messages ("real features").
std::vector<double> knn_radii_squared(MatrixView x, std::size_t k,
                                      const std::string& what = "features");

struct PrdcOptions {
  std::size_t k = 5;
  BallRule rule = BallRule::Strict;
  bool per_sample = false;    // fill the per-sample vectors of PrdcResult
  bool ball_members = false;  // fill members_offsets / members (for bootstrap resampling)
  bool recall = true;         // compute the fake radii and recall (false: recall = NaN)
  bool progress = false;      // a progress bar on a terminal (log.h); the CLI turns it on
};

struct PrdcResult {
  double precision = 0.0;
  double recall = 0.0;  // NaN (with `note`) when there are k or fewer fakes or !options.recall
  double density = 0.0;
  double coverage = 0.0;
  std::size_t k = 0;
  std::size_t n_real = 0;
  std::size_t n_fake = 0;
  BallRule rule = BallRule::Strict;
  std::string note;

  // options.per_sample:
  std::vector<double> real_radius;               // r_i (not squared), n_real
  std::vector<double> fake_radius;               // f_j, n_fake (empty without recall)
  std::vector<std::uint32_t> fake_ball_count;    // #{i : fake j inside ball i}, n_fake
  std::vector<std::uint8_t> real_covered;        // 1 when ball i contains a fake, n_real
  std::vector<std::uint8_t> real_in_fake_balls;  // 1 when real i is inside a fake ball
  // options.ball_members: the fakes inside real ball i are
  // members[members_offsets[i] .. members_offsets[i + 1]), ascending.
  std::vector<std::uint64_t> members_offsets;  // n_real + 1
  std::vector<std::uint32_t> members;
};

// PRDC of `fake` against `real`. InputError: k == 0, real with k rows or fewer, empty fake,
// different column counts, non-finite or out-of-range values (as knn_radii_squared).
PrdcResult prdc(MatrixView real, MatrixView fake, const PrdcOptions& options);
// The same with the real radii already computed (knn_radii_squared(real, options.k)), so
// several generated sets can be measured against one real set for the price of one radius
// pass. real_radius_squared.size() must equal real.rows (InternalError otherwise).
PrdcResult prdc_with_real_radii(MatrixView real, std::span<const double> real_radius_squared,
                                MatrixView fake, const PrdcOptions& options);

}  // namespace vlbias
