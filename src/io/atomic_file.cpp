#include "vlbias/atomic_file.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <utility>

#include "vlbias/error.h"

namespace vlbias {

AtomicWriter::AtomicWriter(std::filesystem::path path) : path_(std::move(path)) {
  tmp_ = path_;
  tmp_ += ".tmp";
  file_.reset(std::fopen(tmp_.c_str(), "wb"));
  VLBIAS_CHECK(file_ != nullptr, InputError, "cannot write '{1}': cannot create '{0}': {2}",
               tmp_.string(), path_.string(), std::strerror(errno));
}

AtomicWriter::~AtomicWriter() {
  if (committed_) return;
  file_.reset();
  std::error_code ignored;
  std::filesystem::remove(tmp_, ignored);
}

void AtomicWriter::write(const void* data, std::size_t n) {
  if (n == 0) return;
  VLBIAS_CHECK(std::fwrite(data, 1, n, file_.get()) == n, InternalError, "cannot write '{}': {}",
               tmp_.string(), std::strerror(errno));
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
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  VLBIAS_CHECK(!ec, InternalError, "cannot rename '{}' to '{}': {}", tmp_.string(), path_.string(),
               ec.message());
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  AtomicWriter out(path);
  out.write(text.data(), text.size());
  out.commit();
}

}  // namespace vlbias
