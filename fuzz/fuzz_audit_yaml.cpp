// libFuzzer target for the YAML audit spec parser (parse_audit_spec). Only
// vlbias::Error may escape; anything else (crash, hang, sanitizer report, other
// exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const vlbias::AuditSpec spec = vlbias::parse_audit_spec(text, "/fuzz", "fuzz.yaml");
    // A spec that parses has the required parts the header promises for its kind.
    if (spec.kind == vlbias::AuditKind::GeoDiversity) {
      if (spec.geo.real_table.empty() || spec.geo.real_features.path.empty() ||
          spec.geo.generated.empty()) {
        __builtin_trap();
      }
      for (const vlbias::GeoSource& s : spec.geo.generated) {
        if (s.table.empty() || s.features.path.empty()) __builtin_trap();
      }
    } else if (spec.kind == vlbias::AuditKind::SocialPerception ||
               spec.kind == vlbias::AuditKind::TraitPairs) {
      const vlbias::DualEncoderAuditSpec& d = spec.dual_encoder;
      if (d.group_factors.empty() || d.image_table.empty() || d.prompt_embeddings.path.empty()) {
        __builtin_trap();
      }
    }
  } catch (const vlbias::Error&) {
  }
  return 0;
}
