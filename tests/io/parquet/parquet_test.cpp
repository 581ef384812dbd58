// The Parquet reader (include/vlbias/io/parquet/parquet.h): every fixture of
// tools/make_parquet_fixtures.mjs (written by DuckDB 1.5.6 and by arrow-rs through
// parquet-wasm 0.8.0) read as DuckDB reads it, and
// hostile files, built here with a small Thrift compact-protocol writer, refused with one
// InputError sentence naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "io/table_test_util.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_parquet_test {

using table_test::TempDir;
using testing::HasSubstr;
using testing_util::error_of;
using testing_util::fixture_json;

std::string fixture(const std::string& name) {
  return std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/io/parquet/" + name;
}

std::string hex_of(std::string_view bytes) {
  static const char* const kDigits = "0123456789ABCDEF";
  std::string out;
  for (const char c : bytes) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

// Checks a table (and the bytes of its binary columns) against DuckDB's reading.
void expect_duckdb_values(const std::string& path, const nlohmann::json& expected) {
  const Table t = read_table(path);
  const auto& columns = expected["columns"];
  ASSERT_FALSE(columns.empty());
  EXPECT_EQ(t.rows, columns[0]["values"].size());
  for (const auto& col : columns) {
    const std::string name = col["name"];
    const std::string kind = col["kind"];
    const std::string duck_type = col["duckdb_type"];
    SCOPED_TRACE("column " + name + " (" + duck_type + ")");
    const auto& values = col["values"];
    if (kind == "bytes") {
      EXPECT_FALSE(t.find(name).has_value()) << "binary columns stay out of tables";
      const ParquetBytes cells = read_parquet_bytes(path, name);
      ASSERT_EQ(cells.size(), values.size());
      for (std::size_t r = 0; r < values.size(); ++r) {
        EXPECT_EQ(cells.present[r], !values[r].is_null()) << "row " << r;
        if (!values[r].is_null()) {
          EXPECT_EQ(hex_of(cells.cell(r)), values[r].get<std::string>()) << "row " << r;
        }
      }
      continue;
    }
    const Column& c = t.column(name);
    ASSERT_EQ(c.size(), values.size());
    const bool numeric = kind == "number" && c.type == ColumnType::Numeric;
    if (kind == "text") {
      EXPECT_EQ(c.type, ColumnType::String);
    }
    const bool decimal = duck_type.rfind("DECIMAL", 0) == 0;
    for (std::size_t r = 0; r < values.size(); ++r) {
      const std::string want = values[r].is_null() ? "" : values[r].get<std::string>();
      if (want.empty()) {
        EXPECT_TRUE(c.missing(r)) << "row " << r;
      } else if (numeric) {
        const double x = std::strtod(want.c_str(), nullptr);
        if (decimal) {
          EXPECT_NEAR(c.numbers[r], x, 1e-15 * std::abs(x)) << "row " << r << ": " << want;
        } else {
          EXPECT_EQ(c.numbers[r], x) << "row " << r << ": " << want;
        }
      } else {
        EXPECT_EQ(c.text(r), want) << "row " << r;
      }
    }
  }
}

const char* const kFixtures[] = {"types_uncompressed_v1",
                                 "types_snappy_v1",
                                 "types_gzip_v1",
                                 "types_zstd_v1",
                                 "types_uncompressed_v2",
                                 "types_snappy_v2",
                                 "types_gzip_v2",
                                 "types_zstd_v2",
                                 "dict_snappy_v1",
                                 "dict_zstd_v2",
                                 "many_row_groups_zstd_v1",
                                 "many_row_groups_snappy_v2",
                                 "image_struct",
                                 "hf_images",
                                 "nonfinite",
                                 "arrow_delta_v2",
                                 "arrow_fallback_v1",
                                 "arrow_empty"};

TEST(Parquet, EveryFixtureReadsAsDuckDBReadsIt) {
  std::set<std::string> encodings, codecs;
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const auto& expected = fixture_json(std::string("io/parquet/") + name + ".expected.json");
    expect_duckdb_values(fixture(std::string(name) + ".parquet"), expected);
    for (const auto& chunk : expected["chunks"]) {
      const std::string list = chunk["encodings"].get<std::string>();  // "PLAIN, RLE"
      for (std::size_t at = 0; at < list.size();) {
        const std::size_t comma = std::min(list.find(", ", at), list.size());
        encodings.insert(list.substr(at, comma - at));
        at = comma + 2;
      }
      codecs.insert(chunk["compression"].get<std::string>());
    }
  }
  // The fixtures cover what they are meant to.
  for (const char* e : {"PLAIN", "PLAIN_DICTIONARY", "RLE_DICTIONARY", "RLE", "DELTA_BINARY_PACKED",
                        "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "BYTE_STREAM_SPLIT"}) {
    EXPECT_TRUE(encodings.count(e)) << e;
  }
  EXPECT_EQ(codecs, (std::set<std::string>{"GZIP", "SNAPPY", "UNCOMPRESSED", "ZSTD"}));
}

TEST(Parquet, ADictionaryThatFallsBackToPlainWithinAChunkReads) {
  // arrow-rs with a 64-byte dictionary limit: each chunk starts dictionary-encoded and
  // continues PLAIN (both encodings in one chunk), over three row groups.
  const auto& expected = fixture_json("io/parquet/arrow_fallback_v1.expected.json");
  EXPECT_EQ(expected["chunks"][0]["encodings"], "PLAIN, RLE, RLE_DICTIONARY");
  EXPECT_EQ(read_parquet_info(fixture("arrow_fallback_v1.parquet")).row_groups, 3u);
  const Table t = read_table(fixture("arrow_fallback_v1.parquet"));
  EXPECT_EQ(t.column("stamp").text(1), "2023-12-31 23:59:01.25+00");
  EXPECT_EQ(t.column("u32").numbers[0], 4000000000.0);
}

TEST(Parquet, AFileWithoutRowsReadsAsAnEmptyTable) {
  const Table t = read_table(fixture("arrow_empty.parquet"));
  EXPECT_EQ(t.rows, 0u);
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[1].name, "s");
}

