// `vlbias audit`: run_audit hands the spec to its kind's runner (audit.h); each kind's runner
// lives in its own S_audit.cpp.
#include "vlbias/audits/audit.h"

#include <filesystem>

namespace vlbias {

const char* to_string(AuditKind kind) {
  switch (kind) {
    case AuditKind::SocialPerception:
      return "social-perception";
    case AuditKind::TraitPairs:
      return "trait-pairs";
    case AuditKind::GeoDiversity:
      return "geo-diversity";
    case AuditKind::LvlmCounterfactual:
      return "lvlm-counterfactual";
    case AuditKind::VisualStereotypes:
      return "visual-stereotypes";
  }
  return "unknown";
}

void run_audit(const AuditSpec& spec, const std::filesystem::path& run_dir) {
  switch (spec.kind) {
    case AuditKind::SocialPerception:
    case AuditKind::TraitPairs:
      run_dual_encoder_audit(spec, run_dir);
      return;
    case AuditKind::GeoDiversity:
      run_geo_audit(spec, run_dir);
      return;
    case AuditKind::LvlmCounterfactual:
      run_lvlm_audit(spec, run_dir);
      return;
    case AuditKind::VisualStereotypes:
      run_visual_audit(spec, run_dir);
      return;
  }
}

}  // namespace vlbias
