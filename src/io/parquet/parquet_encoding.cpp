// Parquet's value encodings (the format's Encodings.md): PLAIN, the RLE/bit-packed hybrid,
// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT. Every
// count read from the data is checked against the bytes present before anything is reserved.
#include <cstring>

#include <fmt/format.h>

#include "parquet_detail.h"
#include "vlbias/core/error.h"

namespace vlbias::io_internal {

namespace {

std::uint32_t load_pq_u32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (x86-64, aarch64)
}

// ULEB128 at bytes[*pos], at most 64 bits.
std::uint64_t pq_varint(PqBytes bytes, std::size_t* pos, const std::string& where) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    VLBIAS_CHECK(*pos < bytes.size(), InputError, "{}: an encoded integer runs past its page",
                 where);
    const std::uint8_t b = bytes[(*pos)++];
    v |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
  VLBIAS_FAIL(InputError, "{}: an encoded integer is longer than 64 bits", where);
}

std::int64_t pq_zigzag(PqBytes bytes, std::size_t* pos, const std::string& where) {
  const std::uint64_t v = pq_varint(bytes, pos, where);
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// `width` bits (<= 64) at bit `bit` of bytes, least significant first; the caller checked
// that they are present.
std::uint64_t pq_bits(const std::uint8_t* bytes, std::size_t bit, int width) {
  std::uint64_t v = 0;
  int got = 0;
  while (got < width) {
    const std::size_t byte = bit >> 3;
    const int offset = static_cast<int>(bit & 7);
    const int take = std::min(8 - offset, width - got);
    const std::uint64_t part = (bytes[byte] >> offset) & ((1u << take) - 1u);
    v |= part << got;
    got += take;
    bit += static_cast<std::size_t>(take);
  }
  return v;
}

void check_pq_count(std::size_t count, std::size_t bytes_each, std::size_t available,
                    const std::string& where, const char* what) {
  VLBIAS_CHECK(bytes_each == 0 || count <= available / bytes_each, InputError,
               "{}: the page holds {} bytes, too few for {} {} values", where, available, count,
               what);
}

}  // namespace

PqHybridReader::PqHybridReader(PqBytes bytes, int bit_width, const std::string& where)
    : bytes_(bytes), bit_width_(bit_width), where_(where) {
  VLBIAS_CHECK(bit_width >= 0 && bit_width <= 32, InputError,
               "{}: a run of levels or indices has a bit width of {}; expected 0 to 32", where,
               bit_width);
}

void PqHybridReader::read(std::size_t count, std::vector<std::uint32_t>& out) {
  while (count > 0) {
    if (run_left_ > 0) {
      const std::size_t n = std::min(run_left_, count);
      out.insert(out.end(), n, run_value_);
      run_left_ -= n;
      count -= n;
      continue;
    }
    if (packed_left_ > 0) {
      const std::size_t n = std::min(packed_left_, count);
      for (std::size_t i = 0; i < n; ++i) {
        out.push_back(static_cast<std::uint32_t>(pq_bits(bytes_.data(), packed_bit_, bit_width_)));
        packed_bit_ += static_cast<std::size_t>(bit_width_);
      }
      packed_left_ -= n;
      count -= n;
      continue;
    }
    VLBIAS_CHECK(pos_ < bytes_.size(), InputError,
                 "{}: the encoded levels or indices end {} values early", where_, count);
    const std::uint64_t header = pq_varint(bytes_, &pos_, where_);
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8 values
      const std::uint64_t groups = header >> 1;
      const std::size_t left = bytes_.size() - pos_;
      const std::size_t width = static_cast<std::size_t>(bit_width_);
      std::size_t take = 0, values = 0;
      if (width == 0) {
        values = static_cast<std::size_t>(std::min<std::uint64_t>(groups, SIZE_MAX / 8)) * 8;
      } else if (groups <= left / width) {
        take = static_cast<std::size_t>(groups) * width;
        values = static_cast<std::size_t>(groups) * 8;
      } else {  // writers may cut the last run short: only the whole values present are read
        take = left;
        values = left * 8 / width;
        VLBIAS_CHECK(values > 0, InputError,
                     "{}: a bit-packed run is cut off at the end of its page", where_);
      }
      packed_bit_ = pos_ * 8;
      packed_left_ = values;
      pos_ += take;
    } else {  // RLE: (header >> 1) copies of one value in ceil(bit_width / 8) bytes
      const std::size_t width = static_cast<std::size_t>(bit_width_ + 7) / 8;
      VLBIAS_CHECK(width <= bytes_.size() - pos_, InputError,
                   "{}: an RLE run is cut off at the end of its page", where_);
      std::uint32_t v = 0;
      for (std::size_t b = 0; b < width; ++b) v |= std::uint32_t{bytes_[pos_ + b]} << (8 * b);
      pos_ += width;
      VLBIAS_CHECK(bit_width_ == 32 || v < (std::uint64_t{1} << bit_width_), InputError,
                   "{}: an RLE run repeats {}, which does not fit its bit width {}", where_, v,
                   bit_width_);
      run_value_ = v;
      run_left_ = static_cast<std::size_t>(std::min<std::uint64_t>(header >> 1, SIZE_MAX));
      if (run_left_ == 0) continue;
    }
  }
}

