// The typed contract of the visual-stereotypes audit's sections; see
// include/vlbias/report/visual_results.h.
#include "vlbias/report/visual_results.h"

#include <cmath>

#include <fmt/format.h>

#include "results_reading.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

const char* const kVisualStereotypesSection = "stereotypes";
const char* const kVisualLikelihoodSection = "likelihood";
const char* const kVisualSalienceSection = "salience";
const char* const kVisualPullSection = "pull";

VisualInterval visual_interval(const stats::Interval& ci) {
  VisualInterval v{ci, std::isinf(ci.lower), std::isinf(ci.upper)};
  if (v.lower_infinite) v.ci.lower = stats::kNaN;
  if (v.upper_infinite) v.ci.upper = stats::kNaN;
  return v;
}

namespace {

std::uint64_t visual_seed(const Json& j, const char* key) {
  const Json* s = results_member(j, key);
  return s != nullptr && s->is_number_unsigned() ? s->get<std::uint64_t>() : 0;
}

std::size_t visual_size(const Json& j, const char* key) {
  const double v = results_number(j, key);
  return v >= 0 && v < 1e18 ? static_cast<std::size_t>(v) : 0;
}

Json visual_interval_json(const VisualInterval& v) {
  Json j = to_json(v.ci);
  if (v.lower_infinite) j["lower_infinite"] = true;
  if (v.upper_infinite) j["upper_infinite"] = true;
  return j;
}

VisualInterval visual_interval_from_json(const Json& j) {
  VisualInterval v;
  v.ci.lower = results_number(j, "lower");
  v.ci.upper = results_number(j, "upper");
  v.ci.level = results_number(j, "level");
  v.ci.resamples = visual_size(j, "resamples");
  v.ci.seed = visual_seed(j, "seed");
  v.ci.undefined = visual_size(j, "undefined_resamples");
  v.ci.note = results_text(j, "note");
  v.lower_infinite = results_flag(j, "lower_infinite");
  v.upper_infinite = results_flag(j, "upper_infinite");
  return v;
}

// The objects of an array member, each read by `read`.
template <typename T, typename Read>
std::vector<T> visual_entries(const Json& j, const char* key, Read read) {
  std::vector<T> out;
  if (const Json* a = results_array(j, key)) {
    for (const Json& e : *a) out.push_back(read(e));
  }
  return out;
}

Json likelihood_identity_json(const VisualLikelihoodIdentity& x) {
  Json j{{"identity", x.identity},
         {"region", x.region},
         {"included", x.included},
         {"visual_stereotypes", json_count(x.visual_stereotypes)},
         {"shown_stereotypes", json_count(x.shown_stereotypes)},
         {"shown_random", json_count(x.shown_random)},
         {"images", json_count(x.images)},
         {"present_stereotypes", json_count(x.present_stereotypes)},
         {"l_stereo", json_number(x.l_stereo)},
         {"l_random", json_number(x.l_random)},
         {"theta", json_number(x.theta)},
         {"theta_status", x.theta_status},
         {"offensiveness", json_number(x.offensiveness)},
         {"mean_offensiveness", json_number(x.mean_offensiveness)}};
  if (x.ci) {
    j["ci"] = {{"l_stereo", visual_interval_json(x.ci->l_stereo)},
               {"l_random", visual_interval_json(x.ci->l_random)},
               {"theta", visual_interval_json(x.ci->theta)},
               {"offensiveness", visual_interval_json(x.ci->offensiveness)}};
  }
  return j;
}

VisualLikelihoodIdentity likelihood_identity_from_json(const Json& j) {
  VisualLikelihoodIdentity x;
  x.identity = results_text(j, "identity");
  x.region = results_text(j, "region");
  x.included = results_flag(j, "included");
  x.visual_stereotypes = results_number(j, "visual_stereotypes");
  x.shown_stereotypes = results_number(j, "shown_stereotypes");
  x.shown_random = results_number(j, "shown_random");
  x.images = results_number(j, "images");
  x.present_stereotypes = results_number(j, "present_stereotypes");
  x.l_stereo = results_number(j, "l_stereo");
  x.l_random = results_number(j, "l_random");
  x.theta = results_number(j, "theta");
  x.theta_status = results_text(j, "theta_status");
  x.offensiveness = results_number(j, "offensiveness");
  x.mean_offensiveness = results_number(j, "mean_offensiveness");
  if (const Json* ci = results_member(j, "ci")) {
    const auto at = [&](const char* key) {
      const Json* c = results_member(*ci, key);
      return c != nullptr ? visual_interval_from_json(*c) : VisualInterval{};
    };
    x.ci =
        VisualLikelihoodIntervals{at("l_stereo"), at("l_random"), at("theta"), at("offensiveness")};
  }
  return x;
}

Json likelihood_region_json(const VisualLikelihoodRegion& r) {
  return {{"region", r.region},
          {"identities", json_count(r.identities)},
          {"mean_l_stereo", json_number(r.mean_l_stereo)},
          {"mean_l_random", json_number(r.mean_l_random)},
          {"pooled_ratio", json_number(r.pooled_ratio)},
          {"mean_finite_theta", json_number(r.mean_finite_theta)},
          {"infinite", json_count(r.infinite)},
          {"undefined", json_count(r.undefined)},
          {"mean_offensiveness", json_number(r.mean_offensiveness)}};
}

VisualLikelihoodRegion likelihood_region_from_json(const Json& j) {
  VisualLikelihoodRegion r;
  r.region = results_text(j, "region");
  r.identities = results_number(j, "identities");
  r.mean_l_stereo = results_number(j, "mean_l_stereo");
  r.mean_l_random = results_number(j, "mean_l_random");
  r.pooled_ratio = results_number(j, "pooled_ratio");
  r.mean_finite_theta = results_number(j, "mean_finite_theta");
  r.infinite = results_number(j, "infinite");
  r.undefined = results_number(j, "undefined");
  r.mean_offensiveness = results_number(j, "mean_offensiveness");
  return r;
}

Json likelihood_pooled_json(const VisualLikelihoodPooled& p) {
  Json j{{"identities", json_count(p.identities)},
         {"finite", json_count(p.finite)},
         {"infinite", json_count(p.infinite)},
         {"undefined", json_count(p.undefined)},
         {"ratio", json_number(p.ratio)},
         {"mean_finite_theta", json_number(p.mean_finite_theta)},
         {"median_theta", json_number(p.median_theta)}};
  if (p.median_theta_infinite) j["median_theta_infinite"] = true;
  if (p.ci_ratio) j["ci_ratio"] = visual_interval_json(*p.ci_ratio);
  return j;
}

VisualLikelihoodPooled likelihood_pooled_from_json(const Json& j) {
  VisualLikelihoodPooled p;
  p.identities = results_number(j, "identities");
  p.finite = results_number(j, "finite");
  p.infinite = results_number(j, "infinite");
  p.undefined = results_number(j, "undefined");
  p.ratio = results_number(j, "ratio");
  p.mean_finite_theta = results_number(j, "mean_finite_theta");
  p.median_theta = results_number(j, "median_theta");
  p.median_theta_infinite = results_flag(j, "median_theta_infinite");
  if (const Json* ci = results_member(j, "ci_ratio")) p.ci_ratio = visual_interval_from_json(*ci);
  return p;
}

}  // namespace

