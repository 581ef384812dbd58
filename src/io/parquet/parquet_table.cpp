// Parquet columns as table columns (the data convention of include/vlbias/io/parquet/parquet.h),
// and a folder of shards as one table.
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "parquet_detail.h"
#include "table/table_detail.h"
#include "vlbias/core/error.h"
#include "vlbias/core/utf8.h"
#include "vlbias/io/parquet/parquet.h"
#include "vlbias/io/table/string_index.h"

namespace vlbias::io_internal {

namespace {

std::int64_t floor_div_pq(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Days since 1970-01-01 as "YYYY-MM-DD" (the proleptic Gregorian calendar: days counted in
// 400-year eras of 146097 days, years starting in March so that the leap day comes last).
std::string pq_date_text(std::int64_t days) {
  const std::int64_t z = days + 719468;
  const std::int64_t era = floor_div_pq(z, 146097);
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return fmt::format("{:04}-{:02}-{:02}", year, month, day);
}

// "HH:MM:SS" and a fraction without trailing zeros, from a count of `unit` since midnight.
std::string pq_clock_text(std::int64_t seconds_of_day, std::int64_t fraction, int digits) {
  std::string out = fmt::format("{:02}:{:02}:{:02}", seconds_of_day / 3600,
                                seconds_of_day / 60 % 60, seconds_of_day % 60);
  if (fraction != 0) {
    std::string f = fmt::format("{:0{}}", fraction, digits);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

std::int64_t pq_unit_per_second(int unit, int& digits) {
  digits = unit == 1 ? 3 : unit == 3 ? 9 : 6;
  return unit == 1 ? 1000 : unit == 3 ? 1000000000 : 1000000;
}

// `v` units since 1970-01-01 00:00 (no multiplication: any int64 is safe).
std::string pq_timestamp_text(std::int64_t v, int unit, bool utc) {
  int digits = 0;
  const std::int64_t per = pq_unit_per_second(unit, digits);
  std::int64_t seconds = v / per, fraction = v % per;
  if (fraction < 0) fraction += per, --seconds;
  std::int64_t days = seconds / 86400, second_of_day = seconds % 86400;
  if (second_of_day < 0) second_of_day += 86400, --days;
  std::string out = pq_date_text(days) + " " + pq_clock_text(second_of_day, fraction, digits);
  return utc ? out + "+00" : out;
}

// INT96 (legacy Impala/Spark timestamps): nanoseconds of the day, then the Julian day number,
// little-endian; Julian day 2440588 is 1970-01-01.
std::string pq_int96_text(std::string_view b, const std::string& where, std::size_t row) {
  std::int64_t nanos;
  std::int32_t julian;
  std::memcpy(&nanos, b.data(), 8);
  std::memcpy(&julian, b.data() + 8, 4);
  constexpr std::int64_t kNanosPerDay = std::int64_t{86400} * 1000000000;
  VLBIAS_CHECK(nanos >= 0 && nanos < kNanosPerDay, InputError,
               "{} holds an INT96 timestamp at row {} whose time of day ({} ns) is outside one day",
               where, row, nanos);
  return pq_date_text(std::int64_t{julian} - 2440588) + " " +
         pq_clock_text(nanos / 1000000000, nanos % 1000000000, 9);
}

double pq_pow10(int scale) {
  return std::pow(10.0, scale);
}

// A big-endian two's complement integer (DECIMAL in bytes) as a double.
double pq_big_endian_number(std::string_view bytes) {
  if (bytes.empty()) return 0;
  if (bytes.size() <= 16) {
    __int128 v = static_cast<signed char>(bytes[0]);  // sign-extends
    for (std::size_t i = 1; i < bytes.size(); ++i) {
      v = v * 256 + static_cast<unsigned char>(bytes[i]);
    }
    return static_cast<double>(v);
  }
  double v = static_cast<signed char>(bytes[0]);
  for (std::size_t i = 1; i < bytes.size(); ++i) v = v * 256 + static_cast<unsigned char>(bytes[i]);
  return v;
}

float pq_half_to_float(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float v = 0;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    v = mantissa == 0 ? INFINITY : NAN;
  } else {
    v = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  }
  return sign ? -v : v;
}

// A float as the double nearest its shortest decimal text (0.1f -> 0.1).
double pq_float_as_double(float f) {
  if (!std::isfinite(f)) return f;
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, f);
  double v = f;
  std::from_chars(buffer, written.ptr, v);
  return v;
}

std::string pq_uuid_text(std::string_view b) {
  std::string out;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(b[i]));
  }
  return out;
}

// One table column being filled from a leaf's pages. Dictionary-encoded pages convert each
// dictionary value once: the codes (text) are cached per dictionary, and filled in the order
// the rows first use them, so that levels keep the order of first appearance.
class PqColumnBuilder {
 public:
  PqColumnBuilder(const PqFile& file, const PqLeaf& leaf)
      : file_(file), leaf_(leaf), kind_(pq_cell_kind(leaf)) {
    const PqSchemaElement& e = leaf.element;
    column_.name = leaf.name;
    scale_ = e.logical.kind == kPqLogicalDecimal ? e.logical.scale : e.scale;
    unit_ = e.logical.unit;
    utc_ = e.logical.utc;
    if (e.logical.kind == 0) {
      unit_ = e.converted == kPqTimestampMillis || e.converted == kPqTimeMillis ? 1 : 2;
    }
    VLBIAS_CHECK(scale_ >= 0 && scale_ <= 76, InputError,
                 "{}: column '{}' is a DECIMAL of scale {}; expected 0 to 76", file.where,
                 leaf.name, scale_);
    const bool text = kind_ == PqCell::Bool || kind_ == PqCell::Date ||
                      kind_ == PqCell::Timestamp || kind_ == PqCell::Time ||
                      kind_ == PqCell::Text || kind_ == PqCell::Uuid || kind_ == PqCell::Int96;
    column_.type = text ? ColumnType::String : ColumnType::Numeric;
    const auto rows = static_cast<std::size_t>(file.meta.num_rows);  // bounded by check_cells
    if (text) {
      column_.codes.reserve(rows);
    } else {
      column_.numbers.reserve(rows);
    }
  }

