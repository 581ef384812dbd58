// Bootstrap intervals, permutation tests and the sign-flip test: exact enumeration
// against Python (fixtures from tools/make_resampling_fixtures.py), Monte Carlo
// convergence to it, the documented replicate schemes, fast path == generic engine,
// determinism across thread counts and seeds, degenerate input, progress output.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pty.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <mutex>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias::stats {
namespace {
namespace in_resampling_test {

using Labels = std::vector<std::uint32_t>;
using LabelStatistic = std::function<double(std::span<const std::uint32_t>)>;
using ValueStatistic = std::function<double(std::span<const double>)>;

const nlohmann::json& fixtures() {
  return testing_util::fixture_json("stats/resampling.json");
}

Alternative alternative_named(const std::string& name) {
  if (name == "two-sided") return Alternative::TwoSided;
  if (name == "greater") return Alternative::Greater;
  EXPECT_EQ(name, "less");
  return Alternative::Less;
}

constexpr Alternative kAlternatives[] = {Alternative::TwoSided, Alternative::Greater,
                                         Alternative::Less};

// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(thread_count()) {}
  ~ThreadCountGuard() { set_thread_count(saved_); }

 private:
  unsigned saved_;
};

// Standard normal draws (Box-Muller) from a fixed stream.
std::vector<double> normal_sample(std::size_t n, std::uint64_t seed, double mean = 0.0,
                                  double sd = 1.0) {
  Rng rng(seed, 12345);
  std::vector<double> x(n);
  for (auto& v : x) {
    const double u1 = 1.0 - rng.uniform01();
    const double u2 = rng.uniform01();
    v = mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  return x;
}

Labels two_groups(std::size_t n0, std::size_t n1) {
  Labels labels(n0, 0);
  labels.insert(labels.end(), n1, 1);
  return labels;
}

// T = mean(x | 0) - mean(x | 1), plain sums in item order (the fixtures' statistic).
LabelStatistic mean_difference_of(const std::vector<double>& x) {
  return [&x](std::span<const std::uint32_t> labels) {
    double s0 = 0.0, s1 = 0.0;
    std::size_t n0 = 0, n1 = 0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] == 0) {
        s0 += x[i];
        ++n0;
      } else {
        s1 += x[i];
        ++n1;
      }
    }
    return s0 / static_cast<double>(n0) - s1 / static_cast<double>(n1);
  };
}

// sum_g n_g mean_g^2 over groups in label order (the fixtures' 3-group statistic).
LabelStatistic between_groups_of(const std::vector<double>& x) {
  return [&x](std::span<const std::uint32_t> labels) {
    std::vector<double> sums(8, 0.0);
    std::vector<double> counts(8, 0.0);
    for (std::size_t i = 0; i < labels.size(); ++i) {
      sums[labels[i]] += x[i];
      counts[labels[i]] += 1.0;
    }
    double total = 0.0;
    for (std::size_t g = 0; g < sums.size(); ++g) {
      if (counts[g] == 0.0) continue;
      const double m = sums[g] / counts[g];
      total += counts[g] * m * m;
    }
    return total;
  };
}

// sum_i (i + 1) v_i, left to right (the fixtures' custom sign-flip statistic).
double weighted_sum(std::span<const double> v) {
  double s = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) s += static_cast<double>(i + 1) * v[i];
  return s;
}

