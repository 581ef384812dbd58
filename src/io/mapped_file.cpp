#include "vlbias/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"

namespace vlbias {

namespace {

// The file opened by the one input policy (core/input_file.h): a pipe, device, folder or socket
// is refused before open() (mmap needs a file on disk; open() on a named pipe would wait for a
// writer), as an InputError since what is mapped is named by a table, a spec or a model folder.
InputFile open_for_mapping(const std::filesystem::path& path) {
  try {
    return open_input_file(path.string(), "this file", PipeRule::Refuse);
  } catch (const UsageError& e) {
    throw InputError(e.what());
  }
}

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path, MapAccess access) : path_(path) {
  const InputFile file = open_for_mapping(path);
  struct stat st {};
  VLBIAS_CHECK(::fstat(file.fd(), &st) == 0, InputError, "cannot stat '{}': {}", path.string(),
               std::strerror(errno));
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  VLBIAS_CHECK(p != MAP_FAILED, InputError, "cannot memory-map '{}' ({} bytes): {}", path.string(),
               size_, std::strerror(errno));
  data_ = static_cast<const std::uint8_t*>(p);
  // Only a hint: failure changes speed, never results.
  if (access == MapAccess::Sequential) {
    ::madvise(p, size_, MADV_SEQUENTIAL);
    ::madvise(p, size_, MADV_WILLNEED);
  }
}

MappedFile::~MappedFile() {
  release();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release_pages(std::span<const std::uint8_t> part) const {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(part.data());
  const std::uintptr_t b = (begin + page - 1) / page * page;  // whole pages only
  const std::uintptr_t e = (begin + part.size()) / page * page;
  if (part.empty() || e <= b) return;
  assert(part.data() >= data_ && part.data() + part.size() <= data_ + size_);
  ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace vlbias