  void add_page(const PqPage& page) {
    const PqValues& values = *page.values;
    const PqValues* dict = values.dictionary;
    if (dict != nullptr && values.dictionary_id != dictionary_id_) {
      dictionary_id_ = values.dictionary_id;
      dictionary_codes_.assign(column_.type == ColumnType::String ? dict->size() : 0, kUnset);
    }
    const bool all_present = page.present->empty();
    if (all_present && dict == nullptr && kind_ == PqCell::Number) {
      add_plain_numbers(values, page.count);
      return;
    }
    std::size_t v = 0;
    for (std::size_t r = 0; r < page.count; ++r, ++row_) {
      if (!all_present && (*page.present)[r] == 0) {
        if (column_.type == ColumnType::Numeric) {
          column_.numbers.push_back(kNaN);
        } else {
          column_.codes.push_back(Column::kMissing);
        }
        continue;
      }
      const std::size_t i = v++;
      if (column_.type == ColumnType::Numeric) {
        add_number(dict != nullptr ? number(*dict, values.indices[i]) : number(values, i));
      } else if (dict == nullptr) {
        column_.codes.push_back(code(values, i));
      } else {
        std::uint32_t& cached = dictionary_codes_[values.indices[i]];
        if (cached == kUnset) cached = code(*dict, values.indices[i]);
        column_.codes.push_back(cached);
      }
    }
  }

