#pragma once
// Agreement between two scorers of the same texts (src/metrics/agreement.cpp;
// docs/methods.md#agreement): e.g. a native classifier's toxicity against Perspective's, or two
// classifier versions. A scorer that disagrees more on texts of one dialect or identity term
// is itself the bias being audited, so agreement is also reported per group.
//
// Data convention: a[i] and b[i] are the scores scorer A and scorer B gave text i (any scale:
// probabilities, 1-10 judge ratings); the span functions take complete pairs only, finite
// (NaN or inf is an InputError naming the position). agreement_analysis reads them from a
// table, where a missing cell (empty CSV cell, JSON null or absent key) excludes the row.
//
// Definitions (n complete pairs, d_i = b_i - a_i):
//   Pearson r, its p (scipy.stats.pearsonr) and the Fisher z interval
//     tanh(atanh r -+ z_{(1+level)/2} / sqrt(n - 3)) (scipy's confidence_interval()).
//   Spearman rho, its p (scipy.stats.spearmanr) and the Fisher z interval with the
//     Bonett-Wright standard error sqrt((1 + rho^2 / 2) / (n - 3)) (Bonett and Wright 2000,
//     Psychometrika 65:23-28; better coverage than 1 / sqrt(n - 3) for rank correlations,
//     and closed form, so deterministic and O(n log n) at any n).
//   Labels: positive when score >= threshold (threshold_a for A, threshold_b for B). The 2x2
//     table of proportions p_jk (j = A's label, k = B's, 0 = negative), margins p_j. (A) and
//     p_.k (B): observed agreement po = p_00 + p_11, chance agreement pe = p_0. p_.0 + p_1. p_.1,
//     Cohen's kappa = (po - pe) / (1 - pe) (Cohen 1960; sklearn's cohen_kappa_score).
//     Its large-sample variance (Fleiss, Cohen and Everitt 1969, Psychological Bulletin
//     72:323-327; statsmodels cohens_kappa's var_kappa, which its kappa_low/kappa_upp use;
//     sklearn gives no standard error):
//       var = [ sum_j p_jj (1 - (p_j. + p_.j)(1 - kappa))^2
//               + (1 - kappa)^2 sum_{j != k} p_jk (p_.j + p_k.)^2
//               - (kappa - pe (1 - kappa))^2 ] / (n (1 - pe)^2)
//     interval kappa -+ z sqrt(var), not clipped to [-1, 1] (as statsmodels). The test of
//     kappa = 0 uses the variance under that null (statsmodels' var_kappa0):
//       var0 = (pe + pe^2 - sum_j p_j. p_.j (p_j. + p_.j)) / (n (1 - pe)^2),
//     z = kappa / sqrt(var0), two-sided normal p. pe = 1 (both scorers give every text the
//     same single label) leaves kappa undefined (0 / 0): NaN and a note (sklearn: nan).
//     One scorer with a single label gives kappa = 0 by construction, zero standard errors,
//     no test, and a note.
//   Kappa's percentile bootstrap (docs/methods.md#bootstrap): the rows ordered by cell
//     (00, 01, 10, 11), replicate b draws idx[i] = Rng(seed, b).uniform_index(n) exactly as
//     stats::bootstrap_ci and counts the cells the indices fall in; a replicate with pe = 1
//     is undefined (dropped, counted). O(B n), no O(n) memory per replicate beyond the index
//     buffer.
//   Percent agreement po; positive rates p_1. and p_.1.
//   Mean difference mean(d) with the Student t interval of d (stats::t_mean_interval) and
//     the paired t test of b against a (scipy.stats.ttest_rel(b, a)).
//   Per group: n, means of a and b, the mean difference with its t interval, positive rates,
//     the disagreement rate (labels differ) with Wilson's interval, kappa with its asymptotic
//     interval (no bootstrap per group). Whether d depends on the group: Kruskal-Wallis H over
//     the groups' d (scipy.stats.kruskal). A group of one row has null intervals and a note.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

struct AgreementOptions {
  double threshold_a = 0.5;  // A's label is positive when a >= threshold_a
  double threshold_b = 0.5;
  double level = 0.95;           // confidence level of every interval
  std::size_t bootstrap = 2000;  // resamples of kappa's bootstrap interval; 0 = none
  std::uint64_t seed = 0;        // kappa's bootstrap: replicate b draws from Rng(seed, b)
};

