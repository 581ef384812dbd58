#pragma once
// What vlbias accepts as an input file (src/core/input_file.cpp): tables, lexicons, stop-word
// lists, JSON and YAML files read whole, files mapped in place (images, weights, .npy, caches),
// and what it hashes for provenance. One policy for every reader, applied BEFORE the file is
// opened: opening a device may have effects of its own, and open() on a named pipe without a
// writer would wait forever.
//
// A regular file (or a link to one) is read and hashed independently. A pipe (a named pipe,
// /dev/stdin on a pipe, a shell's <(...)) is accepted where the file is read front to back
// (PipeRule::Allow), never where it is mapped in place (PipeRule::Refuse); it can be read only
// once: its reader records the SHA-256 of the bytes it read (record_pipe_sha256), and that is
// the hash provenance reports (sha256_file). Anything else (a device such as /dev/zero, whose
// reads never end, a folder, a socket) is a UsageError naming what it is, raised before
// anything is opened. open_input_file opens with O_NONBLOCK, so that no open() waits; a pipe
// then waits at most pipe_writer_wait_seconds() for a program to open it for writing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vlbias {

enum class InputKind { File, Pipe };

// Whether a pipe may stand where a file is expected: Refuse for readers that map the file in
// place or read it more than once (images, weights, .npy, safetensors).
enum class PipeRule { Allow, Refuse };

// How long an opened named pipe waits for its first writer before UsageError: a named pipe that
// no program writes to would otherwise hold the reader forever. kPipeWriterWaitSeconds unless
// the environment variable VLBIAS_PIPE_WAIT_SECONDS gives another whole number of seconds
// (1 to kMaxPipeWriterWaitSeconds), for a writer that starts slowly; any other value there is
// a UsageError naming the variable, raised when a pipe is about to wait.
inline constexpr int kPipeWriterWaitSeconds = 10;
inline constexpr int kMaxPipeWriterWaitSeconds = 86400;
int pipe_writer_wait_seconds();

// The kind of `path` (following links). InputError when it does not exist or cannot be
// examined; UsageError, saying what it is and naming `what` ("a table"), when it is neither
// a regular file nor (with PipeRule::Allow) a pipe.
InputKind check_input_file(const std::string& path, std::string_view what = "an input",
                           PipeRule pipes = PipeRule::Allow);

class InputFile;

// Opens `path` for reading after check_input_file(path, what, pipes): InputError when it does
// not exist or cannot be opened; UsageError (saying what it is) for a device, folder or socket,
// or a pipe where `pipes` refuses one, raised before open(). The open is O_NONBLOCK (it never
// waits) and the descriptor is blocking afterwards; a pipe waits up to pipe_writer_wait_seconds()
// for a writer, then UsageError. The kind is checked again on the opened descriptor (a file
// swapped for a pipe or device between the check and the open is refused the same way).
InputFile open_input_file(const std::string& path, std::string_view what = "an input",
                          PipeRule pipes = PipeRule::Allow);

// An input file opened for reading by open_input_file (RAII: closed by the destructor).
class InputFile {
 public:
  InputFile() = default;
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int fd() const { return fd_; }
  InputKind kind() const { return kind_; }
  // Bytes of a regular file when it was opened; 0 for a pipe.
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Up to n bytes into buf; 0 at the end of the file. InputError naming the file on a read
  // error. Blocking: a pipe's writer is known to exist (or to have come and gone).
  std::size_t read(void* buf, std::size_t n);
  // The rest of the file. InputError naming the file and `what` when it holds more than
  // max_bytes (checked while reading: a pipe has no size to check first).
  std::string read_all(std::uintmax_t max_bytes, std::string_view what);

 private:
  friend InputFile open_input_file(const std::string&, std::string_view, PipeRule);
  void close() noexcept;

  int fd_ = -1;
  InputKind kind_ = InputKind::File;
  std::uint64_t size_ = 0;
  std::string path_;
  std::string pending_;  // bytes taken from a pipe while waiting for its writer
};

// UsageError when the pipe at `path` was read before: a second read would see nothing, or
// wait forever for a writer (name it once, or save it to a file). Readers call it before
// opening the pipe.
void check_pipe_not_read(const std::string& path);

// Records the SHA-256 (hex) of everything read from the pipe at `path` (UsageError as
// check_pipe_not_read when it was recorded before).
void record_pipe_sha256(const std::string& path, const std::string& sha256_hex);

// Whether the pipe at `path` was read (and its hash recorded); its hash in *sha256_hex.
bool recorded_pipe_sha256(const std::string& path, std::string* sha256_hex);

}  // namespace vlbias
