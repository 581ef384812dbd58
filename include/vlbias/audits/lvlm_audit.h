#pragma once
// Results of the LVLM counterfactual analysis (src/audits, METHODS.md 003) from a
// scanned LvlmState: each measure is one section (JSON + CSV tables) of a
// `kind: lvlm-counterfactual` audit, and the `vlbias metric maxgap|pmi|lexicon|
// ratings|responses|paired` commands print one section each. Every section is
// computed from the canonical state (canonicalize), so shards merged in any
// order give identical bits.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/audits/dual_encoder_audit.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias {

struct LvlmReportOptions {
  // Bootstrap over counterfactual sets (MaxGap mean and p90; paired differences).
  std::size_t bootstrap = 1000;  // 0: no intervals
  double ci = 0.95;
  std::uint64_t seed = 0;
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
