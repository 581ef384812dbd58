#pragma once
// What the analyses of the dual-encoder audits (papers 001 and 004) share: defined in
// dual_encoder_audit_analyses.cpp (association, SC-WEAT, markedness, ranking), used there and
// in dual_encoder_audit_confidence.cpp (trait-pair confidence).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "audit_yaml.h"
#include "table_builder.h"
#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/compare.h"

namespace vlbias::audits_internal {

// Writes the key columns of a group (one per `by` column) into the current row.
void put_key(TableBuilder& t, const std::vector<std::string>& by,
             const std::vector<std::string>& key);

// The image table plus per-image score columns named prefix + label (values: image-major,
// labels.size() per image).
Table with_scores(const Table& images, const std::string& prefix,
                  const std::vector<std::string>& labels, const std::vector<double>& values);

// The groups' summaries of column `value` (no percentiles), with bootstrap intervals of the
// mean when bootstrap > 0.
DescribeReport describe_column(const Table& t, const std::string& value, const GroupingOptions& g,
                               std::size_t bootstrap, std::uint64_t seed);

// The units of the groups' means for summary.json (dual_encoder_audit_units.cpp): per group of
// `by` (a group's label: its key values joined by spaces, "all" without `by`), the table
// units_table_name(stem, {label}) of the group's rows of `images` ("image": the row's index)
// with their `columns`, appended to `units`. Rows with a missing key cell are left out.
void group_units(const Table& images, const std::vector<std::string>& by,
                 const std::vector<std::string>& columns, const std::string& stem,
                 std::vector<std::pair<std::string, Table>>& units);

// Holm and BH adjustments over every p-value of a table (NaN p-values are skipped and stay
// NaN).
void adjust_holm_bh(const std::vector<double>& p, std::vector<double>& holm,
                    std::vector<double>& bh);

// The dual-encoder run's checks before any analysis (dual_encoder_audit.cpp), shared with
// `vlbias audit --check` (audit_check.cpp) so the two give the same messages in the same order:
// naming the other kind's analyses is a UsageError; the study's files; the inputs as
// results.json's provenance lists them (the spec first); every factor column present.
void refuse_other_kind_analyses(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d);
StudyFiles study_files(const DualEncoderAuditSpec& d);
std::vector<std::string> provenance_inputs(const AuditCommonSpec& spec, const StudyFiles& files);
void check_factor_columns(const Study& study, const DualEncoderAuditSpec& d);
// analyses.explain (dual_encoder_audit_explain.cpp). check_explain_spec: UsageError when it is
// named in a social-perception spec or images.image is not set. explain_analysis: runs the
// explain job into `folder` (RUN_DIR/explain/ once the run is written) with `seed` for the CAM
// mass intervals, and returns the section: counts, each group's mean probability of the first
// trait, the overlays as an exemplars block, and with faces cam_mass.json.
// check_explain_inputs (the run and `audit --check`): UsageError naming the spec key when the
// image column, the pair, the model folder or the faces folder is not there.
void check_explain_spec(const AuditCommonSpec& spec, const DualEncoderAuditSpec& d);
void check_explain_inputs(const DualEncoderAuditSpec& d, const Study& study);
AnalysisOutput explain_analysis(const AuditCommonSpec& spec,
                                const DualEncoderAuditSpec& dual_encoder,
                                const std::filesystem::path& folder, std::uint64_t seed);
// InputError naming the spec's role of the first of `columns` the image table lacks.
void require_columns(const Table& images, const std::vector<std::string>& columns,
                     const std::string& role);

// The root keys of a social-perception and trait-pairs spec (dual_encoder_audit_yaml.cpp): the
// common keys into `spec` (audit_yaml.h), the kind's own into `d`, and the keys the kind allows at
// the root.
void parse_dual_encoder_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                             DualEncoderAuditSpec& d);

}  // namespace vlbias::audits_internal