  Column finish() {
    if (column_.type == ColumnType::Numeric && !special_rows_.empty()) {
      // NaN or an infinity: the column is text, as CSV would have it.
      std::vector<bool> special(column_.numbers.size());
      for (const std::size_t r : special_rows_) special[r] = true;
      Column text;
      text.name = column_.name;
      text.type = ColumnType::String;
      Dictionary dict;
      for (std::size_t r = 0; r < column_.numbers.size(); ++r) {
        const double x = column_.numbers[r];
        if (std::isnan(x) && !special[r]) {
          text.codes.push_back(Column::kMissing);
          continue;
        }
        const std::string s = std::isnan(x)   ? "nan"
                              : std::isinf(x) ? (x > 0 ? "inf" : "-inf")
                                              : column_.text(r);
        text.codes.push_back(dict.intern(text.levels, s));
      }
      return text;
    }
    return std::move(column_);
  }

 private:
  static constexpr std::uint32_t kUnset = Column::kMissing - 1;

  void add_number(double x) {
    if (!std::isfinite(x)) special_rows_.push_back(column_.numbers.size());
    column_.numbers.push_back(x);
  }

  // A page of INT32, INT64 or DOUBLE values without nulls, appended whole.
  void add_plain_numbers(const PqValues& values, std::size_t count) {
    const std::size_t start = column_.numbers.size();
    if (!values.reals.empty()) {
      column_.numbers.insert(column_.numbers.end(), values.reals.begin(),
                             values.reals.begin() + static_cast<std::ptrdiff_t>(count));
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        column_.numbers.push_back(static_cast<double>(values.ints[i]));
      }
    }
    for (std::size_t r = start; r < column_.numbers.size(); ++r) {
      if (!std::isfinite(column_.numbers[r])) special_rows_.push_back(r);
    }
    row_ += count;
  }

  // The level code of a text (kMissing for ""), checking new levels for UTF-8.
  std::uint32_t text_code(std::string_view s) {
    if (s.empty()) return Column::kMissing;
    const std::size_t before = column_.levels.size();
    const std::uint32_t c = dict_.intern(column_.levels, s);
    if (column_.levels.size() > before) {
      const std::size_t bad = first_invalid_utf8(s);
      VLBIAS_CHECK(bad == s.size(), InputError,
                   "{}: column '{}' holds text that is not valid UTF-8 at row {} (byte {})",
                   file_.where, leaf_.name, row_ + 1, bad);
    }
    return c;
  }

  // Value i of `values` (a page's or a dictionary's) for a Numeric column.
  double number(const PqValues& values, std::size_t i) const {
    switch (kind_) {
      case PqCell::Number:
        return values.reals.empty() ? static_cast<double>(values.ints[i]) : values.reals[i];
      case PqCell::Float32:
        return pq_float_as_double(static_cast<float>(values.reals[i]));
      case PqCell::Unsigned:
        return leaf_.element.type == static_cast<int>(PqType::Int32)
                   ? static_cast<double>(static_cast<std::uint32_t>(values.ints[i]))
                   : static_cast<double>(static_cast<std::uint64_t>(values.ints[i]));
      case PqCell::Decimal: {
        const double unscaled = values.bytes.empty() ? static_cast<double>(values.ints[i])
                                                     : pq_big_endian_number(values.bytes[i]);
        return unscaled / pq_pow10(scale_);
      }
      case PqCell::Float16: {
        std::uint16_t h;
        std::memcpy(&h, values.bytes[i].data(), 2);
        return pq_float_as_double(pq_half_to_float(h));
      }
      default:
        break;
    }
    VLBIAS_FAIL(InternalError, "column '{}' of {} is not numeric", leaf_.name, file_.where);
  }

