#include "vlbias/io/tensor/npy.h"

#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "float_decode.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/cell_text.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"

namespace vlbias {

namespace {

constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// numpy reads at most 10000 header bytes by default; a generous cap still
// bounds the work a hostile length can cause.
constexpr std::size_t kMaxNpyHeaderBytes = std::size_t{1} << 20;
constexpr int kMaxNesting = 32;
constexpr const char* kAccepted =
    "vlbias reads float arrays only: '<f4' (float32), '<f2' (float16) or '<f8' (float64), "
    "either byte order";

std::string npy_shape_text(std::span<const std::size_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// ---------------------------------------------------------------------------
// The header is a Python dict literal. This parses the subset np.save and
// other writers produce (strings, integers with an optional Python 2 'L'
// suffix, True/False/None, tuples, lists, dicts), in any key order and
// spacing, with trailing commas. Anything else is an error, never evaluated.

struct PyValue {
  enum class Kind { Str, Int, Bool, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string str;  // Str
  bool negative = false;
  bool too_big = false;       // Int beyond 64 bits
  std::uint64_t integer = 0;  // Int magnitude
  bool boolean = false;
  std::vector<PyValue> items;     // Tuple, List; Dict values
  std::vector<std::string> keys;  // Dict keys, parallel to items
};

const char* kind_name(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::Str:
      return "a string";
    case PyValue::Kind::Int:
      return "an integer";
    case PyValue::Kind::Bool:
      return "a boolean";
    case PyValue::Kind::None:
      return "None";
    case PyValue::Kind::Tuple:
      return "a tuple";
    case PyValue::Kind::List:
      return "a list";
    case PyValue::Kind::Dict:
      return "a dict";
  }
  return "a value";
}

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view source) : s_(text), source_(source) {}

  PyValue parse() {
    PyValue v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("the end of the header after the dictionary");
    return v;
  }

 private:
  [[noreturn]] void fail(std::string_view expected) {
    const std::string found = pos_ < s_.size()
                                  ? fmt::format("'{}'", escape_for_message(s_.substr(pos_, 1), 8))
                                  : std::string("the end of the header");
    VLBIAS_FAIL(InputError,
                "'{}' has a malformed .npy header: expected {} at character {} but found {} "
                "(header: {})",
                source_, expected, pos_, found, escape_for_message(s_, 80));
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r' || s_[pos_] == '\f' || s_[pos_] == '\v')) {
      ++pos_;
    }
  }

  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  PyValue value(int depth) {
    if (depth > kMaxNesting) fail("at most 32 levels of nesting");
    skip_space();
    if (pos_ >= s_.size()) fail("a value");
    const char c = s_[pos_];
    if (c == '\'' || c == '"') return string_value();
    if (c == '-' || (c >= '0' && c <= '9')) return int_value();
    if (c == '(') return sequence(depth, ')', PyValue::Kind::Tuple);
    if (c == '[') return sequence(depth, ']', PyValue::Kind::List);
    if (c == '{') return dict(depth);
    PyValue v;
    if (keyword("True")) {
      v.kind = PyValue::Kind::Bool;
      v.boolean = true;
    } else if (keyword("False")) {
      v.kind = PyValue::Kind::Bool;
    } else if (keyword("None")) {
      v.kind = PyValue::Kind::None;
    } else {
      fail("a string, number, True, False, None, tuple, list or dict");
    }
    return v;
  }

  static bool ident_char(char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }

  bool keyword(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    const std::size_t end = pos_ + word.size();
    if (end < s_.size() && ident_char(s_[end])) return false;
    pos_ = end;
    return true;
  }

