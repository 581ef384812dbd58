#pragma once
// The typed contract of analyses.scores in results.json (the representation and geo-diversity
// audits' scores of each image by group; src/audits/scores_by_group.h), as lvlm_results.h is
// the lvlm-counterfactual audit's: ONE to_json (used by the audits that write the section) and
// ONE lenient from_json (used by power, power_pilot.h), so that the section's keys are named in
// src/report/scores_results.cpp only.
//
// from_json is lenient, as lvlm_results.h's: a missing number reads as NaN, a missing object as
// absent (std::nullopt), a missing array as empty; it never throws on a well-formed Json.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/io/json.h"
#include "vlbias/report/power_results.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

// The name of the section: its spec key (scores), its key in results.json's analyses and
// power's analysis of it (`vlbias power --analysis scores`).
inline constexpr const char* kScoresSection = "scores";

// One group's (or every image's) score: a rate column's successes and Wilson interval, a mean
// column's sd and Student-t interval.
struct ScoreGroupResult {
  std::string group;
  // Counts are whole numbers in an audit's own results; read back, whatever the file holds
  // (NaN when absent), for the reader to check.
  double n = stats::kNaN;
  double successes = stats::kNaN;  // rate columns only
  double estimate = stats::kNaN;
  double sd = stats::kNaN;  // mean columns only
  double ci_lower = stats::kNaN, ci_upper = stats::kNaN;
  std::string note;  // the interval's note (empty: none)
};

// One grouping of one column: its groups with a value and the test across them.
struct ScoresByResult {
  std::string by;
  std::vector<ScoreGroupResult> groups;
  double mean_over_groups = stats::kNaN;
  // The test across the groups (chi-square of equal rates, Kruskal-Wallis) with Holm over every
  // test of the section (NaN: the test has no p-value); absent in an entry read back without.
  struct Test {
    stats::TestResult result;
    double p_holm = stats::kNaN;
    std::optional<TestPower> power;  // a null test's, with analyses.power (power_results.h)
  };
  std::optional<Test> test;
};

struct ScoresColumnResult {
  std::string table, column;
  std::string kind;       // "rate" or "mean"
  std::string kind_from;  // "spec" or "values"
  ScoreGroupResult all;
  std::vector<ScoresByResult> by;
};

// A scores table as read.
struct ScoresTableResult {
  std::string table, sha256, key;
  std::size_t rows = 0, matched_images = 0, unmatched_images = 0, unused_rows = 0;
  Json provenance = Json::object();
};

// analyses.scores.
struct ScoresSection {
  double ci = stats::kNaN;  // the intervals' level
  std::vector<ScoresTableResult> tables;
  std::vector<ScoresColumnResult> columns;
};

// The section as results.json holds it.
Json to_json(const ScoresSection& section);
// The section of a results.json's analyses object (std::nullopt when it has none).
std::optional<ScoresSection> scores_from_json(const Json& analyses);
// The JSON pointers of the section's tables[i], its column c, column c's grouping b (its `test`,
// or its group g's entry).
std::string scores_table_pointer(std::size_t i);
std::string scores_column_pointer(std::size_t c);
std::string scores_by_pointer(std::size_t c, std::size_t b);
std::string scores_test_pointer(std::size_t c, std::size_t b);
std::string scores_group_pointer(std::size_t c, std::size_t b, std::size_t g);

}  // namespace vlbias
