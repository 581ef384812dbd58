// The typed contract of the dual-encoder audits' results.json; see
// include/vlbias/report/dual_encoder_results.h.
#include "vlbias/report/dual_encoder_results.h"

#include <fmt/format.h>

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

const char* const kConfidenceSection = "confidence";
const char* const kAssociationSection = "association";

namespace {

// An interval as to_json(stats::Interval) writes it, read back leniently.
stats::Interval confidence_interval_from_json(const Json& j) {
  stats::Interval ci;
  ci.lower = results_number(j, "lower");
  ci.upper = results_number(j, "upper");
  ci.level = results_number(j, "level");
  const double resamples = results_number(j, "resamples");
  const double undefined = results_number(j, "undefined_resamples");
  if (resamples >= 0 && resamples < 1e18) ci.resamples = static_cast<std::size_t>(resamples);
  if (const Json* s = results_member(j, "seed"); s && s->is_number_unsigned()) {
    ci.seed = s->get<std::uint64_t>();
  }
  if (undefined >= 0 && undefined < 1e18) ci.undefined = static_cast<std::size_t>(undefined);
  ci.note = results_text(j, "note");
  return ci;
}

Json confidence_pair_json(const ConfidencePair& p) {
  Json groups = Json::array();
  for (const ConfidenceGroup& g : p.groups) {
    Json e{{"key", g.key},
           {"n", json_count(g.n)},
           {"mean", json_number(g.mean)},
           {"sd", json_number(g.sd)}};
    if (g.ci) e["ci"] = to_json(*g.ci);
    if (g.small) e["small"] = true;
    groups.push_back(std::move(e));
  }
  return Json{{"pair", p.pair},
              {"first", p.first},
              {"second", p.second},
              {"mean", json_number(p.mean)},
              {"groups", std::move(groups)}};
}

Json confidence_test_json(const ConfidenceTest& t) {
  Json e{{"pair", t.pair},
         {"factor", t.factor},
         {"within", t.within},
         {"within_level", t.within_level}};
  e["result"] = to_json(t.result);
  e["p_holm"] = json_number(t.p_holm);
  e["p_bh"] = json_number(t.p_bh);
  Json groups = Json::array();
  for (const ConfidenceTest::Group& g : t.groups) {
    groups.push_back(Json{{"level", g.level},
                          {"n", json_count(g.n)},
                          {"mean", json_number(g.mean)},
                          {"sd", json_number(g.sd)}});
  }
  e["groups"] = std::move(groups);
  if (t.power) e[kTestPowerKey] = to_json(*t.power);
  return e;
}

ConfidencePair confidence_pair_from_json(const Json& j) {
  ConfidencePair p;
  p.pair = results_text(j, "pair");
  p.first = results_text(j, "first");
  p.second = results_text(j, "second");
  p.mean = results_number(j, "mean");
  if (const Json* groups = results_array(j, "groups")) {
    for (const Json& jg : *groups) {
      ConfidenceGroup g;
      if (const Json* key = results_member(jg, "key")) g.key = *key;
      g.n = results_number(jg, "n");
      g.mean = results_number(jg, "mean");
      g.sd = results_number(jg, "sd");
      if (const Json* ci = results_member(jg, "ci")) g.ci = confidence_interval_from_json(*ci);
      g.small = results_flag(jg, "small");
      p.groups.push_back(std::move(g));
    }
  }
  return p;
}

ConfidenceTest confidence_test_from_json(const Json& j) {
  ConfidenceTest t;
  t.pair = results_text(j, "pair");
  t.factor = results_text(j, "factor");
  t.within = results_text(j, "within");
  t.within_level = results_text(j, "within_level");
  if (const Json* result = results_member(j, "result")) t.result = test_result_from_json(*result);
  t.p_holm = results_number(j, "p_holm");
  t.p_bh = results_number(j, "p_bh");
  if (const Json* groups = results_array(j, "groups")) {
    for (const Json& g : *groups) {
      t.groups.push_back({results_text(g, "level"), results_number(g, "n"),
                          results_number(g, "mean"), results_number(g, "sd")});
    }
  }
  t.power = test_power_from_json(j);
  return t;
}

Json association_group_json(const AssociationGroup& g, bool has_delta) {
  Json e{{"key", g.key}, {"n", json_count(g.n)}, {"cos_mean", json_number(g.cos_mean)}};
  if (has_delta) {
    e["delta_cos_mean"] = json_number(g.delta_cos_mean);
    e["delta_cos_sd"] = json_number(g.sd);
  } else {
    e["cos_sd"] = json_number(g.sd);  // the contrasts' pilot variance (power)
  }
  if (g.ci) e["ci"] = to_json(*g.ci);
  if (g.small) e["small"] = true;
  return e;
}

Json association_dimension_json(const AssociationDimension& d, bool has_delta) {
  Json jd{{"dimension", d.dimension},
          {"name", d.name},
          {"valence", d.valence},
          {"prompts", json_count(d.prompts)},
          {"cos_mean", json_number(d.cos_mean)}};
  if (has_delta) jd["delta_cos_mean"] = json_number(d.delta_cos_mean);
  Json groups = Json::array();
  for (const AssociationGroup& g : d.groups) groups.push_back(association_group_json(g, has_delta));
  jd["groups"] = std::move(groups);
  return jd;
}

Json association_contrast_json(const AssociationContrast& c) {
  Json e{{"key", c.key},
         {"dimension", c.dimension},
         {"n", json_count(c.n)},
         {"estimate", json_number(c.estimate)},
         {"ci",
          {{"lower", json_number(c.ci_lower)},
           {"upper", json_number(c.ci_upper)},
           {"level", json_number(c.ci_level)}}},
         {"se", json_number(c.se)},
         {"df", json_number(c.df)},
         {"t", json_number(c.t)},
         {"p_value", json_number(c.p_value)},
         {"p_holm", json_number(c.p_holm)},
         {"p_bh", json_number(c.p_bh)}};
  if (!c.note.empty()) e["note"] = c.note;
  if (c.power) e[kTestPowerKey] = to_json(*c.power);
  return e;
}

AssociationGroup association_group_from_json(const Json& j, bool has_delta) {
  AssociationGroup g;
  if (const Json* key = results_member(j, "key")) g.key = *key;
  g.n = results_number(j, "n");
  g.cos_mean = results_number(j, "cos_mean");
  g.delta_cos_mean = results_number(j, "delta_cos_mean");
  g.sd = results_number(j, has_delta ? "delta_cos_sd" : "cos_sd");
  if (const Json* ci = results_member(j, "ci")) g.ci = confidence_interval_from_json(*ci);
  g.small = results_flag(j, "small");
  return g;
}

AssociationDimension association_dimension_from_json(const Json& j, bool has_delta) {
  AssociationDimension d;
  d.dimension = results_text(j, "dimension");
  d.name = results_text(j, "name");
  d.valence = results_text(j, "valence");
  d.prompts = results_number(j, "prompts");
  d.cos_mean = results_number(j, "cos_mean");
  d.delta_cos_mean = results_number(j, "delta_cos_mean");
  if (const Json* groups = results_array(j, "groups")) {
    for (const Json& g : *groups) d.groups.push_back(association_group_from_json(g, has_delta));
  }
  return d;
}

AssociationContrast association_contrast_from_json(const Json& j) {
  AssociationContrast c;
  if (const Json* key = results_member(j, "key")) c.key = *key;
  c.dimension = results_text(j, "dimension");
  c.n = results_number(j, "n");
  c.estimate = results_number(j, "estimate");
  if (const Json* ci = results_member(j, "ci")) {
    c.ci_lower = results_number(*ci, "lower");
    c.ci_upper = results_number(*ci, "upper");
    c.ci_level = results_number(*ci, "level");
  }
  c.se = results_number(j, "se");
  c.df = results_number(j, "df");
  c.t = results_number(j, "t");
  c.p_value = results_number(j, "p_value");
  c.p_holm = results_number(j, "p_holm");
  c.p_bh = results_number(j, "p_bh");
  c.note = results_text(j, "note");
  c.power = test_power_from_json(j);
  return c;
}

}  // namespace

