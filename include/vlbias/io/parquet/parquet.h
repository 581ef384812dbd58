#pragma once
// Parquet tables (src/io/parquet/*.cpp): a native reader, no Arrow. read_table() reads
// `x.parquet`, and a folder of shards, through read_parquet().
//
// Supported: the footer and its Thrift compact-protocol metadata (key-value metadata included);
// data pages v1 and v2 and dictionary pages; encodings PLAIN, RLE/bit-packed hybrid (levels,
// booleans, dictionary indices), PLAIN_DICTIONARY / RLE_DICTIONARY, DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT; codecs UNCOMPRESSED, SNAPPY,
// GZIP and ZSTD; the physical types BOOLEAN, INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY. Columns are the leaves of the schema that are not repeated: top-level
// columns, and the fields of structs named by their path joined with '.' (Hugging Face's Image
// feature, struct<bytes: binary, path: string> "image", reads as "image.bytes" and "image.path").
// Not supported, each a clear InputError naming the file and column: repeated columns
// (lists, maps), the codecs LZO, BROTLI and LZ4, chunks stored in other files and encrypted
// files.
//
// Data convention (as the CSV and JSONL readers, table.h): integers, floats and decimals are
// Numeric (a FLOAT is the double nearest its shortest decimal text, 0.1f reads as 0.1;
// INT64 beyond 2^53 rounds to the nearest double); a column of floats holding NaN or an
// infinity is a String column of the values' texts ("nan", "inf", "-inf"), as CSV text
// would be. Strings (BYTE_ARRAY annotated STRING, ENUM or JSON) are String columns, and
// must be valid UTF-8; an empty string is missing, as an empty CSV cell is. BOOLEAN reads
// as "true"/"false", DATE as "2024-01-31", TIMESTAMP as "2024-01-31 12:00:05.25" (fraction
// without trailing zeros; "+00" after one adjusted to UTC; INT96, Spark's legacy timestamps,
// the same to the nanosecond), TIME as "12:00:05", UUID as its 36-character text: DuckDB's
// texts for them. A null is missing (NaN or kMissing).
// Binary columns (BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY without a text or number annotation,
// BSON) stay out of tables; read_parquet_bytes() returns their cells.
//
// Limits (hostile input is refused with one InputError sentence, never a crash): metadata
// nested at most 64 levels, every list and string bounded by the bytes that remain; a page
// expands at most 4096 times its compressed size and at most to 1 GiB; a file holds at
// most 256 cells (rows x columns read) per byte of file plus 2^22, so that a few bytes
// cannot claim billions of rows; DELTA_BYTE_ARRAY values rebuild to at most 64 times their
// page plus 16 MiB. Files are memory-mapped (pipes are refused) and decoded page by page.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/io/table/table.h"

namespace vlbias {

struct ParquetColumnInfo {
  std::string name;       // the leaf's path joined with '.'
  std::string physical;   // "INT64", "BYTE_ARRAY", ...
  std::string logical;    // "STRING", "DATE", "TIMESTAMP", "DECIMAL", ... ("" when none)
  bool optional = false;  // may hold nulls
  bool repeated = false;  // inside a list or map: not readable
  bool binary = false;    // raw bytes: kept out of tables, read with read_parquet_bytes
};

struct ParquetInfo {
  std::string path;
  std::size_t rows = 0;
  std::size_t row_groups = 0;
  std::vector<ParquetColumnInfo> columns;  // the leaves in schema order
  // The footer's key_value_metadata in file order, e.g. ("huggingface", the datasets library's
  // JSON of the features, ClassLabel names included).
  std::vector<std::pair<std::string, std::string>> metadata;
};

// The schema and sizes of one file (its footer only). InputError when it is not Parquet.
ParquetInfo read_parquet_info(const std::string& path);

// Reads a .parquet file, or a folder of .parquet shards (read in name order as one table:
// train-00000-of-00004.parquet, ...), as a Table (the convention above). `columns` selects
// columns by name (only those are decoded); empty reads every column that is not binary.
// InputError for files that are not valid Parquet, unsupported features in the columns
// read, and shards whose columns differ (naming the shard and the column).
Table read_parquet(const std::string& path, const std::vector<std::string>& columns = {});

// The same for the bytes of one file in memory, named `source` in messages (the fuzzer).
Table parse_parquet(std::span<const std::uint8_t> bytes, const std::string& source,
                    const std::vector<std::string>& columns = {});

// The cells of one BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY column (binary or text), e.g. the image
// bytes of "image.bytes": cell r is data[offsets[r], offsets[r + 1]), null where present[r] is
// false. For a file or a folder of shards. InputError when the column is absent or of another
// type, or the cells would exceed 16 bytes per byte of input plus 64 MiB.
struct ParquetBytes {
  std::string data;
  std::vector<std::uint64_t> offsets{0};  // rows + 1
  std::vector<bool> present;

  std::size_t size() const { return present.size(); }
  std::string_view cell(std::size_t row) const {
    return std::string_view(data).substr(offsets[row], offsets[row + 1] - offsets[row]);
  }
};
ParquetBytes read_parquet_bytes(const std::string& path, std::string_view column);

// True when `path` is a folder holding at least one .parquet file (read_table reads it).
bool is_parquet_folder(const std::string& path);

}  // namespace vlbias
