// Parquet pages: a column chunk's dictionary and data pages (v1 and v2), their definition
// levels and their codecs (UNCOMPRESSED, SNAPPY with libsnappy, GZIP with zlib, ZSTD with
// libzstd). A page's declared sizes are checked against its chunk, and its uncompressed size
// against a ratio to its compressed size, before anything is allocated.
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "parquet_detail.h"
#include "vlbias/core/error.h"

namespace vlbias::io_internal {

namespace {

// A page may expand at most this many times its compressed size (and never past 1 GiB):
// the bound against decompression bombs. Real pages stay far below (text compresses 5-20x).
constexpr std::uint64_t kPqMaxRatio = 4096;
constexpr std::uint64_t kPqMaxPage = std::uint64_t{1} << 30;

void inflate_pq_gzip(PqBytes in, std::span<std::uint8_t> out, const std::string& where) {
  z_stream z{};
  VLBIAS_CHECK(inflateInit2(&z, 15 + 32) == Z_OK, InputError, "{}: zlib could not start", where);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  int rc = Z_OK;
  for (;;) {
    rc = inflate(&z, Z_NO_FLUSH);
    // Concatenated gzip members are one stream of bytes.
    if (rc == Z_STREAM_END && z.avail_in > 0 && z.avail_out > 0) {
      rc = inflateReset(&z);
      if (rc == Z_OK) continue;
    }
    break;
  }
  const bool whole = rc == Z_STREAM_END && z.avail_out == 0;
  const std::size_t produced = out.size() - z.avail_out;
  inflateEnd(&z);
  VLBIAS_CHECK(whole, InputError,
               "{}: a GZIP page does not decompress to its declared {} bytes ({} after {} bytes)",
               where, out.size(), rc == Z_STREAM_END ? "it ends" : "the data is corrupt or longer",
               produced);
}

std::size_t pq_level_width(int max_level) {
  std::size_t bits = 0;
  while ((1 << bits) <= max_level) ++bits;
  return bits;
}

// What a chunk's pages share while it is read.
struct PqChunkState {
  const PqColumnMeta& meta;
  const PqLeaf& leaf;
  const std::string& where;
  PqValues dictionary;
  std::vector<std::uint8_t> dictionary_bytes;
  bool has_dictionary = false;
  std::uint64_t dictionary_id = 0;
  std::vector<std::uint8_t> page;     // the page, decompressed
  std::vector<std::uint8_t> present;  // per row of the page
  std::vector<std::uint32_t> levels;
  PqValues values;
  std::string arena;
};

// Decompresses a page body into state.page (or views it when stored as is).
PqBytes pq_page_bytes(PqChunkState& s, PqBytes body, std::int64_t uncompressed, bool compressed) {
  if (s.meta.codec == kPqUncompressed || !compressed) {
    VLBIAS_CHECK(static_cast<std::int64_t>(body.size()) == uncompressed, InputError,
                 "{}: an uncompressed page holds {} bytes but declares {}", s.where, body.size(),
                 uncompressed);
    return body;
  }
  const std::uint64_t limit =
      std::min(kPqMaxPage, std::max<std::uint64_t>(body.size() * kPqMaxRatio, 1u << 20));
  VLBIAS_CHECK(uncompressed >= 0 && static_cast<std::uint64_t>(uncompressed) <= limit, InputError,
               "{}: a page of {} compressed bytes declares {} uncompressed bytes, more than the "
               "reader allows ({})",
               s.where, body.size(), uncompressed, limit);
  s.page.resize(static_cast<std::size_t>(uncompressed));
  pq_decompress(s.meta.codec, body, s.page, s.where);
  return s.page;
}

void read_pq_dictionary(PqChunkState& s, const PqPageHeader& h, PqBytes body) {
  VLBIAS_CHECK(!s.has_dictionary, InputError, "{}: a column chunk holds two dictionary pages",
               s.where);
  VLBIAS_CHECK(h.encoding == kPqPlain || h.encoding == kPqPlainDictionary, InputError,
               "{}: the dictionary page is encoded as {}; expected PLAIN", s.where,
               pq_encoding_name(h.encoding));
  VLBIAS_CHECK(h.num_values >= 0, InputError, "{}: the dictionary page has no value count",
               s.where);
  const PqBytes bytes = pq_page_bytes(s, body, h.uncompressed_size, true);
  s.dictionary_bytes.assign(bytes.begin(), bytes.end());
  decode_pq_plain(s.dictionary_bytes, s.leaf, static_cast<std::size_t>(h.num_values), s.dictionary,
                  s.where);
  s.has_dictionary = true;
  static std::atomic<std::uint64_t> dictionaries_read{0};
  s.dictionary_id = ++dictionaries_read;
}

void gather_pq_dictionary(PqChunkState& s, PqBytes bytes, std::size_t count) {
  VLBIAS_CHECK(s.has_dictionary, InputError,
               "{}: a page is dictionary-encoded but the chunk has no dictionary page", s.where);
  if (count == 0) return;
  VLBIAS_CHECK(!bytes.empty(), InputError, "{}: a dictionary-encoded page is empty", s.where);
  PqHybridReader reader(bytes.subspan(1), bytes[0], s.where);
  reader.read(count, s.values.indices);
  const std::size_t size = s.dictionary.size();
  for (const std::uint32_t index : s.values.indices) {
    VLBIAS_CHECK(index < size, InputError,
                 "{}: dictionary index {} is out of range (the dictionary has {} values)", s.where,
                 index, size);
  }
  s.values.dictionary = &s.dictionary;
  s.values.dictionary_id = s.dictionary_id;
}

void decode_pq_values(PqChunkState& s, int encoding, PqBytes bytes, std::size_t count,
                      std::size_t page_size) {
  const auto type = static_cast<PqType>(s.leaf.element.type);
  const bool ints = type == PqType::Int32 || type == PqType::Int64;
  switch (encoding) {
    case kPqPlain:
      return decode_pq_plain(bytes, s.leaf, count, s.values, s.where);
    case kPqPlainDictionary:
    case kPqRleDictionary:
      return gather_pq_dictionary(s, bytes, count);
    case kPqRle:
      if (type == PqType::Boolean) {
        VLBIAS_CHECK(bytes.size() >= 4, InputError, "{}: an RLE page is cut off", s.where);
        std::uint32_t n;
        std::memcpy(&n, bytes.data(), 4);
        VLBIAS_CHECK(n <= bytes.size() - 4, InputError,
                     "{}: an RLE page claims {} bytes but holds {}", s.where, n, bytes.size() - 4);
        PqHybridReader reader(bytes.subspan(4, n), 1, s.where);
        s.levels.clear();
        reader.read(count, s.levels);
        s.values.ints.assign(s.levels.begin(), s.levels.end());
        return;
      }
      break;
    case kPqDeltaBinaryPacked:
      if (ints) {
        return decode_pq_delta_binary(bytes, count, type == PqType::Int32, s.values.ints, nullptr,
                                      s.where);
      }
      break;
    case kPqDeltaLengthByteArray:
      if (type == PqType::ByteArray) return decode_pq_delta_length(bytes, count, s.values, s.where);
      break;
    case kPqDeltaByteArray:
      if (type == PqType::ByteArray || type == PqType::FixedLenByteArray) {
        return decode_pq_delta_byte_array(bytes, count, s.arena, page_size * 64 + (16u << 20),
                                          s.values, s.where);
      }
      break;
    case kPqByteStreamSplit:
      return decode_pq_byte_stream_split(bytes, s.leaf, count, s.values, s.arena, s.where);
    default:
      break;
  }
  VLBIAS_FAIL(InputError,
              "{}: values are encoded as {} ({}), which the reader does not support for {} "
              "columns",
              s.where, pq_encoding_name(encoding), encoding, pq_type_name(s.leaf.element.type));
}

// Definition levels -> s.present (empty when no row is null); returns the number of rows
// that are not null.
std::size_t read_pq_levels(PqChunkState& s, PqBytes levels, std::size_t count) {
  s.present.clear();
  if (s.leaf.max_def == 0) return count;
  PqHybridReader reader(levels, static_cast<int>(pq_level_width(s.leaf.max_def)), s.where);
  s.levels.clear();
  reader.read(count, s.levels);
  s.present.resize(count);
  std::size_t defined = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t level = s.levels[i];
    VLBIAS_CHECK(level <= static_cast<std::uint32_t>(s.leaf.max_def), InputError,
                 "{}: a definition level of {} exceeds the column's maximum {}", s.where, level,
                 s.leaf.max_def);
    s.present[i] = level == static_cast<std::uint32_t>(s.leaf.max_def);
    defined += s.present[i];
  }
  if (defined == count) s.present.clear();  // no null: the page's values are its rows
  return defined;
}

// One data page (v1 or v2) of `count` rows: levels, then values.
void read_pq_data_page(PqChunkState& s, const PqPageHeader& h, PqBytes body, std::size_t count) {
  s.values.clear();
  std::size_t defined = 0;
  PqBytes values;
  std::size_t page_size = 0;
  if (h.type == kPqDataPage) {
    const PqBytes page = pq_page_bytes(s, body, h.uncompressed_size, true);
    page_size = page.size();
    std::size_t pos = 0;
    PqBytes levels;
    if (s.leaf.max_def > 0) {
      VLBIAS_CHECK(h.def_encoding == kPqRle, InputError,
                   "{}: definition levels are encoded as {}; expected RLE", s.where,
                   pq_encoding_name(h.def_encoding));
      VLBIAS_CHECK(page.size() >= 4, InputError, "{}: a data page is cut off", s.where);
      std::uint32_t n;
      std::memcpy(&n, page.data(), 4);
      VLBIAS_CHECK(n <= page.size() - 4, InputError,
                   "{}: the definition levels claim {} bytes but the page holds {}", s.where, n,
                   page.size() - 4);
      levels = page.subspan(4, n);
      pos = 4 + n;
    }
    defined = read_pq_levels(s, levels, count);
    values = page.subspan(pos);
  } else {
    VLBIAS_CHECK(h.def_length >= 0 && h.rep_length == 0 &&
                     h.def_length <= static_cast<std::int64_t>(body.size()),
                 InputError, "{}: a v2 data page declares {} bytes of levels but holds {}", s.where,
                 h.def_length + h.rep_length, body.size());
    const std::size_t def = static_cast<std::size_t>(h.def_length);
    defined = read_pq_levels(s, body.first(def), count);
    values =
        pq_page_bytes(s, body.subspan(def), h.uncompressed_size - h.def_length, h.is_compressed);
    page_size = values.size();
  }
  decode_pq_values(s, h.encoding, values, defined, page_size);
}

}  // namespace

