// Wilcoxon signed-rank test (stats.h): scipy.stats.wilcoxon in scipy 1.10 (method "auto",
// correction=False), except that tied |d| use the tie-corrected normal approximation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "classical_internal.h"
#include "distributions.h"
#include "vlbias/core/error.h"

namespace vlbias::stats {

namespace {

// Largest n for the exact distribution (scipy 1.10: len(d) <= 50). 2^50 sign vectors: every
// count fits a double's 53-bit mantissa exactly.
constexpr std::size_t kExactMaxPairs = 50;

// Counts of the rank sum R+ over the 2^n sign vectors of ranks 1..n: c[s] = #{subsets of
// {1..n} summing to s}, by adding one rank at a time (scipy's _get_wilcoxon_distr convolves
// the same way). Exact integers in doubles for n <= 50.
std::vector<double> signed_rank_counts(std::size_t n) {
  const std::size_t max_sum = n * (n + 1) / 2;
  std::vector<double> c(max_sum + 1, 0.0);
  c[0] = 1.0;
  std::size_t reach = 0;
  for (std::size_t k = 1; k <= n; ++k) {
    reach += k;
    for (std::size_t s = reach; s >= k; --s) c[s] += c[s - k];
  }
  return c;
}

// scipy 1.10's exact branch: one-sided sums of the pmf from R+; two-sided twice the smaller
// tail, 1 when R+ is the centre (len(pmf) - 1) // 2.
double exact_p(std::size_t n, std::size_t r_plus, Alternative alternative) {
  const std::vector<double> c = signed_rank_counts(n);
  const double total = std::ldexp(1.0, static_cast<int>(n));
  double below = 0.0, above = 0.0;  // counts with R <= r_plus and R >= r_plus
  for (std::size_t s = 0; s < c.size(); ++s) {
    if (s <= r_plus) below += c[s];
    if (s >= r_plus) above += c[s];
  }
  const double p_less = below / total, p_greater = above / total;
  double p = 0.0;
  switch (alternative) {
    case Alternative::Greater:
      p = p_greater;
      break;
    case Alternative::Less:
      p = p_less;
      break;
    default:
      p = r_plus == (c.size() - 1) / 2 ? 1.0 : 2.0 * std::min(p_greater, p_less);
  }
  return std::clamp(p, 0.0, 1.0);
}

// The differences, validated: equal lengths, non-empty, finite inputs and finite differences.
std::vector<double> differences(std::span<const double> a, std::span<const double> b) {
  VLBIAS_CHECK(a.size() == b.size(), InputError,
               "wilcoxon: sample a has {} values and sample b {}; paired samples need equal length",
               a.size(), b.size());
  stats_internal::require_nonempty(a, "wilcoxon", "sample a");
  stats_internal::require_finite(a, "wilcoxon: sample a");
  stats_internal::require_finite(b, "wilcoxon: sample b");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  stats_internal::require_finite(d, "wilcoxon: the differences a - b");
  return d;
}

// sum over runs of tied |d| of t (t^2 - 1), skipping the run of zeros when `skip_zeros`
// (scipy's find_repeats over the ranks that enter the variance); also whether any run has t > 1.
double tie_sum(const std::vector<double>& abs_d, bool skip_zeros, bool& any_ties) {
  std::vector<double> v = abs_d;
  std::sort(v.begin(), v.end());
  double sum = 0.0;
  any_ties = false;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= v.size(); ++i) {
    if (i < v.size() && v[i] == v[start]) continue;
    const double t = static_cast<double>(i - start);
    if (t > 1 && !(skip_zeros && v[start] == 0.0)) {
      sum += t * (t * t - 1.0);
      any_ties = true;
    }
    start = i;
  }
  return sum;
}

}  // namespace

const char* to_string(ZeroMethod m) {
  switch (m) {
    case ZeroMethod::Pratt:
      return "pratt";
    case ZeroMethod::Zsplit:
      return "zsplit";
    default:
      return "wilcox";
  }
}

TestResult wilcoxon(std::span<const double> a, std::span<const double> b, Alternative alternative,
                    ZeroMethod zero_method) {
  TestResult r = stats_internal::new_result("wilcoxon", "rank_biserial");
  std::vector<double> d = differences(a, b);
  const std::size_t n_all = d.size();
  const auto n_zero = static_cast<std::size_t>(std::count(d.begin(), d.end(), 0.0));
  std::vector<double> abs_d(n_all);
  for (std::size_t i = 0; i < n_all; ++i) abs_d[i] = std::fabs(d[i]);
  bool ties = false;
  tie_sum(abs_d, false, ties);
  const bool exact = n_all <= kExactMaxPairs && n_zero == 0 && !ties;
  r.method = exact ? "exact" : "asymptotic";
  if (!exact && zero_method != ZeroMethod::Zsplit && n_zero == n_all) {
    r.note = fmt::format(
        "every difference is zero: zero_method {} leaves no rank to test (scipy raises); use "
        "zsplit to count the zeros",
        to_string(zero_method));
    return r;
  }
  if (zero_method == ZeroMethod::Wilcox && n_zero > 0) {
    std::erase(d, 0.0);
    abs_d.resize(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) abs_d[i] = std::fabs(d[i]);
  }
  const std::vector<double> ranks = rank_average(abs_d);
  double r_plus = 0.0, r_minus = 0.0, r_zero = 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    (d[i] > 0 ? r_plus : d[i] < 0 ? r_minus : r_zero) += ranks[i];
  }
  if (zero_method == ZeroMethod::Zsplit) {
    r_plus += r_zero / 2.0;
    r_minus += r_zero / 2.0;
  }
  r.statistic = alternative == Alternative::TwoSided ? std::min(r_plus, r_minus) : r_plus;
  if (r_plus + r_minus > 0) r.effect_size = (r_plus - r_minus) / (r_plus + r_minus);
  if (exact) {
    r.p_value = exact_p(d.size(), static_cast<std::size_t>(r_plus), alternative);
    return r;
  }
  // scipy: mn = n(n+1)/4, se^2 = [n(n+1)(2n+1) - (Pratt) z(z+1)(2z+1) - sum t(t^2-1)/2] / 24.
  const double count = static_cast<double>(d.size());
  double mn = count * (count + 1.0) * 0.25;
  double se = count * (count + 1.0) * (2.0 * count + 1.0);
  if (zero_method == ZeroMethod::Pratt) {
    const double z = static_cast<double>(n_zero);
    mn -= z * (z + 1.0) * 0.25;
    se -= z * (z + 1.0) * (2.0 * z + 1.0);
  }
  bool unused = false;
  se -= 0.5 * tie_sum(abs_d, zero_method == ZeroMethod::Pratt, unused);
  se = std::sqrt(se / 24.0);
  r.p_value = stats_internal::normal_p((r.statistic - mn) / se, alternative);
  return r;
}

}  // namespace vlbias::stats
