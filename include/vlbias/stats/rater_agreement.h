#pragma once
// Agreement of several raters who rate the same units (src/stats/rater_agreement.cpp,
// src/stats/rater_table.cpp; docs/methods.md#rater-agreement): Krippendorff's alpha (nominal,
// ordinal, interval; missing ratings allowed), Fleiss' kappa and pairwise Cohen's kappa
// (unweighted, linear or quadratic weights), each with a percentile bootstrap over units.
// E.g. annotators labelling words as stereotypes (paper 003 App. C.2) or regional raters
// scoring on a 1-5 Likert scale whether an attribute can be depicted (paper 000 Fig. 6).
//
// Data convention (RatingData): unit u holds the ratings [offsets[u], offsets[u + 1]), each a
// (rater, category) pair, sorted by rater, at most one per rater (a missing rating is simply
// absent). Categories are the distinct ratings of the whole table in scale order: numbers
// ascending (values[c] holds the number) or, for text ratings, texts by bytes (values[c] NaN;
// nominal use only). Units keep the order of the table (first appearance of the unit key).
//
// Every coefficient is reported as 1 - D_o / D_e, with D_o and D_e its observed and
// expected (chance) disagreement (the same form for all three, so the fields mean the same):
//   Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability";
//     2019, "Content Analysis", ch. 12): the pairable units are those with m_u >= 2 ratings
//     (a unit with one rating is dropped: it holds no pair). n_uc = ratings of category c in
//     unit u, n_c = sum_u n_uc over pairable units, n = sum_c n_c. The coincidence matrix
//     o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1) gives
//       D_o = (1 / n) sum_{c,k} o_ck delta2_ck,  D_e = 1 / (n (n - 1)) sum_{c,k} n_c n_k delta2_ck
//     with delta2 nominal [c != k]; interval (v_c - v_k)^2; ordinal
//     (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 = (M_k - M_c)^2 where M_c = sum_{g<c} n_g + n_c / 2.
//     Computed without the K x K matrix: sum_{c,k} o_ck delta2 = sum_u f_u / (m_u - 1) with
//     f_u = m_u^2 - sum_c n_uc^2 (nominal) or 2 m_u sum_c n_uc (x_c - xbar_u)^2 (metric, x = v
//     or M), and sum n_c n_k delta2 = n^2 - sum n_c^2 or 2 n sum_c n_c (x_c - xbar)^2.
//   Fleiss' kappa (Fleiss 1971; statsmodels' fleiss_kappa): the units with the largest number
//     of ratings m (>= 2); units with fewer are left out and counted (Fleiss' kappa needs the
//     same number of ratings per unit: alpha uses them all). P_u = (sum_c n_uc^2 - m) /
//     (m (m - 1)), p_c = sum_u n_uc / (N m): D_o = 1 - mean_u P_u, D_e = 1 - sum_c p_c^2.
//   Cohen's kappa of raters a and b (Cohen 1960, 1968; sklearn's cohen_kappa_score with
//     labels = every category of the table): over the N units both rated, C_ij = units rated
//     i by a and j by b, r_i, s_j its margins, weights w_ij = [i != j] (none), |i - j|
//     (linear) or (i - j)^2 (quadratic) on the categories' positions:
//       D_o = sum_ij w_ij C_ij / N,  D_e = sum_ij w_ij r_i s_j / N^2.
//     The mean over pairs of raters is Light's kappa (Light 1971) when unweighted.
// Degenerate cases give NaN with a note, never a silent NaN: D_e = 0 (every pairable rating in
// one category: chance agreement is 1 and the coefficient 0 / 0), fewer than 2 raters, no
// pairable unit, no unit both raters rated.
//
// Bootstrap: the units the coefficient is computed on (alpha: pairable units; Fleiss: the
// units with m ratings; Cohen: the units both rated), in table order, resampled with
// replacement exactly as bootstrap_ci: replicate b draws idx[i] = Rng(seed, b).uniform_index(N);
// replicates with D_e = 0 are dropped and counted. Every coefficient uses the same seed over
// its own units; results do not depend on the thread count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

enum class RatingScale { Nominal, Ordinal, Interval };
enum class KappaWeights { None, Linear, Quadratic };

// "nominal" / "ordinal" / "interval" and "none" / "linear" / "quadratic"; other text is a
// UsageError naming `option`.
RatingScale parse_rating_scale(const std::string& text, const char* option);
KappaWeights parse_kappa_weights(const std::string& text, const char* option);
const char* rating_scale_name(RatingScale scale);
const char* kappa_weights_name(KappaWeights weights);

