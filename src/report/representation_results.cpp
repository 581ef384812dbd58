// The typed contract of the representation audit's results.json; see
// include/vlbias/report/representation_results.h.
#include "vlbias/report/representation_results.h"

#include <fmt/format.h>

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

const char* const kDistributionSection = "distribution";

namespace {

Json share_intervals_to_json(const std::vector<ShareInterval>& v) {
  Json out = Json::array();
  for (const ShareInterval& i : v) {
    out.push_back({{"lower", json_number(i.lower)}, {"upper", json_number(i.upper)}});
  }
  return out;
}

std::vector<ShareInterval> share_intervals_from_json(const Json& j, const char* key) {
  std::vector<ShareInterval> out;
  if (const Json* a = results_array(j, key)) {
    for (const Json& i : *a)
      out.push_back({results_number(i, "lower"), results_number(i, "upper")});
  }
  return out;
}

Json counts_to_json(const std::vector<double>& counts) {
  Json out = Json::array();
  for (const double c : counts) out.push_back(json_count(c));
  return out;
}

// The numbers of an array member (NaN for its other elements).
std::vector<double> numbers_from_json(const Json& j, const char* key) {
  std::vector<double> out;
  if (const Json* a = results_array(j, key)) {
    for (const Json& x : *a) out.push_back(x.is_number() ? x.get<double>() : stats::kNaN);
  }
  return out;
}

Json distribution_prompt_json(const DistributionPrompt& p) {
  Json j{{"prompt", p.prompt},
         {"group", p.group},
         {"key", p.key},
         {"images", json_count(p.images)},
         {"labelled_images", p.labelled_images},
         {"no_face_rate", json_number(p.no_face_rate)},
         {"several_faces_rate", json_number(p.several_faces_rate)},
         {"n", json_count(p.n)},
         {"other", json_count(p.other)},
         {"other_rate", json_number(p.other_rate)},
         {"counts", counts_to_json(p.counts)},
         {"small", p.small}};
  if (p.shares) {
    j["shares"] = *p.shares;
    j["wilson"] = share_intervals_to_json(p.wilson);
    j["simultaneous"] = share_intervals_to_json(p.simultaneous);
  } else {
    j["shares"] = Json();
  }
  return j;
}

DistributionPrompt distribution_prompt_from_json(const Json& j) {
  DistributionPrompt p;
  p.prompt = results_text(j, "prompt");
  p.group = results_text(j, "group");
  p.key = results_text(j, "key");
  p.images = results_number(j, "images");
  p.labelled_images = results_number(j, "labelled_images");
  p.no_face_rate = results_number(j, "no_face_rate");
  p.several_faces_rate = results_number(j, "several_faces_rate");
  p.n = results_number(j, "n");
  p.other = results_number(j, "other");
  p.other_rate = results_number(j, "other_rate");
  p.counts = numbers_from_json(j, "counts");
  p.small = results_flag(j, "small");
  if (results_array(j, "shares") != nullptr) {
    p.shares = numbers_from_json(j, "shares");
    p.wilson = share_intervals_from_json(j, "wilson");
    p.simultaneous = share_intervals_from_json(j, "simultaneous");
  }
  return p;
}

DistributionAttribute distribution_attribute_from_json(const Json& j) {
  DistributionAttribute a;
  a.attribute = results_text(j, "attribute");
  a.classes = results_texts(j, "classes");
  if (const Json* other = results_member(j, "other_labels"); other && other->is_object()) {
    for (const auto& kv : other->items()) {
      a.other_labels.emplace_back(kv.key(),
                                  kv.value().is_number() ? kv.value().get<double>() : stats::kNaN);
    }
  }
  if (const Json* prompts = results_array(j, "prompts")) {
    for (const Json& p : *prompts) a.prompts.push_back(distribution_prompt_from_json(p));
  }
  return a;
}

}  // namespace

Json to_json(const DistributionSection& s) {
  Json attributes = Json::array();
  for (const DistributionAttribute& a : s.attributes) {
    Json other = Json::object();
    for (const auto& [label, count] : a.other_labels) other[label] = json_count(count);
    Json prompts = Json::array();
    for (const DistributionPrompt& p : a.prompts) prompts.push_back(distribution_prompt_json(p));
    attributes.push_back({{"attribute", a.attribute},
                          {"classes", a.classes},
                          {"other_labels", std::move(other)},
                          {"prompts", std::move(prompts)}});
  }
  return Json{{"interval", s.interval},
              {"ci", s.ci},
              {"unit", s.unit},
              {"labeller", s.labeller},
              {"attributes", std::move(attributes)}};
}

std::optional<DistributionSection> distribution_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kDistributionSection);
  if (section == nullptr) return std::nullopt;
  DistributionSection s;
  s.interval = results_text(*section, "interval");
  s.ci = results_number(*section, "ci");
  s.unit = results_text(*section, "unit");
  s.labeller = results_text(*section, "labeller");
  if (const Json* attributes = results_array(*section, "attributes")) {
    for (const Json& a : *attributes) {
      s.attributes.push_back(distribution_attribute_from_json(a));
    }
  }
  return s;
}

std::string distribution_prompt_pointer(std::size_t a, std::size_t p) {
  return fmt::format("/analyses/{}/attributes/{}/prompts/{}", kDistributionSection, a, p);
}

}  // namespace vlbias
