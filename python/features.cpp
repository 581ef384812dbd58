// vlbias.FeatureModel (image features of the FID Inception-v3, DINOv2 or CLIP's image tower, as
// `vlbias features` computes them) and vlbias.inception_score.
#include "features.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "convert.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/encode/models/image_model.h"
#include "vlbias/encode/models/inception_model.h"
#include "vlbias/metrics/distribution_metrics.h"

namespace vlbias::python {

namespace {

class FeatureModel {
 public:
  FeatureModel(const std::filesystem::path& path, const std::string& preprocess,
               const std::string& output, std::size_t image_size, const std::string& positions) {
    ImageModelOptions o;
    set_image_preprocess(o, detect_image_model(path), preprocess);
    o.inception_output = parse_inception_output(output);
    o.image_size = image_size;
    o.dinov2_positions = parse_dinov2_positions(positions);
    py::gil_scoped_release release;
    model_ = open_image_model(path, o);
  }

  // Raw features (not normalised: FID needs them as they are), rows = images, `batch` images per
  // forward pass (0: the model's default).
  py::array_t<float> features(const py::sequence& images, std::size_t batch) const {
    PyImages in = read_images(images);
    const std::size_t n = in.size(), per = model_->pixels_per_image();
    if (batch == 0) batch = model_->default_batch();
    Matrix out(n, model_->dim());
    {
      py::gil_scoped_release release;
      std::vector<float> pixels;
      for (std::size_t start = 0; start < n; start += batch) {
        const std::size_t end = std::min(n, start + batch);
        pixels.resize((end - start) * per);
        // Decoding and preprocessing on the pool; the forward pass parallelises inside.
        parallel_for(end - start, [&](std::size_t i) {
          model_->pixels(in.take(start + i), pixels.data() + i * per);
        });
        const Matrix f = model_->encode(pixels.data(), end - start);
        std::copy(f.data.begin(), f.data.end(), out.row(start));
      }
    }
    return to_array(std::move(out));
  }

  std::size_t dim() const { return model_->dim(); }
  std::string kind() const { return image_model_kind_name(model_->kind()); }
  py::dict describe() const { return to_python(Json(model_->describe())); }

 private:
  std::unique_ptr<ImageFeatureModel> model_;
};

py::dict inception_score_of(const py::handle& logits, std::size_t splits) {
  const Matrix2d l = as_matrix(logits, "logits");
  InceptionScoreResult r;
  {
    py::gil_scoped_release release;
    r = inception_score(l.view, splits);
  }
  py::dict out;
  out["inception_score"] = r.mean;
  out["sd"] = r.sd;
  out["splits"] = r.splits;
  out["n"] = r.n;
  out["classes"] = r.classes;
  return out;
}

}  // namespace

void bind_features(py::module_& m) {
  py::class_<FeatureModel>(
      m, "FeatureModel",
      "An image feature model, as `vlbias features --model` opens it: the FID Inception-v3's\n"
      "weights (.safetensors / .pth / TorchScript .pt, or a folder with one), a Hugging Face\n"
      "DINOv2 folder or a CLIP folder. Its preprocessing is the model's own (pytorch-fid or\n"
      "clean-fid for the Inception).")
      .def(py::init<const std::filesystem::path&, const std::string&, const std::string&,
                    std::size_t, const std::string&>(),
           py::arg("path"), py::arg("preprocess") = "", py::arg("output") = "pool3",
           py::arg("image_size") = 0, py::arg("positions") = "scale-factor")
      .def("features", &FeatureModel::features, py::arg("images"), py::arg("batch_size") = 0,
           "Raw features (float32, rows = images) of image file paths or H x W x 3 uint8 RGB\n"
           "arrays; the same numbers as `vlbias features`.")
      .def_property_readonly("dim", &FeatureModel::dim)
      .def_property_readonly("kind", &FeatureModel::kind, "clip, inception-v3-fid or dinov2")
      .def("describe", &FeatureModel::describe, "The model and its preprocessing.");
  m.def("inception_score", &inception_score_of, py::arg("logits"), py::arg("splits") = 10,
        "Inception Score of n x classes logits (FeatureModel(..., output='logits-unbiased')\n"
        "gives the reference's): mean and sd over consecutive splits, as `vlbias metric is`.");
}

}  // namespace vlbias::python
