#pragma once
// Reading a small file whole (src/io/file_text.cpp): model configurations, vocabularies,
// lexicons, checkpoints. One reader so that every such file gets the same checks: a device
// or folder is refused before anything is read (check_input_file: /dev/zero would never
// end), the size is bounded while reading (a pipe has no size to check first), and an empty
// file is an error naming what was expected instead of a confusing parse error later.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace vlbias {

inline constexpr std::uintmax_t kMaxFileTextBytes = std::uintmax_t{256} << 20;

// The bytes of `path`. InputError naming the file and `what` ("a tokenizer.json") when it
// does not exist, cannot be opened or read, holds more than `max_bytes`, or is empty;
// UsageError (check_input_file) when it is neither a regular file nor a pipe.
std::string read_file_text(const std::filesystem::path& path, std::string_view what,
                           std::uintmax_t max_bytes = kMaxFileTextBytes);

}  // namespace vlbias