Json to_json(const VisualLikelihoodResult& s) {
  const VisualLikelihoodResult::AnnotationCounts& a = s.annotations;
  Json ids = Json::array(), regions = Json::array();
  for (const VisualLikelihoodIdentity& x : s.identities) ids.push_back(likelihood_identity_json(x));
  for (const VisualLikelihoodRegion& r : s.regions) regions.push_back(likelihood_region_json(r));
  Json j{{"definition", s.definition},
         {"aggregation", s.aggregation},
         {"none_as_random", s.none_as_random},
         {"min_stereotypes", json_count(s.min_stereotypes)},
         {"annotations",
          {{"rows", json_count(a.rows)},
           {"empty_rows_skipped", json_count(a.empty_rows_skipped)},
           {"runs", json_count(a.runs)},
           {"duplicate_runs_dropped", json_count(a.duplicate_runs_dropped)},
           {"duplicate_rows_dropped", json_count(a.duplicate_rows_dropped)},
           {"judgements", json_count(a.judgements)},
           {"images", json_count(a.images)},
           {"identities", json_count(a.identities)},
           {"attributes", json_count(a.attributes)}}}};
  if (s.pooled) j["pooled"] = likelihood_pooled_json(*s.pooled);
  j["identities"] = std::move(ids);
  j["regions"] = std::move(regions);
  return j;
}