TEST(Parquet, SeveralRowGroupsReadAsOneTable) {
  const auto& expected = fixture_json("io/parquet/many_row_groups_zstd_v1.expected.json");
  EXPECT_EQ(expected["row_groups"].get<int>(), 3);
  EXPECT_EQ(read_parquet_info(fixture("many_row_groups_zstd_v1.parquet")).row_groups, 3u);
}

TEST(Parquet, AFolderOfShardsReadsAsOneTableInNameOrder) {
  expect_duckdb_values(fixture("shards"), fixture_json("io/parquet/shards.expected.json"));
  const Table t = read_parquet(fixture("shards"));
  EXPECT_EQ(t.rows, 300u);
  EXPECT_EQ(t.column("id").numbers[0], 0);
  EXPECT_EQ(t.column("id").numbers[100], 1);  // shard 1 holds ids 1, 4, 7, ...
}

TEST(Parquet, NullsReadAsTheTablesMissingCells) {
  const Table t = read_table(fixture("dict_snappy_v1.parquet"));
  const Column& nothing = t.column("nothing");
  for (std::size_t r = 0; r < t.rows; ++r) EXPECT_TRUE(nothing.missing(r));
  EXPECT_TRUE(t.column("maybe_empty").missing(2)) << "an empty string is missing, as in CSV";
  EXPECT_TRUE(std::isnan(t.column("small").numbers[0]));
  EXPECT_EQ(t.column("small").numbers[1], 1);
}

TEST(Parquet, TheImageStructReadsAsItsLeafColumns) {
  const ParquetInfo info = read_parquet_info(fixture("image_struct.parquet"));
  std::vector<std::string> names;
  for (const auto& c : info.columns) names.push_back(c.name);
  EXPECT_THAT(names, testing::ElementsAre("id", "image.bytes", "image.path", "label"));
  EXPECT_TRUE(info.columns[1].binary);
  EXPECT_FALSE(info.columns[2].binary);
  const ParquetBytes bytes = read_parquet_bytes(fixture("image_struct.parquet"), "image.bytes");
  EXPECT_EQ(bytes.cell(0), "\x89PNG");
  EXPECT_FALSE(bytes.present[3]);  // the whole struct is null
}

TEST(Parquet, ColumnsAreReadOnlyWhenAskedFor) {
  const Table t = read_parquet(fixture("types_zstd_v2.parquet"), {"label", "int64"});
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[0].name, "label");
  const std::string binary =
      error_of<InputError>([&] { read_parquet(fixture("types_zstd_v2.parquet"), {"raw"}); });
  EXPECT_THAT(binary, HasSubstr("column 'raw' holds binary data"));
  EXPECT_THAT(
      error_of<InputError>([&] { read_parquet(fixture("types_zstd_v2.parquet"), {"nope"}); }),
      HasSubstr("has no column 'nope'"));
}

