#pragma once
// Audit specs and runs (src/audits): `vlbias audit SPEC.yaml --out RUN_DIR`.
//
// One include for users: this header includes every kind's header, where the kind's spec keys
// are documented at the top, its spec struct and its runner are declared:
//   social-perception (paper 001), trait-pairs (paper 004)  dual_encoder_audit.h
//   geo-diversity (paper 002)                               geo_audit.h
//   lvlm-counterfactual (paper 003)                         lvlm_audit.h
//   visual-stereotypes (paper 000)                          visual_audit.h
//   representation (issue 42: who appears in T2I images)    representation_audit.h
//
// A spec is YAML (yaml-cpp). Relative paths are relative to the spec file's folder.
// Unknown keys anywhere are a UsageError naming the key and the keys allowed there,
// so a typo never silently drops an analysis. Version 1. Keys every kind accepts at the root:
//
//   version: 1                      # optional; only 1 exists
//   kind: social-perception         # required: one of the kinds above
//   title: "CLIP ViT-B/32 on CausalFace"   # optional: the report's title ...
//   about: "Synthetic data, planted effect" # ... and what was audited, under it
//   seed: 7                         # every resampling stream derives from it (default 0)
//   min_group_size: 10              # groups below this n are flagged (default 2)
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>

#include "vlbias/audits/audit_types.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/audits/geo_audit.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/audits/representation_audit.h"
#include "vlbias/audits/visual_audit.h"

namespace vlbias {

// A parsed spec: the common keys (AuditCommonSpec, audit_types.h: kind, seed, min_group_size,
// title, about, report images) and the kind's own spec. `kind_spec` holds the alternative of
// `kind` (DualEncoderAuditSpec for both social-perception and trait-pairs); parse_audit_spec
// keeps them in step. A default AuditSpec is a social-perception spec with its defaults.
struct AuditSpec : AuditCommonSpec {
  std::variant<DualEncoderAuditSpec, GeoAuditSpec, LvlmAuditSpec, VisualAuditSpec,
               RepresentationAuditSpec>
      kind_spec;

  // The kind's spec; InternalError when `kind_spec` holds another kind's.
  const DualEncoderAuditSpec& dual_encoder() const;  // social-perception, trait-pairs
  const GeoAuditSpec& geo() const;                   // geo-diversity
  const LvlmAuditSpec& lvlm() const;                 // lvlm-counterfactual
  const VisualAuditSpec& visual() const;             // visual-stereotypes
  const RepresentationAuditSpec& representation() const;
  DualEncoderAuditSpec& dual_encoder();
  GeoAuditSpec& geo();
  LvlmAuditSpec& lvlm();
  VisualAuditSpec& visual();
  RepresentationAuditSpec& representation();
};

// Parses a spec from YAML text; `base_dir` resolves relative paths, `source` names
// the spec in messages. UsageError (one sentence naming the key path, e.g.
// "analyses.scweat.permutations", and what was expected): malformed YAML (with its
// line), a missing required key (kind, and the kind's own: for the dual-encoder kinds
// images.table, images.embeddings, prompts.manifest, prompts.embeddings, factors.groups), an
// unknown kind (listing the kinds,
// with a near miss suggested), an unknown key, a value of the wrong type or out of range
// (permutations 1 to 10^6, bootstrap 0 to 10^6 (0: no CIs), pairs 1 to 10^7, k > 0; ci in
// (0, 1); thresholds >= 0 and finite), text that is not UTF-8, an input path that names a
// device or a folder, a factor listed in two roles, an unknown p_test, scale, test, fit_to,
// desired or absent, index without id_column.
AuditSpec parse_audit_spec(const std::string& yaml_text, const std::filesystem::path& base_dir,
                           const std::string& source);
// Reads and parses a spec file (InputError when it cannot be read).
AuditSpec load_audit_spec(const std::filesystem::path& path);

// Runs the audit with its kind's runner (run_dual_encoder_audit, run_geo_audit, run_lvlm_audit
// without shards, run_visual_audit) and writes RUN_DIR/results.json, RUN_DIR/report.html and
// RUN_DIR/tables/*.csv. RUN_DIR is created when absent and locked for the run (UsageError when
// another process holds it, or when it names a file); the outputs are written into a staging
// folder and moved into place at the end, results.json last, so an error leaves an earlier
// run in RUN_DIR as it was (src/audits/run_output.h). The same spec, inputs and seed give
// byte-identical files apart from the provenance timestamp, whatever the thread count.
void run_audit(const AuditSpec& spec, const std::filesystem::path& run_dir);

// `vlbias audit --check SPEC` (src/audits/audit_check.cpp): opens every input the run would read
// with the run's loaders and makes the run's checks on them (readable files, the columns the
// spec names, table and embedding row counts and dimensions), in the run's order, so the first
// fault throws the run's own error; computes no analysis and writes nothing (no RUN_DIR, no
// lock). Cell contents are checked only where loading checks them. Returns the number of input
// files checked.
std::size_t check_audit_inputs(const AuditSpec& spec);

}  // namespace vlbias
