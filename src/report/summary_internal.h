#pragma once
// What the kinds' summary builders share (include/vlbias/report/summary.h):
//   summary_json.cpp   the run block, the dispatch by kind, units table names, this builder
//   summary_dual.cpp   social-perception and trait-pairs
//   summary_kinds.cpp  geo-diversity, lvlm-counterfactual and visual-stereotypes
//   summary_representation.cpp  representation
#include <set>
#include <string>
#include <vector>

#include "report_page.h"
#include "vlbias/report/summary.h"

namespace vlbias::report_internal {

// One finding being filled in; each setter returns *this.
class SummaryFinding {
 public:
  explicit SummaryFinding(Json& json) : json_(json) {}
  // ci from an interval object {lower, upper[, level]}; `level` when the object has none.
  // A null or empty interval leaves ci null.
  SummaryFinding& ci(const Node& interval, double level = 0.95);
  // The same from a typed contract's interval (a NaN level reads as 0.95, as a missing one).
  SummaryFinding& ci(double lower, double upper, double level);
  // p and p_holm (either may be a null node); sets "significant".
  SummaryFinding& p(const Node& p, const Node& p_holm);
  SummaryFinding& p(const NumberAt& p, const NumberAt& p_holm);
  SummaryFinding& better(const char* direction);
  // units: a mean of `value` over every row of units/<table>.csv (only when present).
  SummaryFinding& units_mean(const std::string& table, const std::string& key,
                             const std::string& value);
  // units: mean(value | group = a) - mean(value | group = b) (only when present).
  SummaryFinding& units_difference(const std::string& table, const std::string& key,
                                   const std::string& value, const std::string& group,
                                   const std::string& a, const std::string& b);

 private:
  friend class SummaryBuilder;
  Json& json_;
  const std::set<std::string>* units_ = nullptr;
};

class SummaryBuilder {
 public:
  SummaryBuilder(const Json& results, const std::set<std::string>& units)
      : root_(&results, ""), units_(units) {}
  const Node& root() const { return root_; }
  // Adds a finding with its estimate (pointer and value from `estimate`). Ids are unique
  // within a summary: a repeated one gets " #2", " #3", ... The returned finding is valid
  // until the next add.
  SummaryFinding add(const std::string& id, const std::string& section, const std::string& quantity,
                     std::vector<std::string> groups, const Node& estimate);
  SummaryFinding add(const std::string& id, const std::string& section, const std::string& quantity,
                     std::vector<std::string> groups, const NumberAt& estimate);
  Json take() { return std::move(findings_); }

 private:
  Node root_;
  const std::set<std::string>& units_;
  std::set<std::string> ids_;
  Json findings_ = Json::array();
};

// The kinds' findings.
void summarize_dual_encoder(SummaryBuilder& b);
void summarize_geo_diversity(SummaryBuilder& b);
void summarize_lvlm_counterfactual(SummaryBuilder& b);
void summarize_visual_stereotypes(SummaryBuilder& b);
void summarize_representation(SummaryBuilder& b);  // summary_representation.cpp
// analyses.scores (representation and geo-diversity; scores_page.cpp): per column its rate or
// mean over every image, per group of each grouping, and the mean over the groups.
void summarize_scores(SummaryBuilder& b, const ScoresSection& scores);

}  // namespace vlbias::report_internal
