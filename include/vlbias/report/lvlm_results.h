#pragma once
// The typed contract of the lvlm-counterfactual audit's results.json (issue 38): each section
// as a struct with ONE to_json and ONE from_json, so that the audit that writes a section and
// whoever reads it back name its keys in this file only (src/report/lvlm_results.cpp). Sections
// so far: analyses.group_tests, written by the audit and read by power (power_pilot.h), the
// report page (lvlm_page.cpp) and summary.json (summary_kinds.cpp).
//
// from_json is lenient, as a reader of a results.json written by an older vlbias must be: a
// missing number reads as NaN, a missing object as absent (std::nullopt), a missing array as
// empty; whoever uses a field checks it and names the entry (power_pilot.cpp does). It never
// throws on a well-formed Json of any shape.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/report/power_results.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The name of the set-blocked tests' section: its spec key (analyses.group_tests), its key in
// results.json's analyses, its table (tables/group_tests.csv), its report section and power's
// analysis of it (`vlbias power --analysis group_tests`). The one place the word is written.
extern const char* const kLvlmGroupTestsSection;

// One group of one test: its mean, its mean gap to the other groups of its sets, and the
// within-set permutation p with Holm and BH over every (test, group) pair.
struct LvlmGroupEffect {
  Json group;  // the group's key object ({"race": "Black", "gender": "male"})
  double mean = stats::kNaN, gap_to_others = stats::kNaN;
  double p = stats::kNaN, p_holm = stats::kNaN, p_bh = stats::kNaN;
};

// One test of analyses.group_tests.results: a by-level and measure over its complete sets.
struct LvlmGroupTest {
  Json by;  // the by-level's key object; null when the audit has no `by`
  std::string measure;
  // Counts are whole numbers in an audit's own results; read back, whatever the file holds
  // (NaN when absent), for the reader to check.
  double complete_sets = stats::kNaN, incomplete_sets = stats::kNaN;
  double clusters = stats::kNaN;  // clustered sections only
  // The set-blocked design's variance components (absent: written before vlbias recorded them).
  struct PilotVariance {
    double residual_sd = stats::kNaN, set_sd = stats::kNaN;
    double cluster_sd = stats::kNaN;  // clustered sections only
  };
  std::optional<PilotVariance> pilot_variance;
  // Friedman over the complete sets (absent in an entry read back without one), with Holm and
  // BH over every Friedman p of the section.
  struct Friedman {
    stats::TestResult result;
    double p_holm = stats::kNaN, p_bh = stats::kNaN;
  };
  std::optional<Friedman> friedman;
  std::vector<LvlmGroupEffect> groups;
  std::optional<TestPower> power;  // a null Friedman test's, with analyses.power (power_results.h)
};

// analyses.group_tests.
struct LvlmGroupTests {
  std::string definition;
  std::vector<std::string> cluster;  // the cluster columns; empty: not clustered
  std::string cluster_definition;    // clustered sections only
  std::size_t permutations = 0;
  std::uint64_t seed = 0;
  std::vector<LvlmGroupTest> results;
};

// The section as results.json holds it. A clustered section (non-empty `cluster`) writes each
// test's clusters and pilot_variance.cluster_sd, an unclustered one neither.
Json to_json(const LvlmGroupTests& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<LvlmGroupTests> lvlm_group_tests_from_json(const Json& analyses);
// The JSON pointer of test i of the section in results.json.
std::string lvlm_group_test_pointer(std::size_t i);

}  // namespace vlbias
