// The social-perception and trait-pairs kinds (papers 001 and 004): `vlbias audit --check`
// (audit.h's check_audit_inputs) and the kind's entry in the table of kinds (audit_kind.h). The
// checks repeat the run's own, with the same words (src/audits/audit_check.cpp says how
// tests/cli/audit_check_test.cpp holds them together).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "audit_kind.h"
#include "dual_encoder_audit_internal.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias::audits_internal {

namespace {

std::size_t check_dual_encoder_inputs(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d) {
  const bool traits = spec.kind == AuditKind::TraitPairs;
  refuse_other_kind_analyses(spec, d);
  const StudyFiles files = study_files(d);
  std::vector<std::filesystem::path> inputs;
  for (const std::string& p : provenance_inputs(spec, files)) {
    if (p != spec.spec_path.string()) inputs.push_back(p);
  }
  const std::size_t checked = check_input_files(inputs);
  // The run's loader: shapes, dimensions, the id join and the manifest, as the run checks them.
  const Study study = load_study(files);
  check_factor_columns(study, d);

  if (traits && d.confidence.toggle.enabled) {
    const std::string across =
        d.confidence.across.empty() ? d.group_factors[0] : d.confidence.across;
    std::string within = d.confidence.within;
    for (std::size_t g = 0; within.empty() && g < d.group_factors.size(); ++g) {
      if (d.group_factors[g] != across) within = d.group_factors[g];
    }
    VLBIAS_CHECK(within != across, UsageError,
                 "analyses.confidence: across and within are both '{}'", across);
    require_columns(study.images, {across}, "confidence.across");
    if (!within.empty()) require_columns(study.images, {within}, "confidence.within");
  }
  if (d.scweat.toggle.enabled) {
    for (const auto& grouping : d.scweat.groupings) require_table_columns(study.images, grouping);
  }
  if (traits) check_explain_inputs(d, study);
  if (!traits) {
    if (d.markedness.toggle.enabled) {
      require_table_columns(study.images, d.markedness.attributes);
    }
    if (d.ranking.toggle.enabled) require_table_columns(study.images, d.ranking.attributes);
    if (d.trends.toggle.enabled) require_table_columns(study.images, d.trends.x);
    if (d.ellipses.toggle.enabled && !d.ellipses.points_by.empty()) {
      require_table_columns(study.images, {d.ellipses.points_by});
    }
  }
  return checked;
}

}  // namespace

const AuditKindOps kSocialPerceptionKind =
    kind_ops<DualEncoderAuditSpec, parse_dual_encoder_root, check_dual_encoder_inputs,
             run_dual_encoder_audit>(AuditKind::SocialPerception, "social-perception");
const AuditKindOps kTraitPairsKind =
    kind_ops<DualEncoderAuditSpec, parse_dual_encoder_root, check_dual_encoder_inputs,
             run_dual_encoder_audit>(AuditKind::TraitPairs, "trait-pairs");

}  // namespace vlbias::audits_internal
