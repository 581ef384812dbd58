// bench_parquet: the native Parquet reader (include/vlbias/io/parquet/parquet.h, parquet_images.h)
// on a file DuckDB wrote, with Google Benchmark: a DOUBLE column read into a table, and an
// image-bytes column read whole (read_parquet_bytes) and by row (ParquetImageColumn, as the encode
// job reads images). MB/s count the cells' bytes once read (8 per double; the blobs' lengths), as
// bench/make_parquet_bench.mjs counts them when it times DuckDB on the same file; per second of
// wall time (one thread here; DuckDB's line gives its 1-thread and all-threads times).
//
//   DUCKDB_NODE_DIR=/work/npm-duckdb node bench/make_parquet_bench.mjs   # writes the file
//   bench_parquet [--benchmark_* flags]
// The file: $VLBIAS_PARQUET_BENCH_FILE, else $TMPDIR/vlbias_parquet_bench.parquet.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/parquet/parquet_images.h"
#include "vlbias/io/table/table.h"

namespace {

std::string bench_file() {
  if (const char* file = std::getenv("VLBIAS_PARQUET_BENCH_FILE")) return file;
  return (std::filesystem::temp_directory_path() / "vlbias_parquet_bench.parquet").string();
}

bool have_file(benchmark::State& state) {
  if (std::filesystem::exists(bench_file())) return true;
  state.SkipWithError(("no " + bench_file() + ": run bench/make_parquet_bench.mjs").c_str());
  return false;
}

void NumericColumn(benchmark::State& state) {
  if (!have_file(state)) return;
  std::size_t rows = 0;
  for (auto _ : state) {
    const vlbias::Table t = vlbias::read_parquet(bench_file(), {"x"});
    rows = t.rows;
    benchmark::DoNotOptimize(t.columns[0].numbers.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * rows * sizeof(double)));
  state.counters["rows"] = static_cast<double>(rows);
}

void ImageBytesWhole(benchmark::State& state) {
  if (!have_file(state)) return;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const vlbias::ParquetBytes cells = vlbias::read_parquet_bytes(bench_file(), "image");
    bytes = cells.data.size();
    benchmark::DoNotOptimize(cells.data.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void ImageBytesByRow(benchmark::State& state) {
  if (!have_file(state)) return;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const vlbias::ParquetImageColumn column(bench_file(), "image");
    bytes = 0;
    for (std::size_t r = 0; r < column.rows(); ++r) {
      const std::optional<std::string> cell = column.cell(r);
      if (cell) bytes += cell->size();
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

}  // namespace

BENCHMARK(NumericColumn)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ImageBytesWhole)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ImageBytesByRow)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
