#pragma once
// Simultaneous confidence intervals for the class shares of one multinomial sample: with
// probability about `level`, every class's interval covers its true share at once (the
// per-class Wilson intervals of intervals.h each cover their own share only). For "which
// labels appear, in what shares" per prompt (issue 42: src/stats/multinomial_intervals.cpp;
// docs/methods.md#multinomial-intervals).
//
// Data convention: `counts` holds one count per class (k >= 2 classes, n = their sum >= 1); the
// result holds one Interval per class in the same order, with resamples = 0 and seed = 0.
// Fewer than 2 classes, n = 0 or a level outside (0, 1): InputError.
//
// Sison and Glaz (1995, JASA 90:366-369), the default: intervals [p_i - c/n, p_i + (c + 2g)/n]
// clipped to [0, 1], c the integer with nu(c) <= level < nu(c + 1), nu(c) the probability that
// every count lies within c of its observed value, approximated by independent Poisson(x_i)
// counts truncated to [x_i - c, x_i + c] conditioned on their sum being n through an Edgeworth
// expansion (their eq. 1; Levin 1981), g = (level - nu(c)) / (nu(c + 1) - nu(c)). Equal widths
// for every class; good coverage from about 7 classes (the authors' examples), conservative
// below. Equals statsmodels 0.13's multinomial_proportions_confint(method="sison-glaz").
//
// Goodman (1965, Technometrics 7:247-254): each class's score interval at the Bonferroni level,
// chi2 = the (1 - (1 - level)/k) quantile of chi-square(1), bounds
// (2 n p_i + chi2 -+ sqrt(chi2^2 + 4 n p_i (1 - p_i) chi2)) / (2 (n + chi2)). Conservative, valid
// for any number of classes when every count is at least about 5. Equals statsmodels'
// method="goodman".
#include <cstdint>
#include <span>
#include <vector>

#include "vlbias/stats/stats.h"

namespace vlbias::stats {

std::vector<Interval> sison_glaz_intervals(std::span<const std::uint64_t> counts, double level);
std::vector<Interval> goodman_intervals(std::span<const std::uint64_t> counts, double level);

}  // namespace vlbias::stats
