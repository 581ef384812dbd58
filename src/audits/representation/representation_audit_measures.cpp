// Imbalance measures per prompt and per prompt group with bootstrap intervals
// (analyses.measures), and the tests of each prompt's distribution against parity and the
// target (analyses.tests). Definitions: docs/methods.md#representation-audit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "representation_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/representation.h"
#include "vlbias/report/summary.h"
#include "vlbias/stats/goodness_of_fit.h"

namespace vlbias::audits_internal {

namespace {

constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

// The three measures of one distribution of class counts (the first K of `counts`); NaN when no
// observation has a class. kl is NaN without a target.
struct MeasureValues {
  double mad = kUndefined, entropy = kUndefined, kl = kUndefined;
};

MeasureValues measure_values(const std::uint32_t* counts, std::size_t k,
                             const std::vector<double>* target) {
  MeasureValues v;
  double n = 0;
  for (std::size_t c = 0; c < k; ++c) n += counts[c];
  if (n == 0) return v;
  std::vector<double> p(k);
  for (std::size_t c = 0; c < k; ++c) p[c] = counts[c] / n;
  v.mad = parity_mad(p);
  v.entropy = entropy_bias(p);
  if (target != nullptr) v.kl = kl_to_target(p, *target);
  return v;
}

// A measure's estimate with the percentile interval of its replicates (null without them).
Json measure_json(double estimate, std::vector<double> replicates, double level, std::uint64_t seed,
                  std::size_t resamples) {
  Json j{{"estimate", json_number(estimate)}};
  if (resamples == 0 || std::isnan(estimate)) {
    j["ci"] = Json();
    return j;
  }
  stats::Interval ci = stats::percentile_interval(std::move(replicates), level, seed);
  ci.resamples = resamples;
  j["ci"] = to_json(ci);
  return j;
}

const std::vector<double>* prompt_target(const RepresentationTargets* targets, std::size_t a,
                                         std::size_t p) {
  if (targets == nullptr || targets->attribute != a || !targets->shares[p]) return nullptr;
  return &*targets->shares[p];
}

// A prompt group's sums: pooled counts and per-prompt measure sums, observed and per replicate.
struct GroupSums {
  std::vector<std::uint32_t> pooled;                          // width, then B * width
  std::vector<double> mad, entropy, kl, defined, kl_defined;  // 1 + B each: [0] observed
  std::size_t prompts = 0;

