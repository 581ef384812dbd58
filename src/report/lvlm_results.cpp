// The typed contract of the lvlm-counterfactual audit's results.json; see
// include/vlbias/report/lvlm_results.h.
#include "vlbias/report/lvlm_results.h"

#include <fmt/format.h>

#include <cmath>

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

const char* const kLvlmGroupTestsSection = "group_tests";

namespace {

Json group_test_json(const LvlmGroupTest& t, bool clustered) {
  Json j = Json::object();
  if (!t.by.is_null()) j["by"] = t.by;
  j["measure"] = t.measure;
  j["complete_sets"] = json_count(t.complete_sets);
  j["incomplete_sets"] = json_count(t.incomplete_sets);
  if (clustered) j["clusters"] = json_count(t.clusters);
  if (t.pilot_variance) {
    const LvlmGroupTest::PilotVariance& v = *t.pilot_variance;
    Json pv{{"residual_sd", json_number(v.residual_sd)}, {"set_sd", json_number(v.set_sd)}};
    if (clustered) pv["cluster_sd"] = json_number(v.cluster_sd);
    j["pilot_variance"] = std::move(pv);
  }
  if (t.friedman) {
    Json fr = to_json(t.friedman->result);
    fr["p_holm"] = json_number(t.friedman->p_holm);
    fr["p_bh"] = json_number(t.friedman->p_bh);
    j["friedman"] = std::move(fr);
  }
  Json groups = Json::array();
  for (const LvlmGroupEffect& g : t.groups) {
    groups.push_back({{"group", g.group},
                      {"mean", json_number(g.mean)},
                      {"gap_to_others", json_number(g.gap_to_others)},
                      {"p", json_number(g.p)},
                      {"p_holm", json_number(g.p_holm)},
                      {"p_bh", json_number(g.p_bh)}});
  }
  j["groups"] = std::move(groups);
  if (t.power) j[kTestPowerKey] = to_json(*t.power);
  return j;
}

LvlmGroupTest group_test_from_json(const Json& e) {
  LvlmGroupTest t;
  if (const Json* by = results_member(e, "by")) t.by = *by;
  t.measure = results_text(e, "measure");
  t.complete_sets = results_number(e, "complete_sets");
  t.incomplete_sets = results_number(e, "incomplete_sets");
  t.clusters = results_number(e, "clusters");
  if (const Json* pv = results_member(e, "pilot_variance")) {
    t.pilot_variance = LvlmGroupTest::PilotVariance{results_number(*pv, "residual_sd"),
                                                    results_number(*pv, "set_sd"),
                                                    results_number(*pv, "cluster_sd")};
  }
  if (const Json* fr = results_member(e, "friedman")) {
    t.friedman = LvlmGroupTest::Friedman{test_result_from_json(*fr), results_number(*fr, "p_holm"),
                                         results_number(*fr, "p_bh")};
  }
  const Json* groups = results_member(e, "groups");
  if (groups != nullptr && groups->is_array()) {
    for (const Json& g : *groups) {
      LvlmGroupEffect x;
      if (const Json* key = results_member(g, "group")) x.group = *key;
      x.mean = results_number(g, "mean");
      x.gap_to_others = results_number(g, "gap_to_others");
      x.p = results_number(g, "p");
      x.p_holm = results_number(g, "p_holm");
      x.p_bh = results_number(g, "p_bh");
      t.groups.push_back(std::move(x));
    }
  }
  t.power = test_power_from_json(e);
  return t;
}

}  // namespace

Json to_json(const LvlmGroupTests& s) {
  const bool clustered = !s.cluster.empty();
  Json results = Json::array();
  for (const LvlmGroupTest& t : s.results) results.push_back(group_test_json(t, clustered));
  Json out = Json::object();
  out["definition"] = s.definition;
  if (clustered) {
    out["cluster"] = s.cluster;
    out["cluster_definition"] = s.cluster_definition;
  }
  out["permutations"] = s.permutations;
  out["seed"] = s.seed;
  out["results"] = std::move(results);
  return out;
}

std::optional<LvlmGroupTests> lvlm_group_tests_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kLvlmGroupTestsSection);
  if (section == nullptr) return std::nullopt;
  LvlmGroupTests s;
  s.definition = results_text(*section, "definition");
  if (const Json* cluster = results_member(*section, "cluster"); cluster && cluster->is_array()) {
    for (const Json& c : *cluster) {
      if (c.is_string()) s.cluster.push_back(c.get<std::string>());
    }
  }
  s.cluster_definition = results_text(*section, "cluster_definition");
  const double permutations = results_number(*section, "permutations");
  if (permutations >= 0 && permutations < 1e18)
    s.permutations = static_cast<std::size_t>(permutations);
  if (const Json* seed = results_member(*section, "seed"); seed && seed->is_number_unsigned()) {
    s.seed = seed->get<std::uint64_t>();
  }
  const Json* results = results_member(*section, "results");
  if (results != nullptr && results->is_array()) {
    for (const Json& e : *results) s.results.push_back(group_test_from_json(e));
  }
  return s;
}

std::string lvlm_group_test_pointer(std::size_t i) {
  return fmt::format("/analyses/{}/results/{}", kLvlmGroupTestsSection, i);
}

}  // namespace vlbias
