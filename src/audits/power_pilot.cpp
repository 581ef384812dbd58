// A finished audit as the pilot of a power analysis; see include/vlbias/audits/power_pilot.h.
#include "vlbias/audits/power_pilot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "power_pilot_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/pilot_sections.h"
#include "vlbias/report/power_results.h"
#include "vlbias/report/representation_results.h"
#include "vlbias/report/scores_results.h"
#include "vlbias/stats/goodness_of_fit.h"

namespace vlbias {

namespace audits_internal {

// A count of results.json (a group's n, sets, clusters, requests) as a whole number of at most
// stats::kMaxPowerSampleSize, checked before it sizes anything: every simulated study draws
// each unit, so a pilot n of 10^12 (or 2^63) would be an allocation that never ends.
std::size_t pilot_count(double v, const std::string& field, const std::string& source) {
  VLBIAS_CHECK(std::isfinite(v) && v >= 0 && v == std::floor(v) &&
                   v <= static_cast<double>(stats::kMaxPowerSampleSize),
               InputError,
               "{}: {} is {}; expected a whole number from 0 to {} (power simulates every unit "
               "of every group)",
               source, field, v, stats::kMaxPowerSampleSize);
  return static_cast<std::size_t>(v);
}

// The key object of a group as "Black female" (values in key order).
std::string pilot_key_text(const Json& key) {
  std::string s;
  if (!key.is_object()) return s;
  for (const auto& kv : key.items()) {
    if (!s.empty()) s += ' ';
    s += kv.value().is_string() ? kv.value().get<std::string>() : kv.value().dump();
  }
  return s;
}

}  // namespace audits_internal

namespace {

using audits_internal::pilot_count;     // power_pilot_internal.h
using audits_internal::pilot_key_text;  // power_pilot_internal.h

// A group {n, sd} of results.json; InputError naming the pointer when either is missing or
// out of range.
stats::PowerGroup pilot_group(double n, double sd, const char* sd_key, const std::string& ptr,
                              const std::string& source) {
  VLBIAS_CHECK(std::isfinite(n) && n >= 0, InputError,
               "{}: {} has no group size 'n'; expected the audit's results.json", source, ptr);
  VLBIAS_CHECK(std::isfinite(sd), InputError,
               "{}: {} has no standard deviation '{}' (results.json written before vlbias "
               "recorded it, or a group of one): rerun the audit to use it as a pilot",
               source, ptr, sd_key);
  VLBIAS_CHECK(sd >= 0 && sd <= stats::kMaxPowerValue, InputError,
               "{}: {}/{} is {}; expected a standard deviation from 0 to {}", source, ptr, sd_key,
               sd, stats::kMaxPowerValue);
  return {pilot_count(n, ptr + "/n", source), sd};
}

// The trait-pairs confidence tests (ANOVA / Welch / Student over the groups of one level).
void pilot_confidence_tests(const ConfidenceSection& section, double alpha,
                            const std::string& source, std::vector<PilotTest>& out) {
  std::size_t family = 0;
  for (const ConfidenceTest& e : section.tests) family += std::isfinite(e.result.p_value);
  for (std::size_t i = 0; i < section.tests.size(); ++i) {
    const ConfidenceTest& e = section.tests[i];
    const std::string& test = e.result.test;
    if (test != "anova" && test != "welch" && test != "student") continue;
    if (!std::isfinite(e.result.p_value)) continue;
    PilotTest t;
    t.analysis = kConfidenceSection;
    t.pointer = confidence_test_pointer(i);
    t.p_holm = e.p_holm;
    t.label = fmt::format("confidence in \"{}\" ({}) across {}", e.pair.substr(0, e.pair.find('/')),
                          e.pair, e.factor);
    if (!e.within.empty()) t.label += fmt::format(" among {} = {}", e.within, e.within_level);
    t.design.test = test == "anova"   ? stats::PowerTest::Anova
                    : test == "welch" ? stats::PowerTest::Welch
                                      : stats::PowerTest::Student;
    VLBIAS_CHECK(!e.groups.empty(), InputError,
                 "{}: {} has no groups; expected the audit's results.json", source, t.pointer);
    double hardest = -1;
    for (std::size_t g = 0; g < e.groups.size(); ++g) {
      const stats::PowerGroup pg = pilot_group(e.groups[g].n, e.groups[g].sd, "sd",
                                               fmt::format("{}/groups/{}", t.pointer, g), source);
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

// The association contrasts: each group against the others within its dimension.
void association_contrasts(const AssociationSection& section, double alpha,
                           const std::string& source, std::vector<PilotTest>& out) {
  if (section.dimensions.empty()) return;
  const char* sd_key = section.has_delta ? "delta_cos_sd" : "cos_sd";
  std::size_t family = 0;
  for (const AssociationContrast& e : section.contrasts) family += std::isfinite(e.p_value);
  for (std::size_t i = 0; i < section.contrasts.size(); ++i) {
    const AssociationContrast& e = section.contrasts[i];
    if (!std::isfinite(e.p_value)) continue;
    PilotTest t;
    t.analysis = kAssociationSection;
    t.pointer = association_contrast_pointer(i);
    t.p_holm = e.p_holm;
    t.label =
        fmt::format("{} on {} of {} against the other groups",
                    section.has_delta ? "Delta cos" : "cos", e.dimension, pilot_key_text(e.key));
    t.design.test = stats::PowerTest::Contrast;
    bool found = false;
    for (std::size_t d = 0; d < section.dimensions.size() && !found; ++d) {
      const AssociationDimension& dim = section.dimensions[d];
      if (dim.dimension != e.dimension) continue;
      found = true;
      for (std::size_t g = 0; g < dim.groups.size(); ++g) {
        const AssociationGroup& group = dim.groups[g];
        // The audit contrasts the groups with n >= 2 and a defined sd.
        if (group.n < 2) continue;
        if (group.key == e.key) t.design.target = t.design.groups.size();
        t.design.groups.push_back(
            pilot_group(group.n, group.sd, sd_key, association_group_pointer(d, g), source));
      }
    }
    VLBIAS_CHECK(found, InputError, "{}: {} names dimension '{}', which {} does not list", source,
                 t.pointer, e.dimension, association_dimensions_pointer());
    t.design.family = family;
    t.design.alpha = alpha;
    out.push_back(std::move(t));
  }
}

// The geo-diversity audit's chi-square test of equal refused-or-filtered rates across regions
// (one test, no correction). The effect is planted on the region with the fewest requests.
void geo_filtered_test(const GeoFiltered& section, double alpha, const std::string& source,
                       std::vector<PilotTest>& out) {
  if (!section.test || !std::isfinite(section.test->p_value)) return;
  VLBIAS_CHECK(!section.regions.empty(), InputError,
               "{}: /analyses/{} has no regions; expected the audit's results.json", source,
               kGeoFilteredSection);
  PilotTest t;
  t.analysis = kGeoFilteredSection;
  t.pointer = geo_filtered_test_pointer();
  t.p_holm = section.test->p_value;
  stats::PowerDesign& d = t.design;
  d.test = stats::PowerTest::ChiSquare;
  double blocked = 0, requested = 0;
  for (std::size_t r = 0; r < section.regions.size(); ++r) {
    const double n = section.regions[r].requested, rate = section.regions[r].rate;
    VLBIAS_CHECK(std::isfinite(n) && n >= 1 && std::isfinite(rate), InputError,
                 "{}: /analyses/{}/regions/{} lacks requested or rate", source, kGeoFilteredSection,
                 r);
    if (d.groups.empty() || n < static_cast<double>(d.groups[d.target].n)) {
      d.target = d.groups.size();
    }
    d.groups.push_back({pilot_count(n, geo_filtered_region_pointer(r, "requested"), source), 0.0});
    requested += n;
    blocked += rate * n;
  }
  d.base_rate = blocked / requested;
  t.label =
      fmt::format("the refused-or-filtered rate across {} regions (chi-square)", d.groups.size());
  d.family = 1;
  d.alpha = alpha;
  if (d.base_rate <= 0 || d.base_rate >= 1) return;  // listed by unsupported_tests
  out.push_back(std::move(t));
}

// The scores' tests across groups (scores_by_group.h; the representation and geo-diversity
// kinds): a rate column's chi-square test as ChiSquare (each group's n, the pooled rate as the
// base rate, the effect on the smallest group); a mean column's Kruskal-Wallis test simulated as
// the one-way ANOVA of the same groups (each group's n and sd, the effect on the group with the
// largest sd^2 / n), its normal-theory counterpart. Holm over every test of the section.
void score_group_tests(const ScoresSection& section, double alpha, const std::string& source,
                       std::vector<PilotTest>& out) {
  std::size_t family = 0;
  for (const ScoresColumnResult& c : section.columns) {
    for (const ScoresByResult& b : c.by) family += b.test && std::isfinite(b.test->result.p_value);
  }
  for (std::size_t ci = 0; ci < section.columns.size(); ++ci) {
    const ScoresColumnResult& c = section.columns[ci];
    const bool rate = c.kind == "rate";
    for (std::size_t bi = 0; bi < c.by.size(); ++bi) {
      const ScoresByResult& b = c.by[bi];
      if (!b.test || !std::isfinite(b.test->result.p_value)) continue;
      PilotTest t;
      t.analysis = kScoresSection;
      t.pointer = scores_test_pointer(ci, bi);
      t.p_holm = b.test->p_holm;
      t.label = fmt::format("{} of {} across {} {}s ({})", rate ? "rate" : "mean", c.column,
                            b.groups.size(), b.by,
                            rate ? "chi-square" : "Kruskal-Wallis, simulated as ANOVA");
      stats::PowerDesign& d = t.design;
      d.test = rate ? stats::PowerTest::ChiSquare : stats::PowerTest::Anova;
      double successes = 0, total = 0, hardest = -1;
      bool usable = true;
      for (std::size_t g = 0; g < b.groups.size(); ++g) {
        const std::string ptr = scores_group_pointer(ci, bi, g);
        const ScoreGroupResult& group = b.groups[g];
        if (rate) {
          const double n = group.n, k = group.successes;
          VLBIAS_CHECK(std::isfinite(n) && n >= 1 && std::isfinite(k), InputError,
                       "{}: {} lacks n or successes", source, ptr);
          if (d.groups.empty() || n < static_cast<double>(d.groups[d.target].n))
            d.target = d.groups.size();
          d.groups.push_back({pilot_count(n, ptr + "/n", source), 0.0});
          successes += k;
          total += n;
        } else {
          if (!(group.n >= 2)) usable = false;
          if (!usable) break;
          const stats::PowerGroup pg = pilot_group(group.n, group.sd, "sd", ptr, source);
          const double v = pg.sd * pg.sd / static_cast<double>(pg.n);
          if (v > hardest) {
            hardest = v;
            d.target = d.groups.size();
          }
          d.groups.push_back(pg);
        }
      }
      if (rate) d.base_rate = successes / total;
      if (!usable || (rate && (d.base_rate <= 0 || d.base_rate >= 1)) || (!rate && !(hardest > 0)))
        continue;  // listed by unsupported_tests
      d.family = family;
      d.alpha = alpha;
      out.push_back(std::move(t));
    }
  }
}

PowerEstimateResult estimate_result(const stats::PowerEstimate& e, const stats::PowerDesign& d) {
  return {e.effect, e.power, e.se, static_cast<double>(e.replicates),
          std::isfinite(e.effect) ? stats::analytic_power(d, e.effect) : stats::kNaN};
}

}  // namespace

namespace {

// Every supported test of the sections (possibly none).
std::vector<PilotTest> supported_tests(const PilotSections& sections, double alpha,
                                       const std::string& source) {
  VLBIAS_CHECK(alpha > 0 && alpha < 1, UsageError, "power: alpha must lie in (0, 1), got {}",
               alpha);
  VLBIAS_CHECK(sections.results_object, InputError, "{}: expected an audit's results.json object",
               source);
  std::vector<PilotTest> out;
  if (sections.confidence) pilot_confidence_tests(*sections.confidence, alpha, source, out);
  if (sections.association) association_contrasts(*sections.association, alpha, source, out);
  if (sections.group_tests) {
    audits_internal::lvlm_friedman_tests(*sections.group_tests, alpha, source, out);
  }
  if (sections.filtered) geo_filtered_test(*sections.filtered, alpha, source, out);
  if (sections.scores) score_group_tests(*sections.scores, alpha, source, out);
  return out;
}

}  // namespace

std::vector<PilotTest> pilot_tests(const PilotSections& sections, double alpha,
                                   const std::string& source) {
  std::vector<PilotTest> out = supported_tests(sections, alpha, source);
  if (out.empty()) {
    std::string why;
    for (const Json& u : unsupported_tests(sections)) {
      why += fmt::format("; {}: {}", u["tests"].get<std::string>(), u["reason"].get<std::string>());
    }
    VLBIAS_FAIL(InputError,
                "{}: a {} audit with no test that power supports (the trait-pairs confidence "
                "tests, the association contrasts, the LVLM Friedman group tests, the "
                "geo-diversity filtered-rate test and the scores' tests across groups, with a "
                "p-value){}",
                source, sections.kind.empty() ? "?" : sections.kind, why);
  }
  return out;
}

std::vector<PilotTest> pilot_tests(const Json& results, double alpha, const std::string& source) {
  return pilot_tests(pilot_sections_from_json(results), alpha, source);
}

std::vector<Json> unsupported_tests(const PilotSections& sections) {
  std::vector<Json> out = lvlm_unsupported_tests(
      sections.group_tests ? &*sections.group_tests : nullptr, sections.paired);
  auto add = [&](const std::string& tests, const char* reason) {
    out.push_back(Json{{"tests", tests}, {"reason", reason}});
  };
  for (const auto& [ran, tests] :
       {std::pair{sections.region_gaps, "/analyses/region_gaps"},
        std::pair{sections.consistency_gaps, "/analyses/consistency_gaps"}}) {
    if (!ran) continue;
    add(tests,
        "bootstrap gaps of precision, coverage or consistency between regions: their "
        "statistics are k-nearest-neighbour manifold measures of the image embeddings, not "
        "group means or rates, so no {n, sd} model of results.json reproduces them; a power "
        "analysis would resample the images themselves");
  }
  if (const auto& filtered = sections.filtered; filtered && filtered->test) {
    double blocked = 0, req = 0;
    for (const GeoFilteredRegion& r : filtered->regions) {
      blocked += r.rate * r.requested;
      req += r.requested;
    }
    if (!(blocked > 0 && blocked < req)) {
      add(geo_filtered_test_pointer(),
          "every region's rate is 0 (or every rate 1): a pooled rate of 0 or 1 has no "
          "variance to simulate");
    }
  }
  if (sections.pull_per_identity) {
    add("/analyses/pull/per_identity/*/test",
        "the stereotypical pull S(d,s) - S(d,ns) is a difference of mean pairwise cosines of "
        "image embeddings with a permutation test of the s/ns labels; its null and alternative "
        "depend on the identity's whole similarity matrix, which results.json does not hold");
  }
  return out;
}

namespace {

// One test's answers (answer_power_questions), typed.
TestPower power_answer(const PilotTest& t, std::size_t index, const PowerQuestions& q) {
  const std::uint64_t seed = derive_seed(q.seed, index);
  const stats::PowerDesign& d = t.design;
  TestPower w;
  w.analysis = t.analysis;
  w.label = t.label;
  w.pointer = t.pointer;
  w.test = stats::to_string(d.test);
  w.correction = stats::to_string(d.correction);
  w.family = static_cast<double>(d.family);
  w.alpha = d.alpha;
  w.groups.emplace();
  for (const auto& g : d.groups) w.groups->push_back({static_cast<double>(g.n), g.sd});
  w.target = static_cast<double>(d.target);
  w.p_holm = t.p_holm;
  w.significant = t.p_holm <= d.alpha;
  if (d.test == stats::PowerTest::ChiSquare) w.base_rate = d.base_rate;
  if (d.test == stats::PowerTest::Friedman) {
    w.friedman = TestPower::Blocks{
        d.sets_per_cluster > 1 ? "clusters" : "sets",
        static_cast<double>(std::max<std::size_t>(d.sets_per_cluster, 1)), d.set_sd, d.cluster_sd};
  }
  const stats::MdeResult mde = stats::minimum_detectable_effect(d, q.power, q.replicates, seed);
  w.mde.at = estimate_result(mde.at, d);
  w.mde.at.effect = mde.effect;  // the analytic power stays at the simulated estimate's effect
  w.mde.target_power = q.power;
  w.mde.note = mde.note;
  if (q.effect > 0) {
    w.at_effect = estimate_result(stats::simulate_power(d, q.effect, q.replicates, seed), d);
    if (q.sample_size) {
      const stats::SampleSizeResult n =
          stats::sample_size(d, q.effect, q.power, q.replicates, seed);
      w.sample_size =
          TestPower::SampleSize{static_cast<double>(n.n_per_group), n.at.power, n.at.se, n.note};
    }
  }
  return w;
}

}  // namespace

Json answer_power_questions(const PilotTest& t, std::size_t index, const PowerQuestions& q) {
  return to_json(power_answer(t, index, q));
}

namespace {

// add_power_to_null_tests with the pilot's tests given.
std::size_t add_power_answers(Json& results, const std::vector<PilotTest>& tests, double alpha,
                              const PowerQuestions& q) {
  std::size_t added = 0;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    if (tests[i].p_holm <= alpha) continue;
    TestPower a = power_answer(tests[i], i, q);
    a.groups.reset();  // the entry sits at the pointer; the design's groups are the entry's own
    a.pointer.clear();
    results[Json::json_pointer(tests[i].pointer)][kTestPowerKey] = to_json(a);
    ++added;
  }
  return added;
}

}  // namespace

PilotSections pilot_sections_of(std::vector<std::pair<std::string, AnalysisOutput>>& sections,
                                const std::string& kind) {
  PilotSections out;
  out.kind = kind;
  for (auto& [name, section] : sections) merge_pilot_sections(out, std::move(section.pilot));
  return out;
}

void add_power_section(Json& results, const PilotSections& sections, const PowerSpec& spec,
                       std::uint64_t seed) {
  add_power_section(results, supported_tests(sections, spec.alpha, "results.json"),
                    unsupported_tests(sections), spec, seed);
}

void add_power_section(Json& results, const std::vector<PilotTest>& tests,
                       std::vector<Json> not_supported, const PowerSpec& spec, std::uint64_t seed) {
  if (tests.empty()) {
    results["notes"].push_back(
        "power: skipped; the audit ran no test that power supports (docs/methods.md#power)");
    return;
  }
  PowerQuestions q;
  q.power = spec.power;
  q.replicates = spec.replicates;
  q.seed = seed;
  const std::size_t n = add_power_answers(results, tests, spec.alpha, q);
  results["analyses"]["power"] =
      Json{{"definition",
            "for each test not significant after Holm at alpha: the smallest gap (in the "
            "test's units) that a study of this design detects with the target power, by "
            "simulation from the pilot's own variance structure with the same test and Holm "
            "over the same family (docs/methods.md#power)"},
           {"power", spec.power},
           {"alpha", spec.alpha},
           {"replicates", spec.replicates},
           {"null_tests", n},
           {"not_supported", std::move(not_supported)}};
}

std::size_t add_power_to_null_tests(Json& results, const PilotSections& sections, double alpha,
                                    const PowerQuestions& q) {
  return add_power_answers(results, supported_tests(sections, alpha, "results.json"), alpha, q);
}

std::vector<Json> representation_power_answers(const PilotSections& sections, double alpha,
                                               const PowerQuestions& q) {
  std::vector<Json> out;
  if (sections.kind != "representation") return out;
  VLBIAS_CHECK(sections.distribution.has_value(), InputError,
               "a representation audit without analyses.distribution: rerun it with the "
               "distribution analysis on (it holds each prompt's counts)");
  const std::vector<DistributionAttribute>& attributes = sections.distribution->attributes;
  for (std::size_t ai = 0; ai < attributes.size(); ++ai) {
    const DistributionAttribute& at = attributes[ai];
    const double k = static_cast<double>(at.classes.size());
    const std::vector<DistributionPrompt>& prompts = at.prompts;
    const double level = alpha / static_cast<double>(std::max<std::size_t>(1, prompts.size()));
    for (std::size_t pi = 0; pi < prompts.size(); ++pi) {
      const DistributionPrompt& p = prompts[pi];
      const double n = p.n;
      Json j{{"analysis", "tests"},
             {"label", fmt::format("{}: '{}'", at.attribute, p.prompt)},
             {"pointer", distribution_prompt_pointer(ai, pi)},
             {"n", json_number(n)},
             {"classes", k},
             {"alpha", level}};
      if (!(n >= 1) || k < 2) {
        j["mde"] = Json();
        j["note"] = "no observation labelled with a class: no test";
        out.push_back(std::move(j));
        continue;
      }
      const double w = stats::gof_minimum_detectable_w(n, k - 1, level, q.power);
      j["mde"] = {{"cohens_w", w}, {"share_gap_from_parity", k == 2 ? Json(w / 2) : Json()}};
      if (q.effect > 0) {
        j["at_effect"] = {{"effect", q.effect},
                          {"power", stats::gof_power(n, k - 1, q.effect, level)}};
        // The smallest n whose power at the effect reaches the target (power rises with n).
        double lo = 1, hi = 1;
        while (stats::gof_power(hi, k - 1, q.effect, level) < q.power && hi < 1e12) hi *= 2;
        while (hi - lo > 1) {
          const double mid = std::floor((lo + hi) / 2);
          (stats::gof_power(mid, k - 1, q.effect, level) < q.power ? lo : hi) = mid;
        }
        j["sample_size"] = {{"n", hi}, {"power", stats::gof_power(hi, k - 1, q.effect, level)}};
      }
      out.push_back(std::move(j));
    }
  }
  return out;
}

}  // namespace vlbias
