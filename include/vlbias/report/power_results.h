#pragma once
// The typed contract of a test's `power` entry in results.json (issue 38), as <kind>_results.h
// are the sections': power (include/vlbias/audits/power_pilot.h) writes it into the entry of
// every null test it supports after the section is built, and `vlbias power` prints the same
// answer (with the pointer and the design's groups); ONE to_json (used by power_pilot.cpp) and
// ONE lenient from_json (used by the sections' from_json: ConfidenceTest, AssociationContrast,
// LvlmGroupTest, GeoFiltered, and by the report's power statements, power_page.cpp), so that
// the entry's keys are named in src/report/power_results.cpp only.
//
// from_json is lenient, as lvlm_results.h's: a missing number reads as NaN, a missing object as
// absent (std::nullopt), a missing array as empty; it never throws on a well-formed Json.
#include <optional>
#include <string>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The key of a test's power entry in its test object.
extern const char* const kTestPowerKey;

// A simulated power (stats::PowerEstimate) with the normal-theory power at the same effect.
struct PowerEstimateResult {
  double effect = stats::kNaN, power = stats::kNaN, se = stats::kNaN;
  double replicates = stats::kNaN;  // a count
  double analytic_power = stats::kNaN;
};

// One test's power answers (power_pilot.h: answer_power_questions).
struct TestPower {
  std::string analysis, label;
  std::string pointer;  // the test's entry; written when not empty (`vlbias power` only)
  std::string test, correction;
  double family = stats::kNaN;  // a count
  double alpha = stats::kNaN;
  struct Group {
    double n = stats::kNaN;  // a count
    double sd = stats::kNaN;
  };
  std::optional<std::vector<Group>> groups;  // the design's groups (`vlbias power` only)
  double target = stats::kNaN;               // an index
  double p_holm = stats::kNaN;
  bool significant = false;
  std::optional<double> base_rate;  // chi-square tests only
  // Friedman tests only.
  struct Blocks {
    std::string blocks;                     // "sets" or "clusters"
    double sets_per_cluster = stats::kNaN;  // a count
    double set_sd = stats::kNaN, cluster_sd = stats::kNaN;
  };
  std::optional<Blocks> friedman;
  // The minimum detectable effect (NaN effect: none reaches the target; note says why).
  struct Mde {
    PowerEstimateResult at;
    double target_power = stats::kNaN;
    std::string note;  // written when not empty
  };
  Mde mde;
  std::optional<PowerEstimateResult> at_effect;  // with an effect asked
  struct SampleSize {
    double n_per_group = stats::kNaN;  // a count
    double power = stats::kNaN, se = stats::kNaN;
    std::string note;  // written when not empty
  };
  std::optional<SampleSize> sample_size;  // with an effect asked
};

// The entry as results.json (and `vlbias power`) holds it.
Json to_json(const TestPower& power);
// The power entry of a test object (std::nullopt when it has none).
std::optional<TestPower> test_power_from_json(const Json& test);

}  // namespace vlbias
