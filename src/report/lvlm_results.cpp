// The typed contract of the lvlm-counterfactual audit's results.json; see
// include/vlbias/report/lvlm_results.h.
#include "vlbias/report/lvlm_results.h"

#include <fmt/format.h>

#include <cmath>

#include "vlbias/report/json_output.h"

namespace vlbias {

namespace {

// The member `key` of an object, or nullptr when absent, null or not an object.
const Json* lvlm_member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

double lvlm_number(const Json& j, const char* key) {
  const Json* v = lvlm_member(j, key);
  return v != nullptr && v->is_number() ? v->get<double>() : stats::kNaN;
}

std::string lvlm_text(const Json& j, const char* key) {
  const Json* v = lvlm_member(j, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

// A count as the audit writes it: a whole number as an integer (what it was before it was a
// double), anything else as json_number.
Json lvlm_count_json(double x) {
  if (std::isfinite(x) && x >= 0 && x == std::floor(x) && x < 9007199254740992.0) {
    return Json(static_cast<std::uint64_t>(x));
  }
  return json_number(x);
}

Json group_test_json(const LvlmGroupTest& t, bool clustered) {
  Json j = Json::object();
  if (!t.by.is_null()) j["by"] = t.by;
  j["measure"] = t.measure;
  j["complete_sets"] = lvlm_count_json(t.complete_sets);
  j["incomplete_sets"] = lvlm_count_json(t.incomplete_sets);
  if (clustered) j["clusters"] = lvlm_count_json(t.clusters);
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
  return j;
}

LvlmGroupTest group_test_from_json(const Json& e) {
  LvlmGroupTest t;
  if (const Json* by = lvlm_member(e, "by")) t.by = *by;
  t.measure = lvlm_text(e, "measure");
  t.complete_sets = lvlm_number(e, "complete_sets");
  t.incomplete_sets = lvlm_number(e, "incomplete_sets");
  t.clusters = lvlm_number(e, "clusters");
  if (const Json* pv = lvlm_member(e, "pilot_variance")) {
    t.pilot_variance =
        LvlmGroupTest::PilotVariance{lvlm_number(*pv, "residual_sd"), lvlm_number(*pv, "set_sd"),
                                     lvlm_number(*pv, "cluster_sd")};
  }
  if (const Json* fr = lvlm_member(e, "friedman")) {
    t.friedman = LvlmGroupTest::Friedman{test_result_from_json(*fr), lvlm_number(*fr, "p_holm"),
                                         lvlm_number(*fr, "p_bh")};
  }
  const Json* groups = lvlm_member(e, "groups");
  if (groups != nullptr && groups->is_array()) {
    for (const Json& g : *groups) {
      LvlmGroupEffect x;
      if (const Json* key = lvlm_member(g, "group")) x.group = *key;
      x.mean = lvlm_number(g, "mean");
      x.gap_to_others = lvlm_number(g, "gap_to_others");
      x.p = lvlm_number(g, "p");
      x.p_holm = lvlm_number(g, "p_holm");
      x.p_bh = lvlm_number(g, "p_bh");
      t.groups.push_back(std::move(x));
    }
  }
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
  const Json* section = lvlm_member(analyses, kLvlmGroupTestsSection);
  if (section == nullptr) return std::nullopt;
  LvlmGroupTests s;
  s.definition = lvlm_text(*section, "definition");
  if (const Json* cluster = lvlm_member(*section, "cluster"); cluster && cluster->is_array()) {
    for (const Json& c : *cluster) {
      if (c.is_string()) s.cluster.push_back(c.get<std::string>());
    }
  }
  s.cluster_definition = lvlm_text(*section, "cluster_definition");
  const double permutations = lvlm_number(*section, "permutations");
  if (permutations >= 0 && permutations < 1e18)
    s.permutations = static_cast<std::size_t>(permutations);
  if (const Json* seed = lvlm_member(*section, "seed"); seed && seed->is_number_unsigned()) {
    s.seed = seed->get<std::uint64_t>();
  }
  const Json* results = lvlm_member(*section, "results");
  if (results != nullptr && results->is_array()) {
    for (const Json& e : *results) s.results.push_back(group_test_from_json(e));
  }
  return s;
}

std::string lvlm_group_test_pointer(std::size_t i) {
  return fmt::format("/analyses/{}/results/{}", kLvlmGroupTestsSection, i);
}

}  // namespace vlbias
