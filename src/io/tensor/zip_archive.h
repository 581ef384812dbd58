#pragma once
// Internal to vlbias_io: the ZIP reading that PyTorch checkpoints need (torch.save since 1.6
// and torch.jit.save write ZIP archives of stored, uncompressed entries).
//
// Reads the end-of-central-directory record (and its zip64 form), walks the central directory
// front to back within its declared size (so it cannot loop), and checks each entry's local
// header, name and data range against the file before anything is read. Entries are views into
// the caller's image; compressed or encrypted entries are listed but refused when read.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vlbias::io_internal {

struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflate, ...
  bool encrypted = false;    // general-purpose flag bit 0
  std::uint64_t offset = 0;  // of the entry's data in the image (checked)
  std::uint64_t size = 0;    // compressed size: the bytes at `offset`
};

// True when `image` starts with a ZIP local file header ("PK\3\4").
bool looks_like_zip(std::span<const std::uint8_t> image);

class ZipArchive {
 public:
  // `image` must outlive the archive. InputError naming `source` for anything malformed:
  // no end record, offsets or sizes past the end of the file or of the central directory,
  // a local header that does not match its central entry, the same name twice.
  ZipArchive(std::span<const std::uint8_t> image, std::string source);
  ZipArchive(const ZipArchive&) = delete;  // index_ views the entries' names
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry named `name`, or nullptr.
  const ZipEntry* find(std::string_view name) const;
  // The stored bytes of `entry`; InputError when it is compressed or encrypted.
  std::span<const std::uint8_t> read(const ZipEntry& entry) const;

 private:
  void read_central_directory(std::uint64_t offset, std::uint64_t size, std::uint64_t count);
  std::uint64_t data_offset(std::uint64_t local_offset, const std::string& name, std::uint64_t size,
                            std::uint64_t directory_offset) const;

  std::span<const std::uint8_t> image_;
  std::string source_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string_view, std::size_t> index_;  // name -> entries_ index
};

}  // namespace vlbias::io_internal
