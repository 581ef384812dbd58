// libFuzzer target for a sequence classifier's config.json (src/score/classifier_config.cpp):
// architectures, sizes, activations, id2label. Only vlbias::Error may escape, and an accepted
// config must describe a model the loader can size without overflow.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "classifier_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  try {
    const vlbias::ClassifierConfig c = vlbias::score_internal::parse_classifier_config(
        std::string_view(reinterpret_cast<const char*>(data), size), "'fuzz/config.json'");
    // What the loader then multiplies: each product must stay far from overflow.
    if (c.hidden == 0 || c.heads == 0 || c.hidden % c.heads != 0) std::abort();
    if (c.labels.empty()) std::abort();
    const unsigned __int128 words = static_cast<unsigned __int128>(c.vocab_size) * c.hidden;
    const unsigned __int128 ffn = static_cast<unsigned __int128>(c.intermediate) * c.hidden;
    if (words >> 62 || ffn >> 62) std::abort();
  } catch (const vlbias::Error&) {
  }
  return 0;
}
