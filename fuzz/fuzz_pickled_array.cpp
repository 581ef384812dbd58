// libFuzzer target for the pickled numpy array reader (Q16's prompts.p: pickled_array.h): the
// restricted unpickler with numpy's reconstructors allowed as data, and the interpretation of
// the value tree as a float matrix. Only vlbias::Error may escape; anything else (crash,
// sanitizer report, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/tensor/pickled_array.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  try {
    const vlbias::Matrix m = vlbias::parse_pickled_numpy_matrix(std::span(data, size), "fuzz.p");
    // The values come from the file's own bytes: never more than it holds.
    if (m.data.size() != m.rows * m.cols || m.data.size() * 2 > size * 4) std::abort();
  } catch (const vlbias::Error&) {
  }
  return 0;
}
