#include "vlbias/core/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>
#include <utility>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

const char* kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISFIFO(mode)) return "a pipe";
  return "not a regular file";
}

bool accepted_kind(mode_t mode, PipeRule pipes) {
  return S_ISREG(mode) || (S_ISFIFO(mode) && pipes == PipeRule::Allow);
}

[[noreturn]] void refuse_kind(const std::string& path, mode_t mode, std::string_view what,
                              PipeRule pipes) {
  if (pipes == PipeRule::Refuse) {
    VLBIAS_FAIL(
        UsageError,
        "'{}' is {}, not a regular file; {} must be a regular file on disk (it is read in place, "
        "so a pipe or device cannot stand for it)",
        path, kind_name(mode), what);
  }
  VLBIAS_FAIL(UsageError,
              "'{}' is {}; {} must be a regular file or a pipe (a named pipe, /dev/stdin)", path,
              kind_name(mode), what);
}

}  // namespace

int pipe_writer_wait_seconds() {
  const char* value = std::getenv("VLBIAS_PIPE_WAIT_SECONDS");
  if (value == nullptr) return kPipeWriterWaitSeconds;
  const std::string_view text(value);
  int seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  VLBIAS_CHECK(ec == std::errc() && end == text.data() + text.size() && seconds >= 1 &&
                   seconds <= kMaxPipeWriterWaitSeconds,
               UsageError,
               "VLBIAS_PIPE_WAIT_SECONDS is '{}'; expected a whole number of seconds from 1 to {} "
               "(how long a named pipe waits for its writer; unset, {} s)",
               text, kMaxPipeWriterWaitSeconds, kPipeWriterWaitSeconds);
  return seconds;
}

namespace {

// Returns once the pipe opened (O_NONBLOCK) at `fd` has a writer: a read says there is none
// yet by returning 0 and one that holds it by EAGAIN; a byte read meanwhile is kept in
// *pending. A writer that came and went without writing (POLLHUP) leaves an empty input.
// UsageError after pipe_writer_wait_seconds() without a writer.
void wait_for_pipe_writer(int fd, const std::string& path, std::string* pending) {
  const int wait_seconds = pipe_writer_wait_seconds();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_seconds);
  for (;;) {
    char byte = 0;
    const ssize_t n = ::read(fd, &byte, 1);
    if (n == 1) {
      pending->push_back(byte);
      return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    VLBIAS_CHECK(n == 0 || errno == EINTR, InputError, "cannot read '{}': {}", path,
                 std::strerror(errno));
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0 && (p.revents & POLLHUP) && !(p.revents & POLLIN)) return;
    VLBIAS_CHECK(std::chrono::steady_clock::now() < deadline, UsageError,
                 "'{}' is a named pipe that no program opened for writing within {} s; start "
                 "the program that writes it first, or give a file",
                 path, wait_seconds);
  }
}

// Pipes by the path that named them and their identity (device, inode): a pipe removed and
// another made at the same path is another pipe.
using PipeId = std::tuple<std::string, dev_t, ino_t>;
struct PipeHashes {
  std::mutex mutex;
  std::map<PipeId, std::string> hashes;
};

PipeHashes& pipe_hashes() {
  static PipeHashes registry;
  return registry;
}

PipeId pipe_identity(const std::string& path) {
  struct stat st {};
  VLBIAS_CHECK(::stat(path.c_str(), &st) == 0, InputError, "cannot read '{}': {}", path,
               std::strerror(errno));
  return {path, st.st_dev, st.st_ino};
}

[[noreturn]] void fail_read_twice(const std::string& path) {
  VLBIAS_FAIL(UsageError,
              "'{}' is a pipe that was already read; a pipe can be read once (name it once, or "
              "save it to a file)",
              path);
}

}  // namespace

