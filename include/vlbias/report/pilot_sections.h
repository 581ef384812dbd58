#pragma once
// The typed sections of an audit's results.json that power reads (include/vlbias/audits/
// power_pilot.h), each as its kind's contract types it (<kind>_results.h): power works on this
// struct only and reads no Json. An audit hands the sections it built (AnalysisOutput::pilot,
// audit_types.h); `vlbias power` reads them from a results.json on disk with
// pilot_sections_from_json, the one reader of these sections for power.
#include <optional>
#include <string>

#include "vlbias/io/json.h"
#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/representation_results.h"
#include "vlbias/report/scores_results.h"

namespace vlbias {

struct PilotSections {
  bool results_object = true;  // false: the results.json read was not a JSON object
  std::string kind;            // results.json's kind ("" when absent)
  std::optional<ConfidenceSection> confidence;      // trait-pairs
  std::optional<AssociationSection> association;    // dual-encoder
  std::optional<LvlmGroupTests> group_tests;        // lvlm-counterfactual
  std::optional<GeoFiltered> filtered;              // geo-diversity
  std::optional<ScoresSection> scores;              // representation, geo-diversity
  std::optional<DistributionSection> distribution;  // representation only
  // The sections power does not support, listed by unsupported_tests when they ran:
  bool paired = false;             // lvlm analyses.paired
  bool region_gaps = false;        // geo analyses.region_gaps, not empty
  bool consistency_gaps = false;   // geo analyses.consistency_gaps, not empty
  bool pull_per_identity = false;  // visual-stereotypes analyses.pull.per_identity
};

// The sections of a parsed results.json (leniently: what is missing is absent or false; never
// throws on a well-formed Json).
PilotSections pilot_sections_from_json(const Json& results);

// Moves every section `from` holds into `into` (an audit's sections, each analysis' part).
void merge_pilot_sections(PilotSections& into, PilotSections&& from);

}  // namespace vlbias
