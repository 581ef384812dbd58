#pragma once
// Embedding association tests between text and image embeddings.
//
// SC-WEAT (docs/methods.md#sc-weat; Caliskan et al. 2017 WEAT; Hausladen et al., the
// single-category WEAT on images). For text embeddings t (rows of `targets`) and
// image sets A, B (rows of `a`, `b`), with true cosines (every row is L2-normalised
// here, so inputs need not be unit length; a zero row is an InputError):
//
//   s_t  = mean_{a in A} cos(t, a) - mean_{b in B} cos(t, b)
//   es_t = s_t / sd_{z in A u B} cos(t, z)            (sd with the n-1 denominator)
//   mean_difference = mean_t s_t,   effect_size = mean_t es_t
//
// p-value (two-sided), two named variants:
//   permutation  relabel A u B keeping |A| and |B| (the paper's text). sd_t over A u B
//                does not change under relabelling, so the statistic mean_t es_t is
//                the difference in means of w_j = mean_t cos(t, j) / sd_t between
//                the A- and B-labelled images: stats::permutation_mean_difference on w
//                (exact enumeration when C(|A|+|B|, |A|) <= B with method Auto).
//   sign-flip    stats::sign_flip_test of {s_t} with the mean statistic (what the
//                authors' R code, PsychWordVec::test_WEAT, does); exact when 2^T <= B.
//
// The cosine matrix targets x (A u B) is one GEMM (vlbias/core/blas.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

enum class ScweatPTest { Permutation, SignFlip };
const char* to_string(ScweatPTest t);  // "permutation", "sign-flip"
// "permutation" or "sign-flip"; anything else is a UsageError.
ScweatPTest parse_scweat_p_test(std::string_view name);

struct ScweatOptions {
  ScweatPTest p_test = ScweatPTest::Permutation;
  std::size_t permutations = 10000;  // B (> 0)
  std::uint64_t seed = 0;
  stats::ResamplingMethod method = stats::ResamplingMethod::Auto;
  // Names of the three inputs in error messages (e.g. their file paths).
  std::string targets_name = "targets";
  std::string a_name = "A";
  std::string b_name = "B";
};

struct ScweatTarget {
  double difference = stats::kNaN;   // s_t
  double effect_size = stats::kNaN;  // es_t; NaN when sd_t == 0
  double sd = stats::kNaN;           // sd_t over A u B
};

struct ScweatResult {
  double effect_size = stats::kNaN;      // mean_t es_t (NaN if any es_t is)
  double mean_difference = stats::kNaN;  // mean_t s_t
  std::vector<ScweatTarget> per_target;
  ScweatPTest p_test = ScweatPTest::Permutation;
  // The test: observed statistic (mean_t es_t for permutation, mean_t s_t for
  // sign-flip), p_value, resamples, method ("exact" / "monte_carlo"), seed.
  stats::ResamplingResult test;
  std::size_t n_a = 0;
  std::size_t n_b = 0;
  std::string note;  // non-empty when a value is undefined, saying why
};

// SC-WEAT of every row of `targets` against image sets `a` and `b`.
// InputError (naming the inputs and their shapes): no targets, an empty A or B,
// differing dimensions, a zero-length row. sd_t == 0 (every cosine of target t
// equal) gives es_t = NaN, effect_size = NaN and a note; the permutation p-value is
// then NaN too (its statistic is undefined), the sign-flip one is still computed.
ScweatResult sc_weat(MatrixView targets, MatrixView a, MatrixView b,
                     const ScweatOptions& options = {});

// The same from precomputed cosines: `cos` has one row per target and the columns
// cos(t, z) for the A images (the first n_a columns) then the B images. Audits use
// it with columns gathered from one prompts x images cosine matrix. InputError when
// there is no target or either set is empty.
ScweatResult sc_weat_from_cosines(MatrixView cos, std::size_t n_a,
                                  const ScweatOptions& options = {});

// SC-WEAT for several target sets (each a list of rows of `cos`) over the same image
// sets, as sc_weat_from_cosines on each set's rows, with one relabelling per
// replicate shared by every set (stats::permutation_mean_difference_columns): each
// result equals sc_weat_from_cosines on that set alone with the same options, for
// about the cost of one test. An empty set is an InputError.
std::vector<ScweatResult> sc_weat_target_sets(MatrixView cos, std::size_t n_a,
                                              const std::vector<std::vector<std::size_t>>& sets,
                                              const ScweatOptions& options = {});

}  // namespace vlbias
