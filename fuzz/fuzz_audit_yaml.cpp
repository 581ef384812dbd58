// libFuzzer target for the YAML audit spec parser (parse_audit_spec). Only
// vlbias::Error may escape; anything else (crash, hang, sanitizer report, other
// exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "vlbias/audits/audit.h"
#include "vlbias/core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const vlbias::AuditSpec spec = vlbias::parse_audit_spec(text, "/fuzz", "fuzz.yaml");
    // A spec that parses holds its kind's spec (the variant and the kind agree) with the
    // required parts the header promises for its kind.
    if (spec.kind == vlbias::AuditKind::GeoDiversity) {
      const auto* g = std::get_if<vlbias::GeoAuditSpec>(&spec.kind_spec);
      if (g == nullptr || g->real_table.empty() || g->real_features.path.empty() ||
          g->generated.empty()) {
        __builtin_trap();
      }
      for (const vlbias::GeoSource& s : g->generated) {
        if (s.table.empty() || s.features.path.empty()) __builtin_trap();
      }
    } else if (spec.kind == vlbias::AuditKind::SocialPerception ||
               spec.kind == vlbias::AuditKind::TraitPairs) {
      const auto* d = std::get_if<vlbias::DualEncoderAuditSpec>(&spec.kind_spec);
      if (d == nullptr || d->group_factors.empty() || d->image_table.empty() ||
          d->prompt_embeddings.path.empty()) {
        __builtin_trap();
      }
    } else if ((spec.kind == vlbias::AuditKind::LvlmCounterfactual &&
                !std::holds_alternative<vlbias::LvlmAuditSpec>(spec.kind_spec)) ||
               (spec.kind == vlbias::AuditKind::VisualStereotypes &&
                !std::holds_alternative<vlbias::VisualAuditSpec>(spec.kind_spec)) ||
               (spec.kind == vlbias::AuditKind::Representation &&
                !std::holds_alternative<vlbias::RepresentationAuditSpec>(spec.kind_spec))) {
      __builtin_trap();
    }
  } catch (const vlbias::Error&) {
  }
  return 0;
}
