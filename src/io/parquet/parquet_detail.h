#pragma once
// The Parquet reader's pieces (private to src/io; public API in
// include/vlbias/io/parquet/parquet.h): the Thrift compact-protocol metadata (parquet_thrift.cpp),
// the value encodings (parquet_encoding.cpp), pages and codecs (parquet_pages.cpp) and the table
// (parquet.cpp). Every length read from a file is checked against the bytes present before it is
// used.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/io/mapped_file.h"
#include "vlbias/io/parquet/parquet.h"

namespace vlbias::io_internal {

using PqBytes = std::span<const std::uint8_t>;

// parquet.thrift's enums, by their numbers in the format.
enum class PqType : int {
  Boolean = 0,
  Int32 = 1,
  Int64 = 2,
  Int96 = 3,
  Float = 4,
  Double = 5,
  ByteArray = 6,
  FixedLenByteArray = 7
};
inline constexpr int kPqRequired = 0, kPqOptional = 1, kPqRepeated = 2;
inline constexpr int kPqDataPage = 0, kPqDictionaryPage = 2, kPqDataPageV2 = 3;
inline constexpr int kPqPlain = 0, kPqPlainDictionary = 2, kPqRle = 3, kPqBitPacked = 4,
                     kPqDeltaBinaryPacked = 5, kPqDeltaLengthByteArray = 6, kPqDeltaByteArray = 7,
                     kPqRleDictionary = 8, kPqByteStreamSplit = 9;
inline constexpr int kPqUncompressed = 0, kPqSnappy = 1, kPqGzip = 2, kPqZstd = 6;
// ConvertedType values the reader uses.
inline constexpr int kPqUtf8 = 0, kPqEnum = 4, kPqDecimal = 5, kPqDate = 6, kPqTimeMillis = 7,
                     kPqTimeMicros = 8, kPqTimestampMillis = 9, kPqTimestampMicros = 10,
                     kPqUint8 = 11, kPqUint16 = 12, kPqUint32 = 13, kPqUint64 = 14, kPqJson = 19,
                     kPqBson = 20;
// LogicalType union members (their field ids).
inline constexpr int kPqLogicalString = 1, kPqLogicalMap = 2, kPqLogicalList = 3,
                     kPqLogicalEnum = 4, kPqLogicalDecimal = 5, kPqLogicalDate = 6,
                     kPqLogicalTime = 7, kPqLogicalTimestamp = 8, kPqLogicalInteger = 10,
                     kPqLogicalJson = 12, kPqLogicalBson = 13, kPqLogicalUuid = 14,
                     kPqLogicalFloat16 = 15;

struct PqLogicalType {
  int kind = 0;       // 0: none, else a kPqLogical* member
  int unit = 0;       // TIME/TIMESTAMP: 1 millis, 2 micros, 3 nanos
  bool utc = false;   // TIME/TIMESTAMP isAdjustedToUTC
  int scale = 0;      // DECIMAL
  int bit_width = 0;  // INTEGER
  bool is_signed = true;
};

struct PqSchemaElement {
  int type = -1;  // PqType, -1 for a group
  int type_length = 0;
  int repetition = kPqRequired;
  std::string name;
  int num_children = -1;  // -1: absent (a leaf)
  int converted = -1;
  int scale = 0;
  PqLogicalType logical;
};

struct PqColumnMeta {
  int type = -1;
  std::vector<std::string> path;
  int codec = 0;
  std::int64_t num_values = 0;
  std::int64_t total_compressed_size = 0;
  std::int64_t data_page_offset = -1;
  std::int64_t dictionary_page_offset = -1;  // -1: absent
  bool has_meta = false;
  bool external = false;  // file_path set: the chunk lives in another file
};

struct PqRowGroup {
  std::vector<PqColumnMeta> columns;
  std::int64_t num_rows = 0;
};

struct PqFileMeta {
  std::int64_t num_rows = 0;
  std::vector<PqSchemaElement> schema;
  std::vector<PqRowGroup> row_groups;
  std::vector<std::pair<std::string, std::string>> key_value;  // key_value_metadata
};

struct PqPageHeader {
  int type = -1;
  std::int64_t uncompressed_size = -1;
  std::int64_t compressed_size = -1;
  std::int64_t num_values = -1;
  int encoding = -1;
  int def_encoding = kPqRle;
  int rep_encoding = kPqRle;
  // DataPageHeaderV2
  std::int64_t num_nulls = 0;
  std::int64_t def_length = 0;
  std::int64_t rep_length = 0;
  bool is_compressed = true;
};

// `where` names the file in messages ("'x.parquet'").
PqFileMeta parse_pq_file_meta(PqBytes bytes, const std::string& where);
// Parses the page header at the start of `bytes`; *consumed is its length.
PqPageHeader parse_pq_page_header(PqBytes bytes, const std::string& where, std::size_t* consumed);

// The values of one page that are not null, in order. BOOLEAN, INT32 and INT64 go to ints,
// FLOAT and DOUBLE to reals, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY to bytes (views into the
// page's or the dictionary's bytes, valid while the page is handed to the caller).
// A dictionary-encoded page holds instead `indices` into `dictionary` (checked to be in
// range), whose `dictionary_id` differs from that of every other dictionary read.
struct PqValues {
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string_view> bytes;
  const PqValues* dictionary = nullptr;
  std::uint64_t dictionary_id = 0;
  std::vector<std::uint32_t> indices;

