// Power, sample size and minimum detectable effect by simulation; see
// include/vlbias/stats/power.h for the definitions, the algorithm and the error bound.
#include "vlbias/stats/power.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/non_central_chi_squared.hpp>
#include <boost/math/distributions/non_central_f.hpp>
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/random/binomial_distribution.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {

const char* to_string(PowerTest t) {
  switch (t) {
    case PowerTest::Anova:
      return "anova";
    case PowerTest::Welch:
      return "welch";
    case PowerTest::Student:
      return "student";
    case PowerTest::Contrast:
      return "contrast";
    case PowerTest::ChiSquare:
      return "chi_square";
    case PowerTest::Friedman:
      return "friedman";
  }
  return "?";
}

const char* to_string(Correction c) {
  switch (c) {
    case Correction::None:
      return "none";
    case Correction::Holm:
      return "holm";
    case Correction::BenjaminiHochberg:
      return "bh";
  }
  return "?";
}

namespace {

// Boost.Random's engine interface over an Rng stream (for the binomial draws).
struct RngEngine {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() { return rng.next_u64(); }
  Rng rng;
};

// A standard normal draw (Box-Muller, cosine branch; 1 - u keeps the logarithm finite).
double standard_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform01();
  const double u2 = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

bool is_means_test(PowerTest t) {
  return t != PowerTest::ChiSquare;
}

// How many p-values one simulated design yields (all of them enter the family).
std::size_t design_p_values(const PowerDesign& d) {
  return d.test == PowerTest::Contrast ? d.groups.size() : 1;
}

void check_effect(const PowerDesign& d, double effect) {
  VLBIAS_CHECK(std::isfinite(effect) && effect >= 0 && effect <= kMaxPowerValue, UsageError,
               "power: the effect must be a number from 0 to {} (in the test's units), got {}",
               kMaxPowerValue, effect);
  VLBIAS_CHECK(is_means_test(d.test) || d.base_rate + effect <= 1, UsageError,
               "power: an effect of {} puts the target group's rate above 1 (base rate {})", effect,
               d.base_rate);
}

void check_runs(double target_power, std::size_t replicates) {
  VLBIAS_CHECK(target_power > 0 && target_power < 1, UsageError,
               "power: the target power must lie in (0, 1), got {}", target_power);
  VLBIAS_CHECK(replicates >= 1, UsageError, "power: replicates must be at least 1");
  check_resamples(replicates, "power");
}

// Sets per block of a Friedman design: m with clusters, 1 without.
std::size_t block_sets(const PowerDesign& d) {
  return std::max<std::size_t>(d.sets_per_cluster, 1);
}

// The sd of one block's value of a group (a cluster mean over m sets, or one set's value).
double block_sd(const PowerDesign& d) {
  const double sd = d.groups[0].sd;
  return std::sqrt(d.cluster_sd * d.cluster_sd + sd * sd / static_cast<double>(block_sets(d)));
}

// Friedman's p of one replicate of the set-blocked design (power.h): B blocks of m sets; the
// residuals of group g from stream g, the set and cluster effects from stream G + 1.
double friedman_replicate_p(const PowerDesign& d, double effect, std::uint64_t seed,
                            std::size_t b) {
  const std::size_t k = d.groups.size(), blocks = d.groups[0].n, m = block_sets(d);
  std::vector<double> values(blocks * k, 0.0);
  Rng shared(derive_seed(seed, k + 1), b);
  for (std::size_t c = 0; c < blocks; ++c) {
    for (std::size_t g = 0; g < k; ++g) {
      const double u = m > 1 ? d.cluster_sd * standard_normal(shared) : 0.0;
      values[c * k + g] = (g == d.target ? effect : 0.0) + u;
    }
  }
  for (std::size_t c = 0; c < blocks; ++c) {
    double a = 0;  // the sets' effects, common to every group of the block
    for (std::size_t s = 0; s < m; ++s) a += d.set_sd * standard_normal(shared);
    for (std::size_t g = 0; g < k; ++g) values[c * k + g] += a / static_cast<double>(m);
  }
  for (std::size_t g = 0; g < k; ++g) {
    Rng rng(derive_seed(seed, g), b);
    for (std::size_t c = 0; c < blocks; ++c) {
      double e = 0;
      for (std::size_t s = 0; s < m; ++s) e += standard_normal(rng);
      values[c * k + g] += d.groups[g].sd * e / static_cast<double>(m);
    }
  }
  return friedman(values, k).p_value;
}

// The target's p-value of one replicate at the given effect.
double replicate_p(const PowerDesign& d, double effect, std::uint64_t seed, std::size_t b) {
  const std::size_t k = d.groups.size();
  if (d.test == PowerTest::Friedman) return friedman_replicate_p(d, effect, seed, b);
  if (!is_means_test(d.test)) {
    std::vector<std::size_t> successes(k), totals(k);
    for (std::size_t g = 0; g < k; ++g) {
      RngEngine engine{Rng(derive_seed(seed, g), b)};
      const double rate = d.base_rate + (g == d.target ? effect : 0.0);
      boost::random::binomial_distribution<long long, double> draw(
          static_cast<long long>(d.groups[g].n), rate);
      successes[g] = static_cast<std::size_t>(draw(engine));
      totals[g] = d.groups[g].n;
    }
    return chi_square_rates(successes, totals).p_value;
  }
  std::vector<std::vector<double>> values(k);
  for (std::size_t g = 0; g < k; ++g) {
    Rng rng(derive_seed(seed, g), b);
    const double mu = g == d.target ? effect : 0.0;
    values[g].resize(d.groups[g].n);
    for (double& v : values[g]) v = mu + d.groups[g].sd * standard_normal(rng);
  }
  switch (d.test) {
    case PowerTest::Welch:
      return welch_t(values[0], values[1]).p_value;
    case PowerTest::Student:
      return student_t(values[0], values[1]).p_value;
    case PowerTest::Anova: {
      std::vector<std::span<const double>> spans(values.begin(), values.end());
      return one_way_anova(spans).p_value;
    }
    default:
      break;
  }
  std::vector<GroupMoments> moments(k);
  for (std::size_t g = 0; g < k; ++g) {
    moments[g] = {mean(values[g]), variance(values[g]), values[g].size()};
  }
  return contrast_vs_others(moments, d.target).p_value;
}

// Whether replicate b rejects the target's null after the correction over the family.
bool replicate_rejects(const PowerDesign& d, double effect, std::uint64_t seed, std::size_t b) {
  const double p = replicate_p(d, effect, seed, b);
  if (std::isnan(p)) return false;  // an undefined test finds nothing
  if (d.correction == Correction::None || d.family == 1) return p <= d.alpha;
  // The other tests of the family, as true nulls. For a contrast the other G - 1 contrasts
  // of the design are nulls too only approximately; they are drawn as uniform like the rest.
  std::vector<double> family(d.family);
  family[0] = p;
  Rng rng(derive_seed(seed, d.groups.size()), b);
  for (std::size_t i = 1; i < family.size(); ++i) family[i] = rng.uniform01();
  const std::vector<double> adjusted =
      d.correction == Correction::Holm ? holm(family) : benjamini_hochberg(family);
  return adjusted[0] <= d.alpha;
}

// Bisection steps of the MDE search: the bracket shrinks 1024-fold, well below the Monte Carlo
// error of the power curve it is read from.
constexpr int kMdeBisections = 10;

PowerDesign with_common_n(PowerDesign d, std::size_t n) {
  for (PowerGroup& g : d.groups) g.n = n;
  return d;
}

// The Friedman design's own conditions (power.h): 3 or more groups, one number of blocks and
// one residual sd for all, finite non-negative set and cluster sds.
void check_blocked_design(const PowerDesign& d) {
  const std::size_t k = d.groups.size();
  VLBIAS_CHECK(k >= 3, UsageError,
               "power: the friedman test needs at least 3 groups (scipy's rule), the design has {}",
               k);
  for (const PowerGroup& g : d.groups) {
    VLBIAS_CHECK(g.n == d.groups[0].n && g.sd == d.groups[0].sd, UsageError,
                 "power: every group of a friedman design has the same blocks and residual sd; "
                 "got n {} sd {} against n {} sd {}",
                 g.n, g.sd, d.groups[0].n, d.groups[0].sd);
  }
  for (const double v : {d.set_sd, d.cluster_sd}) {
    VLBIAS_CHECK(std::isfinite(v) && v >= 0 && v <= kMaxPowerValue, UsageError,
                 "power: the set and cluster sds must be finite numbers from 0 to {}, got {}",
                 kMaxPowerValue, v);
  }
}

}  // namespace

void check_power_design(const PowerDesign& d) {
  const char* name = to_string(d.test);
  VLBIAS_CHECK(d.alpha > 0 && d.alpha < 1, UsageError, "power: alpha must lie in (0, 1), got {}",
               d.alpha);
  const std::size_t k = d.groups.size();
  const bool two = d.test == PowerTest::Welch || d.test == PowerTest::Student;
  VLBIAS_CHECK(!two || k == 2, UsageError,
               "power: the {} test compares 2 groups, the design has {}", name, k);
  VLBIAS_CHECK(k >= 2, UsageError,
               "power: the {} test needs at least 2 groups, the design has {} (a pilot with one "
               "group has no gap to test)",
               name, k);
  if (d.test == PowerTest::Friedman) check_blocked_design(d);
  VLBIAS_CHECK(d.target < k, UsageError,
               "power: target group {} is out of range (the design has {})", d.target, k);
  VLBIAS_CHECK(d.family >= design_p_values(d), UsageError,
               "power: the family of {} tests is smaller than the {} p-values one {} design yields",
               d.family, design_p_values(d), name);
  const std::size_t min_n = is_means_test(d.test) ? 2 : 1;
  bool any_spread = false;
  for (std::size_t g = 0; g < k; ++g) {
    VLBIAS_CHECK(d.groups[g].n >= min_n && d.groups[g].n <= kMaxPowerSampleSize, UsageError,
                 "power: group {} has {} units; the {} test needs at least {} per group and "
                 "at most {} (each simulated study draws every unit)",
                 g, d.groups[g].n, name, min_n, kMaxPowerSampleSize);
    if (!is_means_test(d.test)) continue;
    VLBIAS_CHECK(
        std::isfinite(d.groups[g].sd) && d.groups[g].sd >= 0 && d.groups[g].sd <= kMaxPowerValue,
        UsageError, "power: group {} has sd {}; expected a finite number from 0 to {}", g,
        d.groups[g].sd, kMaxPowerValue);
    any_spread = any_spread || d.groups[g].sd > 0;
  }
  any_spread = any_spread || (d.test == PowerTest::Friedman && d.cluster_sd > 0);
  VLBIAS_CHECK(!is_means_test(d.test) || any_spread, UsageError,
               "power: every group of the pilot has zero variance, so the {} test is undefined "
               "and there is no noise to simulate",
               name);
  VLBIAS_CHECK(is_means_test(d.test) || (d.base_rate > 0 && d.base_rate < 1), UsageError,
               "power: the base rate must lie in (0, 1), got {} (a rate of 0 or 1 everywhere has "
               "no variance)",
               d.base_rate);
}

PowerEstimate simulate_power(const PowerDesign& design, double effect, std::size_t replicates,
                             std::uint64_t seed) {
  check_power_design(design);
  check_effect(design, effect);
  check_runs(0.5, replicates);
  // Rejections per chunk of replicates, summed in chunk order: the same at any thread count.
  constexpr std::size_t kChunk = 16;
  std::vector<std::size_t> counts((replicates + kChunk - 1) / kChunk, 0);
  parallel_chunks(replicates, kChunk, [&](std::size_t c, std::size_t begin, std::size_t end) {
    for (std::size_t b = begin; b < end; ++b)
      counts[c] += replicate_rejects(design, effect, seed, b);
  });
  PowerEstimate e;
  e.effect = effect;
  e.replicates = replicates;
  e.seed = seed;
  for (std::size_t c : counts) e.rejections += c;
  e.power = static_cast<double>(e.rejections) / static_cast<double>(replicates);
  e.se = std::sqrt(e.power * (1.0 - e.power) / static_cast<double>(replicates));
  return e;
}

SampleSizeResult sample_size(const PowerDesign& design, double effect, double target_power,
                             std::size_t replicates, std::uint64_t seed) {
  check_power_design(design);
  check_effect(design, effect);
  check_runs(target_power, replicates);
  VLBIAS_CHECK(effect > 0, UsageError, "power: the effect to detect must be greater than 0, got {}",
               effect);
  auto power_at = [&](std::size_t n) {
    return simulate_power(with_common_n(design, n), effect, replicates, seed);
  };
  std::size_t lo = is_means_test(design.test) ? 2 : 1;  // largest n known to fall short
  SampleSizeResult r;
  PowerEstimate at = power_at(lo);
  if (at.power >= target_power) return {lo, at, ""};
  std::size_t hi = lo;
  for (;;) {
    if (hi >= kMaxPowerSampleSize) {
      r.at = at;
      r.note = fmt::format("the target power is not reached with {} units per group",
                           kMaxPowerSampleSize);
      return r;
    }
    lo = hi;
    hi = std::min(hi * 2, kMaxPowerSampleSize);
    at = power_at(hi);
    if (at.power >= target_power) break;
  }
  r.n_per_group = hi;
  r.at = at;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const PowerEstimate m = power_at(mid);
    if (m.power >= target_power) {
      hi = mid;
      r = {mid, m, ""};
    } else {
      lo = mid;
    }
  }
  return r;
}

