// libFuzzer target for the .npy reader: header parsing, dtype and size checks,
// decoding and the matrix/vector conversions. Only vlbias::Error may escape
// the parser; anything else (crash, sanitizer report, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/tensor/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  const std::span<const std::uint8_t> bytes(data, size);
  try {
    const vlbias::NpyHeader h = vlbias::parse_npy_header(bytes, "fuzz.npy");
    // A validated header describes exactly the bytes that follow it.
    if (h.data_offset + h.data_bytes != size) std::abort();
  } catch (const vlbias::Error&) {
  }
  for (const auto policy : {vlbias::NonFinite::Allow, vlbias::NonFinite::Reject}) {
    try {
      vlbias::NpyArray a = vlbias::parse_npy(bytes, "fuzz.npy", policy);
      if (a.data.size() != a.header.count) std::abort();
      if (a.header.shape.size() == 2) {
        const vlbias::Matrix m = vlbias::npy_to_matrix(std::move(a), "fuzz.npy");
        if (m.rows * m.cols != m.data.size()) std::abort();
      } else {
        (void)vlbias::npy_to_vector(std::move(a), "fuzz.npy");
      }
    } catch (const vlbias::Error&) {
    }
  }
  return 0;
}