  std::size_t size() const {
    return dictionary != nullptr ? indices.size()
                                 : std::max({ints.size(), reals.size(), bytes.size()});
  }
  // Value i of the page as bytes (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY).
  std::string_view byte_value(std::size_t i) const {
    return dictionary != nullptr ? dictionary->bytes[indices[i]] : bytes[i];
  }
  void clear() {
    ints.clear();
    reals.clear();
    bytes.clear();
    dictionary = nullptr;
    indices.clear();
  }
};

// A leaf column: its schema element and its level limits.
struct PqLeaf {
  std::string name;  // the path joined with '.'
  PqSchemaElement element;
  int max_def = 0;
  int max_rep = 0;
};

// Reads the values of the RLE/bit-packed hybrid encoding (bit widths 0 to 32). Every value
// and every run is checked against the bytes present.
class PqHybridReader {
 public:
  PqHybridReader(PqBytes bytes, int bit_width, const std::string& where);
  // Appends `count` values to out; InputError when the data ends first.
  void read(std::size_t count, std::vector<std::uint32_t>& out);

 private:
  PqBytes bytes_;
  std::size_t pos_ = 0;
  int bit_width_;
  const std::string& where_;
  std::uint32_t run_value_ = 0;
  std::size_t run_left_ = 0;     // values left in an RLE run
  std::size_t packed_left_ = 0;  // values left in a bit-packed run
  std::size_t packed_bit_ = 0;   // bit position in bytes_ of the next packed value
};

// Decoders of one page's values (`count` values that are not null); `where` names the file
// and column. Each throws InputError when the data is short or malformed.
void decode_pq_plain(PqBytes bytes, const PqLeaf& leaf, std::size_t count, PqValues& out,
                     const std::string& where);
void decode_pq_delta_binary(PqBytes bytes, std::size_t count, bool is_int32,
                            std::vector<std::int64_t>& out, std::size_t* consumed,
                            const std::string& where);
void decode_pq_delta_length(PqBytes bytes, std::size_t count, PqValues& out,
                            const std::string& where);
// DELTA_BYTE_ARRAY: the values are rebuilt into `arena` (their total size bounded by
// `max_bytes`), and out.bytes views it.
void decode_pq_delta_byte_array(PqBytes bytes, std::size_t count, std::string& arena,
                                std::size_t max_bytes, PqValues& out, const std::string& where);
void decode_pq_byte_stream_split(PqBytes bytes, const PqLeaf& leaf, std::size_t count,
                                 PqValues& out, std::string& arena, const std::string& where);

// A page handed to the reader of a column chunk: `count` rows, present[r] == 0 where the
// row is null (empty when none is), and the values of the rows that are not.
struct PqPage {
  std::size_t count = 0;
  const std::vector<std::uint8_t>* present = nullptr;
  const PqValues* values = nullptr;
};

// Appends the page's rows to `out` (a byte column: each present row's value, absent rows
// empty) while its cells stay within `limit` bytes; false, with the page partly appended, when
// the next cell would pass it (the caller names the column and throws).
bool append_pq_page_bytes(const PqPage& page, std::uint64_t limit, ParquetBytes& out);

// The bytes of the file, its name for messages, and the decompression budget it shares.
struct PqSource {
  PqBytes file;              // the whole file
  std::size_t data_end = 0;  // where the footer starts: chunks lie before it
  std::string where;         // "'x.parquet'"
};

// Decodes one column chunk of a flat leaf (max_rep == 0) whose row group holds `rows` rows,
// page by page.
void read_pq_chunk(const PqSource& source, const PqColumnMeta& meta, const PqLeaf& leaf,
                   std::int64_t rows, const std::string& where,
                   const std::function<void(const PqPage&)>& on_page);

// Decompresses `in` into exactly out.size() bytes.
void pq_decompress(int codec, PqBytes in, std::span<std::uint8_t> out, const std::string& where);

// How a leaf's values read into a table (parquet.h's data convention).
enum class PqCell {
  Number,
  Float32,
  Unsigned,
  Decimal,
  Bool,
  Date,
  Timestamp,
  Time,
  Text,
  Uuid,
  Float16,
  Binary,
  Int96
};
PqCell pq_cell_kind(const PqLeaf& leaf);

// An open Parquet file: mapped, its footer parsed and checked (parquet_file.cpp).
struct PqFile {
  explicit PqFile(const std::string& file);
  // Bytes in memory (the fuzzer), named `name` in messages; they must outlive the object.
  PqFile(PqBytes bytes, const std::string& name);

