// Parquet's metadata: the Thrift compact protocol (thrift's doc/specs/thrift-compact-protocol.md)
// and the structs of parquet.thrift that the reader needs. Unknown fields are skipped by
// their wire type; nesting is limited to kPqMaxDepth levels and every list, string and map
// size is bounded by the bytes that remain.
#include <cstring>

#include <fmt/format.h>

#include "parquet_detail.h"
#include "vlbias/core/error.h"

namespace vlbias::io_internal {

namespace {

constexpr int kPqMaxDepth = 64;
// Compact protocol wire types.
constexpr int kPqTStop = 0, kPqTTrue = 1, kPqTFalse = 2, kPqTByte = 3, kPqTI16 = 4, kPqTI32 = 5,
              kPqTI64 = 6, kPqTDouble = 7, kPqTBinary = 8, kPqTList = 9, kPqTSet = 10, kPqTMap = 11,
              kPqTStruct = 12;

class PqThriftReader {
 public:
  PqThriftReader(PqBytes bytes, const std::string& where) : bytes_(bytes), where_(where) {}

  std::size_t position() const { return pos_; }

  [[noreturn]] void fail(std::string_view what) const {
    VLBIAS_FAIL(InputError, "{} is not a valid Parquet file: its metadata {} (at byte {})", where_,
                what, pos_);
  }

  std::uint8_t byte() {
    if (pos_ >= bytes_.size()) fail("ends in the middle of a value");
    return bytes_[pos_++];
  }

  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      const std::uint8_t b = byte();
      if (shift == 63 && (b & 0x7e) != 0) fail("holds a variable-length integer over 64 bits");
      v |= std::uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail("holds a variable-length integer over 64 bits");
  }

  std::int64_t zigzag() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
  }

  void enter() {
    if (++depth_ > kPqMaxDepth) fail(fmt::format("nests deeper than {} levels", kPqMaxDepth));
  }
  void leave() { --depth_; }

  // The next field of the struct being read: false at its end. `last` is the previous id.
  bool next_field(int& last, int& id, int& type) {
    const std::uint8_t head = byte();
    type = head & 0x0f;
    if (type == kPqTStop) return false;
    const int delta = head >> 4;
    if (delta != 0) {
      id = last + delta;
    } else {
      const std::int64_t v = zigzag();
      if (v < -32768 || v > 32767) fail("holds a field id outside 16 bits");
      id = static_cast<int>(v);
    }
    last = id;
    return true;
  }

  std::int64_t integer(int type) {
    if (type == kPqTByte) return static_cast<std::int8_t>(byte());
    if (type != kPqTI16 && type != kPqTI32 && type != kPqTI64)
      fail("holds a non-integer where an integer belongs");
    return zigzag();
  }
  int i32(int type) {
    const std::int64_t v = integer(type);
    if (v < INT32_MIN || v > INT32_MAX) fail("holds a 32-bit integer out of range");
    return static_cast<int>(v);
  }
  bool boolean(int type) {
    if (type != kPqTTrue && type != kPqTFalse) fail("holds a non-boolean where a boolean belongs");
    return type == kPqTTrue;
  }

  std::string_view binary(int type) {
    if (type != kPqTBinary) fail("holds a non-string where a string belongs");
    const std::uint64_t n = varint();
    if (n > bytes_.size() - pos_) fail("holds a string longer than the bytes that remain");
    const std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }

  // A list or set header: its size (bounded: each element takes at least one byte).
  std::size_t list(int type, int& element_type) {
    if (type != kPqTList && type != kPqTSet) fail("holds a non-list where a list belongs");
    const std::uint8_t head = byte();
    element_type = head & 0x0f;
    std::uint64_t n = head >> 4;
    if (n == 15) n = varint();
    if (n > bytes_.size() - pos_)
      fail(fmt::format("holds a list of {} elements in fewer bytes", n));
    return n;
  }

  void expect_struct(int type) {
    if (type != kPqTStruct) fail("holds a non-struct where a struct belongs");
  }

  void skip(int type) {
    switch (type) {
      case kPqTTrue:
      case kPqTFalse:
        return;
      case kPqTByte:
        byte();
        return;
      case kPqTI16:
      case kPqTI32:
      case kPqTI64:
        varint();
        return;
      case kPqTDouble:
        if (bytes_.size() - pos_ < 8) fail("ends in the middle of a double");
        pos_ += 8;
        return;
      case kPqTBinary:
        binary(type);
        return;
      case kPqTList:
      case kPqTSet: {
        int element = 0;
        const std::size_t n = list(type, element);
        enter();
        for (std::size_t i = 0; i < n; ++i) skip_element(element);
        leave();
        return;
      }
      case kPqTMap: {
        const std::uint64_t n = varint();
        if (n == 0) return;
        if (n > bytes_.size() - pos_) fail("holds a map larger than the bytes that remain");
        const std::uint8_t kinds = byte();
        enter();
        for (std::uint64_t i = 0; i < n; ++i) {
          skip_element(kinds >> 4);
          skip_element(kinds & 0x0f);
        }
        leave();
        return;
      }
      case kPqTStruct: {
        enter();
        int last = 0, id = 0, t = 0;
        while (next_field(last, id, t)) skip(t);
        leave();
        return;
      }
      default:
        fail(fmt::format("holds an unknown wire type {}", type));
    }
  }

