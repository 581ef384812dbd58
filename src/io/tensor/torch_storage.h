#pragma once
// Internal to vlbias_io: PyTorch storages and the two containers' layouts (torch_storage.cpp),
// shared by torch_checkpoint.cpp.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "pickle.h"
#include "vlbias/io/tensor/safetensors.h"
#include "zip_archive.h"

namespace vlbias::io_internal {

// One storage a persistent id names, with its bytes in the file.
struct StorageRef {
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::string key;
  std::size_t numel = 0;                // elements
  std::span<const std::uint8_t> bytes;  // numel x dtype_size bytes (checked)
};

// The storages of a checkpoint, by the persistent id values that name them.
class StorageTable {
 public:
  explicit StorageTable(const std::string& source) : source_(source) {}
  // The storage behind `persistent` (a Persistent value of the tensor `tensor_name`).
  const StorageRef& resolve(const PickleValue* persistent, const std::string& tensor_name) const;

  std::map<const PickleValue*, StorageRef> bound;

 private:
  const std::string& source_;
};

// What a torch.save or torch.jit.save ZIP archive holds.
struct ZipCheckpoint {
  const PickleValue* data = nullptr;       // data.pkl's value
  const PickleValue* constants = nullptr;  // TorchScript's constants.pkl, else null
  bool torchscript = false;
};

// Reads data.pkl (and constants.pkl) of `zip` into `arena` and binds every storage they name
// to its "data/<key>" (or "constants/<key>") entry, checking its size.
ZipCheckpoint read_zip_checkpoint(const ZipArchive& zip, const std::string& source,
                                  PickleArena& arena, StorageTable& storages);

// Reads a legacy torch.save file: the header pickles, the object pickle (returned), the
// storage keys and the storages, each bound after checking its count against the bytes left.
const PickleValue* read_legacy_checkpoint(std::span<const std::uint8_t> image,
                                          const std::string& source, PickleArena& arena,
                                          StorageTable& storages);

}  // namespace vlbias::io_internal