double plain_mean(std::span<const double> v) {
  double s = 0.0;
  for (const double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Monte Carlo p within 4.5 binomial standard errors (plus the 1/(B+1) offset) of p.
void expect_near_exact(double p_mc, double p_exact, std::size_t resamples,
                       const std::string& what) {
  const double se = std::sqrt(p_exact * (1.0 - p_exact) / static_cast<double>(resamples));
  EXPECT_NEAR(p_mc, p_exact, 4.5 * se + 1.0 / static_cast<double>(resamples)) << what;
}

void expect_same(const ResamplingResult& a, const ResamplingResult& b, const std::string& what) {
  EXPECT_EQ(a.observed, b.observed) << what;
  EXPECT_EQ(a.p_value, b.p_value) << what;
  EXPECT_EQ(a.exceed, b.exceed) << what;
  EXPECT_EQ(a.resamples, b.resamples) << what;
  EXPECT_EQ(a.undefined, b.undefined) << what;
  EXPECT_EQ(a.method, b.method) << what;
  EXPECT_EQ(a.note, b.note) << what;
}

// The relabelling scheme stats.h documents, written out directly for one replicate.
Labels documented_relabelling(const Labels& labels, std::uint64_t seed, std::uint64_t b) {
  const std::size_t n = labels.size();
  std::vector<std::pair<std::size_t, std::uint32_t>> groups;  // (size, label)
  for (std::uint32_t g = 0; g <= *std::max_element(labels.begin(), labels.end()); ++g) {
    const auto c = static_cast<std::size_t>(std::count(labels.begin(), labels.end(), g));
    if (c > 0) groups.emplace_back(c, g);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Labels order;
  for (const auto& [c, g] : groups) order.insert(order.end(), c, g);
  std::vector<std::uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  Rng rng(seed, b);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    std::swap(idx[i], idx[i + rng.uniform_index(n - i)]);
  }
  Labels out(n);
  for (std::size_t i = 0; i < n; ++i) out[idx[i]] = order[i];
  return out;
}

// ------------------------------------------------------------------- bootstrap

TEST(BootstrapTest, AllEqualValuesGiveAZeroWidthInterval) {
  const std::vector<double> x(25, 0.1);
  const Interval ci = bootstrap_mean_ci(x, 500, 0.95, 3);
  EXPECT_EQ(ci.lower, 0.1);
  EXPECT_EQ(ci.upper, 0.1);
  EXPECT_EQ(ci.resamples, 500u);
  EXPECT_EQ(ci.undefined, 0u);
  // The generic engine: every resample is 25 copies of the same value.
  const Interval generic = bootstrap_ci(
      x.size(),
      [&](std::span<const std::uint32_t> idx) {
        double s = 0.0;
        for (const auto i : idx) s += x[i];
        return s / static_cast<double>(idx.size());
      },
      500, 0.95, 3);
  EXPECT_EQ(generic.lower, generic.upper);
  EXPECT_NEAR(generic.lower, 0.1, 1e-15);
}

TEST(BootstrapTest, MeanIntervalEqualsGenericEngineWithPlainSum) {
  const auto x = normal_sample(300, 1, 5.0, 2.0);
  const auto plain = [&](std::span<const std::uint32_t> idx) {
    double s = 0.0;
    for (const auto i : idx) s += x[i];
    return s / static_cast<double>(idx.size());
  };
  for (const double level : {0.5, 0.9, 0.95}) {
    const Interval fast = bootstrap_mean_ci(x, 999, level, 77);
    const Interval generic = bootstrap_ci(x.size(), plain, 999, level, 77);
    EXPECT_EQ(fast.lower, generic.lower) << level;
    EXPECT_EQ(fast.upper, generic.upper) << level;
    EXPECT_EQ(fast.level, level);
    EXPECT_EQ(fast.seed, 77u);
    EXPECT_TRUE(fast.note.empty()) << fast.note;
  }
}

TEST(BootstrapTest, PercentileIntervalOfReplicatesEqualsTheEnginesInterval) {
  // The replicates bootstrap_ci would form, handed over as a vector: the same interval.
  const auto x = normal_sample(120, 4, 1.0, 1.0);
  std::vector<double> replicates;
  for (std::size_t b = 0; b < 400; ++b) {
    Rng rng(5, b);
    double s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) s += x[rng.uniform_index(x.size())];
    replicates.push_back(s / static_cast<double>(x.size()));
  }
  replicates[7] = kNaN;  // an undefined replicate is dropped and counted
  const Interval got = percentile_interval(replicates, 0.9, 5);
  std::vector<double> defined = replicates;
  defined.erase(defined.begin() + 7);
  std::sort(defined.begin(), defined.end());
  EXPECT_EQ(got.lower, percentile_sorted(defined, 5.0));
  EXPECT_EQ(got.upper, percentile_sorted(defined, 95.0));
  EXPECT_EQ(got.resamples, 400u);
  EXPECT_EQ(got.undefined, 1u);
  EXPECT_EQ(got.seed, 5u);
  EXPECT_NE(got.note.find("undefined (NaN) in 1 of 400"), std::string::npos) << got.note;
  EXPECT_TRUE(std::isnan(percentile_interval({}, 0.9, 0).lower));
  EXPECT_THROW(percentile_interval({1.0}, 1.5, 0), InputError);
}

TEST(BootstrapTest, ReplicateDrawsFollowTheDocumentedStream) {
  // B = 1: the interval is the single replicate, whose indices are
  // Rng(seed, 0).uniform_index(n) in order.
  const std::size_t n = 9;
  std::vector<std::uint32_t> seen;
  const Interval ci = bootstrap_ci(
      n,
      [&](std::span<const std::uint32_t> idx) {
        seen.assign(idx.begin(), idx.end());
        double code = 0.0;
        for (const auto i : idx) code = code * 10.0 + i;
        return code;
      },
      1, 0.9, 1234);
  Rng rng(1234, 0);
  std::vector<std::uint32_t> expected(n);
  double code = 0.0;
  for (auto& i : expected) {
    i = static_cast<std::uint32_t>(rng.uniform_index(n));
    code = code * 10.0 + i;
  }
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(ci.lower, code);
  EXPECT_EQ(ci.upper, code);
}

TEST(BootstrapTest, IntervalContainsSampleMeanAndShrinksWithN) {
  double previous_width = std::numeric_limits<double>::infinity();
  for (const std::size_t n : {20u, 80u, 320u, 1280u}) {
    const auto x = normal_sample(n, n, 1.0, 3.0);
    const double m = mean(x);
    const Interval ci = bootstrap_mean_ci(x, 2000, 0.95, 11);
    EXPECT_LT(ci.lower, m) << n;
    EXPECT_GT(ci.upper, m) << n;
    const double width = ci.upper - ci.lower;
    // Width ~ 2 * 1.96 * s / sqrt(n) (normal theory): halves when n quadruples.
    const double normal_width = 2 * 1.96 * std::sqrt(variance(x) / static_cast<double>(n));
    EXPECT_NEAR(width, normal_width, 0.15 * normal_width) << n;
    EXPECT_LT(width, 0.7 * previous_width) << n;
    previous_width = width;
  }
}

TEST(BootstrapTest, CoverageOfTheMeanOnANormalPopulation) {
  // 90% percentile intervals for the mean of N(1, 2^2) samples of 60: the true mean
  // should be covered about 88-90% of the time (the percentile bootstrap
  // under-covers slightly at small n). 300 data sets: binomial sd ~ 1.8 points.
  const double level = 0.9;
  int covered = 0;
  const int datasets = 300;
  for (int d = 0; d < datasets; ++d) {
    const auto x = normal_sample(60, 1000 + d, 1.0, 2.0);
    const Interval ci = bootstrap_mean_ci(x, 400, level, 5000 + d);
    covered += ci.lower <= 1.0 && 1.0 <= ci.upper;
  }
  const double coverage = static_cast<double>(covered) / datasets;
  EXPECT_GT(coverage, 0.82);
  EXPECT_LT(coverage, 0.95);
}

TEST(BootstrapTest, DeterministicAcrossThreadCountsAndSeeds) {
  ThreadCountGuard guard;
  const auto x = normal_sample(5000, 3);
  const auto median_of = [&](std::span<const std::uint32_t> idx) {
    std::vector<double> v;
    v.reserve(idx.size());
    for (const auto i : idx) v.push_back(x[i]);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  set_thread_count(1);
  const Interval ref_mean = bootstrap_mean_ci(x, 300, 0.95, 8);
  const Interval ref_median = bootstrap_ci(x.size(), median_of, 300, 0.95, 8);
  for (const unsigned threads : {2u, 3u, 8u}) {
    set_thread_count(threads);
    const Interval m = bootstrap_mean_ci(x, 300, 0.95, 8);
    const Interval md = bootstrap_ci(x.size(), median_of, 300, 0.95, 8);
    EXPECT_EQ(m.lower, ref_mean.lower) << threads;
    EXPECT_EQ(m.upper, ref_mean.upper) << threads;
    EXPECT_EQ(md.lower, ref_median.lower) << threads;
    EXPECT_EQ(md.upper, ref_median.upper) << threads;
  }
  const Interval other = bootstrap_mean_ci(x, 300, 0.95, 9);
  EXPECT_NE(other.lower, ref_mean.lower);
  EXPECT_NE(other.upper, ref_mean.upper);
}

TEST(BootstrapTest, UndefinedReplicatesAreDroppedAndNoted) {
  const std::size_t n = 10;
  // NaN whenever unit 0 is drawn first: about 10% of replicates.
  const Interval ci = bootstrap_ci(
      n,
      [](std::span<const std::uint32_t> idx) {
        return idx[0] == 0 ? kNaN : static_cast<double>(idx[1]);
      },
      1000, 0.9, 21);
  EXPECT_GT(ci.undefined, 50u);
  EXPECT_LT(ci.undefined, 160u);
  EXPECT_NE(ci.note.find("undefined"), std::string::npos);
  EXPECT_FALSE(std::isnan(ci.lower));
  const Interval none = bootstrap_ci(
      n, [](std::span<const std::uint32_t>) { return kNaN; }, 50, 0.9, 21);
  EXPECT_EQ(none.undefined, 50u);
  EXPECT_TRUE(std::isnan(none.lower));
  EXPECT_TRUE(std::isnan(none.upper));
  EXPECT_FALSE(none.note.empty());
}

TEST(BootstrapTest, TooFewUnitsGiveNaNWithNote) {
  for (const std::size_t n : {0u, 1u}) {
    const std::vector<double> x(n, 2.0);
    const Interval ci = bootstrap_mean_ci(x, 100, 0.95, 1);
    EXPECT_TRUE(std::isnan(ci.lower)) << n;
    EXPECT_TRUE(std::isnan(ci.upper)) << n;
    EXPECT_FALSE(ci.note.empty()) << n;
    const Interval g = bootstrap_ci(
        n, [](std::span<const std::uint32_t>) { return 1.0; }, 100, 0.95, 1);
    EXPECT_TRUE(std::isnan(g.lower)) << n;
    EXPECT_FALSE(g.note.empty()) << n;
  }
}

TEST(BootstrapTest, InvalidParametersAreInputErrors) {
  const std::vector<double> x = {1.0, 2.0, 3.0};
  EXPECT_THROW(bootstrap_mean_ci(x, 0, 0.95, 1), InputError);
  for (const double level : {0.0, 1.0, -0.5, 1.5, kNaN}) {
    EXPECT_THROW(bootstrap_mean_ci(x, 100, level, 1), InputError) << level;
  }
  EXPECT_THROW(bootstrap_ci(3, nullptr, 100, 0.95, 1), InputError);
  EXPECT_THROW(bootstrap_mean_ci(std::vector<double>{1.0, kNaN}, 100, 0.95, 1), InputError);
  EXPECT_THROW(bootstrap_mean_ci(std::vector<double>{1.0, std::numeric_limits<double>::infinity()},
                                 100, 0.95, 1),
               InputError);
}

// ----------------------------------------------------------------- permutation

TEST(PermutationTest, ExactEnumerationMatchesPython) {
  const auto& cases = fixtures().at("permutation");
  ASSERT_GE(cases.size(), 4u);
  for (const auto& c : cases) {
    const auto name = c.at("name").get<std::string>();
    const auto x = c.at("x").get<std::vector<double>>();
    const auto labels = c.at("labels").get<Labels>();
    const bool two_group = c.at("statistic") == "mean_difference";
    const LabelStatistic stat = two_group ? mean_difference_of(x) : between_groups_of(x);
    const auto count = c.at("count").get<std::size_t>();
    for (const auto& [alt_name, exceed] : c.at("exceed").items()) {
      const Alternative alt = alternative_named(alt_name);
      const double p = c.at("p").at(alt_name).get<double>();
      const std::string what = name + " " + alt_name;
      // B just large enough for Auto to enumerate.
      const ResamplingResult generic = permutation_test(labels, stat, count, 1, alt);
      EXPECT_EQ(generic.method, "exact") << what;
      EXPECT_EQ(generic.resamples, count) << what;
      EXPECT_EQ(generic.exceed, exceed.get<std::size_t>()) << what;
      EXPECT_EQ(generic.p_value, p) << what;
      EXPECT_DOUBLE_EQ(generic.observed, c.at("observed").get<double>()) << what;
      if (two_group) {
        const ResamplingResult fast = permutation_mean_difference(x, labels, count, 1, alt);
        EXPECT_EQ(fast.method, "exact") << what;
        EXPECT_EQ(fast.resamples, count) << what;
        EXPECT_EQ(fast.exceed, exceed.get<std::size_t>()) << what;
        EXPECT_EQ(fast.p_value, p) << what;
        EXPECT_NEAR(fast.observed, generic.observed, 1e-12 * std::fabs(generic.observed));
      }
      // One fewer resample than relabellings: Monte Carlo.
      EXPECT_EQ(permutation_test(labels, stat, count - 1, 1, alt).method, "monte_carlo");
    }
  }
}

TEST(PermutationTest, MonteCarloConvergesToExactEnumeration) {
  const std::size_t resamples = 20000;
  for (const auto& c : fixtures().at("permutation")) {
    const auto name = c.at("name").get<std::string>();
    const auto x = c.at("x").get<std::vector<double>>();
    const auto labels = c.at("labels").get<Labels>();
    const bool two_group = c.at("statistic") == "mean_difference";
    const LabelStatistic stat = two_group ? mean_difference_of(x) : between_groups_of(x);
    for (const auto& [alt_name, p] : c.at("p").items()) {
      const Alternative alt = alternative_named(alt_name);
      const ResamplingResult mc =
          permutation_test(labels, stat, resamples, 99, alt, ResamplingMethod::MonteCarlo);
      EXPECT_EQ(mc.method, "monte_carlo");
      EXPECT_EQ(mc.resamples, resamples);
      EXPECT_EQ(mc.p_value, (1.0 + mc.exceed) / (1.0 + resamples));
      expect_near_exact(mc.p_value, p.get<double>(), resamples, name + " " + alt_name);
      if (two_group) {
        const ResamplingResult fast = permutation_mean_difference(x, labels, resamples, 99, alt,
                                                                  ResamplingMethod::MonteCarlo);
        EXPECT_EQ(fast.exceed, mc.exceed) << name << " " << alt_name;
      }
    }
  }
}

TEST(PermutationTest, ReplicateFollowsTheDocumentedScheme) {
  // Three groups of sizes 3 (label 7), 5 (label 2) and 4 (label 0): drawn in the order
  // 7 (3), 0 (4), then 2 fills the rest.
  const Labels labels = {2, 7, 2, 0, 0, 2, 7, 0, 2, 7, 0, 2};
  for (const std::uint64_t seed : {5u, 6u}) {
    std::mutex mu;
    std::vector<Labels> calls;
    permutation_test(
        labels,
        [&](std::span<const std::uint32_t> l) {
          std::lock_guard<std::mutex> lock(mu);
          calls.emplace_back(l.begin(), l.end());
          return 0.0;
        },
        3, seed, Alternative::TwoSided, ResamplingMethod::MonteCarlo);
    ASSERT_EQ(calls.size(), 4u);
    EXPECT_EQ(calls[0], labels);  // the observed statistic comes first
    std::vector<Labels> replicates(calls.begin() + 1, calls.end());
    std::vector<Labels> expected;
    for (std::uint64_t b = 0; b < 3; ++b)
      expected.push_back(documented_relabelling(labels, seed, b));
    std::sort(replicates.begin(), replicates.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(replicates, expected) << "seed " << seed;
  }
}

TEST(PermutationTest, FastPathIdenticalToGenericEngine) {
  const auto x = normal_sample(1000, 17);
  std::vector<double> integers(1000);
  for (std::size_t i = 0; i < integers.size(); ++i)
    integers[i] = std::floor(3.0 * (x[i] + 3.0) / 2.0);
  const std::pair<std::size_t, std::size_t> sizes[] = {{300, 700}, {700, 300}, {500, 500}};
  for (const auto& [n0, n1] : sizes) {
    // Interleave the groups so that the smaller group is not simply a prefix.
    Labels labels = two_groups(n0, n1);
    Rng shuffle(n0, 1);
    for (std::size_t i = labels.size() - 1; i > 0; --i) {
      std::swap(labels[i], labels[shuffle.uniform_index(i + 1)]);
    }
    const std::vector<double>* const datasets[] = {&x, &integers};
    for (const std::vector<double>* data : datasets) {
      for (const Alternative alt : kAlternatives) {
        const std::string what = fmt::format("n0={} n1={} {} {}", n0, n1,
                                             data == &x ? "normal" : "integers", to_string(alt));
        const ResamplingResult generic =
            permutation_test(labels, mean_difference_of(*data), 400, 31, alt);
        const ResamplingResult fast = permutation_mean_difference(*data, labels, 400, 31, alt);
        EXPECT_EQ(fast.method, "monte_carlo") << what;
        EXPECT_EQ(fast.exceed, generic.exceed) << what;
        EXPECT_EQ(fast.p_value, generic.p_value) << what;
        EXPECT_EQ(fast.resamples, 400u) << what;
        EXPECT_NEAR(fast.observed, generic.observed, 1e-12 * std::fabs(generic.observed)) << what;
        EXPECT_GT(fast.exceed, 0u) << what;  // a null effect: replicates do exceed
      }
    }
  }
}

TEST(PermutationTest, DeterministicAcrossThreadCountsAndSeeds) {
  ThreadCountGuard guard;
  // n = 3000: several replicates per pool task; n = 200000: one per task.
  for (const std::size_t n : {3000u, 200000u}) {
    auto x = normal_sample(n, n);
    const Labels labels = two_groups(n / 3, n - n / 3);
    for (std::size_t i = 0; i < n / 3; ++i) x[i] += 0.02;
    const std::size_t resamples = n > 10000 ? 24 : 300;
    // The multiset of replicate statistics, so that equal p-values cannot hide
    // different draws.
    const auto run = [&](std::uint64_t seed, std::vector<double>& stats_out) {
      std::mutex mu;
      const auto inner = mean_difference_of(x);
      stats_out.clear();
      const ResamplingResult r = permutation_test(
          labels,
          [&](std::span<const std::uint32_t> l) {
            const double t = inner(l);
            std::lock_guard<std::mutex> lock(mu);
            stats_out.push_back(t);
            return t;
          },
          resamples, seed);
      std::sort(stats_out.begin(), stats_out.end());
      return r;
    };
    set_thread_count(1);
    std::vector<double> ref_stats;
    const ResamplingResult ref = run(4, ref_stats);
    const ResamplingResult ref_fast = permutation_mean_difference(x, labels, resamples, 4);
    EXPECT_EQ(ref_fast.exceed, ref.exceed) << n;
    for (const unsigned threads : {2u, 3u, 8u}) {
      set_thread_count(threads);
      std::vector<double> stats;
      expect_same(run(4, stats), ref, fmt::format("n={} threads={}", n, threads));
      EXPECT_EQ(stats, ref_stats) << n << " " << threads;
      expect_same(permutation_mean_difference(x, labels, resamples, 4), ref_fast,
                  fmt::format("fast n={} threads={}", n, threads));
    }
    std::vector<double> other_stats;
    run(5, other_stats);
    EXPECT_NE(other_stats, ref_stats) << n;
    std::vector<double> same_stats;
    run(4, same_stats);
    EXPECT_EQ(same_stats, ref_stats) << n;
  }
}

TEST(PermutationTest, AlternativesPointTheRightWay) {
  auto x = normal_sample(400, 8);
  const Labels labels = two_groups(150, 250);
  for (std::size_t i = 0; i < 150; ++i) x[i] += 0.6;  // group 0 clearly larger
  const auto two = permutation_mean_difference(x, labels, 999, 2, Alternative::TwoSided);
  const auto greater = permutation_mean_difference(x, labels, 999, 2, Alternative::Greater);
  const auto less = permutation_mean_difference(x, labels, 999, 2, Alternative::Less);
  EXPECT_GT(two.observed, 0.3);
  EXPECT_EQ(two.p_value, 1.0 / 1000.0);
  EXPECT_EQ(greater.p_value, 1.0 / 1000.0);
  EXPECT_EQ(less.p_value, 1.0);
  EXPECT_STREQ(to_string(Alternative::TwoSided), "two-sided");
  EXPECT_STREQ(to_string(Alternative::Greater), "greater");
  EXPECT_STREQ(to_string(Alternative::Less), "less");
  EXPECT_STREQ(to_string(ResamplingMethod::Auto), "auto");
  EXPECT_STREQ(to_string(ResamplingMethod::MonteCarlo), "monte_carlo");
}

TEST(PermutationTest, TiesAndMirrorImagesCount) {
  // Four 1s and four 2s: with k twos in group 0, T = (k - 2) / 2 exactly, and
  // C(4, k) C(4, 4 - k) relabellings give it (1, 16, 36, 16, 1 for k = 0..4).
  // Observed k = 1, T = -0.5: two-sided counts k in {0, 1, 3, 4} (the mirror image
  // k = 3 included) = 34; greater counts k >= 1 = 69; less counts k <= 1 = 17.
  const std::vector<double> x = {1, 1, 1, 2, 2, 2, 1, 2};
  const Labels labels = two_groups(4, 4);
  const std::pair<Alternative, std::size_t> expected[] = {
      {Alternative::TwoSided, 34}, {Alternative::Greater, 69}, {Alternative::Less, 17}};
  for (const auto& [alt, exceed] : expected) {
    const auto r = permutation_mean_difference(x, labels, 100, 1, alt);
    EXPECT_EQ(r.observed, -0.5);
    EXPECT_EQ(r.method, "exact");
    EXPECT_EQ(r.resamples, 70u);
    EXPECT_EQ(r.exceed, exceed) << to_string(alt);
    EXPECT_EQ(r.p_value, static_cast<double>(exceed) / 70.0);
    const auto generic = permutation_test(labels, mean_difference_of(x), 70, 1, alt);
    EXPECT_EQ(generic.exceed, exceed) << to_string(alt);
  }
  // T = 0: every relabelling is at least as extreme.
  const std::vector<double> balanced = {1, 2, 1, 2, 1, 2, 1, 2};
  const auto zero = permutation_mean_difference(balanced, labels, 100, 1);
  EXPECT_EQ(zero.observed, 0.0);
  EXPECT_EQ(zero.exceed, 70u);
  EXPECT_EQ(zero.p_value, 1.0);
}

TEST(PermutationTest, AtLeastAsExtremeUsesARelativeToleranceOf1e12) {
  // Every replicate returns T* = T (1 - offset) (sign chosen per alternative), the
  // observed labels T: within |T| 1e-12 it counts, beyond it does not.
  const Labels labels = two_groups(30, 30);
  for (const double offset : {5e-13, 5e-12}) {
    const bool counts = offset < 1e-12;
    const std::pair<Alternative, double> cases[] = {
        {Alternative::Greater, 2.0}, {Alternative::TwoSided, -2.0}, {Alternative::Less, -2.0}};
    for (const auto& [alt, t] : cases) {
      const auto stat = [&, t = t](std::span<const std::uint32_t> l) {
        const bool observed = std::equal(l.begin(), l.end(), labels.begin());
        return observed ? t : t * (1.0 - offset);
      };
      const auto r = permutation_test(labels, stat, 200, 3, alt);
      EXPECT_EQ(r.exceed, counts ? 200u : 0u) << offset << " " << to_string(alt);
    }
  }
}

TEST(PermutationTest, DegenerateInput) {
  const auto stat = [](std::span<const std::uint32_t> l) { return static_cast<double>(l[0]); };
  // No items.
  const auto empty = permutation_test(Labels{}, stat, 100, 1);
  EXPECT_TRUE(std::isnan(empty.p_value));
  EXPECT_FALSE(empty.note.empty());
  // One group: the only relabelling is the observed one.
  const auto single = permutation_test(Labels(6, 3), stat, 100, 1);
  EXPECT_EQ(single.p_value, 1.0);
  EXPECT_EQ(single.resamples, 1u);
  EXPECT_FALSE(single.note.empty());
  const auto single_mc = permutation_test(Labels(6, 3), stat, 100, 1, Alternative::Greater,
                                          ResamplingMethod::MonteCarlo);
  EXPECT_EQ(single_mc.p_value, 1.0);
  EXPECT_FALSE(single_mc.note.empty());
  // Statistic undefined on the observed labels.
  const auto undefined_obs = permutation_test(
      two_groups(3, 3), [](std::span<const std::uint32_t>) { return kNaN; }, 100, 1);
  EXPECT_TRUE(std::isnan(undefined_obs.p_value));
  EXPECT_FALSE(undefined_obs.note.empty());
  // NaN on some replicates: dropped, counted and noted; p uses the defined ones.
  const Labels labels = two_groups(20, 20);
  const auto flaky = permutation_test(
      labels, [](std::span<const std::uint32_t> l) { return l[0] == 1 && l[1] == 1 ? kNaN : 1.0; },
      400, 1, Alternative::TwoSided, ResamplingMethod::MonteCarlo);
  EXPECT_GT(flaky.undefined, 40u);
  EXPECT_LT(flaky.undefined, 170u);
  EXPECT_EQ(flaky.exceed, 400u - flaky.undefined);
  EXPECT_EQ(flaky.p_value, 1.0);
  EXPECT_NE(flaky.note.find("undefined"), std::string::npos);
  // Invalid parameters.
  EXPECT_THROW(permutation_test(labels, stat, 0, 1), InputError);
  EXPECT_THROW(permutation_test(labels, nullptr, 10, 1), InputError);
}

TEST(PermutationTest, MeanDifferenceDegenerateInput) {
  const std::vector<double> x = {1.0, 2.0, 3.0, 4.0};
  // An empty group.
  const auto no_group1 = permutation_mean_difference(x, Labels(4, 0), 100, 1);
  EXPECT_TRUE(std::isnan(no_group1.observed));
  EXPECT_TRUE(std::isnan(no_group1.p_value));
  EXPECT_NE(no_group1.note.find("group 1"), std::string::npos);
  const auto no_group0 = permutation_mean_difference(x, Labels(4, 1), 100, 1);
  EXPECT_NE(no_group0.note.find("group 0"), std::string::npos);
  // Zero variance: T = 0 exactly and p = 1, exact and Monte Carlo.
  const std::vector<double> constant(50, 0.1);
  const Labels labels = two_groups(20, 30);
  for (const auto method : {ResamplingMethod::Auto, ResamplingMethod::MonteCarlo}) {
    const auto r = permutation_mean_difference(constant, labels, 500, 1, Alternative::Less, method);
    EXPECT_EQ(r.observed, 0.0);
    EXPECT_EQ(r.p_value, 1.0);
    EXPECT_FALSE(r.note.empty());
  }
  // Invalid input.
  EXPECT_THROW(permutation_mean_difference(x, Labels{0, 1, 2, 0}, 100, 1), InputError);
  EXPECT_THROW(permutation_mean_difference(x, Labels{0, 1, 0}, 100, 1), InputError);
  EXPECT_THROW(permutation_mean_difference(std::vector<double>{1.0, kNaN}, Labels{0, 1}, 100, 1),
               InputError);
  EXPECT_THROW(permutation_mean_difference(x, Labels{0, 1, 0, 1}, 0, 1), InputError);
  EXPECT_THROW(permutation_mean_difference(std::vector<double>{}, Labels{}, 0, 1), InputError);
  const auto none = permutation_mean_difference(std::vector<double>{}, Labels{}, 10, 1);
  EXPECT_TRUE(std::isnan(none.p_value));
  EXPECT_FALSE(none.note.empty());
}

// Runs fn with stderr redirected to a pseudo-terminal (stderr_is_tty) or to a pipe
// and returns what was written to it.
std::string stderr_output_of(bool stderr_is_tty, const std::function<void()>& fn) {
  int read_fd = -1;
  int write_fd = -1;
  if (stderr_is_tty) {
    if (openpty(&read_fd, &write_fd, nullptr, nullptr, nullptr) != 0) return "<no pty>";
  } else {
    int fds[2];
    if (pipe(fds) != 0) return "<no pipe>";
    read_fd = fds[0];
    write_fd = fds[1];
  }
  fcntl(read_fd, F_SETFL, fcntl(read_fd, F_GETFL) | O_NONBLOCK);
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  dup2(write_fd, STDERR_FILENO);
  std::string out;
  char buffer[4096];
  try {
    fn();
  } catch (...) {
    dup2(saved, STDERR_FILENO);
    throw;
  }
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(write_fd);
  for (;;) {
    const ssize_t got = read(read_fd, buffer, sizeof buffer);
    if (got <= 0) break;
    out.append(buffer, static_cast<std::size_t>(got));
  }
  close(read_fd);
  return out;
}

TEST(PermutationTest, ProgressBarOnlyOnATerminalAndNotWhenQuiet) {
  // Whether a bar is drawn is Progress's own decision (a terminal, not quiet): checked on a
  // small bar, where the permutation test's size does not matter.
  const auto small_bar = [] {
    Progress bar("permutation test", 4);
    bar.advance(4);
    bar.finish();
  };
  const bool was_quiet = quiet();
  set_quiet(false);
  const std::string on_pipe = stderr_output_of(false, small_bar);
  const std::string on_tty = stderr_output_of(true, small_bar);
  set_quiet(true);
  const std::string on_tty_quiet = stderr_output_of(true, small_bar);
  EXPECT_EQ(on_pipe, "");
  EXPECT_EQ(on_tty_quiet, "");
  if (on_tty == "<no pty>") {
    set_quiet(was_quiet);
    GTEST_SKIP() << "no pseudo-terminal available";
  }
  EXPECT_NE(on_tty.find("4/4"), std::string::npos) << on_tty;
  // A permutation test large enough for a bar (B * min(n0, n1) >= 2^26) draws one, once, on a
  // terminal (one run: each costs seconds under the sanitizers).
  const std::size_t n = std::size_t{1} << 20;
  const auto x = normal_sample(n, 2);
  const Labels labels = two_groups(n / 2, n / 2);
  set_quiet(false);
  const std::string large =
      stderr_output_of(true, [&] { permutation_mean_difference(x, labels, 130, 1); });
  set_quiet(was_quiet);
  EXPECT_NE(large.find("permutation test"), std::string::npos) << large;
  EXPECT_NE(large.find("130/130"), std::string::npos) << large;
}

// ------------------------------------------------------------------- sign flip

TEST(SignFlipTest, ExactEnumerationMatchesPython) {
  const auto& cases = fixtures().at("sign_flip");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    const auto name = c.at("name").get<std::string>() + "/" + c.at("statistic").get<std::string>();
    const auto x = c.at("x").get<std::vector<double>>();
    const ValueStatistic stat =
        c.at("statistic") == "mean" ? ValueStatistic{} : ValueStatistic{weighted_sum};
    const auto count = c.at("count").get<std::size_t>();
    for (const auto& [alt_name, exceed] : c.at("exceed").items()) {
      const Alternative alt = alternative_named(alt_name);
      const ResamplingResult r = sign_flip_test(x, stat, count, 1, alt);
      const std::string what = name + " " + alt_name;
      EXPECT_EQ(r.method, "exact") << what;
      EXPECT_EQ(r.resamples, count) << what;
      EXPECT_EQ(r.exceed, exceed.get<std::size_t>()) << what;
      EXPECT_EQ(r.p_value, c.at("p").at(alt_name).get<double>()) << what;
      EXPECT_EQ(r.observed, c.at("observed").get<double>()) << what;
      EXPECT_TRUE(r.note.empty()) << what << ": " << r.note;
      // 2^n > B: Monte Carlo.
      EXPECT_EQ(sign_flip_test(x, stat, count - 1, 1, alt).method, "monte_carlo") << what;
    }
  }
}

TEST(SignFlipTest, MonteCarloConvergesToExactEnumeration) {
  const std::size_t resamples = 20000;
  for (const auto& c : fixtures().at("sign_flip")) {
    const auto name = c.at("name").get<std::string>() + "/" + c.at("statistic").get<std::string>();
    const auto x = c.at("x").get<std::vector<double>>();
    const ValueStatistic stat =
        c.at("statistic") == "mean" ? ValueStatistic{} : ValueStatistic{weighted_sum};
    for (const auto& [alt_name, p] : c.at("p").items()) {
      const ResamplingResult mc = sign_flip_test(
          x, stat, resamples, 42, alternative_named(alt_name), ResamplingMethod::MonteCarlo);
      EXPECT_EQ(mc.method, "monte_carlo");
      EXPECT_EQ(mc.p_value, (1.0 + mc.exceed) / (1.0 + resamples));
      expect_near_exact(mc.p_value, p.get<double>(), resamples, name + " " + alt_name);
    }
  }
}

TEST(SignFlipTest, ReplicateFollowsTheDocumentedBits) {
  // n = 70 crosses a 64-bit word: value i is negated when bit i % 64 of the
  // (i / 64)-th next_u64() of Rng(seed, b) is set.
  const auto x = normal_sample(70, 4, 1.0);
  std::mutex mu;
  std::vector<std::vector<double>> calls;
  sign_flip_test(
      x,
      [&](std::span<const double> v) {
        std::lock_guard<std::mutex> lock(mu);
        calls.emplace_back(v.begin(), v.end());
        return 0.0;
      },
      2, 77);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0], x);
  std::vector<std::vector<double>> expected;
  for (std::uint64_t b = 0; b < 2; ++b) {
    Rng rng(77, b);
    const std::uint64_t w0 = rng.next_u64();
    const std::uint64_t w1 = rng.next_u64();
    std::vector<double> v(x);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::uint64_t word = i < 64 ? w0 : w1;
      if ((word >> (i % 64)) & 1u) v[i] = -v[i];
    }
    expected.push_back(v);
  }
  std::vector<std::vector<double>> replicates(calls.begin() + 1, calls.end());
  std::sort(replicates.begin(), replicates.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(replicates, expected);
}

