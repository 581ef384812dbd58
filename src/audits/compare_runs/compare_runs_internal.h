#pragma once
// compare-runs' private parts (include/vlbias/audits/compare_runs.h): the runs as read from
// their summary.json and units tables (compare_runs_units.cpp), and the tests and rankings
// over them (compare_runs.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "vlbias/audits/compare_runs.h"
#include "vlbias/core/rng.h"
#include "vlbias/io/json.h"

namespace vlbias::audits_internal {

// One unit (an image, a set, a prompt) of a units table: the sums and row counts of its
// values, for group A (s0, n0) and group B (s1, n1) of a mean_difference, or of every row of
// a mean (s0, n0 only).
struct UnitSums {
  double s0 = 0, n0 = 0, s1 = 0, n1 = 0;
};

// A finding's units table, read once per run.
struct UnitsData {
  std::string source;             // the CSV's path, for messages
  bool difference = false;        // aggregate mean_difference (else mean)
  std::vector<std::string> keys;  // unit keys (key columns joined by '\x1f'), first-seen order
  std::vector<UnitSums> units;    // parallel to keys
  std::size_t rows = 0;           // rows read
  std::size_t rows_missing = 0;   // rows whose value is empty (left out)
};

// The aggregate over the units `idx` (with repeats): mean = sum of values / rows;
// mean_difference = mean of group A's rows - mean of group B's rows. NaN when a mean has no
// row. Sums run in idx order.
double aggregate(const std::vector<UnitSums>& units, bool difference,
                 std::span<const std::uint32_t> idx);
// The aggregate over every unit once.
double aggregate_all(const UnitsData& data);

struct RunData {
  std::string name;  // "A", "B", ... in command-line order
  std::filesystem::path dir;
  std::filesystem::path summary_path;
  Json summary;
  std::map<std::string, std::size_t> by_id;  // finding id -> index in summary.findings
  std::map<std::string, UnitsData> units;    // units spec (dumped) -> its data
  std::vector<std::string> files_read;       // summary.json and every units table read
};

// Reads RUN/summary.json and checks its schema (InputError naming the file otherwise).
RunData load_run(const std::filesystem::path& dir, std::string name);
// The units of `finding` in `run` (read and cached on first use), or nullptr when the finding
// has no units. InputError for a table that is missing, outside the run folder or malformed.
const UnitsData* finding_units(RunData& run, const Json& finding);

// Why two runs cannot be paired on their stimuli ("" when they can), and a description of
// what was compared ("stimuli equal: images.table, prompts.manifest" or "no stimulus input
// recorded: units matched by key").
struct StimulusCheck {
  bool same = true;
  std::string text;
};
StimulusCheck compare_stimuli(const RunData& a, const RunData& b,
                              const std::vector<std::string>& names);

// A number field (NaN when absent, null or not a number).
double num(const Json& j);
// A run's interval of a finding: {lower, upper, level} with finite bounds and a level in
// (0, 1), or ok = false.
struct RunCi {
  bool ok = false;
  double lower = NAN, upper = NAN, level = 0.95;
};
RunCi run_ci(const Json& finding);
// The standard error an interval implies: (upper - lower) / (2 Phi^-1((1 + level) / 2)).
double run_se(const RunCi& c);

// The paired test of B - A (compare_runs.h): {method: "paired", test, units: {shared, only_a,
// only_b}, difference, ci, p, bootstrap: {resamples, defined, seed}, paired_t, note?}; the
// bootstrap draws from Rng(seed, r).
Json paired_test(const UnitsData& a, const UnitsData& b, const CompareRunsOptions& o,
                 std::uint64_t seed);
// The unpaired test of two findings from their intervals: {method: "unpaired" | "none", test,
// difference, se, ci, p}; "none" when an interval is missing or both have zero width.
Json unpaired_test(const Json& finding_a, const Json& finding_b, double level);
// The positions of the best values under `better` (every tied run; NaN never best).
std::vector<std::size_t> best_of(const std::vector<double>& v, const std::string& better);
// Competition ranks (1 = best; ties share the smaller rank); NaN for a NaN value.
std::vector<double> point_ranks(const std::vector<double>& v, const std::string& better);

// A standard normal draw (Box-Muller, cosine branch; 1 - u keeps the logarithm finite).
double standard_normal_draw(Rng& rng);

}  // namespace vlbias::audits_internal