void pq_decompress(int codec, PqBytes in, std::span<std::uint8_t> out, const std::string& where) {
  switch (codec) {
    case kPqSnappy: {
      std::size_t n = 0;
      const char* src = reinterpret_cast<const char*>(in.data());
      VLBIAS_CHECK(snappy_uncompressed_length(src, in.size(), &n) == SNAPPY_OK && n == out.size(),
                   InputError, "{}: a SNAPPY page does not hold {} bytes as it declares", where,
                   out.size());
      VLBIAS_CHECK(
          snappy_uncompress(src, in.size(), reinterpret_cast<char*>(out.data()), &n) == SNAPPY_OK &&
              n == out.size(),
          InputError, "{}: a SNAPPY page is corrupt", where);
      return;
    }
    case kPqGzip:
      return inflate_pq_gzip(in, out, where);
    case kPqZstd: {
      const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
      VLBIAS_CHECK(!ZSTD_isError(n) && n == out.size(), InputError,
                   "{}: a ZSTD page does not decompress to its declared {} bytes ({})", where,
                   out.size(), ZSTD_isError(n) ? ZSTD_getErrorName(n) : "it is shorter");
      return;
    }
    default:
      VLBIAS_FAIL(InputError,
                  "{}: pages are compressed with {} ({}), which the reader does not support "
                  "(it reads UNCOMPRESSED, SNAPPY, GZIP and ZSTD)",
                  where, pq_codec_name(codec), codec);
  }
}