TEST(Parquet, ARepeatedColumnIsRefusedNamingIt) {
  const std::string msg = error_of<InputError>([&] { read_table(fixture("list_column.parquet")); });
  EXPECT_THAT(msg, HasSubstr("list_column.parquet"));
  EXPECT_THAT(msg, HasSubstr("column 'pair.list.element' is repeated"));
  EXPECT_EQ(read_parquet(fixture("list_column.parquet"), {"id"}).rows, 4u);
}

TEST(Parquet, RecordStreamsReadParquetRows) {
  std::vector<std::string> seen;
  const std::size_t rows = for_each_record(
      fixture("dict_zstd_v2.parquet"), {"colour", "half", "absent"},
      [&](const Record& r) {
        if (r.line() <= 2) seen.push_back(std::string(r.text(0)) + "|" + std::string(r.text(1)));
        EXPECT_TRUE(r.missing(2));
      },
      {}, 2);
  EXPECT_EQ(rows, 300u);
  EXPECT_THAT(seen, testing::ElementsAre("red|0", "green|0.5"));
}

// ------------------------------------------------------------------ hostile files

// The Thrift compact protocol, written: enough for the footer and page headers.
class ThriftOut {
 public:
  std::string out;

  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out += static_cast<char>(v);
  }
  void field(int id, int type) {
    const int delta = id - last_.back();
    if (delta > 0 && delta <= 15) {
      out += static_cast<char>((delta << 4) | type);
    } else {
      out += static_cast<char>(type);
      varint(static_cast<std::uint64_t>((id << 1) ^ (id >> 31)));
    }
    last_.back() = id;
  }
  void i32(int id, std::int64_t v) {
    field(id, 5);
    varint(static_cast<std::uint64_t>((v << 1) ^ (v >> 63)));
  }
  void i64(int id, std::int64_t v) {
    field(id, 6);
    varint(static_cast<std::uint64_t>((v << 1) ^ (v >> 63)));
  }
  void str(int id, const std::string& s) {
    field(id, 8);
    varint(s.size());
    out += s;
  }
  void begin(int id) {  // a struct field
    field(id, 12);
    last_.push_back(0);
  }
  void begin_element() { last_.push_back(0); }  // a struct inside a list
  void end() {
    out += '\0';
    last_.pop_back();
  }
  void list(int id, int element_type, std::uint64_t n) {
    field(id, 9);
    if (n < 15) {
      out += static_cast<char>((n << 4) | static_cast<unsigned>(element_type));
    } else {
      out += static_cast<char>(0xf0 | element_type);
      varint(n);
    }
  }

 private:
  std::vector<int> last_{0};
};

struct Page {
  int type = 0;  // DATA_PAGE
  int encoding = 0;
  std::int64_t num_values = 3;
  std::string body;
  std::int64_t compressed = -1;  // -1: the body's size
  std::int64_t uncompressed = -1;
};

std::string page_bytes(const Page& p) {
  ThriftOut t;
  t.i32(1, p.type);
  t.i32(2, p.uncompressed >= 0 ? p.uncompressed : static_cast<std::int64_t>(p.body.size()));
  t.i32(3, p.compressed >= 0 ? p.compressed : static_cast<std::int64_t>(p.body.size()));
  t.begin(p.type == 2 ? 7 : 5);
  t.i32(1, p.num_values);
  t.i32(2, p.encoding);
  if (p.type == 0) {
    t.i32(3, 3);
    t.i32(4, 3);
  }
  t.end();
  t.out += '\0';
  return t.out + p.body;
}

// One required column "x" of `type` (INT32 by default) in one row group.
struct Craft {
  int type = 1;
  int repetition = 0;  // REQUIRED
  int converted = -1;
  int codec = 0;
  std::int64_t rows = 3;
  std::vector<Page> pages;
  std::string meta_override;  // replaces the metadata when set
  std::int64_t chunk_size = -1;
};