  std::string path;
  std::string where;  // "'x.parquet'"
  MappedFile map;
  PqSource source;
  PqFileMeta meta;
  std::vector<PqLeaf> leaves;

  // InputError when rows x `columns` cells exceed what the file's size allows (parquet.h).
  void check_cells(std::size_t columns) const;
  // "'x.parquet' column 'a' (row group 2)"
  std::string chunk_where(const PqLeaf& leaf, std::size_t row_group) const;
  // The leaf named `name`; InputError naming the columns when there is none.
  const PqLeaf& leaf(std::string_view name) const;
  // Every page of the leaf, row group by row group. InputError for repeated leaves.
  void read_column(const PqLeaf& leaf, const std::function<void(const PqPage&)>& on_page) const;
  // The pages of the leaf in row group g (< meta.row_groups.size()).
  void read_row_group(const PqLeaf& leaf, std::size_t g,
                      const std::function<void(const PqPage&)>& on_page) const;

 private:
  void open(PqBytes bytes);
};

// The stored (compressed) size of the leaf's chunk in row group g, 0 when the footer's claim is
// not within the file: what its byte cells take, about (images hardly compress), to reserve.
std::size_t pq_chunk_stored_bytes(const PqFile& file, const PqLeaf& leaf, std::size_t g);

// The leaves that hold an image column's bytes and, for a struct, its stored path ("" if none)
// (parquet_images.cpp): `column` names a struct with a binary `bytes` field, a binary column,
// or a struct's bytes field. InputError naming the file and column when it is none of these.
struct PqImageLeaves {
  std::string bytes;
  std::string path;
};
PqImageLeaves resolve_image_leaves(const ParquetInfo& info, std::string_view column);

// The files a path names: itself, or a folder's .parquet files in name order.
std::vector<std::string> pq_inputs(const std::string& path);

const char* pq_codec_name(int codec);
const char* pq_encoding_name(int encoding);
const char* pq_type_name(int type);

}  // namespace vlbias::io_internal