  PyValue string_value() {
    const char quote = s_[pos_++];
    PyValue v;
    v.kind = PyValue::Kind::Str;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') fail(fmt::format("a closing {} quote", quote));
      const char c = s_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= s_.size()) fail("a character after the backslash");
        v.str.push_back(s_[pos_++]);
      } else {
        v.str.push_back(c);
      }
    }
    return v;
  }

  PyValue int_value() {
    PyValue v;
    v.kind = PyValue::Kind::Int;
    if (s_[pos_] == '-') {
      v.negative = true;
      ++pos_;
      skip_space();
    }
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail("a digit");
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const std::uint64_t digit = static_cast<std::uint64_t>(s_[pos_] - '0');
      if (v.integer > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) v.too_big = true;
      v.integer = v.integer * 10 + digit;
      ++pos_;
    }
    // Python 2 long suffix, written by old numpy versions.
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;
    if (pos_ < s_.size() && (ident_char(s_[pos_]) || s_[pos_] == '.')) {
      fail("an integer (digits only)");
    }
    return v;
  }

  // '(' ')' is the empty tuple, '(' x ')' is just x, '(' x ',' ... ')' a tuple.
  PyValue sequence(int depth, char close, PyValue::Kind kind) {
    ++pos_;
    PyValue v;
    v.kind = kind;
    if (eat(close)) return v;
    v.items.push_back(value(depth + 1));
    if (kind == PyValue::Kind::Tuple && eat(close)) return std::move(v.items.front());
    while (true) {
      if (eat(close)) return v;
      if (!eat(',')) fail(fmt::format("',' or '{}'", close));
      if (eat(close)) return v;
      v.items.push_back(value(depth + 1));
    }
  }

  PyValue dict(int depth) {
    ++pos_;
    PyValue v;
    v.kind = PyValue::Kind::Dict;
    if (eat('}')) return v;
    while (true) {
      skip_space();
      PyValue key = value(depth + 1);
      if (key.kind != PyValue::Kind::Str) {
        VLBIAS_FAIL(InputError,
                    "'{}' has a malformed .npy header: dictionary keys must be strings, "
                    "found {} (header: {})",
                    source_, kind_name(key.kind), escape_for_message(s_, 80));
      }
      if (!eat(':')) fail("':' after a dictionary key");
      v.keys.push_back(std::move(key.str));
      v.items.push_back(value(depth + 1));
      if (eat('}')) return v;
      if (!eat(',')) fail("',' or '}'");
      if (eat('}')) return v;
    }
  }

  std::string_view s_;
  std::string_view source_;
  std::size_t pos_ = 0;
};

std::string repr(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::Str:
      return fmt::format("'{}'", escape_for_message(v.str, 40));
    case PyValue::Kind::Int:
      return v.too_big ? std::string("a number beyond 64 bits")
                       : fmt::format("{}{}", v.negative ? "-" : "", v.integer);
    case PyValue::Kind::Bool:
      return v.boolean ? "True" : "False";
    case PyValue::Kind::None:
      return "None";
    default:
      return kind_name(v.kind);
  }
}

// What a non-float numpy type code is, for the error message; `size` is the
// item size in bytes when the descr gave one.
std::string describe_dtype(char kind, std::string_view size) {
  const std::string sized = size.empty() ? std::string() : fmt::format("{}-byte ", size);
  switch (kind) {
    case 'b':
    case '?':
      return "boolean";
    case 'i':
      return sized + "signed integer";
    case 'u':
      return sized + "unsigned integer";
    case 'f':
      return sized + "float, not convertible here";
    case 'c':
      return sized + "complex";
    case 'O':
      return "Python objects (pickled)";
    case 'S':
    case 'a':
      return "byte string";
    case 'U':
      return "unicode string";
    case 'V':
      return "raw bytes (void)";
    case 'M':
      return "datetime64";
    case 'm':
      return "timedelta64";
    default:
      return "unrecognised type";
  }
}

