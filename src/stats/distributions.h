#pragma once
// Survival functions used for the p-values of the classical tests (internal to
// src/stats). Thin wrappers over Boost.Math distributions; every tail is taken
// with complement() (or by symmetry from the lower tail) so that p-values near 0
// keep their relative accuracy instead of being computed as 1 - cdf.
//
// Each function names the scipy 1.10 routine it reproduces. Arguments are
// validated by the callers; an argument outside a distribution's domain, or a
// Boost evaluation failure, throws InternalError (it would be a vlbias bug).

#include "vlbias/stats/stats.h"

namespace vlbias::stats_internal {

using stats::Alternative;

// P(F > x) for F ~ F(d1, d2): scipy.special.fdtrc(d1, d2, x), used by
// scipy.stats.f_oneway. x = +inf gives 0. (Boost's incomplete beta stays exact at
// very large d2, where cephes' fdtrc drifts: ~4e-10 relative at d2 = 1e7.)
double f_sf(double d1, double d2, double x);

// Two-sided Student t p-value 2 * P(T <= -|t|), T ~ t(df), df > 0 and possibly
// fractional (Welch): scipy.stats._stats_py._ttest_finish, 2 * special.stdtr(df, -|t|).
// |t| = inf gives 0.
double t_two_sided_p(double df, double t);

// P(Z > z) for a standard normal Z: scipy.stats.norm.sf (special.ndtr(-z)).
double normal_sf(double z);

// P(X > x) for X ~ chi-squared(df): scipy.stats.chi2.sf (special.chdtrc).
double chi2_sf(double df, double x);

// Two-sided p-value of a Pearson correlation r from n >= 3 pairs, as
// scipy.stats.pearsonr in scipy 1.10: under the null r follows a beta
// distribution on (-1, 1) with a = b = n/2 - 1, and
// p = 2 * beta(a, a, loc=-1, scale=2).sf(|r|) = 2 * I_c((|r| + 1) / 2; a, a)
// (Boost's complemented regularised incomplete beta, which scipy calls too).
double pearson_two_sided_p(double r, double n);

// p-value of a t statistic for an alternative, scipy.stats._stats_py._ttest_finish:
// less stdtr(df, t), greater stdtr(df, -t), two-sided 2 stdtr(df, -|t|). t = +-inf allowed.
double t_p(double df, double t, Alternative alternative);
// p-value of a standard normal z, scipy.stats._stats_py._normtest_finish: less cdf(z),
// greater sf(z), two-sided 2 sf(|z|).
double normal_p(double z, Alternative alternative);
// scipy.stats.pearsonr's p for an alternative: with B = beta(n/2-1, n/2-1) on (-1, 1),
// two-sided 2 B.sf(|r|), less B.cdf(r), greater B.sf(r).
double pearson_p(double r, double n, Alternative alternative);

}  // namespace vlbias::stats_internal
