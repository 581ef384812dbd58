#include "vlbias/core/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "vlbias/core/error.h"

namespace vlbias {

namespace {

const char* kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
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

InputKind check_input_file(const std::string& path, std::string_view what) {
  struct stat st {};
  VLBIAS_CHECK(::stat(path.c_str(), &st) == 0, InputError, "cannot read '{}': {}", path,
               std::strerror(errno));
  if (S_ISREG(st.st_mode)) return InputKind::File;
  if (S_ISFIFO(st.st_mode)) return InputKind::Pipe;
  VLBIAS_FAIL(UsageError,
              "'{}' is {}; {} must be a regular file or a pipe (a named pipe, /dev/stdin)", path,
              kind_name(st.st_mode), what);
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
