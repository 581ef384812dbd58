// libFuzzer target for the HTML report (report.h render_report): `vlbias report RUN_DIR`
// renders whatever JSON sits in RUN_DIR/results.json. Only vlbias::Error may escape; a
// crash, hang, sanitizer report or other exception is a bug. Every rendered page must be
// a complete document.
#include <cstddef>
#include <cstdint>
#include <string>

#include "vlbias/core/error.h"
#include "vlbias/report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // As `vlbias report` reads it: parse_json's depth limit first (json.h).
  const vlbias::ParsedJson parsed = vlbias::try_parse_json(text);
  if (!parsed.ok()) return 0;
  const vlbias::Json& results = parsed.value;
  try {
    const vlbias::RenderedReport r = vlbias::render_report(results);
    if (r.html.rfind("<!DOCTYPE html>", 0) != 0 || r.html.find("</html>") == std::string::npos) {
      __builtin_trap();
    }
  } catch (const vlbias::Error&) {
  }
  return 0;
}
