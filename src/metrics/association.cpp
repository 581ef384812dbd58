// SC-WEAT (docs/methods.md#sc-weat; Caliskan et al. 2017 WEAT; Hausladen et al. SC-WEAT).
// See include/vlbias/metrics/association.h for the formulas and the two p-value variants.
#include "vlbias/metrics/association.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"

namespace vlbias {

namespace {

// norms[i] is row i of the input `name`; a zero row has no cosine.
void check_norms(const std::vector<double>& norms, const std::string& name) {
  for (std::size_t i = 0; i < norms.size(); ++i) {
    VLBIAS_CHECK(norms[i] > 0.0, InputError,
                 "SC-WEAT: row {} of {} is all zeros, so its cosine similarity is undefined", i,
                 name);
  }
}

void append_note(std::string& note, const std::string& more) {
  if (!note.empty()) note += "; ";
  note += more;
}

}  // namespace

const char* to_string(ScweatPTest t) {
  return t == ScweatPTest::Permutation ? "permutation" : "sign-flip";
}

ScweatPTest parse_scweat_p_test(std::string_view name) {
  if (name == "permutation") return ScweatPTest::Permutation;
  if (name == "sign-flip") return ScweatPTest::SignFlip;
  VLBIAS_FAIL(UsageError, "--p-test must be 'permutation' or 'sign-flip', not '{}'", name);
}

ScweatResult sc_weat(MatrixView targets, MatrixView a, MatrixView b, const ScweatOptions& o) {
  const auto shape = [](MatrixView m) { return fmt::format("({}, {})", m.rows, m.cols); };
  VLBIAS_CHECK(targets.rows > 0, InputError, "SC-WEAT: {} has no rows (shape {}); need a target",
               o.targets_name, shape(targets));
  VLBIAS_CHECK(a.rows > 0, InputError, "SC-WEAT: image set A ({}) is empty (shape {})", o.a_name,
               shape(a));
  VLBIAS_CHECK(b.rows > 0, InputError, "SC-WEAT: image set B ({}) is empty (shape {})", o.b_name,
               shape(b));
  VLBIAS_CHECK(a.cols == targets.cols, InputError,
               "SC-WEAT: dimension mismatch: {} has shape {} but {} has shape {} (the number of "
               "columns must match)",
               o.targets_name, shape(targets), o.a_name, shape(a));
  VLBIAS_CHECK(b.cols == targets.cols, InputError,
               "SC-WEAT: dimension mismatch: {} has shape {} but {} has shape {} (the number of "
               "columns must match)",
               o.targets_name, shape(targets), o.b_name, shape(b));
  VLBIAS_CHECK(o.permutations > 0, UsageError, "--permutations must be at least 1");

  // C = targets x (A u B), A's columns first: C(t, j) = cos(t, z_j) (true cosines,
  // docs/methods.md#conventions) = <t / |t|, z_j> / |z_j|, two GEMMs into one matrix; the
  // images are not copied.
  const std::size_t n_a = a.rows, n_b = b.rows, n = n_a + n_b;
  Matrix tn(targets.rows, targets.cols);
  if (!tn.data.empty()) std::memcpy(tn.data.data(), targets.data, tn.data.size() * sizeof(float));
  check_norms(normalize_rows_in_place(tn), o.targets_name);
  std::vector<double> z_norms = row_norms(a);
  check_norms(z_norms, o.a_name);
  const std::vector<double> b_norms = row_norms(b);
  check_norms(b_norms, o.b_name);
  z_norms.insert(z_norms.end(), b_norms.begin(), b_norms.end());
  Matrix cos(targets.rows, n);
  gemm_nt(tn, a, cos.data.data(), n);
  gemm_nt(tn, b, cos.data.data() + n_a, n);
  scale_columns(cos.data.data(), cos.rows, n, n, z_norms);

  return sc_weat_from_cosines(cos, n_a, o);
}

ScweatResult sc_weat_from_cosines(MatrixView cos, std::size_t n_a, const ScweatOptions& o) {
  std::vector<std::size_t> all(cos.rows);
  for (std::size_t t = 0; t < cos.rows; ++t) all[t] = t;
  return sc_weat_target_sets(cos, n_a, {all}, o).front();
}

std::vector<ScweatResult> sc_weat_target_sets(MatrixView cos, std::size_t n_a,
                                              const std::vector<std::vector<std::size_t>>& sets,
                                              const ScweatOptions& o) {
  const std::size_t n = cos.cols, n_b = n - n_a;
  VLBIAS_CHECK(cos.rows > 0 && n_a > 0 && n_a < n, InputError,
               "SC-WEAT: need at least one target and two non-empty image sets, not {} targets, "
               "{} A and {} B images",
               cos.rows, n_a, n - std::min(n_a, n));
  VLBIAS_CHECK(o.permutations > 0, UsageError, "--permutations must be at least 1");
  VLBIAS_CHECK(!sets.empty(), InternalError, "SC-WEAT: no target set");

  // Per target (each row of cos once): s_t and sd_t.
  std::vector<ScweatTarget> target(cos.rows);
  for (std::size_t t = 0; t < cos.rows; ++t) {
    const float* c = cos.row(t);
    double sum_a = 0.0, sum_b = 0.0;
    for (std::size_t j = 0; j < n_a; ++j) sum_a += c[j];
    for (std::size_t j = n_a; j < n; ++j) sum_b += c[j];
    // s_t = mean_A cos - mean_B cos; sd_t over A u B, n-1 denominator (two-pass).
    const double mean_all = (sum_a + sum_b) / static_cast<double>(n);
    double ss = 0.0;
    for (std::size_t j = 0; j < n; ++j) ss += (c[j] - mean_all) * (c[j] - mean_all);
    ScweatTarget& tr = target[t];
    tr.difference = sum_a / static_cast<double>(n_a) - sum_b / static_cast<double>(n_b);
    tr.sd = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : stats::kNaN;
    if (tr.sd > 0.0) tr.effect_size = tr.difference / tr.sd;
  }

  std::vector<ScweatResult> results(sets.size());
  std::vector<std::size_t> permuted;         // sets whose permutation test runs jointly
  std::vector<std::vector<double>> weights;  // their w, one vector per set
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const std::vector<std::size_t>& rows = sets[k];
    VLBIAS_CHECK(!rows.empty(), InputError, "SC-WEAT: target set {} is empty", k);
    ScweatResult& r = results[k];
    r.p_test = o.p_test;
    r.n_a = n_a;
    r.n_b = n_b;
    const std::size_t n_t = rows.size();
    std::vector<double> diffs(n_t);
    std::size_t zero_sd = 0;
    double sum_s = 0.0, sum_es = 0.0;
    for (std::size_t i = 0; i < n_t; ++i) {
      VLBIAS_CHECK(rows[i] < cos.rows, InternalError, "SC-WEAT: target row {} of {}", rows[i],
                   cos.rows);
      r.per_target.push_back(target[rows[i]]);
      diffs[i] = target[rows[i]].difference;
      if (!(target[rows[i]].sd > 0.0)) ++zero_sd;
      sum_s += target[rows[i]].difference;
      sum_es += target[rows[i]].effect_size;
    }
    r.mean_difference = sum_s / static_cast<double>(n_t);
    r.effect_size = zero_sd == 0 ? sum_es / static_cast<double>(n_t) : stats::kNaN;
    if (zero_sd > 0) {
      append_note(r.note, fmt::format("{} of {} targets have the same cosine with every image "
                                      "(sd 0), so their effect size is undefined",
                                      zero_sd, n_t));
    }
    if (o.p_test == ScweatPTest::SignFlip) {
      r.test = stats::sign_flip_test(diffs, {}, o.permutations, o.seed,
                                     stats::Alternative::TwoSided, o.method);
    } else if (zero_sd > 0) {
      r.test.method = "none";
      r.test.seed = o.seed;
      append_note(r.note, "the permutation p-value needs every target's sd > 0");
    } else {
      // w_j = mean_t cos(t, j) / sd_t; mean_A w - mean_B w = mean_t es_t.
      std::vector<double> wk(n, 0.0);
      for (const std::size_t t : rows) {
        const float* c = cos.row(t);
        const double inv = 1.0 / target[t].sd;
        for (std::size_t j = 0; j < n; ++j) wk[j] += c[j] * inv;
      }
      for (double& v : wk) v /= static_cast<double>(n_t);
      permuted.push_back(k);
      weights.push_back(std::move(wk));
    }
  }
  if (!permuted.empty()) {
    // One relabelling of A u B per replicate serves every set (the sets share the
    // images); each set's p-value equals that of its own test with the same seed.
    const std::size_t k = permuted.size();
    std::vector<double> w(n * k);  // item-major: w[j * k + set]
    for (std::size_t c = 0; c < k; ++c) {
      for (std::size_t j = 0; j < n; ++j) w[j * k + c] = weights[c][j];
    }
    std::vector<std::uint32_t> labels(n, 0);
    for (std::size_t j = n_a; j < n; ++j) labels[j] = 1;
    const std::vector<stats::ResamplingResult> tests = stats::permutation_mean_difference_columns(
        w, k, labels, o.permutations, o.seed, stats::Alternative::TwoSided, o.method);
    for (std::size_t i = 0; i < permuted.size(); ++i) results[permuted[i]].test = tests[i];
  }
  for (ScweatResult& r : results) {
    if (!r.test.note.empty()) append_note(r.note, r.test.note);
  }
  return results;
}

}  // namespace vlbias
