#pragma once
// The representation audit's parts (include/vlbias/audits/representation_audit.h): the joined
// data (representation_audit_data.cpp), the per-prompt resampling behind every interval
// (representation_audit_resample.cpp), the sections (representation_audit_sections.cpp,
// representation_audit_targets.cpp) and the runner (representation_audit.cpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "audit_yaml.h"
#include "scores_by_group.h"
#include "vlbias/audits/audit_types.h"
#include "vlbias/audits/representation_audit.h"
#include "vlbias/io/table/table.h"

namespace vlbias::audits_internal {

// One audited attribute and its classes, in column order.
struct RepresentationAttribute {
  std::string name;
  std::vector<std::string> classes;
  // Rows whose label is not a class (unclear, refused, unparseable), by label, over every prompt.
  std::map<std::string, std::size_t> other_labels;
};

// One prompt of the manifest and its images, in manifest order.
struct RepresentationPrompt {
  std::string prompt, group, key;
  std::vector<std::string> images;
};

// The labels joined to the manifest. counts[a][p] holds, for image i of prompt p, K + 1 counts
// at [i * (K + 1), (i + 1) * (K + 1)): its label rows of attribute a per class, then those whose
// label is not a class. faces[p][i]: the distinct faces of image i with a label row (0 for
// whole-image labels: then `whole_images`).
struct RepresentationData {
  std::vector<RepresentationAttribute> attributes;
  std::vector<RepresentationPrompt> prompts;
  std::vector<std::vector<std::vector<std::uint32_t>>> counts;
  std::vector<std::vector<std::uint32_t>> faces;
  bool whole_images = false;
  std::vector<std::string> labellers;  // every labeller of the table, first-seen order
  std::string labeller;                // the one audited ("" = no labeller column)
  std::size_t label_rows = 0;          // rows of the audited labeller
  std::vector<std::string> notes;
};

// labels.table in the long layout (one row per image or face and attribute); a wide table
// (labels.columns) is turned into it. Read once per run: the data and agreement use it.
Table read_labels_table(const RepresentationAuditSpec& r);
// Reads manifest.table and joins the labels `t` (read_labels_table) to it (InputError for a
// label row whose image is not in the manifest, a label outside given classes, an empty
// manifest or no label row).
RepresentationData read_representation_data(const RepresentationAuditSpec& r, const Table& t);

// The class counts of prompt p for attribute a, summed over its images (K + 1 values: the
// classes, then the other labels).
std::vector<std::uint64_t> prompt_counts(const RepresentationData& d, std::size_t a, std::size_t p);

// Real-world shares per prompt of targets.attribute (representation_audit_targets.cpp): for
// each prompt, its K shares in class order, or none (its key is not in the table: listed in
// `missing`).
struct RepresentationTargets {
  std::size_t attribute = 0;  // index into RepresentationData::attributes
  std::vector<std::optional<std::vector<double>>> shares;  // per prompt
  std::vector<std::size_t> given_classes;                  // the classes targets.columns names
  std::vector<std::string> missing;                        // keys without a row, first-seen order
};
RepresentationTargets read_representation_targets(const RepresentationAuditSpec& r,
                                                  const RepresentationData& d);

// Bootstrap replicates of a prompt's counts: replicate b resamples the prompt's images with
// replacement (Rng(derive_seed(seed, p), b)), every attribute from the same draw; out[a][b]
// holds the K + 1 counts of attribute a in replicate b, flattened: [b * (K + 1) + k].
std::vector<std::vector<std::uint32_t>> resample_prompt(const RepresentationData& d, std::size_t p,
                                                        std::size_t replicates, std::uint64_t seed);

// The sections (results.json's analyses.<name>, their tables and notes).
AnalysisOutput representation_distribution(const AuditCommonSpec& spec,
                                           const RepresentationAuditSpec& r,
                                           const RepresentationData& d);
AnalysisOutput representation_measures(const AuditCommonSpec& spec,
                                       const RepresentationAuditSpec& representation,
                                       const RepresentationData& d,
                                       const RepresentationTargets* targets);
AnalysisOutput representation_tests(const RepresentationAuditSpec& representation,
                                    const RepresentationData& d,
                                    const RepresentationTargets* targets);
AnalysisOutput representation_amplification(const AuditCommonSpec& spec,
                                            const RepresentationAuditSpec& representation,
                                            const RepresentationData& d,
                                            const RepresentationTargets& targets);
AnalysisOutput representation_agreement(const AuditCommonSpec& spec,
                                        const RepresentationAuditSpec& r, const Table& labels);
AnalysisOutput representation_power(const RepresentationAuditSpec& representation,
                                    const RepresentationData& d,
                                    const RepresentationTargets* targets);

// The spec's scores joined to the manifest's images (scores_by_group.h), grouped by prompt and,
// with manifest.group, by prompt group; InputError as read_scores and check_score_groups.
struct RepresentationScores {
  ScoresData data;
  std::vector<ScoreGrouping> groupings;
};
RepresentationScores read_representation_scores(const RepresentationAuditSpec& r,
                                                const RepresentationData& d);

// A note's list of names: the first 20 joined by `separator`, then "and N more".
std::string listed_names(const std::vector<std::string>& names, const char* separator);

// Seed streams (derive_seed(spec.seed, ...)).
inline constexpr std::uint64_t kRepresentationSeedMeasures = 1;
inline constexpr std::uint64_t kRepresentationSeedAmplification = 2;
inline constexpr std::uint64_t kRepresentationSeedSlope = 3;
inline constexpr std::uint64_t kRepresentationSeedScoresPower = 6;
// The level of the scores' intervals.
inline constexpr double kScoresCi = 0.95;

// The root keys of a representation spec (representation_audit_yaml.cpp): the common keys into
// `spec` (audit_yaml.h), the kind's own into `r`, and the keys the kind allows at the root.
void parse_representation_root(Context& ctx, const YAML::Node& root, AuditCommonSpec& spec,
                               RepresentationAuditSpec& r);

}  // namespace vlbias::audits_internal
