// Google Benchmark micro-benchmarks of the statistics engine on the shared
// synthetic data (bench_data.h). Run: build/bench/bench_stats
#include <benchmark/benchmark.h>

#include <string>

#include "bench_data.h"
#include "vlbias/core/parallel.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/compare.h"
#include "vlbias/stats/stats.h"

using namespace vlbias;

namespace {

void BM_Anova(benchmark::State& state) {
  std::vector<double> v;
  std::vector<std::uint32_t> g;
  bench::make_data(state.range(0), 5, v, g);
  for (auto _ : state) benchmark::DoNotOptimize(stats::one_way_anova({v, g, 5}).statistic);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Anova)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

void BM_Kruskal(benchmark::State& state) {
  std::vector<double> v;
  std::vector<std::uint32_t> g;
  bench::make_data(state.range(0), 5, v, g);
  for (auto _ : state) benchmark::DoNotOptimize(stats::kruskal_wallis({v, g, 5}).statistic);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Kruskal)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

// Permutation engine: B = 20 replicates over n rows, by thread count.
void BM_PermutationMeanDifference(benchmark::State& state) {
  std::vector<double> v;
  std::vector<std::uint32_t> g;
  bench::make_data(state.range(0), 2, v, g);
  set_thread_count(static_cast<unsigned>(state.range(1)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(stats::permutation_mean_difference(v, g, 20, 1).p_value);
  }
  set_thread_count(0);
  state.SetItemsProcessed(state.iterations() * state.range(0) * 20);
}
BENCHMARK(BM_PermutationMeanDifference)
    ->Args({1'000'000, 1})
    ->Args({1'000'000, 2})
    ->Unit(benchmark::kMillisecond);

// `vlbias compare --by id` without reading and writing: n rows, one group per row, ANOVA over
// all of them (issue 19: the absent-group check made this quadratic; 2M rows never finished).
void BM_CompareById(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> v;
  std::vector<std::uint32_t> g;
  bench::make_data(n, 5, v, g);
  Table t;
  t.source = "<bench>";
  t.rows = n;
  std::vector<std::string> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = "id" + std::to_string(i);
  add_string_column(t, "id", ids);
  add_numeric_column(t, "value", std::move(v));
  CompareOptions o;
  o.value = "value";
  o.by = {"id"};
  for (auto _ : state) benchmark::DoNotOptimize(compare_groups(t, o).comparisons.size());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CompareById)->Arg(100'000)->Arg(2'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
