// `vlbias audit`: run_audit hands the spec to its kind's runner, found in the table of kinds
// (audit_kind.h); each kind's runner lives in its folder, src/audits/<kind>/.
#include "vlbias/audits/audit.h"

#include <filesystem>

#include "audit_kind.h"

namespace vlbias {

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
