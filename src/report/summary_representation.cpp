// summary.json findings of the representation audit (issue 42; include/vlbias/report/summary.h):
// per prompt the share of each class and its MAD from parity, the gap to the real share and
// the generated-on-real slope, so that compare-runs can set two models side by side.
#include <string>

#include <fmt/format.h>

#include "summary_internal.h"
#include "vlbias/report/representation_results.h"

namespace vlbias::report_internal {

namespace {

// analyses.distribution, read through its typed contract (representation_results.h).
void representation_shares(SummaryBuilder& b, const DistributionSection& dist) {
  for (std::size_t a = 0; a < dist.attributes.size(); ++a) {
    const DistributionAttribute& at = dist.attributes[a];
    const std::string& attr = at.attribute;
    for (std::size_t i = 0; i < at.prompts.size(); ++i) {
      const DistributionPrompt& p = at.prompts[i];
      for (std::size_t c = 0; c < at.classes.size(); ++c) {
        const std::string& cls = at.classes[c];
        const double share = p.shares && c < p.shares->size() ? (*p.shares)[c] : stats::kNaN;
        SummaryFinding f = b.add(
            "share/" + attr + "/" + cls + "/" + p.prompt, kDistributionSection,
            "share of the prompt's labelled " + dist.unit + "s labelled " + cls, {p.prompt},
            NumberAt{share, fmt::format("{}/shares/{}", distribution_prompt_pointer(a, i), c)});
        if (c < p.wilson.size()) f.ci(p.wilson[c].lower, p.wilson[c].upper, dist.ci);
      }
    }
  }
}

void representation_mad(SummaryBuilder& b, const Node& measures, const Node& tests) {
  for (std::size_t a = 0; a < measures["attributes"].size(); ++a) {
    const Node at = measures["attributes"][a];
    const std::string attr = at["attribute"].str();
    for (std::size_t i = 0; i < at["prompts"].size(); ++i) {
      const Node p = at["prompts"][i];
      const Node test = representation_hypothesis(tests, attr, "parity")["prompts"][i];
      b.add("mad/" + attr + "/" + p["prompt"].str(), "measures",
            "mean absolute deviation of the prompt's " + attr + " shares from parity",
            {p["prompt"].str()}, p["mad"]["estimate"])
          .ci(p["mad"]["ci"])
          .p(test["result"]["p_value"], test["p_holm"])
          .better("lower");
    }
    for (std::size_t g = 0; g < at["groups"].size(); ++g) {
      const Node x = at["groups"][g];
      const std::string name = x["group"].null() ? "all prompts" : x["group"].str();
      SummaryFinding f = b.add("mad_mean/" + attr + "/" + name, "measures",
                               "mean over prompts of the MAD of " + attr + " from parity", {name},
                               x["mean_over_prompts"]["mad"]["estimate"]);
      f.ci(x["mean_over_prompts"]["mad"]["ci"]).better("lower");
      // Over every prompt: the mean of units/mad__ATTR.csv, paired by prompt in compare-runs.
      if (x["group"].null()) f.units_mean(units_table_name("mad", {attr}), "prompt", "mad");
    }
  }
}

void representation_gaps(SummaryBuilder& b, const Node& amp, const Node& tests) {
  const std::string attr = amp["attribute"].str();
  for (std::size_t c = 0; c < amp["classes"].size(); ++c) {
    const Node cls = amp["classes"][c];
    const std::string name = cls["class"].str();
    for (std::size_t i = 0; i < cls["prompts"].size(); ++i) {
      const Node p = cls["prompts"][i];
      b.add("gap/" + attr + "/" + name + "/" + p["prompt"].str(), "amplification",
            "generated minus real share of " + name, {p["prompt"].str()}, p["gap"]["estimate"])
          .ci(p["gap"]["ci"])
          .better("closer_to_zero");
    }
    b.add("gap_mean/" + attr + "/" + name, "amplification",
          "mean over prompts of the generated minus real share of " + name, {},
          cls["mean_gap"]["estimate"])
        .ci(cls["mean_gap"]["ci"])
        .better("closer_to_zero")
        .units_mean(units_table_name("gap", {attr, name}), "prompt", "gap");
    b.add("slope/" + attr + "/" + name, "amplification",
          "least-squares slope of the generated on the real share of " + name +
              " across prompts (1 = faithful, above 1 = amplified)",
          {}, cls["slope"]["estimate"])
        .ci(cls["slope"]["ci"]);
  }
  (void)tests;
}

}  // namespace

void summarize_representation(SummaryBuilder& b) {
  const Node a = b.root()["analyses"];
  if (const auto d = distribution_from_json(a.json())) representation_shares(b, *d);
  if (!a["measures"].null()) representation_mad(b, a["measures"], a["tests"]);
  if (!a["amplification"].null()) representation_gaps(b, a["amplification"], a["tests"]);
  if (const auto s = scores_from_json(a.json())) summarize_scores(b, *s);
}

}  // namespace vlbias::report_internal
