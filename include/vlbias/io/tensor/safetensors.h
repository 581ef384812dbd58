#pragma once
// Hugging Face .safetensors files: embeddings and model weights.
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"key": "value"}}
// then the data buffer; offsets are relative to the buffer start. Opening
// validates what the Hugging Face library validates: N <= 100,000,000 and
// within the file, a JSON object, known dtypes, shapes whose byte size does
// not overflow, end - begin == elements x itemsize, and tensors that cover the
// buffer exactly, without overlaps or gaps (zero-size tensors excepted). It
// also rejects duplicate keys and non-string metadata values.
//
// Reading converts F16, BF16 and F64 (narrowed, with a warning) to float32.
// Integer and 8-bit float dtypes are listed but not converted.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/io/finite.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias {

// Element types of the safetensors format.
enum class SafetensorsDtype {
  Bool,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  I64,
  U64,
  F64,
};

// "F32", "BF16", ... as written in headers.
std::string_view dtype_name(SafetensorsDtype dtype);
// Bytes per element (1, 2, 4 or 8).
std::size_t dtype_size(SafetensorsDtype dtype);
// True for F16, BF16, F32 and F64, the dtypes read_matrix / read_floats convert.
bool dtype_is_float(SafetensorsDtype dtype);

// One tensor's header entry.
struct SafetensorsTensorInfo {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::size_t> shape;  // empty for a 0-D scalar
  std::size_t count = 1;           // product of shape (elements)
  std::size_t begin = 0;           // byte offsets into the data buffer,
  std::size_t end = 0;             // end - begin == count * dtype_size(dtype)
};

// An opened, fully validated safetensors image. Movable, not copyable; the
// pointers it hands out stay valid while it lives, also across moves.
class SafetensorsFile {
 public:
  // Maps `path` read-only and validates the header (not the values).
  // Throws InputError naming the file (and tensor) for any invalid content.
  static SafetensorsFile open(const std::filesystem::path& path);

  // Same checks over a whole file image held in memory (tests, fuzzing); the
  // bytes are copied. `source` names the image in messages.
  static SafetensorsFile from_bytes(std::span<const std::uint8_t> bytes, std::string source);

  // The same, taking ownership of `bytes` (no copy: a converted checkpoint, torch_checkpoint.h).
  static SafetensorsFile from_owned(std::vector<std::uint8_t> bytes, std::string source);

  // Name used in messages: the path, or from_bytes' source.
  const std::string& source() const { return source_; }

  // Tensor names in the order of the JSON header.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(std::string_view name) const;
  // Throws InputError naming the file, the missing name and a few that exist.
  const SafetensorsTensorInfo& info(std::string_view name) const;

  // The tensor's raw little-endian bytes inside the mapping, info(name).end -
  // info(name).begin of them. Not necessarily aligned to the element size:
  // read elements with memcpy. Valid while this object lives.
  std::span<const std::uint8_t> bytes(std::string_view name) const;
  const std::uint8_t* data(std::string_view name) const { return bytes(name).data(); }

  // Drops the mapped pages of tensor `name` once the caller has converted it
  // (MappedFile::release_pages: a model loader then peaks near the converted weights, not
  // weights + file); a later read pages them in again. A no-op for from_bytes images.
  void release_pages(std::string_view name) const;

  // A float tensor of shape [rows, cols] as an owning float32 matrix. Any other
  // rank is an InputError (a 1-D [n] tensor is not taken as 1 x n: say which
  // you mean with read_floats). Zero rows are allowed. With NonFinite::Reject,
  // NaN/inf is an InputError naming the tensor, row and column.
  Matrix read_matrix(std::string_view name, NonFinite nonfinite = NonFinite::Reject) const;

  // A float tensor of any rank as info(name).count float32 values, row-major
  // (model weights). Pass NonFinite::Allow for buffers that may hold inf.
  std::vector<float> read_floats(std::string_view name,
                                 NonFinite nonfinite = NonFinite::Reject) const;

  // The "__metadata__" string map (empty when absent).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // Byte offset of the data buffer in the file: 8 + header length.
  std::size_t data_offset() const { return data_offset_; }

 private:
  SafetensorsFile() = default;
  void parse();
  void convert(const SafetensorsTensorInfo& t, NonFinite nonfinite, float* dst) const;

  std::string source_;
  MappedFile mapping_;               // set by open()
  std::vector<std::uint8_t> owned_;  // set by from_bytes()
  std::span<const std::uint8_t> image_;
  std::size_t data_offset_ = 0;
  std::vector<std::string> names_;
  std::vector<SafetensorsTensorInfo> tensors_;  // header order
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// One tensor of a file being written: its bytes come separately.
struct SafetensorsEntry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::size_t> shape;  // empty for a 0-D scalar
};

// The first bytes of a safetensors file holding `entries` back to back in this order: the
// 8-byte header length and the compact JSON header, padded with spaces to a multiple of 8 as
// the Hugging Face writer does. The data that follows is sum(count x dtype_size) bytes.
// InputError naming `file` for empty, duplicate or reserved ("__metadata__") names or names /
// metadata that are not UTF-8.
std::string safetensors_header(const std::string& file,
                               const std::vector<SafetensorsEntry>& entries,
                               const std::map<std::string, std::string>& metadata = {});

// Writes float32 matrices as F32 tensors of shape [rows, cols], in the given
// order and packed back to back, with an optional "__metadata__" map. The
// JSON header is compact and padded with spaces to a multiple of 8 bytes, as
// the Hugging Face writer does, so the data is 8-byte aligned. Written to
// `path` + ".tmp" then renamed. Throws InputError for empty, duplicate or
// reserved ("__metadata__") names or names / metadata that are not UTF-8,
// InputError when the file cannot be created, InternalError on write failure.
void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, MatrixView>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace vlbias
