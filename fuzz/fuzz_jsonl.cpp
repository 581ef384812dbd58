// libFuzzer target for the JSON Lines reader (and grouping over what it reads).
// Only vlbias::Error may escape; anything else (crash, sanitizer report, other
// exception, broken invariant) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "table_fuzz_checks.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/table/table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vlbias::set_quiet(true);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const vlbias::Table t = vlbias::parse_jsonl(text, "fuzz.jsonl");
    vlbias::fuzz::check_table(t);
    vlbias::fuzz::check_grouping(t);
  } catch (const vlbias::Error&) {
  }
  return 0;
}
