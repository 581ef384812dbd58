// Pickled numpy arrays (pickled_array.h): the unpickler's value tree interpreted as an array.
#include "vlbias/io/tensor/pickled_array.h"

#include <bit>
#include <cstring>
#include <limits>
#include <vector>

#include "float_decode.h"
#include "pickle.h"
#include "vlbias/core/error.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias {

namespace {

using io_internal::FloatKind;
using io_internal::PickleKind;
using io_internal::PickleValue;

bool is_numpy_call(const PickleValue* v, std::string_view name) {
  return v->kind == PickleKind::Object && v->text.ends_with(name) &&
         (v->text.starts_with("numpy.core.") || v->text.starts_with("numpy._core."));
}

bool pickled_is_kind(const PickleValue* v, PickleKind kind) {
  return v != nullptr && v->kind == kind;
}

// numpy.dtype(code, False, True) with BUILD state (3, byte order, ...): its float kind and
// whether it is stored in the byte order opposite to the host's.
FloatKind pickled_dtype(const PickleValue* d, const std::string& source, bool* swap) {
  const bool ok = d->kind == PickleKind::Object && d->text == "numpy.dtype" &&
                  d->items.size() >= 1 && pickled_is_kind(d->items[0], PickleKind::String) &&
                  pickled_is_kind(d->state, PickleKind::Tuple) && d->state->items.size() >= 2 &&
                  pickled_is_kind(d->state->items[1], PickleKind::String);
  VLBIAS_CHECK(ok, InputError,
               "'{}' pickles an array whose dtype is not numpy.dtype(code, ...) with a byte "
               "order; only float16, float32 and float64 arrays are read",
               source);
  const std::string& code = d->items[0]->text;
  const std::string& order = d->state->items[1]->text;
  VLBIAS_CHECK(code == "f2" || code == "f4" || code == "f8", InputError,
               "'{}' pickles an array of dtype '{}'; only float16, float32 and float64 ('f2', "
               "'f4', 'f8') arrays are read",
               source, code.substr(0, 16));
  VLBIAS_CHECK(order == "<" || order == ">" || order == "|" || order == "=", InputError,
               "'{}' pickles an array with byte order '{}'; expected '<', '>', '|' or '='", source,
               order.substr(0, 4));
  const bool big = order == ">";
  *swap = big != (std::endian::native == std::endian::big);
  return code == "f2" ? FloatKind::F16 : code == "f4" ? FloatKind::F32 : FloatKind::F64;
}

std::vector<std::size_t> pickled_shape(const PickleValue* s, const std::string& source) {
  VLBIAS_CHECK(pickled_is_kind(s, PickleKind::Tuple) || pickled_is_kind(s, PickleKind::List),
               InputError, "'{}' pickles an array whose shape is not a tuple", source);
  std::vector<std::size_t> shape;
  for (const PickleValue* d : s->items) {
    VLBIAS_CHECK(d->kind == PickleKind::Int && d->integer >= 0, InputError,
                 "'{}' pickles an array whose shape holds something other than a size", source);
    shape.push_back(static_cast<std::size_t>(d->integer));
  }
  VLBIAS_CHECK(shape.size() == 2, InputError,
               "'{}' pickles an array of {} dimensions; expected a 2-D (rows, dim) matrix", source,
               shape.size());
  return shape;
}

struct PickledArrayParts {
  const PickleValue* shape = nullptr;
  const PickleValue* dtype = nullptr;
  bool fortran = false;
  const PickleValue* data = nullptr;
};

PickledArrayParts pickled_array_parts(const PickleValue* top, const std::string& source) {
  PickledArrayParts p;
  if (top->kind == PickleKind::Object && is_numpy_call(top, "multiarray._reconstruct")) {
    // state = (version, shape, dtype, is_fortran, raw bytes)
    const PickleValue* st = top->state;
    VLBIAS_CHECK(pickled_is_kind(st, PickleKind::Tuple) && st->items.size() == 5 &&
                     pickled_is_kind(st->items[3], PickleKind::Bool),
                 InputError,
                 "'{}' reconstructs a numpy array without the state (version, shape, dtype, "
                 "fortran order, data) numpy writes",
                 source);
    p = {st->items[1], st->items[2], st->items[3]->boolean, st->items[4]};
  } else if (top->kind == PickleKind::Object && is_numpy_call(top, "numeric._frombuffer")) {
    // _frombuffer(buffer, dtype, shape, order)
    const auto& a = top->items;
    VLBIAS_CHECK(a.size() == 4 && pickled_is_kind(a[3], PickleKind::String) &&
                     (a[3]->text == "C" || a[3]->text == "F"),
                 InputError,
                 "'{}' rebuilds a numpy array from a buffer without the arguments (buffer, "
                 "dtype, shape, order) numpy writes",
                 source);
    p = {a[2], a[1], a[3]->text == "F", a[0]};
  } else {
    VLBIAS_FAIL(InputError,
                "'{}' holds {} at the top of its pickle, not a pickled numpy array "
                "(pickle.dump(array, f))",
                source, io_internal::pickle_kind_name(top->kind));
  }
  VLBIAS_CHECK(pickled_is_kind(p.data, PickleKind::Bytes), InputError,
               "'{}' pickles an array whose data are not raw bytes (an object array?); only "
               "float arrays are read",
               source);
  return p;
}

}  // namespace

Matrix parse_pickled_numpy_matrix(std::span<const std::uint8_t> bytes, const std::string& source) {
  io_internal::PickleArena arena;
  io_internal::PickleLimits limits;
  limits.numpy_arrays = true;
  limits.max_values = 1u << 16;  // an array pickle builds a few dozen values
  const PickleValue* top = io_internal::unpickle(bytes, source, arena, nullptr, limits);
  const PickledArrayParts p = pickled_array_parts(top, source);
  bool swap = false;
  const FloatKind kind = pickled_dtype(p.dtype, source, &swap);
  const std::vector<std::size_t> shape = pickled_shape(p.shape, source);
  const std::size_t size = io_internal::float_kind_size(kind);
  const std::string& raw = p.data->text;
  // The bytes are present (the unpickler bounded them by the file): shape must match them.
  const bool fits = shape[0] == 0 || shape[1] <= raw.size() / size / shape[0];
  VLBIAS_CHECK(fits && shape[0] * shape[1] * size == raw.size(), InputError,
               "'{}' pickles a {} x {} array of {}-byte floats with {} bytes of data; expected "
               "exactly shape x itemsize",
               source, shape[0], shape[1], size, raw.size());
  Matrix m(shape[0], shape[1]);
  if (!raw.empty()) {
    io_internal::decode_float_array(reinterpret_cast<const std::uint8_t*>(raw.data()), kind, swap,
                                    shape, p.fortran, NonFinite::Reject, source, m.data.data());
  }
  return m;
}

Matrix read_pickled_numpy_matrix(const std::filesystem::path& path) {
  const MappedFile file(path);
  return parse_pickled_numpy_matrix(file.bytes(), path.string());
}

}  // namespace vlbias