std::optional<VisualLikelihoodResult> visual_likelihood_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kVisualLikelihoodSection);
  if (section == nullptr) return std::nullopt;
  VisualLikelihoodResult s;
  s.definition = results_text(*section, "definition");
  s.aggregation = results_text(*section, "aggregation");
  s.none_as_random = results_flag(*section, "none_as_random");
  s.min_stereotypes = results_number(*section, "min_stereotypes");
  if (const Json* a = results_member(*section, "annotations")) {
    VisualLikelihoodResult::AnnotationCounts& c = s.annotations;
    c.rows = results_number(*a, "rows");
    c.empty_rows_skipped = results_number(*a, "empty_rows_skipped");
    c.runs = results_number(*a, "runs");
    c.duplicate_runs_dropped = results_number(*a, "duplicate_runs_dropped");
    c.duplicate_rows_dropped = results_number(*a, "duplicate_rows_dropped");
    c.judgements = results_number(*a, "judgements");
    c.images = results_number(*a, "images");
    c.identities = results_number(*a, "identities");
    c.attributes = results_number(*a, "attributes");
  }
  if (const Json* p = results_member(*section, "pooled"))
    s.pooled = likelihood_pooled_from_json(*p);
  s.identities = visual_entries<VisualLikelihoodIdentity>(*section, "identities",
                                                          likelihood_identity_from_json);
  s.regions =
      visual_entries<VisualLikelihoodRegion>(*section, "regions", likelihood_region_from_json);
  return s;
}

namespace {

Json pull_identity_json(const VisualPullIdentity& x) {
  const VisualPullIdentity::Test& t = x.test;
  return {{"identity", x.identity},
          {"region", x.region},
          {"n",
           {{"default", json_count(x.n_default)},
            {"stereotypical", json_count(x.n_stereotypical)},
            {"non_stereotypical", json_count(x.n_non_stereotypical)}}},
          {"s_d_s", json_number(x.s_d_s)},
          {"s_d_ns", json_number(x.s_d_ns)},
          {"s_s_ns", json_number(x.s_s_ns)},
          {"mean_similarity", json_number(x.mean_similarity)},
          {"pull", json_number(x.pull)},
          {"within",
           {{"s_d_d", json_number(x.s_d_d)},
            {"s_s_s", json_number(x.s_s_s)},
            {"s_ns_ns", json_number(x.s_ns_ns)}}},
          {"test",
           {{"p_value", json_number(t.p_value)},
            {"p_holm", json_number(t.p_holm)},
            {"p_bh", json_number(t.p_bh)},
            {"alternative", t.alternative},
            {"method", t.method},
            {"resamples", json_count(t.resamples)},
            {"seed", t.seed}}}};
}

VisualPullIdentity pull_identity_from_json(const Json& j) {
  VisualPullIdentity x;
  x.identity = results_text(j, "identity");
  x.region = results_text(j, "region");
  if (const Json* n = results_member(j, "n")) {
    x.n_default = results_number(*n, "default");
    x.n_stereotypical = results_number(*n, "stereotypical");
    x.n_non_stereotypical = results_number(*n, "non_stereotypical");
  }
  x.s_d_s = results_number(j, "s_d_s");
  x.s_d_ns = results_number(j, "s_d_ns");
  x.s_s_ns = results_number(j, "s_s_ns");
  x.mean_similarity = results_number(j, "mean_similarity");
  x.pull = results_number(j, "pull");
  if (const Json* w = results_member(j, "within")) {
    x.s_d_d = results_number(*w, "s_d_d");
    x.s_s_s = results_number(*w, "s_s_s");
    x.s_ns_ns = results_number(*w, "s_ns_ns");
  }
  if (const Json* t = results_member(j, "test")) {
    x.test.p_value = results_number(*t, "p_value");
    x.test.p_holm = results_number(*t, "p_holm");
    x.test.p_bh = results_number(*t, "p_bh");
    x.test.alternative = results_text(*t, "alternative");
    x.test.method = results_text(*t, "method");
    x.test.resamples = results_number(*t, "resamples");
    x.test.seed = visual_seed(*t, "seed");
  }
  return x;
}

Json pull_region_json(const VisualPullRegion& r) {
  return {{"region", r.region},
          {"identities", json_count(r.identities)},
          {"positive_pull", json_count(r.positive_pull)},
          {"significant_holm_05", json_count(r.significant_holm_05)},
          {"mean_s_d_s", json_number(r.mean_s_d_s)},
          {"mean_s_d_ns", json_number(r.mean_s_d_ns)},
          {"mean_s_s_ns", json_number(r.mean_s_s_ns)},
          {"mean_similarity", json_number(r.mean_similarity)},
          {"mean_pull", json_number(r.mean_pull)}};
}

VisualPullRegion pull_region_from_json(const Json& j) {
  VisualPullRegion r;
  r.region = results_text(j, "region");
  r.identities = results_number(j, "identities");
  r.positive_pull = results_number(j, "positive_pull");
  r.significant_holm_05 = results_number(j, "significant_holm_05");
  r.mean_s_d_s = results_number(j, "mean_s_d_s");
  r.mean_s_d_ns = results_number(j, "mean_s_d_ns");
  r.mean_s_s_ns = results_number(j, "mean_s_s_ns");
  r.mean_similarity = results_number(j, "mean_similarity");
  r.mean_pull = results_number(j, "mean_pull");
  return r;
}

}  // namespace

