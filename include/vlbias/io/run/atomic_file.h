#pragma once
// Every output file is written to a fresh temporary in its folder and renamed over the final
// path only when complete (outputs appear whole or not at all: docs/design.md#atomic-outputs).
//
// Nothing is written through a symbolic link: the temporary gets a random name and is created
// with O_CREAT | O_EXCL | O_NOFOLLOW (mkstemp's guarantee: a link or file planted at any
// name is never opened), and the rename replaces whatever entry holds the final name (a link
// is replaced, its target untouched). Folders inside a run folder are made with
// make_output_folders, which refuses a link where a folder is expected.
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>

namespace vlbias {

class AtomicWriter {
 public:
  // Creates ".<name>.<random>.tmp" in the folder of `path`. InputError when `path` is a folder
  // or the temporary cannot be created (missing folder, permissions).
  explicit AtomicWriter(std::filesystem::path path);
  // Removes the temporary file unless commit() succeeded.
  ~AtomicWriter();
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  // Appends n bytes. InternalError on a write failure (disk full, I/O error).
  void write(const void* data, std::size_t n);
  // Appends n little-endian float32 values (byte-swapped on big-endian hosts).
  void write_f32le(const float* values, std::size_t n);
  // Replaces n bytes at `offset` of what was written so far (a header whose size is fixed but
  // whose content is known only at the end); offset + n must not pass the end. InternalError on
  // failure.
  void overwrite(std::size_t offset, const void* data, std::size_t n);
  // Reads back n bytes at `offset` of what was written so far. InternalError on failure.
  void read_back(std::size_t offset, void* out, std::size_t n);
  // Flushes, closes and renames onto the final path. InternalError on failure.
  void commit();

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::filesystem::path path_;
  std::filesystem::path tmp_;  // for messages; the file is reached through dir_fd_
  std::string tmp_name_;
  int dir_fd_ = -1;  // the folder, held so the temporary and the rename stay in it
  std::unique_ptr<std::FILE, FileCloser> file_;
  bool committed_ = false;
  std::size_t written_ = 0;  // bytes appended so far
};

// Writes `text` to `path` through an AtomicWriter.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// Makes base/relative and every folder between them (base itself must exist), refusing to go
// through a symbolic link or a file: InputError naming the entry. A run folder's subfolders
// (tables/, images/<row>/) are made this way so that a link planted in the run folder cannot
// send outputs elsewhere. Safe to call from several threads at once.
void make_output_folders(const std::filesystem::path& base, const std::filesystem::path& relative);

// InputError when `path` is a symbolic link (`what` names it in the message: "the run store").
void refuse_symbolic_link(const std::filesystem::path& path, std::string_view what);

}  // namespace vlbias
