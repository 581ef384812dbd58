#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0) holding float arrays.
//
// Reading accepts dtypes float32 ('<f4'), float16 ('<f2', widened exactly) and
// float64 ('<f8', narrowed to float32 with one warning per file), in either
// byte order ('<', '>', '|' or '=' for native), C or Fortran order. Values
// always come back as row-major (C order) float32. Every other dtype (ints,
// bools, complex, strings, objects, structured records) is an InputError.
//
// The data must be exactly shape x itemsize bytes: a truncated file and
// trailing bytes after the array are both InputErrors. Arrays with a zero
// dimension, e.g. shape (0, 512), are valid and read as zero rows; callers
// that need at least one item check for it themselves.
//
// Writing produces what np.save produces for a C-order float32 array:
// version 1.0, '<f4', header padded with spaces to a 64-byte boundary and
// ending in '\n' (byte-identical to numpy 1.24).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/io/finite.h"

namespace vlbias {

// A validated .npy header.
struct NpyHeader {
  int major_version = 1;           // 1, 2 or 3
  int minor_version = 0;           // 0
  std::string descr;               // as stored, e.g. "<f4", ">f8", "|f4"
  std::size_t itemsize = 4;        // bytes per stored element: 2, 4 or 8
  bool big_endian = false;         // stored byte order ('>'), after resolving '|' and '='
  bool fortran_order = false;      // stored column-major
  std::vector<std::size_t> shape;  // as stored; empty for a 0-D scalar
  std::size_t count = 1;           // product of shape (elements)
  std::size_t data_offset = 0;     // bytes from the start of the file to the data
  std::size_t data_bytes = 0;      // count * itemsize == file size - data_offset
};

// A decoded .npy array. Owns its values.
struct NpyArray {
  NpyHeader header;
  std::vector<float> data;  // header.count values, row-major float32
  const std::vector<std::size_t>& shape() const { return header.shape; }
};

// Validates the header of the .npy image `bytes` (the whole file) without
// decoding values: magic, version, header dict, dtype, shape overflow and that
// the data size equals shape x itemsize. `source` names the file in messages.
// Throws InputError with one sentence naming `source` and what was expected.
NpyHeader parse_npy_header(std::span<const std::uint8_t> bytes, std::string_view source);

// Validates and decodes the .npy image `bytes` (a whole file held in memory).
// With NonFinite::Reject the first NaN/inf is an InputError naming its row and
// column. Warns once (vlbias::warn) when float64 is narrowed to float32.
NpyArray parse_npy(std::span<const std::uint8_t> bytes, std::string_view source,
                   NonFinite nonfinite = NonFinite::Reject);

// parse_npy over a read-only memory mapping of `path`.
NpyArray read_npy(const std::filesystem::path& path, NonFinite nonfinite = NonFinite::Reject);

// Header of `path` only; the data is not read (cheap for large files).
NpyHeader read_npy_header(const std::filesystem::path& path);

// Converts a decoded array to an embedding matrix (rows = items, cols = dim).
// Requires exactly 2 dimensions; 0-D, 1-D and N-D arrays are an InputError
// naming `source` and its shape, with the reshape that would fix it.
Matrix npy_to_matrix(NpyArray&& array, std::string_view source);

// Requires exactly 1 dimension (InputError otherwise, naming the shape).
std::vector<float> npy_to_vector(NpyArray&& array, std::string_view source);

// read_npy + npy_to_matrix: a (rows, cols) float32 embedding matrix.
Matrix read_npy_matrix(const std::filesystem::path& path, NonFinite nonfinite = NonFinite::Reject);

// read_npy + npy_to_vector: a 1-D array (n,) as n floats.
std::vector<float> read_npy_vector(const std::filesystem::path& path,
                                   NonFinite nonfinite = NonFinite::Reject);

// The exact header bytes (magic through the final '\n') that np.save writes
// for a C-order '<f4' array of `shape`; the data follows it directly.
std::string npy_float32_header(std::span<const std::size_t> shape);

// Writes `m` as a (rows, cols) '<f4' C-order .npy file: to `path` + ".tmp",
// then renamed over `path` once complete. m.data may be null only when
// rows * cols == 0. Throws InputError when the file cannot be created and
// InternalError when writing or renaming fails.
void write_npy(const std::filesystem::path& path, MatrixView m);

// Writes `values` as a 1-D (n,) '<f4' .npy file, atomically as write_npy.
void write_npy_vector(const std::filesystem::path& path, std::span<const float> values);

}  // namespace vlbias
