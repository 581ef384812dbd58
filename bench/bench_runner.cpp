// Times one statistics operation on the shared synthetic data and prints JSON:
//   bench_runner OP N [K] [REPS] [B]
// OP: anova | welch | mannwhitney | kruskal | permutation. Reported seconds are
// the minimum over REPS runs of the operation alone (data generation excluded),
// as bench/vs_scipy.py does for scipy.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_data.h"
#include "vlbias/stats/stats.h"

using namespace vlbias;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_runner OP N [K] [REPS] [B]\n");
    return 2;
  }
  const std::string op = argv[1];
  const std::size_t n = std::strtoull(argv[2], nullptr, 10);
  const std::size_t k = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 5;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  const std::size_t resamples = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 100;
  std::vector<double> values;
  std::vector<std::uint32_t> groups;
  bench::make_data(n, k, values, groups);

  // Two-group tests use groups 0 and 1 (as the Python side does).
  std::vector<double> a, b;
  std::vector<std::uint32_t> labels01;
  std::vector<double> values01;
  if (op == "welch" || op == "mannwhitney" || op == "permutation") {
    for (std::size_t i = 0; i < n; ++i) {
      if (groups[i] > 1) continue;
      (groups[i] == 0 ? a : b).push_back(values[i]);
      values01.push_back(values[i]);
      labels01.push_back(groups[i]);
    }
  }
  double best = 1e300, statistic = 0, p = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (op == "anova") {
      const auto res = stats::one_way_anova(stats::GroupedValues{values, groups, k});
      statistic = res.statistic;
      p = res.p_value;
    } else if (op == "kruskal") {
      const auto res = stats::kruskal_wallis(stats::GroupedValues{values, groups, k});
      statistic = res.statistic;
      p = res.p_value;
    } else if (op == "welch") {
      const auto res = stats::welch_t(a, b);
      statistic = res.statistic;
      p = res.p_value;
    } else if (op == "mannwhitney") {
      const auto res = stats::mann_whitney_u(a, b);
      statistic = res.statistic;
      p = res.p_value;
    } else if (op == "permutation") {
      const auto res = stats::permutation_mean_difference(values01, labels01, resamples, 1);
      statistic = res.observed;
      p = res.p_value;
    } else {
      std::fprintf(stderr, "unknown op %s\n", op.c_str());
      return 2;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  std::printf(
      "{\"op\": \"%s\", \"n\": %zu, \"seconds\": %.6f, \"statistic\": %.17g, \"p_value\": %.17g}\n",
      op.c_str(), n, best, statistic, p);
  return 0;
}
