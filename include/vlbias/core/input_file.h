#pragma once
// What vlbias accepts as an input file to read whole (src/core/input_file.cpp): tables,
// lexicons, stop-word lists, and what it hashes for provenance.
//
// A regular file (or a link to one) is read and hashed independently. A pipe (a named pipe,
// /dev/stdin on a pipe, a shell's <(...)) is accepted deliberately but can be read only once:
// its reader records the SHA-256 of the bytes it read (record_pipe_sha256), and that is the
// hash provenance reports (sha256_file). Anything else (a device such as /dev/zero, whose
// reads never end, a folder, a socket) is a UsageError naming what it is, raised before
// anything is read.
#include <string>
#include <string_view>

namespace vlbias {

enum class InputKind { File, Pipe };

// The kind of `path` (following links). InputError when it does not exist or cannot be
// examined; UsageError, saying what it is and naming `what` ("a table"), when it is neither
// a regular file nor a pipe.
InputKind check_input_file(const std::string& path, std::string_view what = "an input");

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
