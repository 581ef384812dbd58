#pragma once
// The one data convention for embeddings and features (as in faiss):
// a row-major float32 matrix, row i = item i, `cols` = dimension.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace vlbias {

// Owning row-major float32 matrix. data.size() == rows * cols.
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> data;

  Matrix() = default;
  Matrix(std::size_t r, std::size_t c) : rows(r), cols(c), data(r * c, 0.0f) {}

  float* row(std::size_t i) { return data.data() + i * cols; }
  const float* row(std::size_t i) const { return data.data() + i * cols; }
  float& at(std::size_t i, std::size_t j) { return data[i * cols + j]; }
  float at(std::size_t i, std::size_t j) const { return data[i * cols + j]; }
};

// Non-owning read-only view of a row-major float32 matrix (e.g. over a memory
// mapping). The viewed memory must outlive the view.
struct MatrixView {
  const float* data = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;

  MatrixView() = default;
  MatrixView(const float* d, std::size_t r, std::size_t c) : data(d), rows(r), cols(c) {}
  MatrixView(const Matrix& m) : data(m.data.data()), rows(m.rows), cols(m.cols) {}  // NOLINT
  const float* row(std::size_t i) const { return data + i * cols; }
};

// The rows `rows` of `x`, in that order, as a new matrix (rows.size() x x.cols). Every index
// must be < x.rows (not checked: callers build them from x).
inline Matrix select_rows(MatrixView x, std::span<const std::uint32_t> rows) {
  Matrix m(rows.size(), x.cols);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(m.row(i), x.row(rows[i]), x.cols * sizeof(float));
  }
  return m;
}

}  // namespace vlbias
