// libFuzzer target for the .safetensors reader: header length, JSON, tensor
// entries, offset tiling, and conversion of every tensor. Only vlbias::Error
// may escape; anything else (crash, sanitizer report, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/tensor/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  try {
    const auto f = vlbias::SafetensorsFile::from_bytes(std::span(data, size), "fuzz.safetensors");
    for (const std::string& name : f.names()) {
      const auto& info = f.info(name);
      // A validated tensor lies inside the image and matches its shape.
      if (f.data_offset() + info.end > size) std::abort();
      if (f.bytes(name).size() != info.count * vlbias::dtype_size(info.dtype)) std::abort();
      for (const auto policy : {vlbias::NonFinite::Allow, vlbias::NonFinite::Reject}) {
        try {
          if (f.read_floats(name, policy).size() != info.count) std::abort();
          const vlbias::Matrix m = f.read_matrix(name, policy);
          if (m.rows * m.cols != info.count) std::abort();
        } catch (const vlbias::Error&) {
        }
      }
    }
    (void)f.info("no such tensor");
  } catch (const vlbias::Error&) {
  }
  return 0;
}
