// Conversions between Python objects and the engine's types: see convert.h.
#include "convert.h"

#include <cstdint>
#include <utility>

#include "vlbias/encode/image/image.h"

namespace vlbias::python {

Matrix2d as_matrix(const py::handle& obj, const char* name) {
  FloatArray a;
  try {
    a = FloatArray::ensure(obj);
  } catch (const py::error_already_set&) {
    a = FloatArray();
  }
  if (!a) {
    throw py::type_error(std::string(name) +
                         " must be a 2-D array of numbers (rows = items), e.g. a float32 "
                         "numpy array; got " +
                         std::string(py::str(py::type::of(obj))));
  }
  if (a.ndim() != 2) {
    throw py::value_error(std::string(name) + " must be a 2-D array (rows = items, columns = " +
                          "features); got " + std::to_string(a.ndim()) + " dimension(s)");
  }
  Matrix2d m{a, MatrixView(a.data(), static_cast<std::size_t>(a.shape(0)),
                           static_cast<std::size_t>(a.shape(1)))};
  return m;
}

// nlohmann JSON to Python objects (dict keeps the JSON's key order).
py::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return py::none();
    case Json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case Json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case Json::value_t::number_float:
      return py::float_(j.get<double>());
    case Json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case Json::value_t::array: {
      py::list list;
      for (const auto& v : j) list.append(to_python(v));
      return list;
    }
    case Json::value_t::object: {
      py::dict dict;
      for (const auto& [k, v] : j.items()) dict[py::str(k)] = to_python(v);
      return dict;
    }
    default:
      return py::none();
  }
}

py::array_t<float> to_array(Matrix m) {
  auto* owner = new Matrix(std::move(m));
  py::capsule free(owner, [](void* p) { delete static_cast<Matrix*>(p); });
  return py::array_t<float>({owner->rows, owner->cols}, owner->data.data(), free);
}

RgbImage PyImages::take(std::size_t i) {
  return paths_.empty() ? std::move(arrays_[i]) : decode_image_file(paths_[i]);
}

PyImages read_images(const py::sequence& images) {
  PyImages out;
  const py::object fspath = py::module_::import("os").attr("fspath");
  for (const auto& item : images) {
    if (py::isinstance<py::str>(item) || py::hasattr(item, "__fspath__")) {
      out.paths_.push_back(py::str(fspath(item)));
      continue;
    }
    using ByteArray = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;
    const ByteArray a = ByteArray::ensure(item);
    if (!a || a.ndim() != 3 || a.shape(2) != 3) {
      throw py::type_error("images must be file paths or H x W x 3 uint8 RGB arrays; got " +
                           std::string(py::str(py::type::of(item))));
    }
    RgbImage img;
    img.height = static_cast<std::size_t>(a.shape(0));
    img.width = static_cast<std::size_t>(a.shape(1));
    img.pixels.assign(a.data(), a.data() + a.size());
    out.arrays_.push_back(std::move(img));
  }
  if (!out.paths_.empty() && !out.arrays_.empty())
    throw py::type_error("images must be all paths or all arrays, not a mix");
  return out;
}

}  // namespace vlbias::python
