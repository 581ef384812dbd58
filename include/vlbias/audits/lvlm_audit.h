#pragma once
// The lvlm-counterfactual audit (kind: lvlm-counterfactual; paper 003, docs/methods.md#paper-003):
// its spec (LvlmAuditSpec, AuditSpec::lvlm()), its runner (src/audits/lvlm/lvlm_audit.cpp) and its
// sections (src/audits/lvlm/lvlm_audit_*.cpp). The results come from a scanned LvlmState: each
// measure is one section (JSON + CSV tables) of the audit, and the
// `vlbias metric maxgap|pmi|lexicon|ratings|responses|paired` commands print one section each.
// Every section is computed from the canonical state (canonicalize), so shards merged in any order
// give identical bits.
//
// Spec keys: what LVLMs write about counterfactual images of people (paper 003, Howard et
// al.; measures in lvlm.h and below), from generated answers streamed row by row (the keys every
// kind shares, and the rules for all specs, are in audit.h):
//
//   version: 1
//   kind: lvlm-counterfactual
//   seed: 0
//   min_group_size: 2
//   generations: answers.jsonl      # or a list of shards of one table (CSV/TSV/JSONL)
//   columns:
//     set_key: [filename, rank, seed]   # a counterfactual set (needed by maxgap, tests)
//     group: [race, gender]             # required
//     by: [prompt, mitigation]          # optional split
//     scores: [toxicity, insult]        # optional score columns
//     scorer: scorer                    # what scored each row (default: `scorer` where a
//                                       # file has it, as vlbias's scorers write; [] = none)
//     text: text                        # needed by pmi, lexicon, responses, ratings
//     image: image                      # each answer's image file, for report.images
//   analyses:                           # each: true, false or a map of options
//     maxgap: {bootstrap: 1000, ci: 0.95}             # default on when scores are given
//                                                     # cluster: [filename, rank]: resample
//                                                     # image sets, then their seeds
//     pmi: {min_freq: 10, threshold: 1, top: 0, log_base: e}   # default on with text
//     lexicon: {file: lexicon.csv, word_column: "", by: occupation, min_obs: 35,
//               distinct: false, stop_words: english}  # on when given
//     responses: {refusal_patterns: [...], refusal_column: refused}  # default on with text
//     ratings:                                        # numeric answers, when given
//       - {name: hiring, kind: rating, where: {column: prompt, values: [Hiring]}}
//     group_tests: {permutations: 1000}               # default on with a set key
//                                                     # cluster: [filename, rank]: one
//                                                     # relabelling per image set
//     paired: {column: mitigation, baseline: none, bootstrap: 1000, ci: 0.95,
//              alternative: two-sided, permutations: 9999}   # paired t, Wilcoxon
//   report: {images: 4, image_budget: 5000000}   # exemplar grids per group (a seeded sample of
//                                     # its images, and those whose answers scored highest on
//                                     # the first score; needs columns.image), audit_types.h
//
// Shards: `vlbias audit SPEC --input SHARD --save-state S` scans one shard;
// `vlbias audit SPEC --out RUN --from-state S1 S2 ...` merges them: the results are
// identical to one run over every row.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/audits/audit_types.h"
#include "vlbias/metrics/lvlm.h"
#include "vlbias/report/lvlm_results.h"

