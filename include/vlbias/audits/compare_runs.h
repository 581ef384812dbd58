#pragma once
// Runs compared side by side (issue 25 item 1; src/audits/compare_runs/compare_runs.cpp,
// docs/reports.md "Comparing runs"): `vlbias compare-runs RUN_A RUN_B [RUN_C ...] --out DIR` reads
// each run's RUN_DIR/summary.json (schema "vlbias.summary/1", one entry per headline finding) and
// its per-unit tables RUN_DIR/units/*.csv, never results.json and never the audit's inputs.
//
// For every finding id present in at least two runs:
//   * each run's estimate and interval, side by side;
//   * for each pair of runs (each run against the first, the reference; or every pair with
//     pairs = All), the difference B - A with an interval and a two-sided p-value:
//       paired   when both runs have the finding's units table and the same stimuli (the
//                SHA-256 of every stimulus input in run.inputs is equal, see
//                default_stimulus_inputs; a kind without stimulus inputs is matched by the
//                units' keys alone, and says so). The units are joined by key (units in one
//                run only are dropped and counted); replicate b resamples the shared units
//                with replacement (Rng(derive_seed(derive_seed(seed, 0), t), b), unit index
//                uniform_index(n) n times), recomputes the aggregate of both runs over the same
//                units and keeps B's minus A's. Interval: the type-7 percentiles of the defined
//                replicates; p = min(1, 2 min(#{d <= 0} + 1, #{d >= 0} + 1) / (R + 1)) over
//                the R defined replicates. For `mean` aggregates also the paired t test of the
//                per-unit differences (mean of B's rows minus mean of A's rows of each unit),
//                scipy.stats.ttest_rel, as a cross-check.
//       unpaired otherwise (different stimuli, a run without a units table): each run's
//                standard error from its own interval, se = (upper - lower) / (2 z), z the
//                normal quantile of that interval's level; the difference's interval is
//                d -+ z_level sqrt(se_A^2 + se_B^2) and p the two-sided normal p of
//                d / sqrt(se_A^2 + se_B^2). The entry says why the test is unpaired.
//       none     when a run has no interval for the finding (and no units to pair on), or
//                both intervals have zero width: no p, and the reason.
//   * Holm or Benjamini-Hochberg over every test of the comparison (p_holm and p_bh are both
//     written; `p_adjusted` and `significant` use the chosen one at alpha = 1 - level);
//   * a ranking of the runs by `better` ("lower", "higher", "closer_to_zero") with its
//     uncertainty: the share of replicates in which each run ranks first (ties shared), from
//     the units shared by every run (paired, when every pair of the finding is paired) or
//     from normal draws N(estimate, se) of each run (Box-Muller on
//     Rng(derive_seed(derive_seed(seed, 1), q), b)). No `better`: no ranking, said why.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/io/json.h"

namespace vlbias {

enum class RunPairs { Reference, All };

struct CompareRunsOptions {
  std::size_t bootstrap = 2000;  // replicates of every paired test and paired ranking (>= 1)
  std::uint64_t seed = 0;
  std::string correction = "holm";  // "holm" | "bh": what p_adjusted and significant use
  double level = 0.95;              // of every difference's interval; alpha = 1 - level
  RunPairs pairs = RunPairs::Reference;
  // The run.inputs names whose hashes must agree for a paired test; empty: the kind's default.
  std::vector<std::string> stimuli;
  bool stimuli_given = false;  // true: `stimuli` as given (even empty: key matching only)
};

// A stimulus name matches a run.inputs key itself or a path key whose file name it is; when
// neither run records any of them, units are matched by key and the test's reason says so.
// The run.inputs names that count as stimuli for an audit kind (what every model is shown:
// images, prompts; not what it produced: embeddings of a model, generations, answers,
// annotations of generated images): social-perception and trait-pairs: images.table,
// prompts.manifest; geo-diversity: real.table, real.features, objects.table;
// lvlm-counterfactual and visual-stereotypes: none (the stimuli are named inside the
// generations: units are matched by key).
std::vector<std::string> default_stimulus_inputs(const std::string& kind);

// Reads the runs' summary.json and units tables and computes the comparison (the results.json
// of kind "comparison" described in docs/reports.md). `runs` are run folders. InputError
// naming the file for: a missing or invalid summary.json, another schema, runs of different
// kinds, a run given twice, a finding without an id or estimate, an id twice in one run, a
// units table that is missing, outside the run folder, without its key/value/group columns,
// with a non-numeric value, or whose mean_difference groups are not both in it. UsageError:
// fewer than two runs, bootstrap 0, level outside (0, 1), an unknown correction.
Json compare_runs(const std::vector<std::filesystem::path>& runs,
                  const CompareRunsOptions& options);

// Writes DIR/results.json, DIR/tables/{estimates,differences,ranks}.csv and DIR/report.html
// (rendered by the report stage from results.json). Returns the report's path.
std::filesystem::path write_comparison(const std::filesystem::path& out_dir, const Json& results);

}  // namespace vlbias
