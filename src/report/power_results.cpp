// The typed contract of a test's power entry; see include/vlbias/report/power_results.h.
#include "vlbias/report/power_results.h"

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

const char* const kTestPowerKey = "power";

namespace {

Json power_estimate_json(const PowerEstimateResult& e) {
  return Json{{"effect", json_number(e.effect)},
              {"power", json_number(e.power)},
              {"se", json_number(e.se)},
              {"replicates", json_count(e.replicates)},
              {"analytic_power", json_number(e.analytic_power)}};
}

PowerEstimateResult power_estimate_from_json(const Json& j) {
  return {results_number(j, "effect"), results_number(j, "power"), results_number(j, "se"),
          results_number(j, "replicates"), results_number(j, "analytic_power")};
}

Json power_mde_json(const TestPower::Mde& m) {
  Json j = power_estimate_json(m.at);
  j["target_power"] = json_number(m.target_power);
  if (!m.note.empty()) j["note"] = m.note;
  return j;
}

Json power_sample_size_json(const TestPower::SampleSize& n) {
  Json j{{"n_per_group", json_count(n.n_per_group)},
         {"power", json_number(n.power)},
         {"se", json_number(n.se)}};
  if (!n.note.empty()) j["note"] = n.note;
  return j;
}

}  // namespace

Json to_json(const TestPower& w) {
  Json j = Json::object();
  j["analysis"] = w.analysis;
  j["label"] = w.label;
  if (!w.pointer.empty()) j["pointer"] = w.pointer;
  j["test"] = w.test;
  j["correction"] = w.correction;
  j["family"] = json_count(w.family);
  j["alpha"] = json_number(w.alpha);
  if (w.groups) {
    Json groups = Json::array();
    for (const TestPower::Group& g : *w.groups) {
      groups.push_back(Json{{"n", json_count(g.n)}, {"sd", json_number(g.sd)}});
    }
    j["groups"] = std::move(groups);
  }
  j["target"] = json_count(w.target);
  j["p_holm"] = json_number(w.p_holm);
  j["significant"] = w.significant;
  if (w.base_rate) j["base_rate"] = json_number(*w.base_rate);
  if (w.friedman) {
    j["blocks"] = w.friedman->blocks;
    j["sets_per_cluster"] = json_count(w.friedman->sets_per_cluster);
    j["set_sd"] = json_number(w.friedman->set_sd);
    j["cluster_sd"] = json_number(w.friedman->cluster_sd);
  }
  j["mde"] = power_mde_json(w.mde);
  if (w.at_effect) j["at_effect"] = power_estimate_json(*w.at_effect);
  if (w.sample_size) j["sample_size"] = power_sample_size_json(*w.sample_size);
  return j;
}

std::optional<TestPower> test_power_from_json(const Json& test) {
  const Json* e = results_member(test, kTestPowerKey);
  if (e == nullptr) return std::nullopt;
  TestPower w;
  w.analysis = results_text(*e, "analysis");
  w.label = results_text(*e, "label");
  w.pointer = results_text(*e, "pointer");
  w.test = results_text(*e, "test");
  w.correction = results_text(*e, "correction");
  w.family = results_number(*e, "family");
  w.alpha = results_number(*e, "alpha");
  if (const Json* groups = results_array(*e, "groups")) {
    w.groups.emplace();
    for (const Json& g : *groups)
      w.groups->push_back({results_number(g, "n"), results_number(g, "sd")});
  }
  w.target = results_number(*e, "target");
  w.p_holm = results_number(*e, "p_holm");
  w.significant = results_flag(*e, "significant");
  if (results_member(*e, "base_rate") != nullptr) w.base_rate = results_number(*e, "base_rate");
  if (results_member(*e, "blocks") != nullptr) {
    w.friedman =
        TestPower::Blocks{results_text(*e, "blocks"), results_number(*e, "sets_per_cluster"),
                          results_number(*e, "set_sd"), results_number(*e, "cluster_sd")};
  }
  if (const Json* mde = results_member(*e, "mde")) {
    w.mde.at = power_estimate_from_json(*mde);
    w.mde.target_power = results_number(*mde, "target_power");
    w.mde.note = results_text(*mde, "note");
  }
  if (const Json* at = results_member(*e, "at_effect")) w.at_effect = power_estimate_from_json(*at);
  if (const Json* n = results_member(*e, "sample_size")) {
    w.sample_size =
        TestPower::SampleSize{results_number(*n, "n_per_group"), results_number(*n, "power"),
                              results_number(*n, "se"), results_text(*n, "note")};
  }
  return w;
}

}  // namespace vlbias
