#pragma once
// Finite-value checks for float arrays read from files (never a silent NaN:
// docs/design.md#no-silent-nan). Shared by the .npy and .safetensors readers.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "vlbias/core/matrix.h"

namespace vlbias {

// What a reader does with NaN and +-inf values.
enum class NonFinite {
  Reject,  // InputError naming the first one (embeddings, scores)
  Allow,   // keep them (weights or buffers where the caller knows better)
};

// Position of element `flat_index` (row-major) of an array of `shape`, in
// words: "row 2, column 5" for 2-D, "element 7" for 1-D, "index (1, 0, 3)"
// otherwise, "the scalar value" for 0-D. Indices are 0-based.
std::string describe_position(std::span<const std::size_t> shape, std::size_t flat_index);

// Throws InputError "{what} has NaN at row 2, column 5 (0-based); expected
// finite values ..." for the first non-finite value of `values` in row-major
// order. `values` is the array of `shape` in row-major order, or a prefix of
// it (positions are computed from `shape`). `what` names the
// source, e.g. "'emb.npy'" or "tensor 'x' in 'model.safetensors'".
void require_finite(std::span<const float> values, std::span<const std::size_t> shape,
                    std::string_view what);
void require_finite(MatrixView m, std::string_view what);

// Index of the first non-finite value in [p, p + n), or n when all are finite.
std::size_t find_nonfinite(const float* p, std::size_t n);

}  // namespace vlbias
