#include "vlbias/io/run/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

// A name no one can guess ahead of the run: 64 random bits.
std::string random_suffix() {
  std::random_device device;
  const std::uint64_t bits = (std::uint64_t{device()} << 32) ^ device();
  return fmt::format("{:016x}", bits);
}

}  // namespace

AtomicWriter::AtomicWriter(std::filesystem::path path) : path_(std::move(path)) {
  const std::filesystem::path dir = path_.has_parent_path() ? path_.parent_path() : ".";
  const std::string name = path_.filename().string();
  VLBIAS_CHECK(!name.empty() && name != "." && name != "..", InputError,
               "cannot write '{}': expected a file name", path_.string());
  // O_PATH: the folder need not be readable, only writable, as for any file created in it.
  dir_fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  VLBIAS_CHECK(dir_fd_ >= 0, InputError, "cannot write '{}': cannot create a file in '{}': {}",
               path_.string(), dir.string(), std::strerror(errno));
  struct stat st {};
  if (::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    ::close(dir_fd_);
    dir_fd_ = -1;
    VLBIAS_FAIL(InputError, "cannot write '{}': it is a folder; expected a file name",
                path_.string());
  }
  // Hidden, and short enough for NAME_MAX (255) whatever the final name's length.
  const std::string stem = name.substr(0, 200);
  int fd = -1;
  int err = 0;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp_name_ = "." + stem + "." + random_suffix() + ".tmp";
    fd = ::openat(dir_fd_, tmp_name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0666);
    err = errno;
    if (fd < 0 && err != EEXIST) break;
  }
  tmp_ = dir / tmp_name_;
  if (fd < 0) {
    ::close(dir_fd_);
    dir_fd_ = -1;
    VLBIAS_FAIL(InputError, "cannot write '{}': cannot create a file in '{}': {}", path_.string(),
                dir.string(), std::strerror(err));
  }
  file_.reset(::fdopen(fd, "w+b"));
  if (file_ == nullptr) {
    err = errno;
    ::close(fd);
    ::unlinkat(dir_fd_, tmp_name_.c_str(), 0);
    ::close(dir_fd_);
    dir_fd_ = -1;
    VLBIAS_FAIL(InternalError, "cannot write '{}': {}", tmp_.string(), std::strerror(err));
  }
}

AtomicWriter::~AtomicWriter() {
  if (!committed_) {
    file_.reset();
    ::unlinkat(dir_fd_, tmp_name_.c_str(), 0);
  }
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void AtomicWriter::write(const void* data, std::size_t n) {
  if (n == 0) return;
  VLBIAS_CHECK(std::fwrite(data, 1, n, file_.get()) == n, InternalError, "cannot write '{}': {}",
               tmp_.string(), std::strerror(errno));
  written_ += n;
}

// Both go around stdio's buffer with pwrite/pread after flushing it: they leave the stream's
// position (the end, where write() appends) as it was.
void AtomicWriter::overwrite(std::size_t offset, const void* data, std::size_t n) {
  VLBIAS_CHECK(file_ != nullptr && offset <= written_ && n <= written_ - offset, InternalError,
               "cannot overwrite bytes {} to {} of '{}': {} written", offset, offset + n,
               tmp_.string(), written_);
  VLBIAS_CHECK(std::fflush(file_.get()) == 0, InternalError, "cannot write '{}': {}", tmp_.string(),
               std::strerror(errno));
  const auto* bytes = static_cast<const char*>(data);
  for (std::size_t done = 0; done < n;) {
    const ssize_t k =
        ::pwrite(::fileno(file_.get()), bytes + done, n - done, static_cast<off_t>(offset + done));
    VLBIAS_CHECK(k > 0 || (k < 0 && errno == EINTR), InternalError, "cannot write '{}': {}",
                 tmp_.string(), std::strerror(errno));
    if (k > 0) done += static_cast<std::size_t>(k);
  }
}

void AtomicWriter::read_back(std::size_t offset, void* out, std::size_t n) {
  VLBIAS_CHECK(file_ != nullptr && offset <= written_ && n <= written_ - offset, InternalError,
               "cannot read bytes {} to {} of '{}': {} written", offset, offset + n, tmp_.string(),
               written_);
  VLBIAS_CHECK(std::fflush(file_.get()) == 0, InternalError, "cannot write '{}': {}", tmp_.string(),
               std::strerror(errno));
  auto* bytes = static_cast<char*>(out);
  for (std::size_t done = 0; done < n;) {
    const ssize_t k =
        ::pread(::fileno(file_.get()), bytes + done, n - done, static_cast<off_t>(offset + done));
    VLBIAS_CHECK(k > 0 || (k < 0 && errno == EINTR), InternalError, "cannot read '{}': {}",
                 tmp_.string(), k == 0 ? "it ended early" : std::strerror(errno));
    if (k > 0) done += static_cast<std::size_t>(k);
  }
}

void AtomicWriter::write_f32le(const float* values, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    write(values, n * sizeof(float));
  } else {
    std::array<std::uint32_t, 4096> buf;
    for (std::size_t off = 0; off < n; off += buf.size()) {
      const std::size_t len = std::min(buf.size(), n - off);
      for (std::size_t i = 0; i < len; ++i) {
        buf[i] = __builtin_bswap32(std::bit_cast<std::uint32_t>(values[off + i]));
      }
      write(buf.data(), len * sizeof(float));
    }
  }
}

