// The visual-stereotypes kind (paper 000, ViSAGe): `vlbias audit --check` (audit.h's
// check_audit_inputs) and the kind's entry in the table of kinds (audit_kind.h). The checks repeat
// the run's own, with the same words (src/audits/audit_check.cpp says how
// tests/cli/audit_check_test.cpp holds them together).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "audit_kind.h"
#include "visual_audit_internal.h"
#include "vlbias/audits/visual_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/embeddings.h"
#include "vlbias/metrics/visual_stereotypes.h"

namespace vlbias::audits_internal {

namespace {

std::size_t check_visual_inputs(const AuditCommonSpec& /*spec*/, const VisualAuditSpec& v) {
  std::vector<std::filesystem::path> inputs;
  for (const auto* p : {&v.seegull, &v.visual_attributes, &v.regions, &v.annotations, &v.captions,
                        &v.pull_table, &v.pull_embeddings.path}) {
    if (!p->empty()) inputs.push_back(*p);
  }
  const std::size_t checked = check_input_files(inputs);
  // run_visual_stereotypes_audit's order: attributes, SeeGULL, regions, then each section's.
  const VisualAttributes visual = read_visual_attributes(v.visual_attributes.string());
  StereotypeOptions so;
  so.vote_columns = v.vote_columns;
  so.min_votes = v.min_votes;
  so.rule = v.vote_rule == "any" ? VoteRule::Any : VoteRule::All;
  build_visual_stereotypes(read_table(v.seegull.string()), visual, so);
  read_regions(v.regions.string());
  if (!v.annotations.empty()) {
    const AnnotationOptions ao = annotation_options(v);
    read_annotations(v.annotations.string(), ao);
  }
  if (v.salience.toggle.enabled) {
    // caption_salience's checks.
    const Table captions = read_table(v.captions.string());
    VLBIAS_CHECK(!visual.attributes.empty(), InputError, "there are no visual attributes to find");
    VLBIAS_CHECK(captions.rows > 0, InputError, "'{}' has no captions", captions.source);
    captions.column(v.caption_image_column);
    captions.column(v.caption_column);
    if (!v.caption_identity_column.empty()) captions.column(v.caption_identity_column);
  }
  if (v.pull.toggle.enabled) {
    const Matrix embeddings = read_embeddings(v.pull_embeddings.path, v.pull_embeddings.tensor);
    PullOptions po;
    po.identity_column = v.pull_identity_column;
    po.set_column = v.pull_set_column;
    check_pull_inputs(read_table(v.pull_table.string()), MatrixView(embeddings), po);
  }
  return checked;
}

}  // namespace

const AuditKindOps kVisualStereotypesKind =
    kind_ops<VisualAuditSpec, parse_visual_root, check_visual_inputs, run_visual_audit>(
        AuditKind::VisualStereotypes, "visual-stereotypes");

}  // namespace vlbias::audits_internal