void parse_descr(const PyValue& v, std::string_view source, NpyHeader& h) {
  VLBIAS_CHECK(v.kind != PyValue::Kind::List, InputError,
               "'{}' stores a structured dtype (record array with named fields); {}", source,
               kAccepted);
  VLBIAS_CHECK(
      v.kind == PyValue::Kind::Str, InputError,
      "'{}' has a malformed .npy header: 'descr' must be a dtype string like '<f4', got {}", source,
      repr(v));
  const std::string_view d = v.str;
  std::size_t i = 0;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) order = d[i++];
  const char kind = i < d.size() ? d[i++] : '\0';
  const std::string_view digits = d.substr(std::min(i, d.size()));
  const bool all_digits =
      !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
  const bool is_float = kind == 'f' && (digits == "2" || digits == "4" || digits == "8");
  VLBIAS_CHECK(is_float, InputError, "'{}' stores dtype '{}' ({}); {}", source,
               escape_for_message(d, 40), describe_dtype(kind, all_digits ? digits : ""),
               kAccepted);
  h.descr = v.str;
  h.itemsize = static_cast<std::size_t>(digits[0] - '0');
  const bool host_big = std::endian::native == std::endian::big;
  h.big_endian = order == '>' || ((order == '=' || order == '|') && host_big);
}

void parse_shape(const PyValue& v, std::string_view source, NpyHeader& h) {
  VLBIAS_CHECK(v.kind == PyValue::Kind::Tuple, InputError,
               "'{}' has a malformed .npy header: 'shape' must be a tuple of non-negative integers "
               "like (rows, cols), got {}",
               source, repr(v));
  h.shape.clear();
  for (const PyValue& d : v.items) {
    VLBIAS_CHECK(d.kind == PyValue::Kind::Int && !d.negative && !d.too_big, InputError,
                 "'{}' has a malformed .npy header: 'shape' entries must be non-negative "
                 "integers, got {}",
                 source, repr(d));
    VLBIAS_CHECK(d.integer <= std::numeric_limits<std::size_t>::max(), InputError,
                 "'{}' has a .npy shape dimension {} too large for this machine", source,
                 d.integer);
    h.shape.push_back(static_cast<std::size_t>(d.integer));
  }
  // Overflow is checked on the non-zero dimensions, so that the result does
  // not depend on where a zero dimension sits.
  std::size_t bytes = h.itemsize;
  bool zero = false;
  for (std::size_t d : h.shape) {
    if (d == 0) {
      zero = true;
      continue;
    }
    VLBIAS_CHECK(bytes <= std::numeric_limits<std::size_t>::max() / d, InputError,
                 "'{}' has .npy shape {} whose size in bytes overflows 64 bits; the header is "
                 "corrupt",
                 source, npy_shape_text(h.shape));
    bytes *= d;
  }
  h.count = zero ? 0 : bytes / h.itemsize;
  h.data_bytes = zero ? 0 : bytes;
}

