// The table of audit kinds (audit_kind.h): the one place a kind is registered.
#include "audit_kind.h"

#include "vlbias/core/error.h"

namespace vlbias::audits_internal {

namespace {

// In the order messages list the kinds.
const AuditKindOps* const kAuditKinds[] = {&kSocialPerceptionKind,  &kTraitPairsKind,
                                           &kGeoDiversityKind,      &kLvlmCounterfactualKind,
                                           &kVisualStereotypesKind, &kRepresentationKind};

}  // namespace

std::span<const AuditKindOps* const> audit_kinds() {
  return kAuditKinds;
}

const AuditKindOps& audit_kind(AuditKind kind) {
  for (const AuditKindOps* k : kAuditKinds) {
    if (k->kind == kind) return *k;
  }
  VLBIAS_FAIL(InternalError, "audit kind {} is not registered", static_cast<int>(kind));
}

}  // namespace vlbias::audits_internal
