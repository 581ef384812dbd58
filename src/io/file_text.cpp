// Reading a small file whole (include/vlbias/io/file_text.h).
#include "vlbias/io/file_text.h"

#include <fstream>

#include "vlbias/core/error.h"
#include "vlbias/core/input_file.h"

namespace vlbias {

std::string read_file_text(const std::filesystem::path& path, std::string_view what,
                           std::uintmax_t max_bytes) {
  const std::string name = path.string();
  std::error_code ec;
  VLBIAS_CHECK(std::filesystem::exists(path, ec), InputError, "'{}' does not exist; expected {}",
               name, what);
  (void)check_input_file(name, what);
  std::ifstream in(path, std::ios::binary);
  VLBIAS_CHECK(in.good(), InputError, "cannot open '{}'; expected {}", name, what);
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    VLBIAS_CHECK(text.size() <= max_bytes, InputError, "'{}' is larger than {} bytes; expected {}",
                 name, max_bytes, what);
  }
  VLBIAS_CHECK(!in.bad(), InputError, "cannot read '{}'; expected {}", name, what);
  VLBIAS_CHECK(!text.empty(), InputError, "'{}' is empty; expected {}", name, what);
  return text;
}

}  // namespace vlbias
