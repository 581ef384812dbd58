// A finished audit as the pilot of a power analysis; see include/vlbias/audits/power_pilot.h.
#include "vlbias/audits/power_pilot.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

namespace {

const Json* member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

double number_or_nan(const Json& j, const char* key) {
  const Json* v = member(j, key);
  return v != nullptr && v->is_number() ? v->get<double>() : stats::kNaN;
}

// An entry's p-value: its own, or its `result`'s (the confidence tests).
double entry_p(const Json& e) {
  const Json* result = member(e, "result");
  return number_or_nan(result != nullptr ? *result : e, "p_value");
}

// How many entries of a table carry a p-value: the size of the family Holm ran over.
std::size_t family_size(const Json& entries) {
  std::size_t m = 0;
  for (const Json& e : entries) m += std::isfinite(entry_p(e));
  return m;
}

// A group {n, sd} of results.json; InputError naming the pointer when either is missing.
stats::PowerGroup pilot_group(const Json& g, const char* sd_key, const std::string& ptr,
                              const std::string& source) {
  const double n = number_or_nan(g, "n"), sd = number_or_nan(g, sd_key);
  VLBIAS_CHECK(std::isfinite(n) && n >= 0, InputError,
               "{}: {} has no group size 'n'; expected the audit's results.json", source, ptr);
  VLBIAS_CHECK(std::isfinite(sd), InputError,
               "{}: {} has no standard deviation '{}' (results.json written before vlbias "
               "recorded it, or a group of one): rerun the audit to use it as a pilot",
               source, ptr, sd_key);
  return {static_cast<std::size_t>(n), sd};
}

// The trait-pairs confidence tests (ANOVA / Welch / Student over the groups of one level).
void confidence_tests(const Json& analyses, double alpha, const std::string& source,
                      std::vector<PilotTest>& out) {
  const Json* conf = member(analyses, "confidence");
  const Json* tests = conf != nullptr ? member(*conf, "tests") : nullptr;
  if (tests == nullptr || !tests->is_array()) return;
  const std::size_t family = family_size(*tests);
  for (std::size_t i = 0; i < tests->size(); ++i) {
    const Json& e = (*tests)[i];
    const Json* result = member(e, "result");
    const std::string test = result != nullptr && member(*result, "test") != nullptr
                                 ? (*result)["test"].get<std::string>()
                                 : "";
    if (test != "anova" && test != "welch" && test != "student") continue;
    if (!std::isfinite(entry_p(e))) continue;
    PilotTest t;
    t.analysis = "confidence";
    t.pointer = fmt::format("/analyses/confidence/tests/{}", i);
    t.p_holm = number_or_nan(e, "p_holm");
    const std::string pair = e.value("pair", "");
    t.label = fmt::format("confidence in \"{}\" ({}) across {}", pair.substr(0, pair.find('/')),
                          pair, e.value("factor", ""));
    if (!e.value("within", "").empty()) {
      t.label += fmt::format(" among {} = {}", e.value("within", ""), e.value("within_level", ""));
    }
    t.design.test = test == "anova"   ? stats::PowerTest::Anova
                    : test == "welch" ? stats::PowerTest::Welch
                                      : stats::PowerTest::Student;
    const Json* groups = member(e, "groups");
    VLBIAS_CHECK(groups != nullptr && groups->is_array(), InputError,
                 "{}: {} has no groups; expected the audit's results.json", source, t.pointer);
    double hardest = -1;
    for (std::size_t g = 0; g < groups->size(); ++g) {
      const stats::PowerGroup pg =
          pilot_group((*groups)[g], "sd", fmt::format("{}/groups/{}", t.pointer, g), source);
      t.design.groups.push_back(pg);
      const double v = pg.sd * pg.sd / static_cast<double>(std::max<std::size_t>(pg.n, 1));
      if (v > hardest) {
        hardest = v;
        t.design.target = g;
      }
    }
    t.design.family = family;
    t.design.alpha = alpha;
    out.push_back(std::move(t));
  }
}

// The key object of a group as "Black female" (values in key order).
std::string key_text(const Json& key) {
  std::string s;
  if (!key.is_object()) return s;
  for (const auto& kv : key.items()) {
    if (!s.empty()) s += ' ';
    s += kv.value().is_string() ? kv.value().get<std::string>() : kv.value().dump();
  }
  return s;
}

// The association contrasts: each group against the others within its dimension.
void association_contrasts(const Json& analyses, double alpha, const std::string& source,
                           std::vector<PilotTest>& out) {
  const Json* assoc = member(analyses, "association");
  const Json* contrasts = assoc != nullptr ? member(*assoc, "contrasts") : nullptr;
  const Json* results = contrasts != nullptr ? member(*contrasts, "results") : nullptr;
  const Json* dims = assoc != nullptr ? member(*assoc, "dimensions") : nullptr;
  if (results == nullptr || !results->is_array() || dims == nullptr) return;
  const Json* has_delta = member(*assoc, "has_delta");
  const char* sd_key = has_delta != nullptr && has_delta->get<bool>() ? "delta_cos_sd" : "cos_sd";
  const std::size_t family = family_size(*results);
  for (std::size_t i = 0; i < results->size(); ++i) {
    const Json& e = (*results)[i];
    if (!std::isfinite(entry_p(e))) continue;
    PilotTest t;
    t.analysis = "association";
    t.pointer = fmt::format("/analyses/association/contrasts/results/{}", i);
    t.p_holm = number_or_nan(e, "p_holm");
    const std::string dim = e.value("dimension", "");
    t.label =
        fmt::format("{} on {} of {} against the other groups",
                    sd_key[0] == 'd' ? "Delta cos" : "cos", dim, key_text(e.value("key", Json())));
    t.design.test = stats::PowerTest::Contrast;
    bool found = false;
    for (std::size_t d = 0; d < dims->size() && !found; ++d) {
      const Json& jd = (*dims)[d];
      if (jd.value("dimension", "") != dim || member(jd, "groups") == nullptr) continue;
      found = true;
      for (std::size_t g = 0; g < jd["groups"].size(); ++g) {
        const Json& jg = jd["groups"][g];
        // The audit contrasts the groups with n >= 2 and a defined sd.
        if (number_or_nan(jg, "n") < 2) continue;
        if (jg.value("key", Json()) == e.value("key", Json()))
          t.design.target = t.design.groups.size();
        t.design.groups.push_back(pilot_group(
            jg, sd_key, fmt::format("/analyses/association/dimensions/{}/groups/{}", d, g),
            source));
      }
    }
    VLBIAS_CHECK(found, InputError, "{}: {} names dimension '{}', which {} does not list", source,
                 t.pointer, dim, "/analyses/association/dimensions");
    t.design.family = family;
    t.design.alpha = alpha;
    out.push_back(std::move(t));
  }
}

Json estimate_json(const stats::PowerEstimate& e, const stats::PowerDesign& d) {
  return Json{
      {"effect", json_number(e.effect)},
      {"power", e.power},
      {"se", e.se},
      {"replicates", e.replicates},
      {"analytic_power",
       json_number(std::isfinite(e.effect) ? stats::analytic_power(d, e.effect) : stats::kNaN)}};
}

}  // namespace

