// libFuzzer target for the Parquet reader (include/vlbias/io/parquet.h): footer, Thrift
// metadata, pages, codecs and encodings, read from memory as one file. Only vlbias::Error may
// escape; anything else (crash, sanitizer report, other exception, broken invariant) is a bug.
// Seeds: fuzz/corpus/parquet/, small files of tools/make_parquet_fixtures.mjs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <span>

#include "table_fuzz_checks.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/parquet.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  try {
    vlbias::Table t =
        vlbias::parse_parquet(std::span<const std::uint8_t>(data, size), "fuzz.parquet");
    // Parquet tables carry no line numbers: number the rows so that the shared checks apply.
    t.line_of_row.resize(t.rows);
    std::iota(t.line_of_row.begin(), t.line_of_row.end(), std::size_t{1});
    vlbias::fuzz::check_table(t);
    vlbias::fuzz::check_grouping(t);
  } catch (const vlbias::Error&) {
  }
  return 0;
}