  // Value i of `values` for a String column: its level code.
  std::uint32_t code(const PqValues& values, std::size_t i) {
    switch (kind_) {
      case PqCell::Bool:
        return text_code(values.ints[i] != 0 ? "true" : "false");
      case PqCell::Date:
        return text_code(pq_date_text(values.ints[i]));
      case PqCell::Timestamp:
        return text_code(pq_timestamp_text(values.ints[i], unit_, utc_));
      case PqCell::Time: {
        int digits = 0;
        const std::int64_t per = pq_unit_per_second(unit_, digits);
        const std::int64_t v = values.ints[i];
        VLBIAS_CHECK(v >= 0 && v <= 86400 * per, InputError,
                     "{}: column '{}' holds a TIME of {} at row {}, outside one day", file_.where,
                     leaf_.name, v, row_ + 1);
        return text_code(pq_clock_text(v / per, v % per, digits));
      }
      case PqCell::Text:
        return text_code(values.bytes[i]);
      case PqCell::Int96:
        return text_code(
            pq_int96_text(values.bytes[i], file_.where + " column '" + leaf_.name + "'", row_ + 1));
      case PqCell::Uuid:
        return text_code(pq_uuid_text(values.bytes[i]));
      default:
        break;
    }
    VLBIAS_FAIL(InternalError, "column '{}' of {} is not text", leaf_.name, file_.where);
  }

  const PqFile& file_;
  const PqLeaf& leaf_;
  PqCell kind_;
  int scale_ = 0, unit_ = 2;
  bool utc_ = false;
  Column column_;
  Dictionary dict_;
  std::vector<std::size_t> special_rows_;  // rows of a Numeric column holding NaN or infinity
  std::size_t row_ = 0;
  std::uint64_t dictionary_id_ = 0;
  std::vector<std::uint32_t> dictionary_codes_;  // per dictionary value, kUnset until used
};

Table read_pq_file_table(const PqFile& file, const std::vector<std::string>& names) {
  std::vector<const PqLeaf*> chosen;
  if (names.empty()) {
    for (const PqLeaf& leaf : file.leaves) {
      if (pq_cell_kind(leaf) != PqCell::Binary) chosen.push_back(&leaf);
    }
  } else {
    for (const std::string& name : names) {
      const PqLeaf& leaf = file.leaf(name);
      VLBIAS_CHECK(pq_cell_kind(leaf) != PqCell::Binary, InputError,
                   "{}: column '{}' holds binary data ({}), which a table does not hold; read "
                   "its cells as bytes",
                   file.where, name, pq_type_name(leaf.element.type));
      chosen.push_back(&leaf);
    }
  }
  file.check_cells(chosen.size());
  Table table;
  table.source = file.path;
  table.rows = static_cast<std::size_t>(file.meta.num_rows);
  for (const PqLeaf* leaf : chosen) {
    VLBIAS_CHECK(!table.find(leaf->name), InputError, "{} has two columns named '{}'", file.where,
                 leaf->name);
    PqColumnBuilder builder(file, *leaf);
    file.read_column(*leaf, [&](const PqPage& page) { builder.add_page(page); });
    table.columns.push_back(builder.finish());
  }
  return table;
}

// A Numeric column as text (its cells' shortest texts), to join a String column of a shard.
void pq_column_to_text(Column& c) {
  if (c.type == ColumnType::String) return;
  Column text;
  text.name = c.name;
  Dictionary dict;
  for (std::size_t r = 0; r < c.numbers.size(); ++r) {
    text.codes.push_back(c.missing(r) ? Column::kMissing : dict.intern(text.levels, c.text(r)));
  }
  c = std::move(text);
}

// Appends `part` (the next shard) to `into`, column by column.
void append_pq_shard(Table& into, Table&& part, const std::string& shard) {
  VLBIAS_CHECK(part.columns.size() == into.columns.size(), InputError,
               "the shard '{}' has {} columns but the first shard has {}", shard,
               part.columns.size(), into.columns.size());
  for (std::size_t c = 0; c < into.columns.size(); ++c) {
    Column& a = into.columns[c];
    Column& b = part.columns[c];
    VLBIAS_CHECK(a.name == b.name, InputError,
                 "the shard '{}' has column '{}' where the first shard has '{}'", shard, b.name,
                 a.name);
    if (a.type != b.type) {
      pq_column_to_text(a);
      pq_column_to_text(b);
    }
    if (a.type == ColumnType::Numeric) {
      a.numbers.insert(a.numbers.end(), b.numbers.begin(), b.numbers.end());
      continue;
    }
    Dictionary dict;
    dict.rebuild(a.levels);
    std::vector<std::uint32_t> recode(b.levels.size());
    for (std::size_t l = 0; l < b.levels.size(); ++l)
      recode[l] = dict.intern(a.levels, b.levels[l]);
    for (const std::uint32_t code : b.codes) {
      a.codes.push_back(code == Column::kMissing ? Column::kMissing : recode[code]);
    }
  }
  into.rows += part.rows;
}

}  // namespace