struct CorrelationAgreement {
  double estimate = stats::kNaN;  // r or rho
  double p_value = stats::kNaN;
  stats::Interval ci;  // Fisher z (closed form: resamples 0)
  std::string note;    // e.g. a constant score, or n < 4 for the interval
};

struct KappaAgreement {
  // Rows per cell of the 2x2 table: [A-,B-], [A-,B+], [A+,B-], [A+,B+].
  std::array<std::size_t, 4> cells{};
  double observed = stats::kNaN;  // po
  double expected = stats::kNaN;  // pe
  double kappa = stats::kNaN;
  double se = stats::kNaN;       // Fleiss-Cohen-Everitt large-sample standard error
  double se_null = stats::kNaN;  // standard error under kappa = 0
  double z = stats::kNaN;        // kappa / se_null
  double p_value = stats::kNaN;  // two-sided, H0: kappa = 0
  stats::Interval ci;            // kappa -+ z se
  stats::Interval bootstrap;     // percentile bootstrap; resamples = 0 when not drawn
  std::string note;
};

struct MeanDifference {
  double mean_a = stats::kNaN, mean_b = stats::kNaN;
  double estimate = stats::kNaN;                  // mean(b - a)
  double sd = stats::kNaN;                        // sd of b - a (n - 1)
  stats::Interval ci;                             // Student t
  double t = stats::kNaN, p_value = stats::kNaN;  // paired t test, H0: mean(b - a) = 0
  std::string note;
};

struct AgreementSummary {
  std::size_t n = 0;
  CorrelationAgreement pearson, spearman;
  KappaAgreement kappa;
  double percent_agreement = stats::kNaN;
  double positive_rate_a = stats::kNaN, positive_rate_b = stats::kNaN;
  MeanDifference difference;
  std::vector<std::string> notes;  // e.g. a threshold that leaves one scorer one label
};

// Everything above for complete pairs a, b (equal lengths, n >= 1, finite: InputError
// otherwise). `with_bootstrap` false skips kappa's bootstrap (per-group use).
// `name_a`/`name_b` name the scorers in notes and errors.
AgreementSummary score_agreement(std::span<const double> a, std::span<const double> b,
                                 const AgreementOptions& options, bool with_bootstrap = true,
                                 const std::string& name_a = "a", const std::string& name_b = "b");

// The 2x2 kappa of labels (a >= threshold_a, b >= threshold_b), with its asymptotic
// interval and, when options.bootstrap > 0 and with_bootstrap, the bootstrap interval.
KappaAgreement cohen_kappa(std::span<const double> a, std::span<const double> b,
                           const AgreementOptions& options, bool with_bootstrap);

struct GroupAgreement {
  std::vector<std::string> key;  // one text per group column
  std::size_t n = 0;
  MeanDifference difference;
  double positive_rate_a = stats::kNaN, positive_rate_b = stats::kNaN;
  std::size_t disagreements = 0;  // rows whose labels differ
  double disagreement_rate = stats::kNaN;
  stats::Interval disagreement_ci;  // Wilson
  KappaAgreement kappa;             // asymptotic interval only
  std::string note;                 // e.g. a single row
};

struct AgreementReport {
  std::string score_a, score_b;
  std::vector<std::string> group_columns;
  std::size_t rows = 0;                // rows of the table
  std::size_t excluded = 0;            // rows with a missing a or b
  AgreementSummary overall;            // over the complete rows
  std::size_t rows_without_group = 0;  // complete rows with a missing group cell (overall only)
  std::vector<GroupAgreement> groups;  // in Grouping's key order
  stats::TestResult group_test;        // Kruskal-Wallis of b - a over groups ("" test: none)
  std::vector<std::string> notes;
};

// Reads the Numeric columns `score_a` and `score_b` of `table` (InputError: an unknown
// column, naming the columns there are; a non-numeric cell, naming its row; the same column
// twice), drops and counts rows where either is missing, and computes the summary and, when
// `group_columns` is not empty, the per-group agreement and the Kruskal-Wallis test.
// Fewer than 3 complete rows: InputError (nothing to agree on). A non-finite threshold or a
// level outside (0, 1): InputError.
AgreementReport agreement_analysis(const Table& table, const std::string& score_a,
                                   const std::string& score_b,
                                   const std::vector<std::string>& group_columns,
                                   const AgreementOptions& options);

}  // namespace vlbias
