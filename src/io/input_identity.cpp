#include "vlbias/io/input_identity.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "parquet/parquet_detail.h"
#include "vlbias/core/sha256.h"
#include "vlbias/io/parquet/parquet.h"

namespace vlbias {

InputKind check_input_or_shards(const std::string& path) {
  if (is_parquet_folder(path)) return InputKind::File;
  return check_input_file(path);
}

std::string input_sha256(const std::string& path) {
  if (!is_parquet_folder(path)) return sha256_file(path);
  // sha256sum's line format, so that the shell recomputes it (the header's comment).
  std::string lines;
  for (const std::string& shard : io_internal::pq_inputs(path)) {
    lines += sha256_file(shard) + "  " + std::filesystem::path(shard).filename().string() + "\n";
  }
  return sha256_hex(lines);
}

std::optional<std::uint64_t> input_bytes(const std::string& path) {
  std::error_code ec;
  if (!is_parquet_folder(path)) {
    const auto bytes = std::filesystem::file_size(path, ec);
    if (ec) return std::nullopt;
    return bytes;
  }
  std::uint64_t total = 0;
  for (const std::string& shard : io_internal::pq_inputs(path)) {
    total += std::filesystem::file_size(shard, ec);
    if (ec) return std::nullopt;
  }
  return total;
}

}  // namespace vlbias
