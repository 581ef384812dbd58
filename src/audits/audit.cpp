// `vlbias audit`: run_audit hands the spec to its kind's runner, found in the table of kinds
// (audit_kind.h); each kind's runner lives in its folder, src/audits/<kind>/.
#include "vlbias/audits/audit.h"

#include <filesystem>
#include <utility>

#include "audit_kind.h"

namespace vlbias {

const DualEncoderAuditSpec& AuditSpec::dual_encoder() const {
  return audits_internal::held_kind_spec<DualEncoderAuditSpec>(*this);
}
const GeoAuditSpec& AuditSpec::geo() const {
  return audits_internal::held_kind_spec<GeoAuditSpec>(*this);
}
const LvlmAuditSpec& AuditSpec::lvlm() const {
  return audits_internal::held_kind_spec<LvlmAuditSpec>(*this);
}
const VisualAuditSpec& AuditSpec::visual() const {
  return audits_internal::held_kind_spec<VisualAuditSpec>(*this);
}
const RepresentationAuditSpec& AuditSpec::representation() const {
  return audits_internal::held_kind_spec<RepresentationAuditSpec>(*this);
}
// The mutable accessors (for code that edits a parsed spec) check as the const ones do.
DualEncoderAuditSpec& AuditSpec::dual_encoder() {
  return const_cast<DualEncoderAuditSpec&>(std::as_const(*this).dual_encoder());
}
GeoAuditSpec& AuditSpec::geo() {
  return const_cast<GeoAuditSpec&>(std::as_const(*this).geo());
}
LvlmAuditSpec& AuditSpec::lvlm() {
  return const_cast<LvlmAuditSpec&>(std::as_const(*this).lvlm());
}
VisualAuditSpec& AuditSpec::visual() {
  return const_cast<VisualAuditSpec&>(std::as_const(*this).visual());
}
RepresentationAuditSpec& AuditSpec::representation() {
  return const_cast<RepresentationAuditSpec&>(std::as_const(*this).representation());
}

const char* to_string(AuditKind kind) {
  for (const audits_internal::AuditKindOps* k : audits_internal::audit_kinds()) {
    if (k->kind == kind) return k->name;
  }
  return "unknown";
}

void run_audit(const AuditSpec& spec, const std::filesystem::path& run_dir) {
  audits_internal::audit_kind(spec.kind).run(spec, run_dir);
}

}  // namespace vlbias