MdeResult minimum_detectable_effect(const PowerDesign& design, double target_power,
                                    std::size_t replicates, std::uint64_t seed) {
  check_power_design(design);
  check_runs(target_power, replicates);
  const bool rates = !is_means_test(design.test);
  const double room = 1.0 - design.base_rate;
  double hi = rates ? room / 16 : 0;
  for (const PowerGroup& g : design.groups) {
    if (!rates) hi = std::max(hi, g.sd / std::sqrt(static_cast<double>(g.n)));
  }
  if (design.test == PowerTest::Friedman) {
    hi = block_sd(design) / std::sqrt(static_cast<double>(design.groups[0].n));
  }
  hi = std::min(hi, kMaxPowerValue);
  MdeResult r;
  PowerEstimate at = simulate_power(design, hi, replicates, seed);
  double lo = 0;
  for (int doubling = 0; at.power < target_power; ++doubling) {
    if ((rates && hi >= room) || hi >= kMaxPowerValue || doubling >= 60) {
      r.effect = kNaN;
      r.at = at;
      r.note = fmt::format("no effect up to {} reaches the target power {} (power there {})", hi,
                           target_power, at.power);
      return r;
    }
    lo = hi;
    hi = std::min(2 * hi, rates ? room : kMaxPowerValue);
    at = simulate_power(design, hi, replicates, seed);
  }
  r.effect = hi;
  r.at = at;
  for (int step = 0; step < kMdeBisections; ++step) {
    const double mid = 0.5 * (lo + hi);
    const PowerEstimate m = simulate_power(design, mid, replicates, seed);
    if (m.power >= target_power) {
      hi = mid;
      r.effect = mid;
      r.at = m;
    } else {
      lo = mid;
    }
  }
  return r;
}