std::uint32_t read_le(const std::uint8_t* p, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

NpyHeader parse_npy_header(std::span<const std::uint8_t> bytes, std::string_view source) {
  const std::size_t size = bytes.size();
  VLBIAS_CHECK(size > 0, InputError, "'{}' is empty; expected a .npy file", source);
  const bool magic_ok =
      size >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
  if (!magic_ok) {
    const bool zip = size >= 4 && std::memcmp(bytes.data(), "PK\x03\x04", 4) == 0;
    VLBIAS_CHECK(!zip, InputError,
                 "'{}' is a zip archive (.npz?), not a .npy file; save one array with np.save",
                 source);
    VLBIAS_FAIL(InputError, "'{}' is not a .npy file: it does not start with \"\\x93NUMPY\"",
                source);
  }
  VLBIAS_CHECK(size >= 8, InputError,
               "'{}' is truncated: it ends inside the .npy preamble ({} bytes)", source, size);
  NpyHeader h;
  h.major_version = bytes[6];
  h.minor_version = bytes[7];
  const bool known = h.minor_version == 0 && h.major_version >= 1 && h.major_version <= 3;
  VLBIAS_CHECK(known, InputError,
               "'{}' has .npy format version {}.{}; vlbias reads versions 1.0, 2.0 and 3.0", source,
               h.major_version, h.minor_version);
  const int len_bytes = h.major_version == 1 ? 2 : 4;
  const std::size_t prefix = 8 + static_cast<std::size_t>(len_bytes);
  VLBIAS_CHECK(size >= prefix, InputError,
               "'{}' is truncated: it ends inside the .npy header length ({} bytes)", source, size);
  const std::size_t header_len = read_le(bytes.data() + 8, len_bytes);
  VLBIAS_CHECK(header_len <= kMaxNpyHeaderBytes, InputError,
               "'{}' declares a {}-byte .npy header, over the {}-byte limit; the file is corrupt",
               source, header_len, kMaxNpyHeaderBytes);
  VLBIAS_CHECK(header_len <= size - prefix, InputError,
               "'{}' is truncated: its .npy header should be {} bytes but only {} bytes follow",
               source, header_len, size - prefix);
  h.data_offset = prefix + header_len;

  // Version 1.0 and 2.0 headers are latin-1, 3.0 UTF-8; the keys and values
  // vlbias accepts are ASCII, so bytes are parsed as they are.
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + prefix, header_len);
  const PyValue dict = HeaderParser(text, source).parse();
  VLBIAS_CHECK(dict.kind == PyValue::Kind::Dict, InputError,
               "'{}' has a malformed .npy header: expected a dict with 'descr', 'fortran_order' "
               "and 'shape', got {}",
               source, kind_name(dict.kind));
  const PyValue* descr = nullptr;
  const PyValue* fortran = nullptr;
  const PyValue* shape = nullptr;
  for (std::size_t i = 0; i < dict.keys.size(); ++i) {
    const std::string& key = dict.keys[i];
    const PyValue** slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    VLBIAS_CHECK(slot != nullptr, InputError,
                 "'{}' has an unexpected key '{}' in its .npy header; expected only 'descr', "
                 "'fortran_order' and 'shape'",
                 source, escape_for_message(key, 40));
    VLBIAS_CHECK(*slot == nullptr, InputError, "'{}' repeats the key '{}' in its .npy header",
                 source, key);
    *slot = &dict.items[i];
  }
  for (const auto& [ptr, name] : {std::pair{descr, "descr"}, std::pair{fortran, "fortran_order"},
                                  std::pair{shape, "shape"}}) {
    VLBIAS_CHECK(ptr != nullptr, InputError,
                 "'{}' has no '{}' key in its .npy header; expected 'descr', 'fortran_order' and "
                 "'shape'",
                 source, name);
  }
  parse_descr(*descr, source, h);
  VLBIAS_CHECK(fortran->kind == PyValue::Kind::Bool, InputError,
               "'{}' has a malformed .npy header: 'fortran_order' must be True or False, got {}",
               source, repr(*fortran));
  h.fortran_order = fortran->boolean;
  parse_shape(*shape, source, h);

  const std::size_t available = size - h.data_offset;
  VLBIAS_CHECK(available >= h.data_bytes, InputError,
               "'{}' is truncated: shape {} of '{}' needs {} data bytes but only {} follow the "
               ".npy header",
               source, npy_shape_text(h.shape), h.descr, h.data_bytes, available);
  VLBIAS_CHECK(available == h.data_bytes, InputError,
               "'{}' has {} unexpected bytes after the {} data bytes that shape {} of '{}' needs; "
               "the file is corrupt or not a single .npy array",
               source, available - h.data_bytes, h.data_bytes, npy_shape_text(h.shape), h.descr);
  return h;
}

NpyArray parse_npy(std::span<const std::uint8_t> bytes, std::string_view source,
                   NonFinite nonfinite) {
  NpyArray out;
  out.header = parse_npy_header(bytes, source);
  const NpyHeader& h = out.header;
  const io_internal::FloatKind kind = h.itemsize == 2   ? io_internal::FloatKind::F16
                                      : h.itemsize == 4 ? io_internal::FloatKind::F32
                                                        : io_internal::FloatKind::F64;
  if (kind == io_internal::FloatKind::F64 && h.count > 0) {
    warn("'{}' stores float64 values; they are narrowed to float32", source);
  }
  const bool swap = h.big_endian != (std::endian::native == std::endian::big);
  out.data.resize(h.count);
  io_internal::decode_float_array(bytes.data() + h.data_offset, kind, swap, h.shape,
                                  h.fortran_order, nonfinite, fmt::format("'{}'", source),
                                  out.data.data());
  return out;
}

