// One-way ANOVA and the t tests, matching scipy 1.10 (scipy.stats.f_oneway,
// ttest_ind, ttest_rel) except where stats.h documents a degenerate-case decision.
#include <array>
#include <cmath>
#include <string>

#include "classical_internal.h"
#include "distributions.h"
#include "vlbias/core/error.h"

#include <boost/math/distributions/students_t.hpp>

namespace vlbias::stats {

namespace {

using stats_internal::Moments;

// ANOVA from per-group moments. Sums of squares (scipy 1.10 f_oneway computes the
// same quantities from shifted sums: ss_between = sum_g n_g (mean_g - mean)^2,
// ss_within = sum_g sum_i (x_gi - mean_g)^2); F = (ss_between / (k - 1)) /
// (ss_within / (N - k)), p = fdtrc(k - 1, N - k, F); eta^2 = ss_between / ss_total.
TestResult anova_from_moments(const std::vector<Moments>& groups) {
  TestResult r = stats_internal::new_result("anova", "eta_squared");
  const std::size_t k = groups.size();
  std::size_t n_total = 0;
  bool all_single = true, all_const = true, all_same = true;
  for (const Moments& m : groups) {
    n_total += m.n;
    all_single = all_single && m.n == 1;
    all_const = all_const && m.constant;
    all_same = all_same && m.constant && m.first == groups[0].first;
  }
  const double df_between = static_cast<double>(k - 1);
  const double df_within = static_cast<double>(n_total - k);
  r.df = {df_between, df_within};
  if (all_single) {
    r.note = "every group has a single observation: the within-group degrees of freedom are 0";
    return r;
  }
  if (all_same) {
    r.note = "all values are identical: F is undefined (0/0)";
    return r;
  }
  // Group means relative to the first value of group 0 (scipy likewise works with the
  // data minus their grand mean), then the grand mean with one correction step.
  const double origin = groups[0].first;
  std::vector<double> pos(k);
  for (std::size_t g = 0; g < k; ++g) pos[g] = (groups[g].first - origin) + groups[g].rel_mean;
  double grand = 0.0;
  for (std::size_t g = 0; g < k; ++g) grand += static_cast<double>(groups[g].n) * pos[g];
  grand /= static_cast<double>(n_total);
  double corr = 0.0;
  for (std::size_t g = 0; g < k; ++g) corr += static_cast<double>(groups[g].n) * (pos[g] - grand);
  grand += corr / static_cast<double>(n_total);
  double ss_between = 0.0, ss_within = 0.0;
  for (std::size_t g = 0; g < k; ++g) {
    const Moments& m = groups[g];
    const double d = pos[g] - grand;
    ss_between += static_cast<double>(m.n) * d * d;
    ss_within += m.constant ? 0.0 : m.m2;
  }
  r.effect_size = ss_between / (ss_between + ss_within);
  if (all_const) {
    // scipy returns F = inf, p = 0 here; see stats.h.
    r.note =
        "zero variance within every group and the group means differ: F is infinite "
        "(scipy returns inf and p = 0); reported as undefined";
    return r;
  }
  r.statistic = (ss_between / df_between) / (ss_within / df_within);
  r.p_value = stats_internal::f_sf(df_between, df_within, r.statistic);
  return r;
}

enum class Pooling { Student, Welch };

// Shared by student_t and welch_t (scipy 1.10 ttest_ind with equal_var true / false:
// _equal_var_ttest_denom, _unequal_var_ttest_denom, _ttest_ind_from_stats).
TestResult two_sample_t(std::span<const double> a, std::span<const double> b, Pooling pooling,
                        Alternative alternative) {
  const bool student = pooling == Pooling::Student;
  const char* name = student ? "student" : "welch";
  TestResult r = stats_internal::new_result(name, student ? "cohens_d" : "cohens_d_av");
  stats_internal::require_nonempty(a, name, "sample a");
  stats_internal::require_nonempty(b, name, "sample b");
  const Moments ma = stats_internal::sample_moments(a, std::string(name) + ": sample a");
  const Moments mb = stats_internal::sample_moments(b, std::string(name) + ": sample b");
  const double n1 = static_cast<double>(ma.n), n2 = static_cast<double>(mb.n);
  if (student) r.df = {n1 + n2 - 2.0};
  if (ma.n < 2 || mb.n < 2) {
    // scipy: the n-1 variance of a single value is NaN, so t and p are NaN.
    r.note = fmt::format("sample {} has a single observation: its variance (n - 1) is undefined",
                         ma.n < 2 ? "a" : "b");
    if (!student) r.df = {kNaN};
    return r;
  }
  const double v1 = ma.variance(), v2 = mb.variance();
  // Difference of the rounded means, as scipy's np.mean(a) - np.mean(b).
  const double diff = ma.mean() - mb.mean();
  double denom = 0.0, spread = 0.0;
  if (student) {
    const double df = n1 + n2 - 2.0;
    const double svar = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / df;
    denom = std::sqrt(svar * (1.0 / n1 + 1.0 / n2));
    spread = std::sqrt(svar);  // pooled sd (Cohen's d)
  } else {
    const double vn1 = v1 / n1, vn2 = v2 / n2;
    // Welch-Satterthwaite df; scipy sets df = 1 when it is 0/0 (both variances zero).
    const double df = (vn1 + vn2) * (vn1 + vn2) / (vn1 * vn1 / (n1 - 1.0) + vn2 * vn2 / (n2 - 1.0));
    r.df = {std::isnan(df) ? 1.0 : df};
    denom = std::sqrt(vn1 + vn2);
    spread = std::sqrt((v1 + v2) / 2.0);  // d_av
  }
  if (denom == 0.0) {
    if (diff == 0.0) {
      r.note = "all values are identical: t is undefined (0/0)";
    } else {
      r.note =
          "zero variance in both samples and the means differ: t is infinite "
          "(scipy returns +-inf and p = 0); reported as undefined";
    }
    return r;
  }
  r.statistic = diff / denom;
  r.p_value = stats_internal::t_p(r.df[0], r.statistic, alternative);
  r.effect_size = diff / spread;
  return r;
}

}  // namespace

TestResult one_way_anova(const GroupedValues& data) {
  return anova_from_moments(stats_internal::grouped_moments(data, "anova"));
}

TestResult one_way_anova(const std::vector<std::span<const double>>& groups) {
  VLBIAS_CHECK(groups.size() >= 2, InputError, "anova: {} group(s); expected at least 2",
               groups.size());
  std::vector<Moments> moments;
  moments.reserve(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    VLBIAS_CHECK(!groups[g].empty(), InputError,
                 "anova: group {} of {} has no observations; drop empty groups before testing", g,
                 groups.size());
    moments.push_back(stats_internal::sample_moments(groups[g], fmt::format("anova: group {}", g)));
  }
  return anova_from_moments(moments);
}

TestResult student_t(std::span<const double> a, std::span<const double> b,
                     Alternative alternative) {
  return two_sample_t(a, b, Pooling::Student, alternative);
}

TestResult welch_t(std::span<const double> a, std::span<const double> b, Alternative alternative) {
  return two_sample_t(a, b, Pooling::Welch, alternative);
}

// scipy 1.10 ttest_rel: d = a - b, t = mean(d) / sqrt(var(d, ddof=1) / n), df = n - 1;
// Cohen's d_z = mean(d) / sd(d).
TestResult paired_t(std::span<const double> a, std::span<const double> b, Alternative alternative) {
  TestResult r = stats_internal::new_result("paired_t", "cohens_dz");
  VLBIAS_CHECK(a.size() == b.size(), InputError,
               "paired_t: sample a has {} values and sample b {}; paired samples need equal length",
               a.size(), b.size());
  stats_internal::require_nonempty(a, "paired_t", "sample a");
  const Moments d = stats_internal::difference_moments(a, b);
  const double n = static_cast<double>(d.n);
  r.df = {n - 1.0};
  if (d.n < 2) {
    r.note = "a single pair: the variance of the differences (n - 1) is undefined";
    return r;
  }
  if (d.constant) {
    r.note = d.first == 0.0
                 ? "every difference is zero: t is undefined (0/0)"
                 : "the differences are constant and non-zero: t is infinite (scipy returns +-inf "
                   "and p = 0); reported as undefined";
    return r;
  }
  const double var = d.variance();
  const double mean = d.mean();
  r.statistic = mean / std::sqrt(var / n);
  r.p_value = stats_internal::t_p(n - 1.0, r.statistic, alternative);
  r.effect_size = mean / std::sqrt(var);
  return r;
}

namespace {

void check_contrast_inputs(std::span<const GroupMoments> groups, double level) {
  VLBIAS_CHECK(groups.size() >= 2, InputError,
               "a contrast against the other groups needs at least 2 groups, got {}",
               groups.size());
  VLBIAS_CHECK(level > 0 && level < 1, InputError, "confidence level must be in (0, 1), got {}",
               level);
  for (std::size_t j = 0; j < groups.size(); ++j) {
    VLBIAS_CHECK(
        groups[j].n >= 2 && std::isfinite(groups[j].mean) && std::isfinite(groups[j].variance),
        InputError, "a contrast needs at least 2 finite values per group; group {} has n = {}", j,
        groups[j].n);
  }
}

// The contrast of group g from the sums over the other groups of their means, of s_j^2/n_j
// and of (s_j^2/n_j)^2/(n_j-1) (the weights 1/(G-1)^2 applied here).
ContrastResult contrast_from_sums(const GroupMoments& g, std::size_t groups, double other_means,
                                  double other_var, double other_df, double level) {
  ContrastResult r;
  r.level = level;
  const double others = static_cast<double>(groups - 1);
  const double n = static_cast<double>(g.n);
  const double own = g.variance / n;  // this group's share of se^2
  const double w = 1.0 / (others * others);
  const double var = own + w * other_var;
  const double df_denominator = own * own / (n - 1.0) + w * w * other_df;
  r.estimate = g.mean - other_means / others;
  r.se = std::sqrt(var);
  if (!(var > 0)) {
    r.note = "every group's values are constant: the contrast's standard error is 0";
    r.lower = r.upper = r.estimate;
    return r;
  }
  r.df = var * var / df_denominator;
  r.t = r.estimate / r.se;
  r.p_value = stats_internal::t_two_sided_p(r.df, r.t);
  const double q = boost::math::quantile(boost::math::students_t(r.df), 0.5 + level / 2.0);
  r.lower = r.estimate - q * r.se;
  r.upper = r.estimate + q * r.se;
  return r;
}

}  // namespace

// One group against the unweighted mean of the others (stats.h): a linear contrast with
// Welch-Satterthwaite degrees of freedom.
ContrastResult contrast_vs_others(std::span<const GroupMoments> groups, std::size_t g,
                                  double level) {
  check_contrast_inputs(groups, level);
  VLBIAS_CHECK(g < groups.size(), InternalError, "contrast group {} of {}", g, groups.size());
  double other_means = 0, other_var = 0, other_df = 0;
  for (std::size_t j = 0; j < groups.size(); ++j) {
    if (j == g) continue;
    const double n = static_cast<double>(groups[j].n);
    const double u = groups[j].variance / n;
    other_means += groups[j].mean;
    other_var += u;
    other_df += u * u / (n - 1.0);
  }
  return contrast_from_sums(groups[g], groups.size(), other_means, other_var, other_df, level);
}

std::vector<ContrastResult> contrasts_vs_others(std::span<const GroupMoments> groups,
                                                double level) {
  check_contrast_inputs(groups, level);
  const std::size_t k = groups.size();
  // before[g]: sums over the groups j < g; after[g]: over j >= g. The sum over j != g is
  // before[g] + after[g + 1]: no subtraction, so no cancellation.
  std::vector<std::array<double, 3>> before(k + 1, {0, 0, 0}), after(k + 1, {0, 0, 0});
  auto terms = [&](std::size_t j) {
    const double n = static_cast<double>(groups[j].n);
    const double u = groups[j].variance / n;
    return std::array<double, 3>{groups[j].mean, u, u * u / (n - 1.0)};
  };
  for (std::size_t j = 0; j < k; ++j) {
    const auto t = terms(j);
    for (int c = 0; c < 3; ++c) before[j + 1][c] = before[j][c] + t[c];
  }
  for (std::size_t j = k; j-- > 0;) {
    const auto t = terms(j);
    for (int c = 0; c < 3; ++c) after[j][c] = t[c] + after[j + 1][c];
  }
  std::vector<ContrastResult> out;
  out.reserve(k);
  for (std::size_t g = 0; g < k; ++g) {
    out.push_back(contrast_from_sums(groups[g], k, before[g][0] + after[g + 1][0],
                                     before[g][1] + after[g + 1][1], before[g][2] + after[g + 1][2],
                                     level));
  }
  return out;
}

}  // namespace vlbias::stats