 private:
  // Booleans inside lists, sets and maps take one byte.
  void skip_element(int type) {
    if (type == kPqTTrue || type == kPqTFalse) {
      byte();
      return;
    }
    if (type == kPqTStop) fail("holds a collection of an unknown element type");
    skip(type);
  }

  PqBytes bytes_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  const std::string& where_;
};

// Calls on_field(id, type) for each field of the struct at the reader's position.
template <typename OnField>
void read_pq_struct(PqThriftReader& in, OnField&& on_field) {
  in.enter();
  int last = 0, id = 0, type = 0;
  while (in.next_field(last, id, type)) on_field(id, type);
  in.leave();
}

// A union of empty structs (TimeUnit): the member's id.
int read_pq_union_member(PqThriftReader& in) {
  int member = 0;
  read_pq_struct(in, [&](int id, int type) {
    member = id;
    in.skip(type);
  });
  return member;
}

PqLogicalType read_pq_logical(PqThriftReader& in) {
  PqLogicalType t;
  read_pq_struct(in, [&](int id, int type) {
    t.kind = id;
    in.expect_struct(type);
    read_pq_struct(in, [&](int field, int ftype) {
      if (id == kPqLogicalDecimal && field == 1) {
        t.scale = in.i32(ftype);
      } else if ((id == kPqLogicalTime || id == kPqLogicalTimestamp) && field == 1) {
        t.utc = in.boolean(ftype);
      } else if ((id == kPqLogicalTime || id == kPqLogicalTimestamp) && field == 2) {
        in.expect_struct(ftype);
        t.unit = read_pq_union_member(in);
      } else if (id == kPqLogicalInteger && field == 1) {
        t.bit_width = static_cast<int>(in.integer(ftype));
      } else if (id == kPqLogicalInteger && field == 2) {
        t.is_signed = in.boolean(ftype);
      } else {
        in.skip(ftype);
      }
    });
  });
  return t;
}

PqSchemaElement read_pq_schema_element(PqThriftReader& in) {
  PqSchemaElement e;
  read_pq_struct(in, [&](int id, int type) {
    switch (id) {
      case 1:
        e.type = in.i32(type);
        break;
      case 2:
        e.type_length = in.i32(type);
        break;
      case 3:
        e.repetition = in.i32(type);
        break;
      case 4:
        e.name = std::string(in.binary(type));
        break;
      case 5:
        e.num_children = in.i32(type);
        break;
      case 6:
        e.converted = in.i32(type);
        break;
      case 7:
        e.scale = in.i32(type);
        break;
      case 10:
        in.expect_struct(type);
        e.logical = read_pq_logical(in);
        break;
      default:
        in.skip(type);
    }
  });
  return e;
}

std::int64_t read_pq_i64(PqThriftReader& in, int type) {
  return in.integer(type);
}

PqColumnMeta read_pq_column_meta(PqThriftReader& in) {
  PqColumnMeta m;
  read_pq_struct(in, [&](int id, int type) {
    switch (id) {
      case 1:
        m.type = in.i32(type);
        break;
      case 3: {
        int element = 0;
        const std::size_t n = in.list(type, element);
        for (std::size_t i = 0; i < n; ++i) m.path.emplace_back(in.binary(element));
        break;
      }
      case 4:
        m.codec = in.i32(type);
        break;
      case 5:
        m.num_values = read_pq_i64(in, type);
        break;
      case 7:
        m.total_compressed_size = read_pq_i64(in, type);
        break;
      case 9:
        m.data_page_offset = read_pq_i64(in, type);
        break;
      case 11:
        m.dictionary_page_offset = read_pq_i64(in, type);
        break;
      default:
        in.skip(type);
    }
  });
  m.has_meta = true;
  return m;
}

PqColumnMeta read_pq_column_chunk(PqThriftReader& in) {
  PqColumnMeta m;
  bool external = false;
  read_pq_struct(in, [&](int id, int type) {
    if (id == 1) {
      external = !in.binary(type).empty();
    } else if (id == 3) {
      in.expect_struct(type);
      m = read_pq_column_meta(in);
    } else {
      in.skip(type);
    }
  });
  m.external = external;
  return m;
}