struct RatingData {
  std::vector<std::string> raters;      // rater r's name
  std::vector<std::string> units;       // unit u's key (unit columns' texts joined by ", ")
  std::vector<std::string> categories;  // category c's text, in scale order
  std::vector<double> values;           // category c's number; NaN for text categories
  std::vector<std::size_t> offsets{0};  // units.size() + 1 entries
  std::vector<std::uint32_t> rater_of;  // per rating, sorted within a unit
  std::vector<std::uint32_t> category_of;
  std::size_t missing = 0;       // cells/rows without a rating (not ratings)
  std::size_t repeated = 0;      // long format: identical repeats of a rating, counted once
  std::size_t conflicting = 0;   // long format: (unit, rater) rated differently, dropped
  std::size_t unattributed = 0;  // long format: ratings without a unit or rater cell, left out

  std::size_t unit_count() const { return units.size(); }
  std::size_t size() const { return rater_of.size(); }
  bool numeric() const;  // every category has a number
};

struct BootstrapRequest {
  std::size_t resamples = 0;  // 0: no interval (note "no bootstrap requested")
  double level = 0.95;
  std::uint64_t seed = 0;
};

struct AgreementCoefficient {
  double estimate = kNaN;  // 1 - D_o / D_e
  double observed_disagreement = kNaN;
  double expected_disagreement = kNaN;
  std::size_t units = 0;    // units it is computed on
  std::size_t ratings = 0;  // ratings it uses (alpha: the pairable values n)
  Interval ci;              // percentile bootstrap over those units
  std::string note;         // why the estimate is NaN, or what was left out
};

// Krippendorff's alpha at `scale`. Ordinal and interval need numeric categories
// (InputError otherwise).
AgreementCoefficient krippendorff_alpha(const RatingData& data, RatingScale scale,
                                        const BootstrapRequest& bootstrap);
// Fleiss' kappa (nominal).
AgreementCoefficient fleiss_kappa(const RatingData& data, const BootstrapRequest& bootstrap);
// Cohen's kappa of raters a and b (indices into data.raters, a != b). Weights other than None
// need numeric categories (InputError otherwise).
AgreementCoefficient cohen_kappa_pair(const RatingData& data, std::size_t rater_a,
                                      std::size_t rater_b, KappaWeights weights,
                                      const BootstrapRequest& bootstrap);

struct PairKappa {
  std::size_t rater_a = 0, rater_b = 0;
  AgreementCoefficient kappa;
};

struct RaterAgreementOptions {
  RatingScale scale = RatingScale::Nominal;
  KappaWeights weights = KappaWeights::None;
  BootstrapRequest bootstrap;
  std::size_t max_pairs = 45;  // pairwise Cohen only up to this many rater pairs (10 raters)
};

struct RaterAgreement {
  std::size_t units = 0, raters = 0, ratings = 0;
  std::size_t units_single_rating = 0;  // dropped by alpha
  std::size_t units_unrated = 0;        // rows of a wide table with no rating
  std::size_t ratings_per_unit_min = 0, ratings_per_unit_max = 0;
  AgreementCoefficient alpha;
  AgreementCoefficient fleiss;
  std::vector<PairKappa> cohen;  // every pair a < b, when at most max_pairs
  double cohen_mean = kNaN;      // mean of the defined pairwise kappas
  std::string cohen_note;        // e.g. too many raters for pairwise kappas
  std::vector<std::string> notes;
};

// All of the above. Fewer than 2 raters: every coefficient NaN with a note (not an error).
RaterAgreement rater_agreement(const RatingData& data, const RaterAgreementOptions& options);

// Long format: one row per (unit, rater) rating. `unit_columns` (one or more) key the unit,
// `rater_column` names the rater, `rating_column` holds the rating; a row with a missing rating
// is counted in `missing` and skipped. A rater who rates a unit several times with the same
// rating counts once (`repeated`: released exports repeat rows); with different ratings it is
// an InputError naming two rows, or, when `drop_conflicting`, that rater's rating of the unit
// is left out (`conflicting`). A rating whose unit or rater cell is empty is left out and
// counted (`unattributed`). InputError: an unknown column (naming the columns there are),
// non-numeric ratings when `need_numbers` (ordinal, interval, weighted kappa), a table without
// any rating.
RatingData ratings_from_long_table(const Table& table, const std::vector<std::string>& unit_columns,
                                   const std::string& rater_column,
                                   const std::string& rating_column, bool need_numbers,
                                   bool drop_conflicting = false);
// Wide format: one row per unit, one column per rater (`rater_columns`, at least one); an
// empty cell is a missing rating. `unit_columns` (may be empty: units are named by row number)
// name the units. Same errors as the long format (no repeats are possible).
RatingData ratings_from_wide_table(const Table& table, const std::vector<std::string>& unit_columns,
                                   const std::vector<std::string>& rater_columns,
                                   bool need_numbers);

}  // namespace vlbias::stats
