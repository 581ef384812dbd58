#pragma once
// Registers vlbias.FeatureModel and vlbias.inception_score (features.cpp).
#include <pybind11/pybind11.h>

namespace vlbias::python {

void bind_features(pybind11::module_& m);

}  // namespace vlbias::python