std::string craft_file(const Craft& c) {
  std::string data;
  for (const Page& p : c.pages) data += page_bytes(p);
  ThriftOut t;
  t.i32(1, 1);
  t.list(2, 12, 2);
  t.begin_element();
  t.str(4, "schema");
  t.i32(5, 1);
  t.end();
  t.begin_element();
  t.i32(1, c.type);
  t.i32(3, c.repetition);
  t.str(4, "x");
  if (c.converted >= 0) t.i32(6, c.converted);
  t.end();
  t.i64(3, c.rows);
  t.list(4, 12, 1);
  t.begin_element();
  t.list(1, 12, 1);
  t.begin_element();
  t.i64(2, 4);
  t.begin(3);
  t.i32(1, c.type);
  t.list(2, 5, 1);
  t.varint(0);
  t.list(3, 8, 1);
  t.varint(1);
  t.out += 'x';
  t.i32(4, c.codec);
  t.i64(5, c.rows);
  t.i64(6, static_cast<std::int64_t>(data.size()));
  t.i64(7, c.chunk_size >= 0 ? c.chunk_size : static_cast<std::int64_t>(data.size()));
  t.i64(9, 4);
  t.end();
  t.end();
  t.i64(2, static_cast<std::int64_t>(data.size()));
  t.i64(3, c.rows);
  t.end();
  t.out += '\0';
  const std::string meta = c.meta_override.empty() ? t.out : c.meta_override;
  std::string file = "PAR1" + data + meta;
  const auto n = static_cast<std::uint32_t>(meta.size());
  file.append(reinterpret_cast<const char*>(&n), 4);
  return file + "PAR1";
}

std::string int32s(std::initializer_list<std::int32_t> values) {
  std::string out;
  for (const std::int32_t v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

// The message of the InputError reading `bytes` as x.parquet gives; checks that it names the file.
std::string refusal(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.write("x.parquet", bytes);
  const std::string msg = error_of<InputError>([&] { read_table(path); });
  EXPECT_THAT(msg, HasSubstr("x.parquet"));
  return msg;
}

TEST(ParquetHostile, TheCraftedBaselineReads) {
  TempDir dir;
  Craft c;
  c.pages.push_back(Page{0, 0, 3, int32s({7, -8, 9})});
  const Table t = read_table(dir.write("ok.parquet", craft_file(c)));
  EXPECT_EQ(t.column("x").numbers, (std::vector<double>{7, -8, 9}));
}

TEST(ParquetHostile, DeltaByteArrayPagesRead) {
  // "apple", "applesauce", "apply": prefix lengths 0, 5, 4 and suffixes "apple", "sauce", "y",
  // each DELTA_BINARY_PACKED in one block of 128 values in 4 miniblocks (Encodings.md).
  std::string body;
  body += std::string("\x80\x01\x04\x03\x00", 5);          // block, miniblocks, 3 values, first 0
  body += std::string("\x01\x03\x00\x00\x00", 5);          // min delta -1; widths 3, 0, 0, 0
  body += std::string("\x06", 1) + std::string(11, '\0');  // deltas 5, -1 as 6, 0 over -1
  body += std::string("\x80\x01\x04\x03\x0a", 5);          // suffix lengths: first 5
  body += std::string("\x07\x03\x00\x00\x00", 5);          // min delta -4
  body += std::string("\x04", 1) + std::string(11, '\0');  // deltas 0, -4
  body += "applesaucey";
  TempDir dir;
  Craft c;
  c.type = 6;
  c.converted = 0;  // UTF8
  c.pages.push_back(Page{0, 7, 3, body});
  const Table t = read_table(dir.write("dba.parquet", craft_file(c)));
  EXPECT_EQ(table_test::texts(t, "x"), (std::vector<std::string>{"apple", "applesauce", "apply"}));
}

std::string int96(std::int64_t nanos_of_day, std::int32_t julian_day) {
  std::string out(12, '\0');
  std::memcpy(out.data(), &nanos_of_day, 8);
  std::memcpy(out.data() + 8, &julian_day, 4);
  return out;
}

TEST(ParquetHostile, Int96TimestampsReadAsText) {
  // Spark's legacy layout: nanoseconds of the day, then the Julian day (2440588 = 1970-01-01).
  TempDir dir;
  Craft c;
  c.type = 3;
  c.rows = 2;
  c.pages.push_back(Page{0, 0, 2,
                         int96(std::int64_t{11045} * 1000000000 + 500000000, 2440588 + 19724) +
                             int96(std::int64_t{86399} * 1000000000 + 1, 2440587)});
  const Table t = read_table(dir.write("int96.parquet", craft_file(c)));
  EXPECT_EQ(table_test::texts(t, "x"),
            (std::vector<std::string>{"2024-01-02 03:04:05.5", "1969-12-31 23:59:59.000000001"}));
  c.pages[0].body = int96(-1, 2440588) + int96(0, 0);
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("outside one day"));
}

TEST(ParquetHostile, EmptyTruncatedAndMagiclessFilesAreRefused) {
  TempDir dir;
  EXPECT_THAT(refusal(dir, ""), HasSubstr("fewer than the 12"));
  EXPECT_THAT(refusal(dir, "this is not a parquet file at all"), HasSubstr("magic bytes 'PAR1'"));
  const std::string good = table_test::read_file(fixture("types_snappy_v1.parquet"));
  EXPECT_THAT(refusal(dir, good.substr(0, good.size() - 3)), HasSubstr("magic bytes"));
  std::string no_meta = good;
  const auto huge = static_cast<std::uint32_t>(good.size());
  std::memcpy(no_meta.data() + good.size() - 8, &huge, 4);
  EXPECT_THAT(refusal(dir, no_meta), HasSubstr("footer claims"));
  // The footer's length one byte short: the metadata is cut.
  std::string cut = good;
  std::uint32_t length;
  std::memcpy(&length, good.data() + good.size() - 8, 4);
  const std::uint32_t shorter = length - 1;
  std::memcpy(cut.data() + good.size() - 8, &shorter, 4);
  EXPECT_THAT(refusal(dir, cut), HasSubstr("not a valid Parquet file"));
}

TEST(ParquetHostile, PagesAndChunksPastTheEndAreRefused) {
  TempDir dir;
  Craft c;
  c.pages.push_back(Page{0, 0, 3, int32s({1, 2, 3}), 1000});
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("a page declares 1000 bytes"));
  Craft far;
  far.pages.push_back(Page{0, 0, 3, int32s({1, 2, 3})});
  far.chunk_size = 1 << 20;
  EXPECT_THAT(refusal(dir, craft_file(far)), HasSubstr("outside the file's data"));
  Craft short_values;
  short_values.pages.push_back(Page{0, 0, 3, int32s({1, 2})});
  EXPECT_THAT(refusal(dir, craft_file(short_values)), HasSubstr("too few for 3 INT32 values"));
}

