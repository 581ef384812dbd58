// summary.json of the geo-diversity, lvlm-counterfactual and visual-stereotypes audits (papers
// 002, 003 and 000; include/vlbias/report/summary.h).
#include "summary_internal.h"

#include <fmt/format.h>

#include "vlbias/report/geo_results.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/visual_results.h"

namespace vlbias::report_internal {

namespace {

// ------------------------------------------------------------------ geo-diversity

void region_gaps(SummaryBuilder& b, const Node& gaps, const std::string& section) {
  for (std::size_t i = 0; i < gaps.size(); ++i) {
    const Node g = gaps[i];
    const std::string form = g["form"].str(), metric = g["metric"].str();
    const std::string ra = g["region_a"].str(), rb = g["region_b"].str();
    b.add(section + "/" + form + "/" + metric + "/" + ra + "-vs-" + rb, section,
          metric + " of the first region minus the second's (" + form + " prompts)", {ra, rb},
          g["difference"])
        .ci(g["ci"])
        .p(g["p_value"], g["p_holm"])
        .better("closer_to_zero");
  }
}

void geo_region(SummaryBuilder& b, const Node& region) {
  for (std::size_t f = 0; f < region["forms"].size(); ++f) {
    const Node form = region["forms"][f];
    const std::string name = form["form"].str();
    for (std::size_t i = 0; i < form["regions"].size(); ++i) {
      const Node g = form["regions"][i];
      const std::string rg = g["region"].str();
      b.add("precision/" + name + "/" + rg, "region",
            "precision (realism) of the region's generated images (" + name + " prompts)", {rg},
            g["precision"])
          .ci(g["precision_ci"], region["ci"].number())
          .better("higher");
      b.add("coverage/" + name + "/" + rg, "region",
            "coverage (diversity) of the region's generated images (" + name + " prompts)", {rg},
            g["coverage"])
          .ci(g["coverage_ci"], region["ci"].number())
          .better("higher");
    }
  }
}

// The indicator per region is the mean over objects of each object's percentile: units are
// the region's objects.
void geo_consistency(SummaryBuilder& b, const Node& cons) {
  for (std::size_t f = 0; f < cons["forms"].size(); ++f) {
    const Node form = cons["forms"][f];
    const std::string name = form["form"].str();
    b.add("consistency/" + name + "/all", "consistency",
          "consistency indicator over every object (" + name + " prompts)", {}, form["indicator"])
        .ci(form["ci"], cons["ci"].number())
        .better("higher")
        .units_mean(units_table_name("consistency", {name, "all"}), "object", "value");
    for (std::size_t i = 0; i < form["regions"].size(); ++i) {
      const Node g = form["regions"][i];
      const std::string rg = g["region"].str();
      b.add("consistency/" + name + "/" + rg, "consistency",
            "consistency indicator of the region's generated images (" + name + " prompts)", {rg},
            g["indicator"])
          .ci(g["ci"], cons["ci"].number())
          .better("higher")
          .units_mean(units_table_name("consistency", {name, rg}), "object", "value");
    }
  }
}

void geo_distribution(SummaryBuilder& b, const Node& dist) {
  for (std::size_t i = 0; i < dist["cells"].size(); ++i) {
    const Node c = dist["cells"][i];
    const std::string form = c["form"].str(), rg = c["region"].str();
    b.add("fid/" + form + "/" + rg, "distribution",
          "FID of the generated images against the real ones (" + form + " prompts)", {rg},
          c["fid"])
        .ci(c["fid_ci"])
        .better("lower");
    b.add("vendi/" + form + "/" + rg, "distribution",
          "Vendi score of the generated images (" + form + " prompts)", {rg}, c["vendi_generated"])
        .ci(c["vendi_generated_ci"])
        .better("higher");
  }
}

// analyses.filtered, read through its typed contract (geo_results.h).
void geo_filtered(SummaryBuilder& b, const GeoFiltered& f) {
  for (std::size_t i = 0; i < f.regions.size(); ++i) {
    const GeoFilteredRegion& r = f.regions[i];
    const std::string& rg = r.region;
    b.add("filtered/" + rg, kGeoFilteredSection,
          "share of the region's requests refused or filtered", {rg},
          NumberAt{r.rate, geo_filtered_region_pointer(i, "rate")})
        .ci(r.ci_lower, r.ci_upper, r.ci_level)
        .better("lower");
  }
  if (f.test) {
    const std::string ptr = geo_filtered_test_pointer();
    b.add("filtered_test", kGeoFilteredSection, "Cramer's V of the filtered rates across regions",
          {}, NumberAt{f.test->effect_size, ptr + "/effect_size"})
        .p(NumberAt{f.test->p_value, ptr + "/p_value"}, NumberAt{stats::kNaN, ""})
        .better("closer_to_zero");
  }
}

// ------------------------------------------------------------------ lvlm-counterfactual

void lvlm_maxgap(SummaryBuilder& b, const Node& m) {
  for (std::size_t i = 0; i < m["results"].size(); ++i) {
    const Node r = m["results"][i];
    const std::string score = r["score"].str(), by = by_label(r["by"]);
    b.add("maxgap/" + score + "/" + by, "maxgap",
          "mean MaxGap of " + score + " over counterfactual sets (" + by + ")", {},
          r["maxgap"]["mean"])
        .ci(r["ci"]["maxgap_mean"])
        .better("lower")
        .units_mean(units_table_name("maxgap", {score, by}), "set", "maxgap");
  }
}

// analyses.group_tests, read through its typed contract (lvlm_results.h).
void lvlm_group_tests(SummaryBuilder& b, const LvlmGroupTests& g) {
  const std::string section = kLvlmGroupTestsSection;
  for (std::size_t i = 0; i < g.results.size(); ++i) {
    const LvlmGroupTest& r = g.results[i];
    const std::string ptr = lvlm_group_test_pointer(i);
    const std::string& measure = r.measure;
    const std::string by = by_label(Node(&r.by, ptr + "/by"));
    std::vector<std::string> groups;
    for (std::size_t k = 0; k < r.groups.size(); ++k) {
      const LvlmGroupEffect& e = r.groups[k];
      const std::string ep = fmt::format("{}/groups/{}/", ptr, k);
      const std::string label = group_label(Node(&e.group, ep + "group"));
      groups.push_back(label);
      b.add("group_gap/" + measure + "/" + by + "/" + label, section,
            "mean " + measure + " of the group minus the other groups' in the same sets (" + by +
                ")",
            {label, "rest"}, NumberAt{e.gap_to_others, ep + "gap_to_others"})
          .p(NumberAt{e.p, ep + "p"}, NumberAt{e.p_holm, ep + "p_holm"})
          .better("closer_to_zero");
    }
    const std::string fp = ptr + "/friedman/";
    const stats::TestResult f = r.friedman ? r.friedman->result : stats::TestResult{};
    const double f_holm = r.friedman ? r.friedman->p_holm : stats::kNaN;
    b.add("friedman/" + measure + "/" + by, section,
          "Kendall's W of " + measure + " across groups within sets (Friedman; " + by + ")", groups,
          NumberAt{f.effect_size, fp + "effect_size"})
        .p(NumberAt{f.p_value, fp + "p_value"}, NumberAt{f_holm, fp + "p_holm"})
        .better("lower");
  }
}

void lvlm_descriptives(SummaryBuilder& b, const Node& a) {
  const Node lex = a["lexicon"];
  for (std::size_t i = 0; i < lex["results"].size(); ++i) {
    const Node r = lex["results"][i];
    for (std::size_t g = 0; g < r["groups"].size(); ++g) {
      const Node grp = r["groups"][g];
      const std::string label = group_label(grp["group"]);
      for (const std::string& c : grp["categories"].keys()) {
        b.add("lexicon/" + by_label(r["by"]) + "/" + label + "/" + c, "lexicon",
              "mean share of " + c + " words in the group's answers (" + by_label(r["by"]) + ")",
              {label}, grp["categories"][c]["mean"]);
      }
    }
  }
  const Node ratings = a["ratings"];
  for (std::size_t i = 0; i < ratings["measures"].size(); ++i) {
    const Node m = ratings["measures"][i];
    for (std::size_t c = 0; c < m["cells"].size(); ++c) {
      const Node e = m["cells"][c];
      const std::string label = group_label(e["group"]), by = by_label(e["by"]);
      b.add("rating/" + m["name"].str() + "/" + by + "/" + label, "ratings",
            "mean " + m["name"].str() + " of the group's answers (" + by + ")", {label}, e["mean"]);
    }
  }
  const Node resp = a["responses"];
  for (std::size_t i = 0; i < resp["results"].size(); ++i) {
    const Node e = resp["results"][i];
    const std::string label = group_label(e["group"]), by = by_label(e["by"]);
    b.add("refusal_rate/" + by + "/" + label, "responses",
          "share of the group's answers refused (" + by + ")", {label}, e["refusal_rate"])
        .ci(e["refusal_ci"]);
  }
  for (std::size_t i = 0; i < resp["refusal_tests"].size(); ++i) {
    const Node e = resp["refusal_tests"][i];
    b.add("refusal_test/" + by_label(e["by"]), "responses",
          "Cramer's V of the refusal rates across groups (" + by_label(e["by"]) + ")", {},
          e["test"]["effect_size"])
        .p(e["test"]["p_value"], Node(nullptr, ""))
        .better("closer_to_zero");
  }
}

void lvlm_paired(SummaryBuilder& b, const Node& p) {
  for (std::size_t i = 0; i < p["results"].size(); ++i) {
    const Node r = p["results"][i];
    const std::string by = by_label(r["by"]), base = by_label(r["baseline"]);
    b.add("paired/" + r["score"].str() + "/" + by + "-vs-" + base, "paired",
          "mean MaxGap of " + r["score"].str() + " per matched set, setting minus baseline",
          {by, base}, r["diff_mean"])
        .ci(r["ci"]["diff_mean"])
        .p(r["tests"]["paired_t"]["p_value"], r["tests"]["paired_t"]["p_holm"])
        .better("lower")
        .units_mean(units_table_name("paired", {r["score"].str(), by + "-vs-" + base}), "set",
                    "diff");
  }
}

// ------------------------------------------------------------------ visual-stereotypes

void visual_likelihood(SummaryBuilder& b, const VisualLikelihoodResult& lik) {
  const std::string lp = visual_section_pointer(kVisualLikelihoodSection);
  if (const auto& pooled = lik.pooled) {
    SummaryFinding f =
        b.add("likelihood/pooled", kVisualLikelihoodSection,
              "pooled L(stereo)/L(random): how much more often the visual stereotypes are marked "
              "present than random visual attributes (1 = no difference)",
              {}, NumberAt{pooled->ratio, lp + "/pooled/ratio"});
    if (const auto& ci = pooled->ci_ratio) f.ci(ci->ci.lower, ci->ci.upper, ci->ci.level);
  }
  for (std::size_t i = 0; i < lik.identities.size(); ++i) {
    const VisualLikelihoodIdentity& id = lik.identities[i];
    if (!id.included) continue;
    SummaryFinding f =
        b.add("theta/" + id.identity, kVisualLikelihoodSection,
              "theta = L(stereo)/L(random) of the identity", {id.identity},
              NumberAt{id.theta, visual_identity_pointer(kVisualLikelihoodSection, i) + "/theta"});
    if (id.ci) f.ci(id.ci->theta.ci.lower, id.ci->theta.ci.upper, id.ci->theta.ci.level);
  }
}

// Pull = mean(m | s) - mean(m | ns), m_j = image j's mean cosine to the default images: units
// are the identity's stereotypical and non-stereotypical images.
void visual_pull(SummaryBuilder& b, const VisualPullResult& pull) {
  const char* section = kVisualPullSection;
  for (std::size_t i = 0; i < pull.per_identity.size(); ++i) {
    const VisualPullIdentity& id = pull.per_identity[i];
    const std::string ip = visual_identity_pointer(section, i);
    b.add(std::string(section) + "/" + id.identity, section,
          "stereotypical pull S(d,s) - S(d,ns) of the identity's default images", {id.identity},
          NumberAt{id.pull, ip + "/pull"})
        .p(NumberAt{id.test.p_value, ip + "/test/p_value"},
           NumberAt{id.test.p_holm, ip + "/test/p_holm"})
        .better("closer_to_zero")
        .units_difference(units_table_name(section, {id.identity}), "row", "m", "set", "s", "ns");
  }
  for (std::size_t i = 0; i < pull.regions.size(); ++i) {
    const VisualPullRegion& r = pull.regions[i];
    b.add("pull_region/" + r.region, section, "mean stereotypical pull of the region's identities",
          {r.region}, NumberAt{r.mean_pull, visual_region_pointer(section, i) + "/mean_pull"})
        .better("closer_to_zero");
  }
}

}  // namespace

void summarize_geo_diversity(SummaryBuilder& b) {
  const Node a = b.root()["analyses"];
  if (!a["region"].null()) geo_region(b, a["region"]);
  if (!a["region_gaps"].null()) region_gaps(b, a["region_gaps"], "region_gaps");
  if (!a["consistency"].null()) geo_consistency(b, a["consistency"]);
  if (!a["consistency_gaps"].null()) region_gaps(b, a["consistency_gaps"], "consistency_gaps");
  if (!a["distribution"].null()) geo_distribution(b, a["distribution"]);
  if (const auto f = geo_filtered_from_json(a.json())) geo_filtered(b, *f);
  if (const auto s = scores_from_json(a.json())) summarize_scores(b, *s);
}

void summarize_lvlm_counterfactual(SummaryBuilder& b) {
  const Node a = b.root()["analyses"];
  if (!a["maxgap"].null()) lvlm_maxgap(b, a["maxgap"]);
  if (const auto g = lvlm_group_tests_from_json(a.json())) lvlm_group_tests(b, *g);
  lvlm_descriptives(b, a);
  if (!a["paired"].null()) lvlm_paired(b, a["paired"]);
}

void summarize_visual_stereotypes(SummaryBuilder& b) {
  const Node a = b.root()["analyses"];
  if (const auto lik = visual_likelihood_from_json(a.json())) visual_likelihood(b, *lik);
  if (const auto pull = visual_pull_from_json(a.json())) visual_pull(b, *pull);
}

}  // namespace vlbias::report_internal