TEST(SignFlipTest, DefaultMeanEqualsCustomPlainMean) {
  const auto x = normal_sample(500, 6, 0.1);
  for (const Alternative alt : kAlternatives) {
    const auto fast = sign_flip_test(x, nullptr, 999, 3, alt);
    const auto custom = sign_flip_test(x, plain_mean, 999, 3, alt);
    expect_same(fast, custom, to_string(alt));
    EXPECT_EQ(fast.observed, plain_mean(x));
  }
}

TEST(SignFlipTest, DeterministicAcrossThreadCountsAndSeeds) {
  ThreadCountGuard guard;
  for (const std::size_t n : {40u, 100000u}) {
    const auto x = normal_sample(n, n, 0.004);
    const std::size_t resamples = n > 1000 ? 40 : 5000;
    set_thread_count(1);
    const auto ref = sign_flip_test(x, nullptr, resamples, 10);
    const auto ref_custom = sign_flip_test(x, weighted_sum, resamples, 10);
    for (const unsigned threads : {2u, 3u, 8u}) {
      set_thread_count(threads);
      expect_same(sign_flip_test(x, nullptr, resamples, 10), ref, fmt::format("{} {}", n, threads));
      expect_same(sign_flip_test(x, weighted_sum, resamples, 10), ref_custom,
                  fmt::format("custom {} {}", n, threads));
    }
    // The exact path too (n = 16: 65536 sign vectors over several pool tasks).
    const std::vector<double> small(x.begin(), x.begin() + 16);
    set_thread_count(1);
    const auto exact_ref = sign_flip_test(small, weighted_sum, 70000, 0);
    set_thread_count(3);
    expect_same(sign_flip_test(small, weighted_sum, 70000, 0), exact_ref, "exact");
    EXPECT_EQ(exact_ref.method, "exact");
  }
  // Different seeds draw different sign vectors: record the replicate statistics.
  const auto x = normal_sample(300, 9);
  const auto collect = [&](std::uint64_t seed) {
    std::mutex mu;
    std::vector<double> out;
    sign_flip_test(
        x,
        [&](std::span<const double> v) {
          const double t = plain_mean(v);
          std::lock_guard<std::mutex> lock(mu);
          out.push_back(t);
          return t;
        },
        200, seed);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(collect(1), collect(1));
  EXPECT_NE(collect(1), collect(2));
}

TEST(SignFlipTest, DegenerateInput) {
  const auto none = sign_flip_test(std::vector<double>{}, nullptr, 100, 1);
  EXPECT_TRUE(std::isnan(none.p_value));
  EXPECT_FALSE(none.note.empty());
  // All zeros: every sign vector gives 0, p = 1 in both modes.
  const std::vector<double> zeros(80, 0.0);
  for (const auto method : {ResamplingMethod::Auto, ResamplingMethod::MonteCarlo}) {
    const auto r = sign_flip_test(zeros, nullptr, 100, 1, Alternative::TwoSided, method);
    EXPECT_EQ(r.observed, 0.0);
    EXPECT_EQ(r.p_value, 1.0);
  }
  const auto undefined = sign_flip_test(
      std::vector<double>{1.0, 2.0}, [](std::span<const double>) { return kNaN; }, 100, 1);
  EXPECT_TRUE(std::isnan(undefined.p_value));
  EXPECT_FALSE(undefined.note.empty());
  EXPECT_THROW(sign_flip_test(std::vector<double>{1.0, kNaN}, nullptr, 100, 1), InputError);
  EXPECT_THROW(sign_flip_test(std::vector<double>{1.0, 2.0}, nullptr, 0, 1), InputError);
  // Forced Monte Carlo on a tiny sample stays Monte Carlo.
  const auto forced = sign_flip_test(std::vector<double>{1.0, 2.0, 3.0}, nullptr, 1000, 1,
                                     Alternative::Greater, ResamplingMethod::MonteCarlo);
  EXPECT_EQ(forced.method, "monte_carlo");
  EXPECT_EQ(forced.resamples, 1000u);
  expect_near_exact(forced.p_value, 1.0 / 8.0, 1000, "forced");
}

}  // namespace in_resampling_test
}  // namespace
}  // namespace vlbias::stats