void read_pq_chunk(const PqSource& source, const PqColumnMeta& meta, const PqLeaf& leaf,
                   std::int64_t rows, const std::string& where,
                   const std::function<void(const PqPage&)>& on_page) {
  VLBIAS_CHECK(meta.codec == kPqUncompressed || meta.codec == kPqSnappy || meta.codec == kPqGzip ||
                   meta.codec == kPqZstd,
               InputError,
               "{}: pages are compressed with {} ({}), which the reader does not support (it "
               "reads UNCOMPRESSED, SNAPPY, GZIP and ZSTD)",
               where, pq_codec_name(meta.codec), meta.codec);
  std::int64_t start = meta.data_page_offset;
  if (meta.dictionary_page_offset > 0 && meta.dictionary_page_offset < start) {
    start = meta.dictionary_page_offset;
  }
  const auto end = static_cast<std::int64_t>(source.data_end);
  VLBIAS_CHECK(start >= 4 && start <= end && meta.total_compressed_size >= 0 &&
                   meta.total_compressed_size <= end - start,
               InputError,
               "{}: the column chunk lies at bytes {} to {}+{}, outside the file's data (4 to {})",
               where, start, start, meta.total_compressed_size, end);
  const PqBytes chunk = source.file.subspan(static_cast<std::size_t>(start),
                                            static_cast<std::size_t>(meta.total_compressed_size));
  PqChunkState s{meta, leaf, where, {}, {}, false, 0, {}, {}, {}, {}, {}};
  std::size_t pos = 0;
  std::int64_t done = 0;
  while (done < rows) {
    VLBIAS_CHECK(pos < chunk.size(), InputError,
                 "{}: the column chunk ends after {} of the row group's {} rows", where, done,
                 rows);
    std::size_t consumed = 0;
    const PqPageHeader h = parse_pq_page_header(chunk.subspan(pos), where, &consumed);
    pos += consumed;
    VLBIAS_CHECK(h.compressed_size >= 0 &&
                     h.compressed_size <= static_cast<std::int64_t>(chunk.size() - pos),
                 InputError, "{}: a page declares {} bytes but its column chunk has {} left", where,
                 h.compressed_size, chunk.size() - pos);
    const PqBytes body = chunk.subspan(pos, static_cast<std::size_t>(h.compressed_size));
    pos += static_cast<std::size_t>(h.compressed_size);
    if (h.type == kPqDictionaryPage) {
      read_pq_dictionary(s, h, body);
    } else if (h.type == kPqDataPage || h.type == kPqDataPageV2) {
      VLBIAS_CHECK(h.num_values >= 0 && h.num_values <= rows - done, InputError,
                   "{}: a data page holds {} values but only {} of the row group's {} rows remain",
                   where, h.num_values, rows - done, rows);
      const auto count = static_cast<std::size_t>(h.num_values);
      read_pq_data_page(s, h, body, count);
      on_page(PqPage{count, &s.present, &s.values});
      done += h.num_values;
    }  // index pages and unknown page types are skipped
  }
}

}  // namespace vlbias::io_internal