Json to_json(const ConfidenceSection& s) {
  Json pairs = Json::array(), tests = Json::array();
  for (const ConfidencePair& p : s.pairs) pairs.push_back(confidence_pair_json(p));
  for (const ConfidenceTest& t : s.tests) tests.push_back(confidence_test_json(t));
  Json out = Json::object();
  out["definition"] = s.definition;
  out["scale"] = s.scale;
  if (s.logit_scale) out["logit_scale"] = *s.logit_scale;
  out["pairs"] = std::move(pairs);
  out["tests"] = std::move(tests);
  out["adjustment"] = s.adjustment;
  return out;
}

std::optional<ConfidenceSection> confidence_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kConfidenceSection);
  if (section == nullptr) return std::nullopt;
  ConfidenceSection s;
  s.definition = results_text(*section, "definition");
  s.scale = results_text(*section, "scale");
  if (const double l = results_number(*section, "logit_scale"); l == l) s.logit_scale = l;
  if (const Json* pairs = results_array(*section, "pairs")) {
    for (const Json& p : *pairs) s.pairs.push_back(confidence_pair_from_json(p));
  }
  if (const Json* tests = results_array(*section, "tests")) {
    for (const Json& t : *tests) s.tests.push_back(confidence_test_from_json(t));
  }
  s.adjustment = results_text(*section, "adjustment");
  return s;
}

