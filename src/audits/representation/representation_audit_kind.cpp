// The representation kind (issue 42): `vlbias audit --check` (audit.h's check_audit_inputs) and
// the kind's entry in the table of kinds (audit_kind.h). The check reads the inputs with the
// run's own readers (the labels joined to the manifest, the targets), so the first fault throws
// the run's error; no analysis is computed.
#include <cstddef>
#include <filesystem>
#include <vector>

#include "audit_kind.h"
#include "representation_audit_internal.h"

namespace vlbias::audits_internal {

namespace {

std::size_t check_representation_inputs(const AuditCommonSpec& /*spec*/,
                                        const RepresentationAuditSpec& r) {
  std::vector<std::filesystem::path> inputs = {r.labels, r.manifest};
  if (!r.targets.empty()) inputs.push_back(r.targets);
  for (const ScoreTableSpec& s : r.scores) inputs.push_back(s.table);
  const std::size_t checked = check_input_files(inputs);
  const RepresentationData data = read_representation_data(r, read_labels_table(r));
  if (!r.targets.empty()) read_representation_targets(r, data);
  if (!r.scores.empty()) read_representation_scores(r, data);
  return checked;
}

}  // namespace

const AuditKindOps kRepresentationKind =
    kind_ops<RepresentationAuditSpec, parse_representation_root, check_representation_inputs,
             run_representation_audit>(AuditKind::Representation, "representation");

}  // namespace vlbias::audits_internal
