#pragma once
// Tests of one multinomial sample against given class shares, and the smallest departure such a
// test detects: "are the faces of 'a photo of a nurse' split as parity (or the census) says?"
// (issue 42: src/stats/goodness_of_fit.cpp; docs/methods.md#goodness-of-fit).
//
// Data convention: `counts` holds one count per class (k >= 2, n = their sum >= 1); `shares` the
// k expected shares in the same order, finite, >= 0, summing to 1 within 1e-9. A class with
// share 0 and count 0 is left out (it cannot be observed: df = classes left - 1); a class with
// share 0 and a count > 0 makes the sample impossible under the hypothesis: statistic +inf,
// p = 0 and a note. Anything else outside the convention is an InputError naming `what`.
//
// chi_square_gof: Pearson's X^2 = sum_k (x_k - n q_k)^2 / (n q_k), df = k - 1, p from
//   chi-square(df): scipy.stats.chisquare(counts, n * shares).
// g_test_gof: G = 2 sum_k x_k log(x_k / (n q_k)) (0 log 0 = 0), df = k - 1: scipy.stats.
//   power_divergence(counts, n * shares, lambda_="log-likelihood").
// exact_multinomial_gof: the probability, under Multinomial(n, q), of every outcome no more
//   probable than the one observed (relative tolerance 1e-7, as scipy.stats.binomtest, which it
//   equals for k = 2; R's EMT::multinomial.test(method = "Prob")). Enumerates the
//   C(n + k - 1, k - 1) outcomes: more than `max_outcomes` gives NaN and a note.
// All three give Cohen's w = sqrt(X^2 / n) as the effect size (effect_name "cohens_w").
//
// Power (Cohen 1988, ch. 7): under shares p the X^2 statistic is approximately noncentral
// chi-square(df, lambda = n w^2) with w^2 = sum_k (p_k - q_k)^2 / q_k. gof_minimum_detectable_w
// is the w at which the level-alpha test rejects with probability `power`;
// gof_power(n, df, w, alpha) the probability itself.
#include <cstddef>
#include <cstdint>
#include <span>

#include "vlbias/stats/stats.h"

namespace vlbias::stats {

TestResult chi_square_gof(std::span<const std::uint64_t> counts, std::span<const double> shares);
TestResult g_test_gof(std::span<const std::uint64_t> counts, std::span<const double> shares);
TestResult exact_multinomial_gof(std::span<const std::uint64_t> counts,
                                 std::span<const double> shares,
                                 std::size_t max_outcomes = 1'000'000);
// C(n + k - 1, k - 1), saturated at SIZE_MAX: the outcomes exact_multinomial_gof enumerates.
std::size_t multinomial_outcomes(std::uint64_t n, std::size_t k);

// alpha and power in (0, 1), n >= 1, df >= 1; w >= 0 finite. InputError otherwise.
double gof_power(double n, double df, double w, double alpha);
double gof_minimum_detectable_w(double n, double df, double alpha, double power);

}  // namespace vlbias::stats
