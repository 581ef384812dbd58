// bench_distribution_bootstrap: the cost of one bootstrap replicate of FID, KID and Vendi
// (include/vlbias/metrics/distribution_bootstrap.h: multiplicity weights, the real set fitted
// once) against recomputing the replicate from scratch (copy the resampled generated rows, call
// fid / kid / vendi). n = 2,000 real and 2,000 generated rows, d = 64 and 2,048; one thread, so
// the ratio is per replicate and not a parallel speed-up. "Weighted" includes its one-time
// setup, amortised over the replicates of one call (items_per_second = replicates per second).
//   build/bench/bench_distribution_bootstrap [--benchmark_filter=Fid]
#include <benchmark/benchmark.h>

#include <cstddef>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/matrix.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/distribution_bootstrap.h"
#include "vlbias/metrics/distribution_metrics.h"

namespace {

using namespace vlbias;  // NOLINT(build/namespaces)

constexpr std::size_t kRows = 2000;

Matrix gaussian_rows(std::size_t n, std::size_t d, std::uint64_t seed, double shift) {
  Matrix m(n, d);
  Rng rng(seed);
  for (float& v : m.data) v = static_cast<float>(rng.uniform01() + rng.uniform01() - 1.0 + shift);
  return m;
}

struct Data {
  Matrix real, gen;
  GaussianFit real_fit;
};

const Data& data(std::size_t d) {
  static Data d64, d2048;
  Data& x = d == 64 ? d64 : d2048;
  if (x.real.rows == 0) {
    set_thread_count(1);
    set_blas_threads(1);
    x.real = gaussian_rows(kRows, d, 1, 0.0);
    x.gen = gaussian_rows(kRows, d, 2, 0.1);
    x.real_fit = fit_gaussian(x.real);
  }
  return x;
}

// Replicate b's rows, materialised (what a from-scratch bootstrap computes on).
Matrix resample(const Matrix& g, std::size_t b) {
  Matrix m(g.rows, g.cols);
  Rng rng(0, b);
  for (std::size_t t = 0; t < g.rows; ++t) {
    const float* src = g.row(rng.uniform_index(g.rows));
    std::copy(src, src + g.cols, m.row(t));
  }
  return m;
}

DistributionBootstrapOptions replicates(std::size_t b) {
  DistributionBootstrapOptions o;
  o.resamples = b;
  return o;
}

void FidWeighted(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  const std::size_t b = static_cast<std::size_t>(state.range(1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(fid_bootstrap(x.real_fit, x.gen, replicates(b)).ci.lower);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b));
}

// From scratch, as a loop over fid(real, resample) does: the real set refitted every time.
void FidScratch(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  std::size_t b = 0;
  for (auto _ : state) benchmark::DoNotOptimize(fid(x.real, resample(x.gen, b++)).fid);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// From scratch but with the real fit kept: only the generated side recomputed.
void FidScratchRealFitted(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  std::size_t b = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fid(x.real_fit, fit_gaussian(resample(x.gen, b++))).fid);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

KidOptions all_rows() {
  KidOptions k;
  k.subsets = 0;
  return k;
}

void KidWeighted(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  const std::size_t b = static_cast<std::size_t>(state.range(1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(kid_bootstrap(x.real, x.gen, all_rows(), replicates(b)).ci.lower);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b));
}

void KidScratch(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  std::size_t b = 0;
  for (auto _ : state) benchmark::DoNotOptimize(kid(x.real, resample(x.gen, b++), all_rows()).kid);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void VendiWeighted(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  const std::size_t b = static_cast<std::size_t>(state.range(1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(vendi_bootstrap(x.gen, 1.0, replicates(b)).ci.lower);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b));
}

void VendiScratch(benchmark::State& state) {
  const Data& x = data(static_cast<std::size_t>(state.range(0)));
  std::size_t b = 0;
  for (auto _ : state) benchmark::DoNotOptimize(vendi(resample(x.gen, b++)).score);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// {d, replicates per weighted call}.
BENCHMARK(FidWeighted)->Args({64, 50})->Args({2048, 4})->Unit(benchmark::kMillisecond);
BENCHMARK(FidScratch)->Arg(64)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(FidScratchRealFitted)->Arg(64)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(KidWeighted)->Args({64, 20})->Args({2048, 20})->Unit(benchmark::kMillisecond);
BENCHMARK(KidScratch)->Arg(64)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(VendiWeighted)->Args({64, 50})->Args({2048, 4})->Unit(benchmark::kMillisecond);
BENCHMARK(VendiScratch)->Arg(64)->Arg(2048)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
