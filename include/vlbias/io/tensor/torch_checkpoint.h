#pragma once
// PyTorch checkpoints read as data, without Python and without running anything
// (docs/design.md#torch-checkpoints).
//
// Three containers are recognised by their bytes, whatever the file is called:
//   - zip:         torch.save since PyTorch 1.6 ("<folder>/data.pkl" and "<folder>/data/<key>"
//                  storages in a ZIP archive of stored entries; any folder name).
//   - legacy:      torch.save before 1.6 (or _use_new_zipfile_serialization=False): a pickled
//                  magic number, protocol version and sys_info, the object pickle, the pickled
//                  list of storage keys, then each storage as an 8-byte little-endian element
//                  count and its raw bytes, in the list's order.
//   - torchscript: torch.jit.save ("<folder>/data.pkl" holding the module's object tree,
//                  "constants.pkl", storages in "data/" and "constants/"); the code/ files are
//                  never read.
// The pickles are read by a restricted unpickler (src/io/tensor/pickle.h) that builds plain values
// and refuses every global outside a short allow-list (tensor and parameter rebuilding,
// storage and dtype markers, OrderedDict, torch.Size, TorchScript's list helpers and
// __torch__.* module objects) with one sentence naming the global and the file.
//
// Naming: the tensors of nested dicts, lists and TorchScript module objects are named by
// their path joined with "." (a state dict's keys as they are; a TorchScript module `layers`
// with a submodule `conv` holding `weight` gives "layers.conv.weight"; a checkpoint that wraps
// its state dict, {"state_dict": {...}} or {"model": {...}}, gives "state_dict.conv.weight").
// List and tuple items and integer keys are named by their decimal index; a TorchScript
// archive's constants are "constants.0", "constants.1", ...; a checkpoint that is one bare
// tensor gives "tensor". Leaves that are not tensors (numbers, strings, None, an optimizer's
// hyper-parameters, a state dict's _metadata) are skipped and counted.
//
// Bounds: every storage is checked against the bytes present (its ZIP entry's size, or what
// remains of a legacy file) and every tensor's extent (offset, sizes, strides) against its
// storage, with overflow-checked arithmetic, before anything is allocated; the tensors'
// total is limited (TorchReadLimits) so that views repeating one storage cannot inflate a
// small file into an enormous output.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vlbias/io/mapped_file.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {

enum class TorchFormat { Zip, Legacy, TorchScript };

// "zip", "legacy" or "torchscript".
std::string_view torch_format_name(TorchFormat format);

// One tensor of a checkpoint: a view into a storage inside the file.
struct TorchTensorInfo {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::size_t> shape;         // empty for a 0-D scalar
  std::vector<std::size_t> strides;       // in elements, one per dimension
  std::size_t storage_offset = 0;         // in elements
  std::size_t count = 1;                  // product of shape
  std::span<const std::uint8_t> storage;  // the whole storage's bytes (checked to hold the view)
};

struct TorchReadLimits {
  // The most bytes the tensors may take in all, contiguous (0: 4 x the file size + 256 MiB).
  std::uint64_t max_tensor_bytes = 0;
};

// An opened, validated checkpoint. Movable, not copyable; the storages stay valid while it
// lives, also across moves.
class TorchCheckpoint {
 public:
  // Maps `path` read-only and reads its pickles. InputError naming the file for anything not
  // described above or beyond the bounds.
  static TorchCheckpoint open(const std::filesystem::path& path, const TorchReadLimits& = {});
  // The same over a whole file image held in memory (copied); `source` names it in messages.
  static TorchCheckpoint from_bytes(std::span<const std::uint8_t> bytes, std::string source,
                                    const TorchReadLimits& = {});

  TorchFormat format() const { return format_; }
  const std::string& source() const { return source_; }
  // In the order the pickle holds them (a state dict's order).
  const std::vector<TorchTensorInfo>& tensors() const { return tensors_; }
  // Non-tensor leaves skipped when naming the tensors.
  std::size_t ignored_leaves() const { return ignored_leaves_; }
  // Sum of count x element size over the tensors.
  std::uint64_t tensor_bytes() const { return tensor_bytes_; }

  // Writes tensor `index` to `dst` (count x dtype_size bytes) contiguous in row-major order,
  // little-endian as stored: non-contiguous views and storage offsets are resolved here.
  void copy_tensor(std::size_t index, std::span<std::uint8_t> dst) const;

 private:
  TorchCheckpoint() = default;
  void parse(const TorchReadLimits& limits);

  std::string source_;
  MappedFile mapping_;
  std::vector<std::uint8_t> owned_;
  std::span<const std::uint8_t> image_;
  TorchFormat format_ = TorchFormat::Zip;
  std::vector<TorchTensorInfo> tensors_;
  std::size_t ignored_leaves_ = 0;
  std::uint64_t tensor_bytes_ = 0;
};

// The dtype of converted weights: as stored, or every float tensor as F32 or F16 (rounded to
// nearest even; integer and bool tensors are kept).
enum class WeightsDtype { Keep, F32, F16 };

// The dtype tensor `dtype` becomes under `target`.
SafetensorsDtype converted_dtype(SafetensorsDtype dtype, WeightsDtype target);

// Writes the checkpoint's tensors as a safetensors file (tensors in checkpoint order,
// metadata {"format": "pt"}), one tensor in memory at a time. InputError for duplicate names.
void write_torch_as_safetensors(const TorchCheckpoint& checkpoint,
                                const std::filesystem::path& path, WeightsDtype target);

// The same file image in memory.
std::vector<std::uint8_t> torch_as_safetensors(const TorchCheckpoint& checkpoint,
                                               WeightsDtype target);

// Opens any weights file as safetensors: a ".safetensors" file is mapped
// (SafetensorsFile::open); anything else (.pth, .pt, .bin) is read as a PyTorch checkpoint and
// converted in memory with its dtypes kept, so model loaders can read a folder that has only
// pytorch_model.bin.
SafetensorsFile open_weights_file(const std::filesystem::path& path);

// The weights file of a model folder: dir / safetensors_name when it exists, else
// dir / torch_name (a PyTorch file, read through open_weights_file), else "" (neither exists).
std::filesystem::path model_weights_file(const std::filesystem::path& dir,
                                         const std::string& safetensors_name,
                                         const std::string& torch_name);

}  // namespace vlbias
