// libFuzzer target for the Parquet reader (include/vlbias/io/parquet/parquet.h): footer, Thrift
// metadata, pages, codecs and encodings, read from memory as one file; then the same bytes as a
// file through the readers of byte columns: ParquetImageColumn
// (include/vlbias/io/parquet/parquet_images.h, a row group at a time) must give each row the cell
// read_parquet_bytes gives it (the whole column at once). Only vlbias::Error may escape; anything
// else (crash, sanitizer report, other exception, broken invariant) is a bug.
// Seeds: fuzz/corpus/parquet/, small files of tools/make_parquet_fixtures.mjs.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <span>
#include <string>

#include "table_fuzz_checks.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/parquet/parquet_images.h"

namespace {

// ParquetImageColumn reads files: one per process, rewritten for every input, removed at exit.
struct InputFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("vlbias_fuzz_parquet_" + std::to_string(getpid()) + ".parquet"))
                         .string();
  ~InputFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

const std::string& input_file() {
  static const InputFile file;
  return file.path;
}

// The rows of one byte column as ParquetImageColumn reads them equal read_parquet_bytes's.
void check_byte_column(const std::string& path, const std::string& column) {
  std::optional<vlbias::ParquetBytes> whole;
  try {
    whole = vlbias::read_parquet_bytes(path, column);
  } catch (const vlbias::Error&) {
  }
  try {
    const vlbias::ParquetImageColumn images(path, column);
    // A leaf's name may also read as a struct's (a column named "a.bytes" beside a struct "a"):
    // compare only when the leaf read is the one asked for.
    if (images.bytes_column() != column) return;
    if (!whole || whole->size() != images.rows()) {
      // The whole column did not read, or its pages hold another count of rows than the row
      // groups claim: reading by row may refuse, never crash. The first and last rows decode
      // the first and last row groups.
      if (images.rows() > 0) {
        (void)images.cell(0);
        (void)images.cell(images.rows() - 1);
      }
      return;
    }
    for (std::size_t r = 0; r < images.rows(); ++r) {
      const std::optional<std::string> cell = images.cell(r);
      if (cell.has_value() != static_cast<bool>(whole->present[r])) std::abort();
      if (cell && *cell != whole->cell(r)) std::abort();
    }
  } catch (const vlbias::Error&) {
  }
}

void check_byte_columns(const std::uint8_t* data, std::size_t size) {
  const std::string& path = input_file();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!f) return;
  }
  vlbias::ParquetInfo info;
  try {
    info = vlbias::read_parquet_info(path);
  } catch (const vlbias::Error&) {
    return;
  }
  for (const vlbias::ParquetColumnInfo& c : info.columns) {
    if (c.binary && !c.repeated) check_byte_column(path, c.name);
  }
}

}  // namespace

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
  check_byte_columns(data, size);
  return 0;
}
