#pragma once
// Every output file is written to `path + ".tmp"` and renamed over `path` only
// when complete (DESIGN: outputs appear whole or not at all).
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>

namespace vlbias {

class AtomicWriter {
 public:
  // Creates `path` + ".tmp" (truncating a stale one). InputError when it
  // cannot be created (missing directory, permissions).
  explicit AtomicWriter(std::filesystem::path path);
  // Removes the temporary file unless commit() succeeded.
  ~AtomicWriter();
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  // Appends n bytes. InternalError on a write failure (disk full, I/O error).
  void write(const void* data, std::size_t n);
  // Appends n little-endian float32 values (byte-swapped on big-endian hosts).
  void write_f32le(const float* values, std::size_t n);
  // Flushes, closes and renames onto the final path. InternalError on failure.
  void commit();

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  bool committed_ = false;
};

// Writes `text` to `path` through an AtomicWriter.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace vlbias
