#pragma once
// The sections of the visual-stereotypes audit (paper 000, ViSAGe), shared by its runner
// (visual_audit.cpp) and their file (visual_audit_sections.cpp). Each is one section of
// results.json with its tables; identities are placed in their region by `regions`
// (identity -> region; "(no region)" when absent).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "audit_yaml.h"
#include "vlbias/audits/visual_audit.h"
#include "vlbias/core/matrix.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/visual_stereotypes.h"
#include "vlbias/report/visual_results.h"

namespace vlbias::audits_internal {

// The annotations table's columns and aggregation, from the spec (also `audit --check`'s).
AnnotationOptions annotation_options(const VisualAuditSpec& v);

// The visual stereotypes taken from SeeGULL and the visual attributes.
AnalysisOutput stereotypes_section(const VisualAttributes& visual, const VisualStereotypes& st,
                                   const std::map<std::string, std::string>& regions,
                                   std::size_t min_stereotypes);

// Likelihood, theta and offensiveness per identity and by region, from the annotations.
AnalysisOutput likelihood_section(const Annotations& ann, const LikelihoodReport& rep,
                                  const std::map<std::string, std::string>& regions,
                                  const LikelihoodOptions& o);

// Salience of the visual attributes in the captions; `ann` and `lik` (both or neither) add
// the likelihood of the top stereotypes.
AnalysisOutput salience_section(const Table& captions, const VisualAttributes& visual,
                                const VisualStereotypes& st, const Annotations* ann,
                                const LikelihoodReport* lik,
                                const std::map<std::string, std::string>& regions,
                                const CaptionOptions& o);

// The stereotypical pull per identity and by region (stereotypical_pull of the image
// embeddings).
AnalysisOutput pull_section(const PullReport& rep,
                            const std::map<std::string, std::string>& regions,
                            const PullOptions& o);

// report.images (visual_audit.cpp): results.json's "exemplars" block, one grid per identity x
// set (default, stereotypical, non-stereotypical) of the pull table's images in the column
// v.pull_image_column, drawn with derive_seed(seed, kVisualSeedExemplars); each default grid
// also shows its highest per-image pull (IdentityPull::default_pull). Null, with a note, when
// the table has no such column.
inline constexpr std::uint64_t kVisualSeedExemplars = 3;
Json visual_exemplars(const AuditCommonSpec& spec, const VisualAuditSpec& v,
                      const Table& pull_table, const PullReport& rep,
                      std::vector<std::string>& notes);

// The root keys of a visual-stereotypes spec (visual_audit_yaml.cpp): the common keys into `spec`
// (audit_yaml.h), the kind's own into `v`, and the keys the kind allows at the root.
void parse_visual_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                       VisualAuditSpec& v);

}  // namespace vlbias::audits_internal
