// SC-WEAT (METHODS.md 001; Caliskan et al. 2017 WEAT; Hausladen et al. SC-WEAT).
// See include/vlbias/association.h for the formulas and the two p-value variants.
#include "vlbias/association.h"

#include <cmath>
#include <cstring>

#include "vlbias/blas.h"
#include "vlbias/error.h"

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
  // METHODS.md Conventions) = <t / |t|, z_j> / |z_j|, two GEMMs into one matrix; the
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

  ScweatResult r;
  r.p_test = o.p_test;
  r.n_a = n_a;
  r.n_b = n_b;
  const std::size_t n_t = targets.rows;
  r.per_target.resize(n_t);
  std::vector<double> diffs(n_t);
  std::size_t zero_sd = 0;
  for (std::size_t t = 0; t < n_t; ++t) {
    const float* c = cos.row(t);
    double sum_a = 0.0, sum_b = 0.0;
    for (std::size_t j = 0; j < n_a; ++j) sum_a += c[j];
    for (std::size_t j = n_a; j < n; ++j) sum_b += c[j];
    // s_t = mean_A cos - mean_B cos; sd_t over A u B, n-1 denominator (two-pass).
    const double mean_all = (sum_a + sum_b) / static_cast<double>(n);
    double ss = 0.0;
    for (std::size_t j = 0; j < n; ++j) ss += (c[j] - mean_all) * (c[j] - mean_all);
    ScweatTarget& tr = r.per_target[t];
    tr.difference = sum_a / static_cast<double>(n_a) - sum_b / static_cast<double>(n_b);
    tr.sd = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : stats::kNaN;
    if (tr.sd > 0.0) {
      tr.effect_size = tr.difference / tr.sd;
    } else {
      ++zero_sd;
    }
    diffs[t] = tr.difference;
  }
  double sum_s = 0.0, sum_es = 0.0;
  for (const ScweatTarget& tr : r.per_target) {
    sum_s += tr.difference;
    sum_es += tr.effect_size;
  }
  r.mean_difference = sum_s / static_cast<double>(n_t);
  r.effect_size = zero_sd == 0 ? sum_es / static_cast<double>(n_t) : stats::kNaN;
  if (zero_sd > 0) {
    append_note(r.note, fmt::format("{} of {} targets have the same cosine with every image "
                                    "(sd 0), so their effect size is undefined",
                                    zero_sd, n_t));
  }

  if (o.p_test == ScweatPTest::Permutation) {
    if (zero_sd > 0) {
      r.test.method = "none";
      r.test.seed = o.seed;
      append_note(r.note, "the permutation p-value needs every target's sd > 0");
    } else {
      // w_j = mean_t cos(t, j) / sd_t; mean_A w - mean_B w = mean_t es_t.
      std::vector<double> w(n, 0.0);
      for (std::size_t t = 0; t < n_t; ++t) {
        const float* c = cos.row(t);
        const double inv = 1.0 / r.per_target[t].sd;
        for (std::size_t j = 0; j < n; ++j) w[j] += c[j] * inv;
      }
      for (double& v : w) v /= static_cast<double>(n_t);
      std::vector<std::uint32_t> labels(n, 0);
      for (std::size_t j = n_a; j < n; ++j) labels[j] = 1;
      r.test = stats::permutation_mean_difference(w, labels, o.permutations, o.seed,
                                                  stats::Alternative::TwoSided, o.method);
    }
  } else {
    r.test = stats::sign_flip_test(diffs, {}, o.permutations, o.seed, stats::Alternative::TwoSided,
                                   o.method);
  }
  if (!r.test.note.empty()) append_note(r.note, r.test.note);
  return r;
}

}  // namespace vlbias