// ------------------------------------------- permutation_mean_difference_columns

namespace vlbias::stats {
namespace {
namespace in_resampling_test {

TEST(PermutationMeanDifferenceColumns, EachColumnEqualsItsOwnTest) {
  // 3 columns over 300 items: a shifted one, a null one, and a constant one.
  const std::size_t n = 300, k = 3;
  std::vector<double> values(n * k);
  std::vector<std::uint32_t> labels(n);
  Rng rng(42, 0);
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = i < 110 ? 0 : 1;
    const double u = static_cast<double>(rng.next_u64() >> 11) * 0x1.0p-53;
    values[i * k + 0] = u + (labels[i] == 0 ? 0.3 : 0.0);
    values[i * k + 1] = static_cast<double>(rng.next_u64() >> 11) * 0x1.0p-53;
    values[i * k + 2] = 0.5;
  }
  for (const Alternative alt : {Alternative::TwoSided, Alternative::Greater}) {
    const auto joint = permutation_mean_difference_columns(values, k, labels, 999, 7, alt);
    ASSERT_EQ(joint.size(), k);
    for (std::size_t c = 0; c < k; ++c) {
      std::vector<double> column(n);
      for (std::size_t i = 0; i < n; ++i) column[i] = values[i * k + c];
      const auto single = permutation_mean_difference(column, labels, 999, 7, alt);
      EXPECT_EQ(joint[c].observed, single.observed) << c;
      EXPECT_EQ(joint[c].exceed, single.exceed) << c;
      EXPECT_EQ(joint[c].p_value, single.p_value) << c;
      EXPECT_EQ(joint[c].method, single.method) << c;
    }
    EXPECT_LT(joint[0].p_value, 0.01);
  }
}

TEST(PermutationMeanDifferenceColumns, ExactEnumerationAndErrors) {
  // C(8, 3) = 56 relabellings <= B: every column is enumerated exactly.
  const std::vector<double> values = {1, 8, 2, 7, 3, 6, 4, 5, 5, 4, 6, 3, 7, 2, 8, 1};
  const std::vector<std::uint32_t> labels = {0, 0, 0, 1, 1, 1, 1, 1};
  const auto joint = permutation_mean_difference_columns(values, 2, labels, 1000, 1);
  for (std::size_t c = 0; c < 2; ++c) {
    const std::vector<double> column = {values[c],      values[2 + c], values[4 + c],
                                        values[6 + c],  values[8 + c], values[10 + c],
                                        values[12 + c], values[14 + c]};
    const auto single = permutation_mean_difference(column, labels, 1000, 1);
    EXPECT_EQ(joint[c].method, "exact");
    EXPECT_EQ(joint[c].exceed, single.exceed);
    EXPECT_EQ(joint[c].resamples, 56u);
  }
  EXPECT_THROW(permutation_mean_difference_columns(values, 3, labels, 10, 1), InputError);
  EXPECT_THROW(permutation_mean_difference_columns(values, 0, labels, 10, 1), InputError);
  std::vector<double> bad = values;
  bad[5] = std::nan("");
  EXPECT_THROW(permutation_mean_difference_columns(bad, 2, labels, 10, 1, Alternative::TwoSided,
                                                   ResamplingMethod::MonteCarlo),
               InputError);
}

}  // namespace in_resampling_test
}  // namespace
}  // namespace vlbias::stats