void AtomicWriter::commit() {
  std::FILE* f = file_.release();
  const bool flushed = std::fflush(f) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(f) == 0;
  VLBIAS_CHECK(flushed && closed, InternalError, "cannot finish writing '{}': {}", tmp_.string(),
               std::strerror(flushed ? errno : flush_errno));
  // rename replaces the directory entry: a link at the final name is replaced, not followed.
  const std::string name = path_.filename().string();
  VLBIAS_CHECK(::renameat(dir_fd_, tmp_name_.c_str(), dir_fd_, name.c_str()) == 0, InternalError,
               "cannot rename '{}' to '{}': {}", tmp_.string(), path_.string(),
               std::strerror(errno));
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  AtomicWriter out(path);
  out.write(text.data(), text.size());
  out.commit();
}

void make_output_folders(const std::filesystem::path& base, const std::filesystem::path& relative) {
  std::filesystem::path current = base;
  for (const auto& part : relative) {
    const std::string name = part.string();
    VLBIAS_CHECK(!relative.is_absolute() && name != ".." && !name.empty(), InternalError,
                 "make_output_folders: '{}' is not a plain relative path", relative.string());
    if (name == ".") continue;
    current /= part;
    if (::mkdir(current.c_str(), 0777) != 0 && errno != EEXIST) {
      VLBIAS_FAIL(InputError, "cannot create the folder '{}': {}", current.string(),
                  std::strerror(errno));
    }
    struct stat st {};
    VLBIAS_CHECK(::lstat(current.c_str(), &st) == 0, InputError,
                 "cannot create the folder '{}': {}", current.string(), std::strerror(errno));
    VLBIAS_CHECK(!S_ISLNK(st.st_mode), InputError,
                 "'{}' is a symbolic link; vlbias does not write through links in an output "
                 "folder (remove it)",
                 current.string());
    VLBIAS_CHECK(S_ISDIR(st.st_mode), InputError, "'{}' is not a folder; expected a folder there",
                 current.string());
  }
}

void refuse_symbolic_link(const std::filesystem::path& path, std::string_view what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // absent: it will be created
  VLBIAS_CHECK(!S_ISLNK(st.st_mode), InputError,
               "{} '{}' is a symbolic link; vlbias does not write through links (remove it)", what,
               path.string());
}

}  // namespace vlbias
