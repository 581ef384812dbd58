// Each prompt's label distribution tested against parity and against its real-world target
// (analyses.tests), corrected over the prompts; and the smallest departure each prompt's n
// detects (analyses.power). Definitions: docs/methods.md#representation-audit.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "representation_audit_internal.h"
#include "table_builder.h"
#include "vlbias/stats/goodness_of_fit.h"

namespace vlbias::audits_internal {

namespace {

// The test `tests.test` asks for on these counts: exact below exact_below observations (when the
// outcomes are few enough to enumerate), else chi-square; or the one named.
stats::TestResult representation_test(const RepresentationAuditSpec::Tests& o,
                                      const std::vector<std::uint64_t>& counts,
                                      const std::vector<double>& shares, std::uint64_t n) {
  const bool exact_fits = stats::multinomial_outcomes(n, counts.size()) <= 1'000'000;
  if (o.test == "exact" || (o.test == "auto" && n < o.exact_below && exact_fits)) {
    return stats::exact_multinomial_gof(counts, shares);
  }
  if (o.test == "g") return stats::g_test_gof(counts, shares);
  return stats::chi_square_gof(counts, shares);
}

struct Hypothesis {
  const char* name;                                // parity | target
  std::vector<const std::vector<double>*> shares;  // per prompt; null = not tested
};

}  // namespace

AnalysisOutput representation_tests(const RepresentationAuditSpec& representation,
                                    const RepresentationData& d,
                                    const RepresentationTargets* targets) {
  const RepresentationAuditSpec::Tests& o = representation.tests;
  AnalysisOutput out;
  TableBuilder table("representation_tests");
  Json attributes = Json::array();
  for (std::size_t a = 0; a < d.attributes.size(); ++a) {
    const std::size_t k = d.attributes[a].classes.size();
    const std::vector<double> parity(k, 1.0 / static_cast<double>(k));
    std::vector<Hypothesis> hypotheses = {{"parity", {}}};
    for (std::size_t p = 0; p < d.prompts.size(); ++p) hypotheses[0].shares.push_back(&parity);
    if (targets != nullptr && targets->attribute == a) {
      hypotheses.push_back({"target", {}});
      for (std::size_t p = 0; p < d.prompts.size(); ++p)
        hypotheses[1].shares.push_back(targets->shares[p] ? &*targets->shares[p] : nullptr);
    }
    Json by_hypothesis = Json::array();
    for (const Hypothesis& h : hypotheses) {
      Json prompts = Json::array();
      std::vector<double> p_values;
      std::vector<std::size_t> tested;
      for (std::size_t p = 0; p < d.prompts.size(); ++p) {
        const std::vector<std::uint64_t> all = prompt_counts(d, a, p);
        const std::vector<std::uint64_t> counts(all.begin(), all.begin() + static_cast<long>(k));
        std::uint64_t n = 0;
        for (const std::uint64_t c : counts) n += c;
        Json j{{"prompt", d.prompts[p].prompt}, {"n", n}};
        if (h.shares[p] == nullptr || n == 0) {
          j["result"] = Json();
          j["note"] = n == 0 ? "no observation labelled with a class" : "no target for this prompt";
        } else {
          j["expected"] = *h.shares[p];
          j["result"] = to_json(representation_test(o, counts, *h.shares[p], n));
          p_values.push_back(j["result"]["p_value"].is_null()
                                 ? stats::kNaN
                                 : j["result"]["p_value"].get<double>());
          tested.push_back(prompts.size());
        }
        prompts.push_back(std::move(j));
      }
      // Holm and BH over the prompts tested (an undefined p stays undefined).
      std::vector<double> defined;
      for (const double v : p_values) {
        if (!std::isnan(v)) defined.push_back(v);
      }
      const std::vector<double> holm = stats::holm(defined),
                                bh = stats::benjamini_hochberg(defined);
      for (std::size_t t = 0, u = 0; t < tested.size(); ++t) {
        Json& j = prompts[tested[t]];
        const bool has = !std::isnan(p_values[t]);
        j["p_holm"] = has ? json_number(holm[u]) : Json();
        j["p_bh"] = has ? json_number(bh[u]) : Json();
        if (has) ++u;
        table.row();
        table.put("attribute", d.attributes[a].name);
        table.put("hypothesis", h.name);
        table.put("prompt", j["prompt"].get<std::string>());
        table.put("n", j["n"].get<double>());
        table.put("test", j["result"]["test"].get<std::string>());
        table.put("statistic", j["result"]["statistic"].is_number()
                                   ? j["result"]["statistic"].get<double>()
                                   : stats::kNaN);
        table.put("p_value", p_values[t]);
        table.put("p_holm", has ? j["p_holm"].get<double>() : stats::kNaN);
        table.put("p_bh", has ? j["p_bh"].get<double>() : stats::kNaN);
      }
      by_hypothesis.push_back({{"hypothesis", h.name}, {"prompts", std::move(prompts)}});
    }
    attributes.push_back({{"attribute", d.attributes[a].name},
                          {"classes", d.attributes[a].classes},
                          {"hypotheses", std::move(by_hypothesis)}});
  }
  out.json = {{"test", o.test},
              {"exact_below", o.exact_below},
              {"correction", o.correction},
              {"attributes", std::move(attributes)}};
  out.tables.emplace_back("representation_tests", table.build());
  return out;
}

AnalysisOutput representation_power(const RepresentationAuditSpec& representation,
                                    const RepresentationData& d,
                                    const RepresentationTargets* targets) {
  const PowerSpec& w = representation.power;
  AnalysisOutput out;
  TableBuilder table("representation_power");
  Json attributes = Json::array();
  // Bonferroni over the prompts: the first step of the Holm correction the tests use.
  const double alpha = w.alpha / static_cast<double>(d.prompts.size());
  for (std::size_t a = 0; a < d.attributes.size(); ++a) {
    const std::size_t k = d.attributes[a].classes.size();
    Json prompts = Json::array();
    for (std::size_t p = 0; p < d.prompts.size(); ++p) {
      const std::vector<std::uint64_t> all = prompt_counts(d, a, p);
      double n = 0;
      for (std::size_t c = 0; c < k; ++c) n += static_cast<double>(all[c]);
      Json j{{"prompt", d.prompts[p].prompt}, {"n", n}};
      double mde_w = stats::kNaN, parity_gap = stats::kNaN, target_gap = stats::kNaN;
      if (n > 0) {
        mde_w = stats::gof_minimum_detectable_w(n, static_cast<double>(k - 1), alpha, w.power);
        // Two classes: w = |p - q| / sqrt(q (1 - q)), so parity (q = 1/2) detects |p - 1/2| = w/2.
        if (k == 2) {
          parity_gap = mde_w / 2;
          if (targets != nullptr && targets->attribute == a && targets->shares[p]) {
            const double q = (*targets->shares[p])[0];
            target_gap = mde_w * std::sqrt(q * (1 - q));
          }
        }
      }
      j["cohens_w"] = json_number(mde_w);
      j["share_gap_from_parity"] = json_number(parity_gap);
      j["share_gap_from_target"] = json_number(target_gap);
      table.row();
      table.put("attribute", d.attributes[a].name);
      table.put("prompt", d.prompts[p].prompt);
      table.put("n", n);
      table.put("mde_cohens_w", mde_w);
      table.put("mde_share_gap_parity", parity_gap);
      table.put("mde_share_gap_target", target_gap);
      prompts.push_back(std::move(j));
    }
    attributes.push_back({{"attribute", d.attributes[a].name}, {"prompts", std::move(prompts)}});
  }
  out.json = {{"power", w.power},
              {"alpha", w.alpha},
              {"alpha_per_prompt", alpha},
              {"method",
               "noncentral chi-square (Cohen 1988, ch. 7): the smallest Cohen's w the chi-square "
               "test of each prompt detects at alpha / prompts"},
              {"attributes", std::move(attributes)}};
  out.tables.emplace_back("representation_power", table.build());
  return out;
}

}  // namespace vlbias::audits_internal