TEST(ParquetHostile, CorruptCompressedPagesAreRefused) {
  TempDir dir;
  for (const int codec : {1, 2, 6}) {
    SCOPED_TRACE(codec);
    Craft c;
    c.codec = codec;
    c.pages.push_back(Page{0, 0, 3, "\x0c\xff\xfe garbage bytes", -1, 12});
    EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("page"));
  }
  Craft bomb;
  bomb.codec = 6;
  bomb.pages.push_back(Page{0, 0, 3, "tiny", -1, 1 << 30});
  EXPECT_THAT(refusal(dir, craft_file(bomb)), HasSubstr("more than the reader allows"));
}

TEST(ParquetHostile, DictionaryIndicesOutOfRangeAndWideBitWidthsAreRefused) {
  TempDir dir;
  Craft c;
  c.pages.push_back(Page{2, 0, 2, int32s({10, 20})});
  // RLE_DICTIONARY: bit width 2, one RLE run of 3 copies of index 3.
  c.pages.push_back(Page{0, 8, 3, std::string("\x02\x06\x03", 3)});
  EXPECT_THAT(refusal(dir, craft_file(c)),
              HasSubstr("dictionary index 3 is out of range (the dictionary has 2 values)"));
  c.pages[1].body = std::string("\x28\x06\x03", 3);
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("bit width of 40"));
  Craft huge;  // a dictionary of 2^30 values in 8 bytes
  huge.pages.push_back(Page{2, 0, std::int64_t{1} << 30, int32s({10, 20})});
  huge.pages.push_back(Page{0, 8, 3, std::string("\x01\x06\x01", 3)});
  EXPECT_THAT(refusal(dir, craft_file(huge)), HasSubstr("too few for 1073741824 INT32 values"));
  Craft no_dictionary;
  no_dictionary.pages.push_back(Page{0, 8, 3, std::string("\x01\x06\x01", 3)});
  EXPECT_THAT(refusal(dir, craft_file(no_dictionary)), HasSubstr("no dictionary page"));
}

