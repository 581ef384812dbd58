#pragma once
// Conversions between Python objects and the engine's types, shared by the module's files.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/report/json_output.h"

namespace vlbias::python {

namespace py = pybind11;

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// A 2-D float32 C-contiguous view of `obj` (converted when it is another dtype or layout);
// `name` is the argument's name in messages. The returned array owns or references the data
// and must outlive the view.
struct Matrix2d {
  FloatArray array;
  MatrixView view;
};
Matrix2d as_matrix(const py::handle& obj, const char* name);

// nlohmann JSON to Python objects (dict keeps the JSON's key order).
py::object to_python(const Json& j);

// A rows x cols float32 array that owns the matrix (no copy).
py::array_t<float> to_array(Matrix m);

// Images given as file paths (str or os.PathLike, decoded as Pillow does) or as H x W x 3 uint8
// RGB arrays; not a mix (TypeError).
class PyImages {
 public:
  std::size_t size() const { return paths_.size() + arrays_.size(); }
  // Image i, decoded or moved out (each taken once).
  RgbImage take(std::size_t i);

 private:
  friend PyImages read_images(const py::sequence& images);
  std::vector<std::string> paths_;
  std::vector<RgbImage> arrays_;
};
PyImages read_images(const py::sequence& images);

}  // namespace vlbias::python
