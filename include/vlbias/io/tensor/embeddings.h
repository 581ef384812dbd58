#pragma once
// Embedding matrices from files (src/io/tensor/embeddings.cpp): the one entry point that
// commands and audits use, so .npy and .safetensors behave the same everywhere.
#include <filesystem>
#include <string>

#include "vlbias/core/matrix.h"

namespace vlbias {

// Reads a 2-D float embedding matrix (rows = items) from `path`, choosing the
// format by extension: .npy (read_npy_matrix) or .safetensors (the tensor named
// `tensor`, or the file's only tensor when `tensor` is empty). NaN/inf values are
// an InputError naming the file, row and column, as is an unknown extension, a
// safetensors file with several tensors and no name given (listing them), a
// tensor name with a .npy file, and a matrix with no rows or no columns.
Matrix read_embeddings(const std::filesystem::path& path, const std::string& tensor = "");

}  // namespace vlbias
