// Reading a small file whole (include/vlbias/io/file_text.h).
#include "vlbias/io/file_text.h"

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"

namespace vlbias {

std::string read_file_text(const std::filesystem::path& path, std::string_view what,
                           std::uintmax_t max_bytes) {
  const std::string name = path.string();
  std::error_code ec;
  VLBIAS_CHECK(std::filesystem::exists(path, ec), InputError, "'{}' does not exist; expected {}",
               name, what);
  // Devices and folders are refused before open(); a named pipe never blocks the open.
  InputFile file = open_input_file(name, what);
  std::string text = file.read_all(max_bytes, what);
  VLBIAS_CHECK(!text.empty(), InputError, "'{}' is empty; expected {}", name, what);
  return text;
}

}  // namespace vlbias