void decode_pq_plain(PqBytes bytes, const PqLeaf& leaf, std::size_t count, PqValues& out,
                     const std::string& where) {
  const std::uint8_t* p = bytes.data();
  switch (static_cast<PqType>(leaf.element.type)) {
    case PqType::Boolean:
      check_pq_count((count + 7) / 8, 1, bytes.size(), where, "BOOLEAN");
      for (std::size_t i = 0; i < count; ++i) out.ints.push_back((p[i >> 3] >> (i & 7)) & 1);
      return;
    case PqType::Int32:
      check_pq_count(count, 4, bytes.size(), where, "INT32");
      for (std::size_t i = 0; i < count; ++i) {
        out.ints.push_back(static_cast<std::int32_t>(load_pq_u32(p + 4 * i)));
      }
      return;
    case PqType::Int64:
      check_pq_count(count, 8, bytes.size(), where, "INT64");
      for (std::size_t i = 0; i < count; ++i) {
        std::int64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        out.ints.push_back(v);
      }
      return;
    case PqType::Float:
      check_pq_count(count, 4, bytes.size(), where, "FLOAT");
      for (std::size_t i = 0; i < count; ++i) {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        out.reals.push_back(v);
      }
      return;
    case PqType::Double:
      check_pq_count(count, 8, bytes.size(), where, "DOUBLE");
      for (std::size_t i = 0; i < count; ++i) {
        double v;
        std::memcpy(&v, p + 8 * i, 8);
        out.reals.push_back(v);
      }
      return;
    case PqType::ByteArray: {
      check_pq_count(count, 4, bytes.size(), where, "BYTE_ARRAY");
      std::size_t pos = 0;
      for (std::size_t i = 0; i < count; ++i) {
        VLBIAS_CHECK(bytes.size() - pos >= 4, InputError, "{}: value {} is cut off", where, i + 1);
        const std::uint32_t n = load_pq_u32(p + pos);
        pos += 4;
        VLBIAS_CHECK(n <= bytes.size() - pos, InputError,
                     "{}: value {} claims {} bytes but only {} remain in its page", where, i + 1, n,
                     bytes.size() - pos);
        out.bytes.emplace_back(reinterpret_cast<const char*>(p + pos), n);
        pos += n;
      }
      return;
    }
    case PqType::FixedLenByteArray:
    case PqType::Int96: {
      const std::size_t width = leaf.element.type == static_cast<int>(PqType::Int96)
                                    ? 12
                                    : static_cast<std::size_t>(leaf.element.type_length);
      check_pq_count(count, width, bytes.size(), where, pq_type_name(leaf.element.type));
      for (std::size_t i = 0; i < count; ++i) {
        out.bytes.emplace_back(reinterpret_cast<const char*>(p + i * width), width);
      }
      return;
    }
  }
  VLBIAS_FAIL(InputError, "{}: unknown physical type {}", where, leaf.element.type);
}

void decode_pq_delta_binary(PqBytes bytes, std::size_t count, bool is_int32,
                            std::vector<std::int64_t>& out, std::size_t* consumed,
                            const std::string& where) {
  std::size_t pos = 0;
  const std::uint64_t block_size = pq_varint(bytes, &pos, where);
  const std::uint64_t miniblocks = pq_varint(bytes, &pos, where);
  const std::uint64_t total = pq_varint(bytes, &pos, where);
  std::uint64_t value = static_cast<std::uint64_t>(pq_zigzag(bytes, &pos, where));
  VLBIAS_CHECK(
      block_size > 0 && block_size % 128 == 0 && block_size <= (1u << 20) && miniblocks > 0 &&
          block_size % miniblocks == 0 && (block_size / miniblocks) % 32 == 0,
      InputError,
      "{}: a DELTA_BINARY_PACKED header has blocks of {} values in {} miniblocks; expected "
      "a multiple of 128 in miniblocks of a multiple of 32",
      where, block_size, miniblocks);
  VLBIAS_CHECK(total >= count, InputError,
               "{}: DELTA_BINARY_PACKED data holds {} values where {} are expected", where, total,
               count);
  const std::size_t per_mini = static_cast<std::size_t>(block_size / miniblocks);
  const int max_width = is_int32 ? 32 : 64;
  std::size_t done = 0;
  if (total > 0 && count > 0) {
    out.push_back(is_int32 ? static_cast<std::int32_t>(value) : static_cast<std::int64_t>(value));
    ++done;
  }
  // Values beyond `count` are not decoded, but their blocks are skipped to find the end.
  std::size_t left =
      total > 0 ? static_cast<std::size_t>(std::min<std::uint64_t>(total - 1, SIZE_MAX)) : 0;
  while (left > 0) {
    const std::uint64_t min_delta = static_cast<std::uint64_t>(pq_zigzag(bytes, &pos, where));
    VLBIAS_CHECK(miniblocks <= bytes.size() - pos, InputError,
                 "{}: a DELTA_BINARY_PACKED block is cut off", where);
    const std::uint8_t* widths = bytes.data() + pos;
    pos += miniblocks;
    for (std::uint64_t m = 0; m < miniblocks && left > 0; ++m) {
      const int width = widths[m];
      VLBIAS_CHECK(width <= max_width, InputError,
                   "{}: a DELTA_BINARY_PACKED miniblock has a bit width of {}; expected at most {}",
                   where, width, max_width);
      const std::size_t mini_bytes = per_mini * static_cast<std::size_t>(width) / 8;
      VLBIAS_CHECK(mini_bytes <= bytes.size() - pos, InputError,
                   "{}: a DELTA_BINARY_PACKED miniblock is cut off", where);
      const std::size_t n = std::min(per_mini, left);
      for (std::size_t i = 0; i < n && done < count; ++i, ++done) {
        const std::uint64_t delta =
            pq_bits(bytes.data() + pos, i * static_cast<std::size_t>(width), width);
        value += min_delta + delta;  // wraps, as the format's arithmetic does
        out.push_back(is_int32 ? static_cast<std::int32_t>(value)
                               : static_cast<std::int64_t>(value));
      }
      left -= n;
      pos += mini_bytes;
    }
  }
  if (consumed != nullptr) *consumed = pos;
}

