#pragma once
// NumPy arrays saved with Python's pickle (pickle.dump(array, f)), read as data: Q16's prompt
// embeddings (ml-research/Q16 data/ViT-L-14/prompts.p, a pickled float16 2 x 768 array) are
// published this way. The restricted unpickler of the PyTorch reader (src/io/tensor/pickle.h) reads
// the file with numpy's reconstructors allowed as data only; nothing is imported or called.
//
// Two forms are read, as numpy 1.x and 2.x write them:
//   - protocols 2 to 4: numpy.core.multiarray._reconstruct(numpy.ndarray, (0,), b'b') followed
//     by BUILD with the state (1, shape, dtype, fortran_order, raw bytes);
//   - protocol 5: numpy.core.numeric._frombuffer(bytes, dtype, shape, order);
// numpy 2's "numpy._core" module names too. The dtype is numpy.dtype('f2' | 'f4' | 'f8', False,
// True) with BUILD state (3, '<' | '>' | '|' | '=', ...). Other dtypes (ints, objects, records),
// other globals, an object array's list of values, and raw bytes that are not exactly
// shape x itemsize are InputErrors naming the file.
#include <filesystem>
#include <span>
#include <string>

#include "vlbias/core/matrix.h"

namespace vlbias {

// A pickled 2-D float array of `path` as a row-major float32 matrix (float16 widened exactly,
// float64 narrowed). NaN/inf are an InputError naming the file, row and column.
Matrix read_pickled_numpy_matrix(const std::filesystem::path& path);

// The same over a whole file image in memory; `source` names it in messages.
Matrix parse_pickled_numpy_matrix(std::span<const std::uint8_t> bytes, const std::string& source);

}  // namespace vlbias