std::string confidence_test_pointer(std::size_t i) {
  return fmt::format("/analyses/{}/tests/{}", kConfidenceSection, i);
}

std::string confidence_group_pointer(std::size_t p, std::size_t g) {
  return fmt::format("/analyses/{}/pairs/{}/groups/{}", kConfidenceSection, p, g);
}

Json to_json(const AssociationSection& s) {
  Json out = Json::object();
  if (!s.empty_groups.empty()) out["empty_groups"] = s.empty_groups;
  out["images"] = json_count(s.images);
  out["templates"] = s.templates;
  Json contrasts = Json::array();
  for (const AssociationContrast& c : s.contrasts) {
    contrasts.push_back(association_contrast_json(c));
  }
  out["contrasts"] =
      Json{{"definition", s.contrasts_definition}, {"results", std::move(contrasts)}};
  out["has_delta"] = s.has_delta;
  out["by"] = s.by;
  Json dims = Json::array();
  for (const AssociationDimension& d : s.dimensions) {
    dims.push_back(association_dimension_json(d, s.has_delta));
  }
  out["dimensions"] = std::move(dims);
  return out;
}

std::optional<AssociationSection> association_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kAssociationSection);
  if (section == nullptr) return std::nullopt;
  AssociationSection s;
  if (const Json* empty = results_array(*section, "empty_groups")) {
    s.empty_groups.assign(empty->begin(), empty->end());
  }
  s.images = results_number(*section, "images");
  s.templates = results_texts(*section, "templates");
  if (const Json* contrasts = results_member(*section, "contrasts")) {
    s.contrasts_definition = results_text(*contrasts, "definition");
    if (const Json* results = results_array(*contrasts, "results")) {
      for (const Json& c : *results) s.contrasts.push_back(association_contrast_from_json(c));
    }
  }
  s.has_delta = results_flag(*section, "has_delta");
  s.by = results_texts(*section, "by");
  if (const Json* dims = results_array(*section, "dimensions")) {
    for (const Json& d : *dims) {
      s.dimensions.push_back(association_dimension_from_json(d, s.has_delta));
    }
  }
  return s;
}

std::string association_contrast_pointer(std::size_t i) {
  return fmt::format("/analyses/{}/contrasts/results/{}", kAssociationSection, i);
}

std::string association_group_pointer(std::size_t d, std::size_t g) {
  return fmt::format("/analyses/{}/dimensions/{}/groups/{}", kAssociationSection, d, g);
}

std::string association_dimensions_pointer() {
  return fmt::format("/analyses/{}/dimensions", kAssociationSection);
}

}  // namespace vlbias