  // Adds one prompt: its observed counts, its replicates' counts and measure values.
  void add_prompt(const std::vector<std::uint32_t>& observed,
                  const std::vector<std::uint32_t>& drawn, const MeasureValues& est,
                  const std::vector<MeasureValues>& replicates) {
    const std::size_t width = observed.size(), B = replicates.size();
    if (pooled.empty()) {
      pooled.assign((1 + B) * width, 0);
      for (auto* v : {&mad, &entropy, &kl, &defined, &kl_defined}) v->assign(1 + B, 0.0);
    }
    ++prompts;
    for (std::size_t c = 0; c < width; ++c) pooled[c] += observed[c];
    for (std::size_t j = 0; j < B * width; ++j) pooled[width + j] += drawn[j];
    add(0, est);
    for (std::size_t b = 0; b < B; ++b) add(1 + b, replicates[b]);
  }
  void add(std::size_t slot, const MeasureValues& v) {
    if (std::isnan(v.mad)) return;
    mad[slot] += v.mad;
    entropy[slot] += v.entropy;
    defined[slot] += 1;
    if (std::isnan(v.kl)) return;
    kl[slot] += v.kl;
    kl_defined[slot] += 1;
  }
  double mean_of(const std::vector<double>& sum, std::size_t slot) const {
    const double n = (&sum == &kl ? kl_defined : defined)[slot];
    return n > 0 ? sum[slot] / n : kUndefined;
  }
};

// A group's measures with their intervals: of its pooled counts (without context) and the mean
// of its prompts' values (with context).
Json group_measures_json(const GroupSums& s, std::size_t k, std::size_t B, double level,
                         std::uint64_t seed) {
  const std::size_t width = k + 1;
  std::vector<double> pooled_mad(B), pooled_entropy(B), mean_mad(B), mean_entropy(B), mean_kl(B);
  for (std::size_t b = 0; b < B; ++b) {
    const MeasureValues v = measure_values(s.pooled.data() + (1 + b) * width, k, nullptr);
    pooled_mad[b] = v.mad;
    pooled_entropy[b] = v.entropy;
    mean_mad[b] = s.mean_of(s.mad, 1 + b);
    mean_entropy[b] = s.mean_of(s.entropy, 1 + b);
    mean_kl[b] = s.mean_of(s.kl, 1 + b);
  }
  const MeasureValues pooled = measure_values(s.pooled.data(), k, nullptr);
  return {{"prompts", s.prompts},
          {"pooled",
           {{"mad", measure_json(pooled.mad, pooled_mad, level, seed, B)},
            {"entropy_bias", measure_json(pooled.entropy, pooled_entropy, level, seed, B)}}},
          {"mean_over_prompts",
           {{"mad", measure_json(s.mean_of(s.mad, 0), mean_mad, level, seed, B)},
            {"entropy_bias", measure_json(s.mean_of(s.entropy, 0), mean_entropy, level, seed, B)},
            {"kl_target", measure_json(s.mean_of(s.kl, 0), mean_kl, level, seed, B)}}}};
}

}  // namespace

AnalysisOutput representation_measures(const AuditCommonSpec& spec,
                                       const RepresentationAuditSpec& representation,
                                       const RepresentationData& d,
                                       const RepresentationTargets* targets) {
  const RepresentationAuditSpec::Measures& o = representation.measures;
  const std::size_t B = o.bootstrap, P = d.prompts.size();
  const std::uint64_t seed = derive_seed(spec.seed, kRepresentationSeedMeasures);
  // Every prompt's image resamples, all attributes from one draw.
  std::vector<std::vector<std::vector<std::uint32_t>>> drawn(P);
  parallel_for(P, [&](std::size_t p) { drawn[p] = resample_prompt(d, p, B, seed); });
  AnalysisOutput out;
  TableBuilder table("representation_measures");
  Json attributes = Json::array();
  for (std::size_t a = 0; a < d.attributes.size(); ++a) {
    const std::size_t k = d.attributes[a].classes.size(), width = k + 1;
    Json prompts = Json::array();
    // The units behind summary.json's mean MAD over every prompt (compare-runs pairs two runs'
    // prompts by them): each prompt with a defined MAD.
    TableBuilder units("units");
    std::size_t unit_rows = 0;
    std::map<std::string, GroupSums> groups;
    for (std::size_t p = 0; p < P; ++p) {
      const std::vector<double>* target = prompt_target(targets, a, p);
      const std::vector<std::uint64_t> all = prompt_counts(d, a, p);
      std::vector<std::uint32_t> observed(all.begin(), all.end());
      const MeasureValues est = measure_values(observed.data(), k, target);
      std::vector<MeasureValues> replicates(B);
      std::vector<double> mad(B), entropy(B), kl(B);
      for (std::size_t b = 0; b < B; ++b) {
        replicates[b] = measure_values(drawn[p][a].data() + b * width, k, target);
        mad[b] = replicates[b].mad;
        entropy[b] = replicates[b].entropy;
        kl[b] = replicates[b].kl;
      }
      const std::uint64_t ci_seed = derive_seed(seed, p);
      Json j{{"prompt", d.prompts[p].prompt},
             {"group", d.prompts[p].group},
             {"mad", measure_json(est.mad, mad, o.ci, ci_seed, B)},
             {"entropy_bias", measure_json(est.entropy, entropy, o.ci, ci_seed, B)},
             {"kl_target", target ? measure_json(est.kl, kl, o.ci, ci_seed, B) : Json()}};
      table.row();
      table.put("attribute", d.attributes[a].name);
      table.put("prompt", d.prompts[p].prompt);
      table.put("group", d.prompts[p].group);
      table.put("mad", est.mad);
      table.put("entropy_bias", est.entropy);
      table.put("kl_target", est.kl);
      prompts.push_back(std::move(j));
      if (!std::isnan(est.mad)) {
        units.row();
        units.put("prompt", d.prompts[p].prompt);
        units.put("mad", est.mad);
        ++unit_rows;
      }
      // "\x01" sorts the whole set first and never meets a group's name ("\x02" + name).
      std::vector<std::string> member_of = {"\x01"};
      if (!d.prompts[p].group.empty()) member_of.push_back("\x02" + d.prompts[p].group);
      for (const std::string& g : member_of)
        groups[g].add_prompt(observed, drawn[p][a], est, replicates);
    }
    Json group_json = Json::array();
    for (const auto& [name, s] : groups) {
      Json g = group_measures_json(s, k, B, o.ci, derive_seed(seed, P + group_json.size()));
      g["group"] = name == "\x01" ? Json() : Json(name.substr(1));
      group_json.push_back(std::move(g));
    }
    attributes.push_back({{"attribute", d.attributes[a].name},
                          {"prompts", std::move(prompts)},
                          {"groups", std::move(group_json)}});
    if (unit_rows > 0)
      out.units.emplace_back(units_table_name("mad", {d.attributes[a].name}), units.build());
  }
  out.json = {{"bootstrap", B},
              {"ci", o.ci},
              {"resampling", "the images (seeds) of each prompt, with their faces"},
              {"attributes", std::move(attributes)}};
  out.tables.emplace_back("representation_measures", table.build());
  return out;
}

}  // namespace vlbias::audits_internal
