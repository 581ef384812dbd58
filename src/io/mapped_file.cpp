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

namespace vlbias {

namespace {

// Closes the descriptor on every exit path of the constructor.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path, MapAccess access) : path_(path) {
  FdGuard fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  VLBIAS_CHECK(fd.fd >= 0, InputError, "cannot open '{}': {}", path.string(), std::strerror(errno));
  struct stat st {};
  VLBIAS_CHECK(::fstat(fd.fd, &st) == 0, InputError, "cannot stat '{}': {}", path.string(),
               std::strerror(errno));
  VLBIAS_CHECK(!S_ISDIR(st.st_mode), InputError, "'{}' is a directory, expected a file",
               path.string());
  VLBIAS_CHECK(S_ISREG(st.st_mode), InputError,
               "'{}' is not a regular file (pipe, socket or device); expected a file on disk",
               path.string());
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.fd, 0);
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