TEST(ParquetHostile, NullsComeFromDefinitionLevelsAndLevelsBeyondTheBitWidthAreRefused) {
  TempDir dir;
  Craft c;
  c.repetition = 1;  // OPTIONAL: levels 1 (present), 0 (null), 1, as one bit-packed group
  const std::string levels("\x03\x05", 2);
  const std::string length("\x02\x00\x00\x00", 4);
  c.pages.push_back(Page{0, 0, 3, length + levels + int32s({4, 6})});
  const Table t = read_table(dir.write("nulls.parquet", craft_file(c)));
  EXPECT_EQ(t.column("x").numbers[0], 4);
  EXPECT_TRUE(t.column("x").missing(1));
  EXPECT_EQ(t.column("x").numbers[2], 6);
  c.pages[0].body = length + std::string("\x06\x02", 2) + int32s({4, 6});  // RLE run of 2s
  EXPECT_THAT(refusal(dir, craft_file(c)),
              HasSubstr("an RLE run repeats 2, which does not fit its bit width 1"));
}

TEST(ParquetHostile, AbsurdThriftSizesAndDeepNestingAreRefused) {
  TempDir dir;
  ThriftOut big;
  big.i32(1, 1);
  big.list(2, 12, std::uint64_t{1} << 40);
  Craft c;
  c.meta_override = big.out + std::string(40, '\0');
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("holds a list of 1099511627776 elements"));
  ThriftOut deep;
  deep.i32(1, 1);
  for (int i = 0; i < 100; ++i) deep.begin(20);
  for (int i = 0; i < 100; ++i) deep.end();
  deep.out += '\0';
  c.meta_override = deep.out;
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("nests deeper than 64 levels"));
  ThriftOut string;
  string.str(6, "");
  string.out.pop_back();
  string.varint(std::uint64_t{1} << 50);
  c.meta_override = string.out;
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("a string longer than the bytes that remain"));
}

TEST(ParquetHostile, UnknownCodecsAndEncodingsAreNamed) {
  TempDir dir;
  Craft lzo;
  lzo.codec = 3;
  lzo.pages.push_back(Page{0, 0, 3, int32s({1, 2, 3})});
  EXPECT_THAT(refusal(dir, craft_file(lzo)),
              HasSubstr("column 'x' (row group 0): pages are compressed with LZO"));
  lzo.codec = 99;
  EXPECT_THAT(refusal(dir, craft_file(lzo)), HasSubstr("an unknown codec (99)"));
  Craft odd;
  odd.pages.push_back(Page{0, 42, 3, int32s({1, 2, 3})});
  EXPECT_THAT(refusal(dir, craft_file(odd)), HasSubstr("encoded as an unknown encoding (42)"));
}

TEST(ParquetHostile, RowCountsBeyondWhatTheBytesHoldAreRefused) {
  TempDir dir;
  Craft c;
  c.rows = std::int64_t{1} << 40;
  c.pages.push_back(Page{0, 0, 3, int32s({1, 2, 3})});
  EXPECT_THAT(refusal(dir, craft_file(c)), HasSubstr("more cells than a file of"));
  Craft fewer;
  fewer.rows = 5;
  fewer.pages.push_back(Page{0, 0, 3, int32s({1, 2, 3})});
  EXPECT_THAT(refusal(dir, craft_file(fewer)), HasSubstr("ends after 3 of the row group's 5 rows"));
}

// Every fixture cut at many lengths and with bytes changed: an InputError or a table, never a
// crash (the sanitizer build runs this too).
TEST(ParquetHostile, MutatedFixturesNeverCrash) {
  TempDir dir;
  std::size_t reads = 0, refused = 0;
  for (const char* name : {"types_snappy_v2", "dict_zstd_v2", "image_struct", "types_gzip_v1"}) {
    SCOPED_TRACE(name);
    const std::string good = table_test::read_file(fixture(std::string(name) + ".parquet"));
    const auto attempt = [&](const std::string& bytes) {
      const std::string path = dir.write("m.parquet", bytes);
      ++reads;
      try {
        read_table(path);
        read_parquet_info(path);
      } catch (const InputError&) {
        ++refused;
      }
    };
    for (std::size_t cut = 0; cut < good.size(); cut += 97) attempt(good.substr(0, cut));
    for (std::size_t at = 4; at + 8 < good.size(); at += 13) {
      for (const unsigned char v : {0x00, 0xff, 0x7f}) {
        std::string bad = good;
        bad[at] = static_cast<char>(v);
        attempt(bad);
      }
    }
  }
  EXPECT_GT(refused, reads / 10);
}

}  // namespace in_parquet_test
}  // namespace
}  // namespace vlbias