NpyArray read_npy(const std::filesystem::path& path, NonFinite nonfinite) {
  const MappedFile file(path, MapAccess::Sequential);
  return parse_npy(file.bytes(), path.string(), nonfinite);
}

NpyHeader read_npy_header(const std::filesystem::path& path) {
  const MappedFile file(path, MapAccess::Random);
  return parse_npy_header(file.bytes(), path.string());
}

Matrix npy_to_matrix(NpyArray&& array, std::string_view source) {
  const auto& shape = array.header.shape;
  if (shape.size() != 2) {
    const std::string fix =
        shape.size() == 1 ? "; for one embedding save arr.reshape(1, -1), or read it as a vector"
        : shape.empty()   ? ""
                          : "; reshape it to (items, dim) before saving";
    VLBIAS_FAIL(InputError,
                "'{}' holds a {}-D array of shape {}; expected a 2-D (rows, cols) "
                "float matrix{}",
                source, shape.size(), npy_shape_text(shape), fix);
  }
  Matrix m;
  m.rows = shape[0];
  m.cols = shape[1];
  m.data = std::move(array.data);
  return m;
}

std::vector<float> npy_to_vector(NpyArray&& array, std::string_view source) {
  const auto& shape = array.header.shape;
  VLBIAS_CHECK(shape.size() == 1, InputError,
               "'{}' holds a {}-D array of shape {}; expected a 1-D array of shape (n,)", source,
               shape.size(), npy_shape_text(shape));
  return std::move(array.data);
}

Matrix read_npy_matrix(const std::filesystem::path& path, NonFinite nonfinite) {
  return npy_to_matrix(read_npy(path, nonfinite), path.string());
}

std::vector<float> read_npy_vector(const std::filesystem::path& path, NonFinite nonfinite) {
  return npy_to_vector(read_npy(path, nonfinite), path.string());
}

std::string npy_float32_header(std::span<const std::size_t> shape) {
  // Mirrors numpy 1.24's _write_array_header: sorted keys, repr values, room
  // for the first axis to grow to 21 digits, then space padding and '\n' so
  // that the data starts on a 64-byte boundary.
  std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}",
                                 npy_shape_text(shape));
  if (!shape.empty()) dict.append(21 - fmt::formatted_size("{}", shape[0]), ' ');
  const std::size_t hlen = dict.size() + 1;
  // Version 1.0 stores the header length in 16 bits; 2.0 when it does not fit.
  const bool v1 = hlen + (64 - ((10 + hlen) % 64)) <= 0xffff;
  const std::size_t prefix = v1 ? 10 : 12;
  const std::size_t padlen = 64 - ((prefix + hlen) % 64);
  const std::size_t total_len = hlen + padlen;
  std::string out(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  out.push_back(static_cast<char>(v1 ? 1 : 2));
  out.push_back('\0');
  for (std::size_t i = 0; i < prefix - 8; ++i) {
    out.push_back(static_cast<char>((total_len >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(padlen, ' ');
  out.push_back('\n');
  return out;
}

namespace {

void write_npy_array(const std::filesystem::path& path, std::span<const std::size_t> shape,
                     const float* data, std::size_t count) {
  VLBIAS_CHECK(data != nullptr || count == 0, InternalError,
               "write_npy('{}'): null data for {} values", path.string(), count);
  const std::string header = npy_float32_header(shape);
  AtomicWriter out(path);
  out.write(header.data(), header.size());
  out.write_f32le(data, count);
  out.commit();
}

}  // namespace

void write_npy(const std::filesystem::path& path, MatrixView m) {
  const std::size_t shape[2] = {m.rows, m.cols};
  write_npy_array(path, shape, m.data, m.rows * m.cols);
}

void write_npy_vector(const std::filesystem::path& path, std::span<const float> values) {
  const std::size_t shape[1] = {values.size()};
  write_npy_array(path, shape, values.data(), values.size());
}

}  // namespace vlbias