std::vector<PilotTest> pilot_tests(const Json& results, double alpha, const std::string& source) {
  VLBIAS_CHECK(alpha > 0 && alpha < 1, UsageError, "power: alpha must lie in (0, 1), got {}",
               alpha);
  VLBIAS_CHECK(results.is_object(), InputError, "{}: expected an audit's results.json object",
               source);
  std::vector<PilotTest> out;
  if (const Json* analyses = member(results, "analyses")) {
    confidence_tests(*analyses, alpha, source, out);
    association_contrasts(*analyses, alpha, source, out);
  }
  const Json* kind = member(results, "kind");
  VLBIAS_CHECK(!out.empty(), InputError,
               "{}: a {} audit with no test that power supports (the trait-pairs confidence "
               "tests and the group contrasts of association, with a p-value)",
               source, kind != nullptr && kind->is_string() ? kind->get<std::string>() : "?");
  return out;
}

Json answer_power_questions(const PilotTest& t, std::size_t index, const PowerQuestions& q) {
  const std::uint64_t seed = derive_seed(q.seed, index);
  const stats::PowerDesign& d = t.design;
  Json groups = Json::array();
  for (const auto& g : d.groups) groups.push_back(Json{{"n", g.n}, {"sd", g.sd}});
  Json j{{"analysis", t.analysis},
         {"label", t.label},
         {"pointer", t.pointer},
         {"test", stats::to_string(d.test)},
         {"correction", stats::to_string(d.correction)},
         {"family", d.family},
         {"alpha", d.alpha},
         {"groups", groups},
         {"target", d.target},
         {"p_holm", json_number(t.p_holm)},
         {"significant", t.p_holm <= d.alpha}};
  const stats::MdeResult mde = stats::minimum_detectable_effect(d, q.power, q.replicates, seed);
  Json jm = estimate_json(mde.at, d);
  jm["effect"] = json_number(mde.effect);
  jm["target_power"] = q.power;
  if (!mde.note.empty()) jm["note"] = mde.note;
  j["mde"] = jm;
  if (q.effect > 0) {
    j["at_effect"] = estimate_json(stats::simulate_power(d, q.effect, q.replicates, seed), d);
    if (q.sample_size) {
      const stats::SampleSizeResult n =
          stats::sample_size(d, q.effect, q.power, q.replicates, seed);
      Json jn{{"n_per_group", n.n_per_group}, {"power", n.at.power}, {"se", n.at.se}};
      if (!n.note.empty()) jn["note"] = n.note;
      j["sample_size"] = jn;
    }
  }
  return j;
}

std::size_t add_power_to_null_tests(Json& results, double alpha, const PowerQuestions& q) {
  const std::vector<PilotTest> tests = pilot_tests(results, alpha, "results.json");
  std::size_t added = 0;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    if (tests[i].p_holm <= alpha) continue;
    Json a = answer_power_questions(tests[i], i, q);
    a.erase("groups");
    a.erase("pointer");
    results[Json::json_pointer(tests[i].pointer)]["power"] = std::move(a);
    ++added;
  }
  return added;
}

}  // namespace vlbias
