// libFuzzer target for the PyTorch checkpoint reader: container detection, the ZIP reader,
// the restricted unpickler, storage binding, view checks, materialisation of every tensor and
// its conversion to safetensors. Only vlbias::Error may escape; anything else (crash,
// sanitizer report, other exception) is a bug. The tensors' total is held to 64 MiB so a
// mutated broadcast view cannot exhaust the fuzzer's memory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  try {
    const auto c = vlbias::TorchCheckpoint::from_bytes(std::span(data, size), "fuzz.pth",
                                                       {.max_tensor_bytes = 64u << 20});
    for (std::size_t i = 0; i < c.tensors().size(); ++i) {
      const auto& t = c.tensors()[i];
      // A validated view lies inside its storage.
      if (t.count > 0 && t.storage.size() < vlbias::dtype_size(t.dtype)) std::abort();
      std::vector<std::uint8_t> out(t.count * vlbias::dtype_size(t.dtype));
      c.copy_tensor(i, out);
    }
    for (const auto target : {vlbias::WeightsDtype::Keep, vlbias::WeightsDtype::F16}) {
      const auto f = vlbias::SafetensorsFile::from_owned(vlbias::torch_as_safetensors(c, target),
                                                         "fuzz.safetensors");
      if (f.names().size() != c.tensors().size()) std::abort();
    }
  } catch (const vlbias::Error&) {
  }
  return 0;
}
