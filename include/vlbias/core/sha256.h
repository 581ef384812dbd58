#pragma once
// SHA-256 (FIPS 180-4), used for input provenance in every JSON output.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vlbias {

// Lower-case hex digest of a byte string.
std::string sha256_hex(std::string_view bytes);
// Lower-case hex digest of a file's contents, read in streaming fashion; for a pipe, the
// digest its reader recorded of the bytes it read (input_file.h). Throws InputError if the
// file cannot be read, UsageError for a device, folder or socket, or a pipe not read.
std::string sha256_file(const std::string& path);

}  // namespace vlbias
