#pragma once
// Read-only memory mapping of a whole file (RAII). Used by the .npy and
// .safetensors readers and by model-weight loaders, so that large arrays are
// paged in by the kernel instead of copied through a read buffer.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace vlbias {

// How the mapping will be read; a hint passed to the kernel (madvise).
enum class MapAccess {
  Random,      // a few tensors out of a large file (model weights)
  Sequential,  // the whole file front to back (embedding matrices)
};

// Maps `path` read-only and private for the object's lifetime; the file
// descriptor is closed once mapped. An empty file gives size() == 0 and
// data() == nullptr (mmap cannot map zero bytes). Movable, not copyable; a
// moved-from or default-constructed object is empty.
//
// The file must not be truncated while mapped: reading a page past the new end
// raises SIGBUS, as with any mmap. Inputs are never modified (PROT_READ).
class MappedFile {
 public:
  MappedFile() = default;
  // Throws InputError naming the file when it cannot be opened (missing,
  // permission), is a directory or not a regular file, or cannot be mapped.
  explicit MappedFile(const std::filesystem::path& path, MapAccess access = MapAccess::Random);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // First byte of the file; no alignment beyond the page start is implied for
  // any offset into it.
  const std::uint8_t* data() const { return data_; }
  // File size in bytes at the time it was mapped.
  std::size_t size() const { return size_; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

  // Drops the whole pages inside `part` (a range of this mapping) from the process's memory;
  // a later read pages them in again from the file (the mapping is private and never written,
  // so nothing is lost). Lets a loader that converts a large file piece by piece peak near the
  // converted copy rather than copy + file. A hint: errors are ignored.
  void release_pages(std::span<const std::uint8_t> part) const;

 private:
  void release() noexcept;

  std::filesystem::path path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace vlbias