PqCell pq_cell_kind(const PqLeaf& leaf) {
  const PqSchemaElement& e = leaf.element;
  const int logical = e.logical.kind;
  const int converted = e.converted;
  const bool decimal = logical == kPqLogicalDecimal || (logical == 0 && converted == kPqDecimal);
  switch (static_cast<PqType>(e.type)) {
    case PqType::Boolean:
      return PqCell::Bool;
    case PqType::Int32:
    case PqType::Int64:
      if (decimal) return PqCell::Decimal;
      if ((logical == kPqLogicalDate || (logical == 0 && converted == kPqDate)) &&
          e.type == static_cast<int>(PqType::Int32)) {
        return PqCell::Date;
      }
      if (logical == kPqLogicalTimestamp ||
          (logical == 0 && (converted == kPqTimestampMillis || converted == kPqTimestampMicros))) {
        return PqCell::Timestamp;
      }
      if (logical == kPqLogicalTime ||
          (logical == 0 && (converted == kPqTimeMillis || converted == kPqTimeMicros))) {
        return PqCell::Time;
      }
      if ((logical == kPqLogicalInteger && !e.logical.is_signed) ||
          (logical == 0 && converted >= kPqUint8 && converted <= kPqUint64)) {
        return PqCell::Unsigned;
      }
      return PqCell::Number;
    case PqType::Int96:
      return PqCell::Int96;
    case PqType::Float:
      return PqCell::Float32;
    case PqType::Double:
      return PqCell::Number;
    case PqType::ByteArray:
      if (decimal) return PqCell::Decimal;
      if (logical == kPqLogicalString || logical == kPqLogicalEnum || logical == kPqLogicalJson ||
          (logical == 0 &&
           (converted == kPqUtf8 || converted == kPqEnum || converted == kPqJson))) {
        return PqCell::Text;
      }
      return PqCell::Binary;
    case PqType::FixedLenByteArray:
      if (decimal) return PqCell::Decimal;
      if (logical == kPqLogicalUuid && e.type_length == 16) return PqCell::Uuid;
      if (logical == kPqLogicalFloat16 && e.type_length == 2) return PqCell::Float16;
      return PqCell::Binary;
  }
  return PqCell::Binary;
}

}  // namespace vlbias::io_internal

namespace vlbias {

Table read_parquet(const std::string& path, const std::vector<std::string>& columns) {
  const std::vector<std::string> files = io_internal::pq_inputs(path);
  Table table = io_internal::read_pq_file_table(io_internal::PqFile(files[0]), columns);
  for (std::size_t f = 1; f < files.size(); ++f) {
    io_internal::append_pq_shard(
        table, io_internal::read_pq_file_table(io_internal::PqFile(files[f]), columns), files[f]);
  }
  table.source = path;
  return table;
}

Table parse_parquet(std::span<const std::uint8_t> bytes, const std::string& source,
                    const std::vector<std::string>& columns) {
  return io_internal::read_pq_file_table(io_internal::PqFile(bytes, source), columns);
}

}  // namespace vlbias
