// The sections of results.json that power reads; see include/vlbias/report/pilot_sections.h.
#include "vlbias/report/pilot_sections.h"

#include "results_reading.h"
#include "vlbias/report/visual_results.h"

namespace vlbias {

PilotSections pilot_sections_from_json(const Json& results) {
  PilotSections s;
  s.results_object = results.is_object();
  s.kind = results_text(results, "kind");
  const Json* a = results_member(results, "analyses");
  if (a == nullptr) return s;
  s.confidence = confidence_from_json(*a);
  s.association = association_from_json(*a);
  s.group_tests = lvlm_group_tests_from_json(*a);
  s.filtered = geo_filtered_from_json(*a);
  s.scores = scores_from_json(*a);
  // The geo-diversity audit's analyses.distribution is another section (FID, KID, Vendi).
  if (s.kind == "representation") s.distribution = distribution_from_json(*a);
  s.paired = results_member(*a, "paired") != nullptr;
  const Json* region_gaps = results_array(*a, "region_gaps");
  s.region_gaps = region_gaps != nullptr && !region_gaps->empty();
  const Json* consistency_gaps = results_array(*a, "consistency_gaps");
  s.consistency_gaps = consistency_gaps != nullptr && !consistency_gaps->empty();
  const Json* pull = results_member(*a, kVisualPullSection);
  s.pull_per_identity = pull != nullptr && results_member(*pull, "per_identity") != nullptr;
  return s;
}

void merge_pilot_sections(PilotSections& into, PilotSections&& from) {
  const auto take = [](auto& to, auto& part) {
    if (part) to = std::move(part);
  };
  take(into.confidence, from.confidence);
  take(into.association, from.association);
  take(into.group_tests, from.group_tests);
  take(into.filtered, from.filtered);
  take(into.scores, from.scores);
  take(into.distribution, from.distribution);
  into.paired = into.paired || from.paired;
  into.region_gaps = into.region_gaps || from.region_gaps;
  into.consistency_gaps = into.consistency_gaps || from.consistency_gaps;
  into.pull_per_identity = into.pull_per_identity || from.pull_per_identity;
}

}  // namespace vlbias