namespace vlbias {

// A numeric-answer measure of an lvlm-counterfactual spec (lvlm.h's RatingSpec).
struct RatingSpecYaml {
  std::string name;
  std::string kind = "rating";  // rating | salary
  std::string where_column;
  std::vector<std::string> where_values;
  std::string where_expression;  // `where: "EXPR"`, a row filter (row_filter.h)
  std::string where_origin;      // "'spec.yaml' analyses.ratings[0].where", for messages
};

// The spec of an lvlm-counterfactual audit (the keys above).
struct LvlmAuditSpec {
  std::vector<std::filesystem::path> generations;  // shards of one table
  std::vector<std::string> set_key, group, by, scores;
  std::vector<std::string> scorer;  // columns naming each row's scorer (shown in the report)
  bool scorer_given = false;        // false: `scorer` read only where a file has it
  std::string text;
  // The image path column (relative paths: against each generations file's folder), read only
  // for report.images in a second pass over the generations (none after --from-state).
  std::string image;
  struct MaxGap {
    AnalysisToggle toggle;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
    std::vector<std::string> cluster;  // LvlmReportOptions::cluster
  } maxgap;
  struct Pmi {
    AnalysisToggle toggle;
    std::size_t min_freq = 10;
    double threshold = 1.0;
    std::size_t top = 0;
    double log_base = 0;  // 0 = e
  } pmi;
  struct LexiconSpec {
    AnalysisToggle toggle;
    std::filesystem::path file;
    std::string word_column, by, stop_words = "english";
    std::size_t min_obs = 35;
    bool distinct = false;
  } lexicon;
  struct Responses {
    AnalysisToggle toggle;
    std::vector<std::string> refusal_patterns;
    std::string refusal_column;
  } responses;
  std::vector<RatingSpecYaml> ratings;
  PowerSpec power;  // analyses.power: over the Friedman group tests
  struct GroupTests {
    AnalysisToggle toggle;
    std::size_t permutations = 1000;
    std::vector<std::string> cluster;  // LvlmReportOptions::cluster
  } group_tests;
  struct Paired {
    AnalysisToggle toggle;
    std::string column, baseline;
    std::size_t bootstrap = 1000;
    double ci = 0.95;
    std::vector<std::string> cluster;
    stats::Alternative alternative = stats::Alternative::TwoSided;
    std::size_t permutations = 9999;  // of the clustered paired tests
  } paired;
};

// Shards of an lvlm-counterfactual audit: `inputs` replaces the spec's generations;
// with `save_state` the scan is written there (no results); `from_states` merges
// saved states instead of scanning (lvlm.h).
struct LvlmShardOptions {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path save_state;
  std::vector<std::filesystem::path> from_states;
};
// Runs an lvlm-counterfactual audit (src/audits/lvlm/lvlm_audit.cpp); run_audit calls it for that
// kind without shards. Reads lvlm and the common fields.
void run_lvlm_audit(const AuditCommonSpec& spec, const LvlmAuditSpec& lvlm,
                    const std::filesystem::path& run_dir, const LvlmShardOptions& shards = {});

// ------------------------------------------------------------------------ the sections

struct LvlmReportOptions {
  // Bootstrap over counterfactual sets (MaxGap mean and p90; paired differences).
  std::size_t bootstrap = 1000;  // 0: no intervals
  double ci = 0.95;
  std::uint64_t seed = 0;
  // The bootstrap's unit: empty, each counterfactual set; else set-key columns (e.g. filename,
  // rank: the set key without its seed) whose values group sets into clusters, resampled in
  // two stages (clusters, then sets within each drawn cluster), because a study's seeds of one
  // image set are not independent and a flat bootstrap makes the intervals too narrow.
  // The group tests use the same clusters: one relabelling of the groups per cluster (the
  // same image carries the same label in every seed), Friedman over cluster means.
  std::vector<std::string> cluster;
  // PMI (paper 003 App. D): keep f(w, g) >= min_freq and score > threshold.
  std::size_t pmi_min_freq = 10;
  double pmi_threshold = 1.0;
  std::size_t pmi_top = 0;  // words per group (0 = all kept)
  double pmi_log_base = 0;  // 0 = natural log (e), else 2 or 10
  // Lexicon: lexicon_by levels with fewer texts are left out of the group means.
  std::size_t lexicon_min_obs = 35;
  // Groups with fewer rows than this are flagged.
  std::size_t min_group_size = 2;
  // Set-blocked group tests: Monte Carlo permutations within sets.
  std::size_t permutations = 1000;
  // Paired comparisons: by-levels whose `compare_column` holds `compare_baseline`
  // are the baseline of those that differ from them only in that column.
  std::string compare_column;
  std::string compare_baseline;
  // Their paired t and Wilcoxon tests of treatment - baseline MaxGap over matched sets:
  // alternative (less: the treatment's MaxGap is lower), and the permutations of the cluster
  // sign-flip test that replaces them when `cluster` is given (compare.h, ClusterTest).
  stats::Alternative paired_alternative = stats::Alternative::TwoSided;
  std::size_t paired_permutations = 9999;
};

// Sections; `state` must be canonical. Each throws UsageError when the state
// lacks what it needs (e.g. maxgap without scores).
AnalysisOutput lvlm_maxgap(const LvlmState& state, const LvlmConfig& config,
                           const LvlmReportOptions& options);
AnalysisOutput lvlm_pmi(const LvlmState& state, const LvlmConfig& config,
                        const LvlmReportOptions& options);
AnalysisOutput lvlm_lexicon(const LvlmState& state, const LvlmConfig& config,
                            const LvlmReportOptions& options);
AnalysisOutput lvlm_responses(const LvlmState& state, const LvlmConfig& config,
                              const LvlmReportOptions& options);
AnalysisOutput lvlm_ratings(const LvlmState& state, const LvlmConfig& config,
                            const LvlmReportOptions& options);
// Friedman over complete sets and within-set permutation tests per group, for
// every member measure and by-level, with Holm and BH over all of them.
AnalysisOutput lvlm_group_tests(const LvlmState& state, const LvlmConfig& config,
                                const LvlmReportOptions& options);
// The same, and the section as its typed contract (lvlm_results.h) in `section`: what the
// audit's own power analysis reads (power_pilot.h), without parsing the JSON back.
AnalysisOutput lvlm_group_tests_typed(const LvlmState& state, const LvlmConfig& config,
                                      const LvlmReportOptions& options, LvlmGroupTests& section);
// Paired comparisons of MaxGap between by-levels (mitigation vs baseline, LVLM vs LLM).
AnalysisOutput lvlm_paired(const LvlmState& state, const LvlmConfig& config,
                           const LvlmReportOptions& options);

enum class LvlmMeasure { MaxGap, Pmi, Lexicon, Ratings, Responses, Paired };
const char* to_string(LvlmMeasure measure);  // "maxgap", "pmi", ...

// What `vlbias metric <measure>` prints, without provenance (shared with the Python
// bindings): rows, rows_missing_group, rows_missing_key, then the section's JSON; MaxGap
// without `by` and with one score is that single result itself. `state` must be canonical.
Json lvlm_measure_json(const LvlmState& state, const LvlmConfig& config,
                       const LvlmReportOptions& options, LvlmMeasure measure);

}  // namespace vlbias
