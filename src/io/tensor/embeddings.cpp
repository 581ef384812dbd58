// Embedding matrices from .npy or .safetensors files.
#include "vlbias/io/tensor/embeddings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {

Matrix read_embeddings(const std::filesystem::path& path, const std::string& tensor) {
  const std::string ext = path.extension().string();
  Matrix m;
  if (ext == ".npy") {
    VLBIAS_CHECK(tensor.empty(), UsageError,
                 "{}: a tensor name ('{}') was given, but a .npy file holds one array",
                 path.string(), tensor);
    m = read_npy_matrix(path);
  } else if (ext == ".safetensors") {
    const SafetensorsFile file = SafetensorsFile::open(path);
    std::string name = tensor;
    if (name.empty()) {
      VLBIAS_CHECK(file.names().size() == 1, InputError,
                   "{} holds {} tensors ({}); name the one holding the embeddings", path.string(),
                   file.names().size(), fmt::join(file.names(), ", "));
      name = file.names().front();
    }
    m = file.read_matrix(name);
  } else {
    VLBIAS_FAIL(InputError, "{}: unknown embedding file type '{}'; expected .npy or .safetensors",
                path.string(), ext);
  }
  VLBIAS_CHECK(m.rows > 0 && m.cols > 0, InputError,
               "{} holds a ({}, {}) matrix; embeddings need at least one row and one column",
               path.string(), m.rows, m.cols);
  return m;
}

}  // namespace vlbias
