#pragma once
// Per-image scores by group (issue 44), shared by the representation and geo-diversity kinds:
// a spec's `scores:` tables (audit_types.h's ScoreTableSpec; vlbias score image-head's
// SCORES.csv or any table read_table reads) joined to the kind's images, and per group of each
// grouping (prompts, prompt groups, regions) the rate of a 0/1 column with a Wilson interval or
// the mean of a numeric column with a Student t interval; across the groups Pearson's
// chi-square test of equal rates or the Kruskal-Wallis test, Holm over every test of the
// section (docs/methods.md#scores-by-group). scores_by_group.cpp reads and analyses,
// scores_by_group_yaml.cpp parses the spec key.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "audit_yaml.h"
#include "vlbias/audits/audit_types.h"
#include "vlbias/io/json.h"

namespace vlbias::audits_internal {

// `scores:` of a spec: a list of {table, columns, key, kind} (a single map is one entry).
void parse_scores_spec(Context& ctx, const YAML::Node& node, std::vector<ScoreTableSpec>& out);
// The spec's scores as results.json's spec copy holds them.
Json scores_spec_json(const std::vector<ScoreTableSpec>& specs);

// One scored column: its values per unit of the kind (NaN where the unit's image has no row).
struct ScoreColumn {
  std::size_t table = 0;  // into ScoresData::tables
  std::string name;
  bool rate = false;
  bool kind_given = false;    // kind from the spec (else from the values)
  std::vector<double> value;  // per unit
};

// One scores table as read: its provenance and how its rows matched the kind's images.
struct ScoreTableInfo {
  std::string path, sha256, key;
  std::size_t rows = 0;
  std::size_t matched_units = 0, unmatched_units = 0;  // the kind's units with / without a row
  std::size_t unused_rows = 0;                         // rows whose key is no unit's image
  // head, weights, weights_sha256, options (those present): the value, or a list of the first
  // 20 distinct values and "and N more"
  Json provenance = Json::object();
};

struct ScoresData {
  std::vector<ScoreTableInfo> tables;
  std::vector<ScoreColumn> columns;
  std::vector<std::string> notes;
};

// Reads every table of `specs` and joins it to `units` (the kind's image per unit, as its
// image column `what` names them, e.g. "manifest.image"). InputError naming the file and
// column for: a missing table or column, a key column holding one image twice, no row matching
// any unit (with how many units there are), a matched cell that is missing, not a number or not
// finite, a `rate` column holding a value other than 0 or 1. Unmatched units and unused rows
// are counted and noted.
ScoresData read_scores(const std::vector<ScoreTableSpec>& specs,
                       const std::vector<std::string>& units, const std::string& what);

inline constexpr std::uint32_t kNoScoreGroup = 0xffffffffu;

// A grouping of the units: `by` names it in results.json ("prompt", "group", "region").
struct ScoreGrouping {
  std::string by;
  std::vector<std::string> names;      // the groups, in report order
  std::vector<std::uint32_t> of_unit;  // per unit: its group, or kNoScoreGroup (left out)
};

// InputError when some group of a grouping holds units but none with a score in some column
// (naming the table, column, grouping and group): an empty group has no rate or mean.
void check_score_groups(const ScoresData& d, const std::vector<ScoreGrouping>& groupings);

// The section (results.json's analyses.scores): per column and grouping the groups' estimates
// and intervals at `ci` and the test across groups, Holm over every test with a p-value; its
// tables scores_groups and scores_tests; with `units_by` (a grouping's `by`), a units table
// units/score__COLUMN.csv of each group's estimate (compare-runs pairs them by that name).
AnalysisOutput scores_analysis(const ScoresData& d, const std::vector<ScoreGrouping>& groupings,
                               double ci, const std::string& units_by);

}  // namespace vlbias::audits_internal
