// The lvlm-counterfactual audit as the pilot of a power analysis (power_pilot.h), from its
// typed group tests (lvlm_results.h): what the audit hands to its own power section, and what
// vlbias power finds in a finished run's results.json.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "power_pilot_internal.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/error.h"

namespace vlbias {

namespace audits_internal {

// The LVLM audit's set-blocked Friedman tests (one per by-level and measure): the design of
// power.h's Friedman with the pilot's blocks and variance components; Holm over every
// Friedman p of the table.
void lvlm_friedman_tests(const LvlmGroupTests& section, double alpha, const std::string& source,
                         std::vector<PilotTest>& out) {
  // A test's Friedman p (NaN without one).
  const auto friedman_p = [](const LvlmGroupTest& e) {
    return e.friedman ? e.friedman->result.p_value : stats::kNaN;
  };
  std::size_t family = 0;
  for (const LvlmGroupTest& e : section.results) family += std::isfinite(friedman_p(e));
  for (std::size_t i = 0; i < section.results.size(); ++i) {
    const LvlmGroupTest& e = section.results[i];
    if (!std::isfinite(friedman_p(e))) continue;
    PilotTest t;
    t.analysis = kLvlmGroupTestsSection;
    t.pointer = lvlm_group_test_pointer(i);
    t.p_holm = e.friedman->p_holm;
    VLBIAS_CHECK(e.pilot_variance.has_value(), InputError,
                 "{}: {} has no pilot_variance (results.json written before vlbias recorded "
                 "it): rerun the audit to use it as a pilot",
                 source, t.pointer);
    const LvlmGroupTest::PilotVariance& pv = *e.pilot_variance;
    const double sets = e.complete_sets, clusters = e.clusters;
    VLBIAS_CHECK(std::isfinite(sets) && std::isfinite(pv.residual_sd) && !e.groups.empty(),
                 InputError,
                 "{}: {} lacks complete_sets, groups or pilot_variance.residual_sd; expected "
                 "the audit's results.json",
                 source, t.pointer);
    t.label = fmt::format("{} across the {} groups (Friedman over {} complete sets", e.measure,
                          e.groups.size(), sets);
    stats::PowerDesign& d = t.design;
    d.test = stats::PowerTest::Friedman;
    std::size_t blocks = pilot_count(sets, t.pointer + "/complete_sets", source);
    if (std::isfinite(clusters) && clusters >= 1) {
      t.label += fmt::format(" in {} clusters", clusters);
      blocks = pilot_count(clusters, t.pointer + "/clusters", source);
      d.sets_per_cluster =
          std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(sets / clusters)));
      d.cluster_sd = pv.cluster_sd;
      VLBIAS_CHECK(std::isfinite(d.cluster_sd), InputError,
                   "{}: {}/pilot_variance has no cluster_sd (fewer than 2 clusters)", source,
                   t.pointer);
    }
    t.label += ")";
    if (!e.by.is_null()) t.label += fmt::format(" for {}", pilot_key_text(e.by));
    d.set_sd = std::isfinite(pv.set_sd) ? pv.set_sd : 0.0;
    d.groups.assign(e.groups.size(), stats::PowerGroup{blocks, pv.residual_sd});
    d.family = family;
    d.alpha = alpha;
    out.push_back(std::move(t));
  }
}

}  // namespace audits_internal

std::vector<PilotTest> lvlm_pilot_tests(const LvlmGroupTests& group_tests, double alpha,
                                        const std::string& source) {
  VLBIAS_CHECK(alpha > 0 && alpha < 1, UsageError, "power: alpha must lie in (0, 1), got {}",
               alpha);
  std::vector<PilotTest> out;
  audits_internal::lvlm_friedman_tests(group_tests, alpha, source, out);
  return out;
}

std::vector<Json> lvlm_unsupported_tests(const LvlmGroupTests* group_tests, bool paired) {
  std::vector<Json> out;
  if (group_tests != nullptr && !group_tests->results.empty()) {
    out.push_back(
        Json{{"tests", fmt::format("/analyses/{}/results/*/groups/*/p", kLvlmGroupTestsSection)},
             {"reason",
              "each group's within-set permutation test would need its own Monte Carlo "
              "permutations inside every simulated study (replicates x permutations x sets per "
              "power point); Friedman, the omnibus test of the same sets, is simulated instead"}});
  }
  if (paired) {
    out.push_back(Json{
        {"tests", "/analyses/paired/results/*/tests"},
        {"reason",
         "the paired t and Wilcoxon of treatment - baseline MaxGap: results.json does not hold "
         "the sd of the per-set differences, and MaxGap (max - min over a set's groups) is not "
         "a group mean whose gap an effect can be planted on"}});
  }
  return out;
}

}  // namespace vlbias