void decode_pq_delta_length(PqBytes bytes, std::size_t count, PqValues& out,
                            const std::string& where) {
  std::vector<std::int64_t> lengths;
  std::size_t pos = 0;
  decode_pq_delta_binary(bytes, count, true, lengths, &pos, where);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t n = lengths[i];
    VLBIAS_CHECK(n >= 0 && static_cast<std::uint64_t>(n) <= bytes.size() - pos, InputError,
                 "{}: value {} claims {} bytes but only {} remain in its page", where, i + 1, n,
                 bytes.size() - pos);
    out.bytes.emplace_back(reinterpret_cast<const char*>(bytes.data() + pos),
                           static_cast<std::size_t>(n));
    pos += static_cast<std::size_t>(n);
  }
}

void decode_pq_delta_byte_array(PqBytes bytes, std::size_t count, std::string& arena,
                                std::size_t max_bytes, PqValues& out, const std::string& where) {
  std::vector<std::int64_t> prefixes;
  std::size_t pos = 0;
  decode_pq_delta_binary(bytes, count, true, prefixes, &pos, where);
  PqValues suffixes;
  decode_pq_delta_length(bytes.subspan(pos), count, suffixes, where);
  // Sizes first, so that the arena is reserved once and bounded.
  std::uint64_t total = 0, previous = 0;
  for (std::size_t i = 0; i < count; ++i) {
    VLBIAS_CHECK(prefixes[i] >= 0 && static_cast<std::uint64_t>(prefixes[i]) <= previous,
                 InputError,
                 "{}: DELTA_BYTE_ARRAY value {} shares a prefix of {} bytes with a value of {}",
                 where, i + 1, prefixes[i], previous);
    previous = static_cast<std::uint64_t>(prefixes[i]) + suffixes.bytes[i].size();
    total += previous;
    VLBIAS_CHECK(total <= max_bytes, InputError,
                 "{}: DELTA_BYTE_ARRAY values grow past {} bytes, more than the reader allows for "
                 "one page",
                 where, max_bytes);
  }
  arena.clear();
  arena.reserve(static_cast<std::size_t>(total));
  std::size_t start = 0, length = 0;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  spans.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t prefix = static_cast<std::size_t>(prefixes[i]);
    const std::size_t next = arena.size();
    arena.append(arena, start, prefix);
    arena.append(suffixes.bytes[i]);
    start = next;
    length = arena.size() - next;
    spans.emplace_back(start, length);
  }
  for (const auto& [s, n] : spans) out.bytes.emplace_back(arena.data() + s, n);
}

void decode_pq_byte_stream_split(PqBytes bytes, const PqLeaf& leaf, std::size_t count,
                                 PqValues& out, std::string& arena, const std::string& where) {
  const auto type = static_cast<PqType>(leaf.element.type);
  std::size_t width = 0;
  if (type == PqType::Float || type == PqType::Int32) width = 4;
  if (type == PqType::Double || type == PqType::Int64) width = 8;
  if (type == PqType::FixedLenByteArray) width = static_cast<std::size_t>(leaf.element.type_length);
  VLBIAS_CHECK(width > 0, InputError, "{}: BYTE_STREAM_SPLIT does not apply to {} values", where,
               pq_type_name(leaf.element.type));
  check_pq_count(count, width, bytes.size(), where, "BYTE_STREAM_SPLIT");
  arena.assign(count * width, '\0');
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t k = 0; k < width; ++k)
      arena[i * width + k] = static_cast<char>(bytes[k * count + i]);
  }
  PqLeaf plain = leaf;
  decode_pq_plain(PqBytes(reinterpret_cast<const std::uint8_t*>(arena.data()), arena.size()), plain,
                  count, out, where);
}

}  // namespace vlbias::io_internal