double analytic_power(const PowerDesign& d, double effect) {
  check_power_design(d);
  check_effect(d, effect);
  namespace bm = boost::math;
  const double a = d.alpha / static_cast<double>(d.correction == Correction::None ? 1 : d.family);
  const std::size_t k = d.groups.size();
  double n_total = 0, pooled = 0;
  for (const PowerGroup& g : d.groups) {
    n_total += static_cast<double>(g.n);
    pooled += (static_cast<double>(g.n) - 1) * g.sd * g.sd;
  }
  if (d.test == PowerTest::Friedman) {
    // The large-B noncentral chi-square, scaled by Friedman's efficiency against the F test.
    const double kd = static_cast<double>(k), sb = block_sd(d);
    const double are = 3 * kd / (std::numbers::pi * (kd + 1));
    const double lambda =
        are * static_cast<double>(d.groups[0].n) * effect * effect * (1 - 1 / kd) / (sb * sb);
    const double crit = bm::quantile(bm::complement(bm::chi_squared_distribution<>(kd - 1), a));
    if (lambda == 0) return a;
    return bm::cdf(
        bm::complement(bm::non_central_chi_squared_distribution<>(kd - 1, lambda), crit));
  }
  if (d.test == PowerTest::ChiSquare || d.test == PowerTest::Anova) {
    // Weighted mean of the group means (rates), then the noncentrality.
    const double shift = effect * static_cast<double>(d.groups[d.target].n) / n_total;
    double lambda = 0;
    for (std::size_t g = 0; g < k; ++g) {
      const double dev = (g == d.target ? effect : 0.0) - shift;
      lambda += static_cast<double>(d.groups[g].n) * dev * dev;
    }
    const double df1 = static_cast<double>(k - 1);
    if (d.test == PowerTest::ChiSquare) {
      const double r_bar = d.base_rate + shift;
      lambda /= r_bar * (1 - r_bar);
      const double crit = bm::quantile(bm::complement(bm::chi_squared_distribution<>(df1), a));
      if (lambda == 0) return a;
      return bm::cdf(bm::complement(bm::non_central_chi_squared_distribution<>(df1, lambda), crit));
    }
    const double df2 = n_total - static_cast<double>(k);
    lambda /= pooled / df2;
    const double crit = bm::quantile(bm::complement(bm::fisher_f_distribution<>(df1, df2), a));
    if (lambda == 0) return a;
    return bm::cdf(bm::complement(bm::non_central_f_distribution<>(df1, df2, lambda), crit));
  }
  // t tests: the target's difference (or contrast) over its standard error, with df.
  double se2 = 0, df = 0;
  if (d.test == PowerTest::Student) {
    const double sp2 = pooled / (n_total - 2);
    se2 =
        sp2 * (1.0 / static_cast<double>(d.groups[0].n) + 1.0 / static_cast<double>(d.groups[1].n));
    df = n_total - 2;
  } else {
    // Welch-Satterthwaite over the contrast's weights: 1 for the target, 1 / (G - 1) for
    // the others (two groups: Welch's t).
    double denom = 0;
    for (std::size_t g = 0; g < k; ++g) {
      const double w = g == d.target ? 1.0 : 1.0 / static_cast<double>(k - 1);
      const double n = static_cast<double>(d.groups[g].n);
      const double v = w * w * d.groups[g].sd * d.groups[g].sd / n;
      se2 += v;
      denom += v * v / (n - 1);
    }
    df = se2 * se2 / denom;
  }
  const double crit = t_quantile(df, 1 - a / 2);
  if (effect == 0) return a;
  const bm::non_central_t_distribution<> nct(df, effect / std::sqrt(se2));
  return bm::cdf(bm::complement(nct, crit)) + bm::cdf(nct, -crit);
}

}  // namespace vlbias::stats