PqRowGroup read_pq_row_group(PqThriftReader& in) {
  PqRowGroup g;
  read_pq_struct(in, [&](int id, int type) {
    if (id == 1) {
      int element = 0;
      const std::size_t n = in.list(type, element);
      for (std::size_t i = 0; i < n; ++i) {
        in.expect_struct(element);
        g.columns.push_back(read_pq_column_chunk(in));
      }
    } else if (id == 3) {
      g.num_rows = read_pq_i64(in, type);
    } else {
      in.skip(type);
    }
  });
  return g;
}

}  // namespace

PqFileMeta parse_pq_file_meta(PqBytes bytes, const std::string& where) {
  PqThriftReader in(bytes, where);
  PqFileMeta meta;
  bool has_schema = false, has_rows = false;
  read_pq_struct(in, [&](int id, int type) {
    if (id == 2) {
      int element = 0;
      const std::size_t n = in.list(type, element);
      for (std::size_t i = 0; i < n; ++i) {
        in.expect_struct(element);
        meta.schema.push_back(read_pq_schema_element(in));
      }
      has_schema = true;
    } else if (id == 3) {
      meta.num_rows = read_pq_i64(in, type);
      has_rows = true;
    } else if (id == 4) {
      int element = 0;
      const std::size_t n = in.list(type, element);
      for (std::size_t i = 0; i < n; ++i) {
        in.expect_struct(element);
        meta.row_groups.push_back(read_pq_row_group(in));
      }
    } else if (id == 5) {  // key_value_metadata: list<KeyValue{1: key, 2: value}>
      int element = 0;
      const std::size_t n = in.list(type, element);
      for (std::size_t i = 0; i < n; ++i) {
        in.expect_struct(element);
        std::pair<std::string, std::string> kv;
        read_pq_struct(in, [&](int field, int field_type) {
          if (field == 1) {
            kv.first = std::string(in.binary(field_type));
          } else if (field == 2) {
            kv.second = std::string(in.binary(field_type));
          } else {
            in.skip(field_type);
          }
        });
        meta.key_value.push_back(std::move(kv));
      }
    } else {
      in.skip(type);
    }
  });
  if (!has_schema || meta.schema.empty()) in.fail("has no schema");
  if (!has_rows || meta.num_rows < 0) in.fail("has no row count");
  return meta;
}

PqPageHeader parse_pq_page_header(PqBytes bytes, const std::string& where, std::size_t* consumed) {
  PqThriftReader in(bytes, where);
  PqPageHeader h;
  read_pq_struct(in, [&](int id, int type) {
    switch (id) {
      case 1:
        h.type = in.i32(type);
        break;
      case 2:
        h.uncompressed_size = in.i32(type);
        break;
      case 3:
        h.compressed_size = in.i32(type);
        break;
      case 5:  // DataPageHeader
        in.expect_struct(type);
        read_pq_struct(in, [&](int f, int t) {
          if (f == 1)
            h.num_values = in.i32(t);
          else if (f == 2)
            h.encoding = in.i32(t);
          else if (f == 3)
            h.def_encoding = in.i32(t);
          else if (f == 4)
            h.rep_encoding = in.i32(t);
          else
            in.skip(t);
        });
        break;
      case 7:  // DictionaryPageHeader
        in.expect_struct(type);
        read_pq_struct(in, [&](int f, int t) {
          if (f == 1)
            h.num_values = in.i32(t);
          else if (f == 2)
            h.encoding = in.i32(t);
          else
            in.skip(t);
        });
        break;
      case 8:  // DataPageHeaderV2
        in.expect_struct(type);
        read_pq_struct(in, [&](int f, int t) {
          if (f == 1)
            h.num_values = in.i32(t);
          else if (f == 2)
            h.num_nulls = in.i32(t);
          else if (f == 4)
            h.encoding = in.i32(t);
          else if (f == 5)
            h.def_length = in.i32(t);
          else if (f == 6)
            h.rep_length = in.i32(t);
          else if (f == 7)
            h.is_compressed = in.boolean(t);
          else
            in.skip(t);
        });
        break;
      default:
        in.skip(type);
    }
  });
  *consumed = in.position();
  return h;
}

const char* pq_codec_name(int codec) {
  static const char* const kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                       "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
  return codec >= 0 && codec < 8 ? kNames[codec] : "an unknown codec";
}

const char* pq_encoding_name(int encoding) {
  static const char* const kNames[] = {
      "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
      "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
      "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  return encoding >= 0 && encoding < 10 ? kNames[encoding] : "an unknown encoding";
}

const char* pq_type_name(int type) {
  static const char* const kNames[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                       "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return type >= 0 && type < 8 ? kNames[type] : "an unknown type";
}

}  // namespace vlbias::io_internal