Json to_json(const VisualPullResult& s) {
  Json ids = Json::array(), regions = Json::array();
  for (const VisualPullIdentity& x : s.per_identity) ids.push_back(pull_identity_json(x));
  for (const VisualPullRegion& r : s.regions) regions.push_back(pull_region_json(r));
  return {{"definition", s.definition},
          {"identities", json_count(s.identities)},
          {"tested", json_count(s.tested)},
          {"positive_pull", json_count(s.positive_pull)},
          {"permutations", json_count(s.permutations)},
          {"alternative", s.alternative},
          {"per_identity", std::move(ids)},
          {"regions", std::move(regions)}};
}

std::optional<VisualPullResult> visual_pull_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kVisualPullSection);
  if (section == nullptr) return std::nullopt;
  VisualPullResult s;
  s.definition = results_text(*section, "definition");
  s.identities = results_number(*section, "identities");
  s.tested = results_number(*section, "tested");
  s.positive_pull = results_number(*section, "positive_pull");
  s.permutations = results_number(*section, "permutations");
  s.alternative = results_text(*section, "alternative");
  s.per_identity =
      visual_entries<VisualPullIdentity>(*section, "per_identity", pull_identity_from_json);
  s.regions = visual_entries<VisualPullRegion>(*section, "regions", pull_region_from_json);
  return s;
}

Json to_json(const VisualStereotypesResult& s) {
  return {{"visual_attributes",
           {{"rows", json_count(s.attribute_rows)},
            {"distinct", json_count(s.attributes_distinct)},
            {"repeated", json_count(s.attributes_repeated)},
            {"rating_columns", s.rating_columns},
            {"visual", json_count(s.attributes_visual)}}},
          {"seegull_rows", json_count(s.seegull_rows)},
          {"stereotype_rows", json_count(s.stereotype_rows)},
          {"visual_stereotypes", json_count(s.visual_stereotypes)},
          {"attributes_used", json_count(s.attributes_used)},
          {"identities", json_count(s.identities)},
          {"identities_with_one", json_count(s.identities_with_one)},
          {"identities_with_more_than_one", json_count(s.identities_with_more_than_one)},
          {"identities_with_at_least_min", json_count(s.identities_with_at_least_min)},
          {"offensiveness_from_merged_column", json_count(s.offensiveness_from_merged_column)}};
}

std::optional<VisualStereotypesResult> visual_stereotypes_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kVisualStereotypesSection);
  if (section == nullptr) return std::nullopt;
  VisualStereotypesResult s;
  if (const Json* v = results_member(*section, "visual_attributes")) {
    s.attribute_rows = results_number(*v, "rows");
    s.attributes_distinct = results_number(*v, "distinct");
    s.attributes_repeated = results_number(*v, "repeated");
    s.rating_columns = results_texts(*v, "rating_columns");
    s.attributes_visual = results_number(*v, "visual");
  }
  s.seegull_rows = results_number(*section, "seegull_rows");
  s.stereotype_rows = results_number(*section, "stereotype_rows");
  s.visual_stereotypes = results_number(*section, "visual_stereotypes");
  s.attributes_used = results_number(*section, "attributes_used");
  s.identities = results_number(*section, "identities");
  s.identities_with_one = results_number(*section, "identities_with_one");
  s.identities_with_more_than_one = results_number(*section, "identities_with_more_than_one");
  s.identities_with_at_least_min = results_number(*section, "identities_with_at_least_min");
  s.offensiveness_from_merged_column = results_number(*section, "offensiveness_from_merged_column");
  return s;
}