InputKind check_input_file(const std::string& path, std::string_view what, PipeRule pipes) {
  struct stat st {};
  VLBIAS_CHECK(::stat(path.c_str(), &st) == 0, InputError, "cannot read '{}': {}", path,
               std::strerror(errno));
  if (!accepted_kind(st.st_mode, pipes)) refuse_kind(path, st.st_mode, what, pipes);
  return S_ISFIFO(st.st_mode) ? InputKind::Pipe : InputKind::File;
}

InputFile::~InputFile() {
  close();
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      kind_(other.kind_),
      size_(other.size_),
      path_(std::move(other.path_)),
      pending_(std::move(other.pending_)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    kind_ = other.kind_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

void InputFile::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::size_t InputFile::read(void* buf, std::size_t n) {
  if (n == 0) return 0;
  if (!pending_.empty()) {
    const std::size_t k = std::min(n, pending_.size());
    std::memcpy(buf, pending_.data(), k);
    pending_.erase(0, k);
    return k;
  }
  for (;;) {
    const ssize_t got = ::read(fd_, buf, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    VLBIAS_CHECK(errno == EINTR, InputError, "cannot read '{}': {}", path_, std::strerror(errno));
  }
}

std::string InputFile::read_all(std::uintmax_t max_bytes, std::string_view what) {
  std::string text;
  if (kind_ == InputKind::File && size_ <= max_bytes) text.reserve(size_);
  char buf[65536];
  for (;;) {
    const std::size_t n = read(buf, sizeof buf);
    if (n == 0) return text;
    text.append(buf, n);
    VLBIAS_CHECK(text.size() <= max_bytes, InputError, "'{}' is larger than {} bytes; expected {}",
                 path_, max_bytes, what);
  }
}

InputFile open_input_file(const std::string& path, std::string_view what, PipeRule pipes) {
  // The kind before open(): a device is never opened, nor a pipe where none is allowed.
  struct stat before {};
  VLBIAS_CHECK(::stat(path.c_str(), &before) == 0, InputError, "cannot open '{}': {}", path,
               std::strerror(errno));
  if (!accepted_kind(before.st_mode, pipes)) refuse_kind(path, before.st_mode, what, pipes);
  InputFile f;
  f.path_ = path;
  f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  VLBIAS_CHECK(f.fd_ >= 0, InputError, "cannot open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  VLBIAS_CHECK(::fstat(f.fd_, &st) == 0, InputError, "cannot read '{}': {}", path,
               std::strerror(errno));
  if (!accepted_kind(st.st_mode, pipes)) refuse_kind(path, st.st_mode, what, pipes);
  if (S_ISFIFO(st.st_mode)) {
    f.kind_ = InputKind::Pipe;
    wait_for_pipe_writer(f.fd_, path, &f.pending_);
  } else {
    f.size_ = static_cast<std::uint64_t>(st.st_size);
  }
  const int flags = ::fcntl(f.fd_, F_GETFL);
  VLBIAS_CHECK(flags >= 0 && ::fcntl(f.fd_, F_SETFL, flags & ~O_NONBLOCK) == 0, InputError,
               "cannot read '{}': {}", path, std::strerror(errno));
  return f;
}

void check_pipe_not_read(const std::string& path) {
  std::string ignored;
  if (recorded_pipe_sha256(path, &ignored)) fail_read_twice(path);
}

void record_pipe_sha256(const std::string& path, const std::string& sha256_hex) {
  const auto id = pipe_identity(path);
  PipeHashes& r = pipe_hashes();
  std::lock_guard lock(r.mutex);
  if (!r.hashes.emplace(id, sha256_hex).second) fail_read_twice(path);
}

bool recorded_pipe_sha256(const std::string& path, std::string* sha256_hex) {
  const auto id = pipe_identity(path);
  PipeHashes& r = pipe_hashes();
  std::lock_guard lock(r.mutex);
  const auto it = r.hashes.find(id);
  if (it == r.hashes.end()) return false;
  *sha256_hex = it->second;
  return true;
}

}  // namespace vlbias
