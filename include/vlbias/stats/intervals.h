#pragma once
// Closed-form confidence intervals and the quantiles they need (src/stats/intervals.cpp;
// docs/methods.md#closed-form-intervals). Checked against scipy 1.10 in
// tests/stats/intervals_test.cpp and, through the agreement metric, against numpy/scipy in
// tools/make_agreement_fixtures.py.
//
// Each interval is a stats::Interval with resamples = 0 and seed = 0 (nothing is drawn).
// An interval that cannot be formed has NaN bounds and a note, as everywhere in stats.
// A level outside (0, 1) is an InputError.
#include <cstddef>
#include <span>

#include "vlbias/stats/stats.h"

namespace vlbias::stats {

// The standard normal quantile Phi^-1(p), scipy.stats.norm.ppf. p outside (0, 1): InputError.
double normal_quantile(double p);
// Two-sided normal p-value 2 P(Z > |z|), as 2 * scipy.stats.norm.sf(|z|). NaN z gives NaN.
double normal_two_sided_p(double z);
// The quantile of Student's t with df > 0 degrees of freedom (Boost.Math, ~1 ulp: it equals
// mpmath's to 1e-15, where scipy 1.10's t.ppf, cephes stdtrit, is off by 1e-11 to 1e-9
// relative). p outside (0, 1) or df <= 0: InputError.
double t_quantile(double df, double p);

// Wilson's score interval of a binomial proportion x / n (Wilson 1927, JASA 22:209-212;
// statsmodels proportion_confint(method="wilson")), z = Phi^-1((1 + level) / 2):
//   centre = (p + z^2 / (2n)) / (1 + z^2 / n)
//   half   = z / (1 + z^2 / n) sqrt(p (1 - p) / n + z^2 / (4 n^2))
// Bounds are clipped to [0, 1] (rounding only). n = 0: NaN and a note; x > n: InputError.
Interval wilson_interval(std::size_t successes, std::size_t n, double level);

// Fisher z interval of a correlation r with the standard error `se_z` of atanh(r):
// tanh(atanh(r) -+ z se_z), z = Phi^-1((1 + level) / 2) (Fisher 1921). Pearson:
// se_z = 1 / sqrt(n - 3) (scipy.stats.pearsonr(...).confidence_interval()); Spearman: the
// Bonett-Wright se_z = sqrt((1 + rho^2 / 2) / (n - 3)) (Bonett and Wright 2000,
// Psychometrika 65:23-28). r = +-1 gives [r, r]. NaN r or se_z: NaN and a note.
Interval fisher_z_interval(double r, double se_z, double level);

// Student t interval of the mean of x: mean -+ t_{n-1, (1 + level)/2} sd / sqrt(n) (sd with
// n - 1; scipy.stats.t.interval(level, n - 1, mean, sem) to its t.ppf's 1e-9). Fewer than 2 values:
// NaN and a note; every value equal: [x0, x0]. NaN or inf in x: InputError.
Interval t_mean_interval(std::span<const double> x, double level);

}  // namespace vlbias::stats