namespace {

Json salience_identity_json(const VisualSalienceIdentity& x) {
  Json top = Json::array();
  for (const VisualSalienceTop& t : x.top_stereotypes) {
    Json j{{"attribute", t.attribute},
           {"rank", json_count(t.rank)},
           {"salience", json_number(t.salience)},
           {"count", json_count(t.count)}};
    if (t.likelihood) j["likelihood"] = json_number(*t.likelihood);
    top.push_back(std::move(j));
  }
  return {{"identity", x.identity},
          {"region", x.region},
          {"captions", json_count(x.captions)},
          {"top_stereotypes", std::move(top)}};
}

VisualSalienceTop salience_top_from_json(const Json& j) {
  VisualSalienceTop t;
  t.attribute = results_text(j, "attribute");
  t.rank = results_number(j, "rank");
  t.salience = results_number(j, "salience");
  t.count = results_number(j, "count");
  if (j.is_object() && j.contains("likelihood")) t.likelihood = results_number(j, "likelihood");
  return t;
}

VisualSalienceIdentity salience_identity_from_json(const Json& j) {
  VisualSalienceIdentity x;
  x.identity = results_text(j, "identity");
  x.region = results_text(j, "region");
  x.captions = results_number(j, "captions");
  x.top_stereotypes =
      visual_entries<VisualSalienceTop>(j, "top_stereotypes", salience_top_from_json);
  return x;
}

}  // namespace

Json to_json(const VisualSalienceResult& s) {
  Json ids = Json::array();
  for (const VisualSalienceIdentity& x : s.identities_detail) {
    ids.push_back(salience_identity_json(x));
  }
  Json j{{"definition", s.definition},
         {"smoothing", json_number(s.smoothing)},
         {"top", json_count(s.top)},
         {"captions", json_count(s.captions)},
         {"identities", json_count(s.identities)},
         {"vocabulary", json_count(s.vocabulary)},
         {"matches", json_count(s.matches)},
         {"top_stereotypes", json_count(s.top_stereotypes)},
         {"identities_detail", std::move(ids)}};
  if (const auto& a = s.annotated) {
    j["top_stereotypes_annotated"] = json_count(a->top_stereotypes_annotated);
    j["top_stereotypes_marked_present"] = json_count(a->top_stereotypes_marked_present);
    j["share_marked_present"] = json_number(a->share_marked_present);
  }
  return j;
}

std::optional<VisualSalienceResult> visual_salience_from_json(const Json& analyses) {
  const Json* section = results_member(analyses, kVisualSalienceSection);
  if (section == nullptr) return std::nullopt;
  VisualSalienceResult s;
  s.definition = results_text(*section, "definition");
  s.smoothing = results_number(*section, "smoothing");
  s.top = results_number(*section, "top");
  s.captions = results_number(*section, "captions");
  s.identities = results_number(*section, "identities");
  s.vocabulary = results_number(*section, "vocabulary");
  s.matches = results_number(*section, "matches");
  s.top_stereotypes = results_number(*section, "top_stereotypes");
  s.identities_detail = visual_entries<VisualSalienceIdentity>(*section, "identities_detail",
                                                               salience_identity_from_json);
  if (section->contains("top_stereotypes_annotated")) {
    s.annotated =
        VisualSalienceAnnotated{results_number(*section, "top_stereotypes_annotated"),
                                results_number(*section, "top_stereotypes_marked_present"),
                                results_number(*section, "share_marked_present")};
  }
  return s;
}

std::string visual_section_pointer(const char* section) {
  return fmt::format("/analyses/{}", section);
}

std::string visual_identity_pointer(const char* section, std::size_t i) {
  const bool pull = std::string(section) == kVisualPullSection;
  return fmt::format("/analyses/{}/{}/{}", section, pull ? "per_identity" : "identities", i);
}

std::string visual_region_pointer(const char* section, std::size_t i) {
  return fmt::format("/analyses/{}/regions/{}", section, i);
}

std::string visual_salience_top_pointer(std::size_t i, std::size_t k) {
  return fmt::format("/analyses/{}/identities_detail/{}/top_stereotypes/{}", kVisualSalienceSection,
                     i, k);
}

}  // namespace vlbias
