// summary.json of the dual-encoder audits, social-perception and trait-pairs (papers 001 and 004;
// include/vlbias/report/summary.h).
#include <algorithm>

#include "summary_internal.h"
#include "vlbias/report/dual_encoder_results.h"

namespace vlbias::report_internal {

namespace {

// SC-WEAT names an intersectional group "Black|female"; the summary writes "Black female".
std::string group_words(std::string s) {
  std::replace(s.begin(), s.end(), '|', ' ');
  return s;
}

// Group means per dimension (units: the group's images), and each group against the others;
// analyses.association read through its typed contract (dual_encoder_results.h).
void association(SummaryBuilder& b, const AssociationSection& a) {
  const bool delta = a.has_delta;
  const std::string measure = delta ? "Delta cos" : "cosine";
  const std::string value_key = delta ? "delta_cos_mean" : "cos_mean";
  for (std::size_t d = 0; d < a.dimensions.size(); ++d) {
    const std::string& dim = a.dimensions[d].dimension;
    for (std::size_t g = 0; g < a.dimensions[d].groups.size(); ++g) {
      const AssociationGroup& grp = a.dimensions[d].groups[g];
      const std::string ptr = association_group_pointer(d, g);
      const std::string label = group_label(Node(&grp.key, ptr + "/key"));
      SummaryFinding f =
          b.add("association/" + dim + "/" + label, kAssociationSection,
                "mean " + measure + " of the group's images with the " + dim + " prompts", {label},
                NumberAt{delta ? grp.delta_cos_mean : grp.cos_mean, ptr + "/" + value_key});
      if (grp.ci) f.ci(grp.ci->lower, grp.ci->upper, grp.ci->level);
      f.units_mean(units_table_name(kAssociationSection, {label}), "image",
                   (delta ? "delta_cos_" : "cos_") + dim);
    }
  }
  for (std::size_t i = 0; i < a.contrasts.size(); ++i) {
    const AssociationContrast& e = a.contrasts[i];
    const std::string ptr = association_contrast_pointer(i);
    const std::string label = group_label(Node(&e.key, ptr + "/key"));
    const std::string& dim = e.dimension;
    b.add("contrast/" + dim + "/" + label + "-vs-rest", kAssociationSection,
          "mean " + measure + " on " + dim +
              " of the group minus the unweighted mean of the other groups' means",
          {label, "rest"}, NumberAt{e.estimate, ptr + "/estimate"})
        .ci(e.ci_lower, e.ci_upper, e.ci_level)
        .p(NumberAt{e.p_value, ptr + "/p_value"}, NumberAt{e.p_holm, ptr + "/p_holm"})
        .better("closer_to_zero");
  }
}

void scweat(SummaryBuilder& b, const Node& s) {
  const Node tests = s["tests"];
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const Node t = tests[i];
    const std::string ga = group_words(t["group_a"].str()), gb = group_words(t["group_b"].str());
    const std::string dim = t["dimension"].str();
    b.add("scweat/" + dim + "/" + ga + "-vs-" + gb, "scweat",
          "SC-WEAT effect size on " + dim + " (first group's images against the second's)",
          {ga, gb}, t["effect_size"])
        .p(t["p_value"], t["p_holm"])
        .better("closer_to_zero");
  }
}

void markedness(SummaryBuilder& b, const Node& m) {
  for (std::size_t i = 0; i < m["groups"].size(); ++i) {
    const Node g = m["groups"][i];
    const std::string label = g["attribute"].str() + " = " + g["level"].str();
    b.add("markedness/" + g["attribute"].str() + "/" + g["level"].str(), "markedness",
          "percent of the group's images that are marked", {label}, g["percent"])
        .ci(g["ci"]);
  }
}

void neutral(SummaryBuilder& b, const Node& n) {
  for (std::size_t i = 0; i < n["groups"].size(); ++i) {
    const Node g = n["groups"][i];
    const std::string label = group_label(g["key"]);
    b.add("neutral/" + label, "neutral",
          "mean cosine of the group's images with the neutral prompt", {label}, g["mean"])
        .ci(g["mean_ci"])
        .units_mean(units_table_name("neutral", {label}), "image", "neutral_cos");
  }
  for (std::size_t i = 0; i < n["pairs"].size(); ++i) {
    const Node e = n["pairs"][i];
    const std::string ga = group_label(e["a"]), gb = group_label(e["b"]);
    SummaryFinding f =
        b.add("neutral_pair/" + ga + "-vs-" + gb, "neutral",
              "difference in mean cosine with the neutral prompt (first group minus second)",
              {ga, gb}, e["difference"]);
    f.p(e["test"]["p_value"], e["p_holm"]).better("closer_to_zero");
    // Paired by identity, the difference is over the identities' means: no image units.
    if (n["pair_key"].null())
      f.units_difference(units_table_name("neutral", {}), "image", "neutral_cos", "group", ga, gb);
  }
}

void ranking(SummaryBuilder& b, const Node& r) {
  for (std::size_t i = 0; i < r["results"].size(); ++i) {
    const Node e = r["results"][i];
    const std::string attr = e["attribute"].str(), dim = e["dimension"].str();
    b.add("ndkl/" + attr + "/" + dim, "ranking",
          "NDKL of " + attr + " in the images ranked by " + dim, {}, e["ndkl"])
        .better("lower");
    for (const std::string& level : e["skew"].keys()) {
      b.add("skew/" + attr + "/" + dim + "/" + level, "ranking",
            "Skew@k of " + attr + " = " + level + " in the images ranked by " + dim, {level},
            e["skew"][level])
          .better("closer_to_zero");
    }
  }
}

void absdiff(SummaryBuilder& b, const Node& a) {
  for (std::size_t i = 0; i < a["tests"].size(); ++i) {
    const Node e = a["tests"][i];
    const std::string dim = e["dimension"].str().empty() ? "all" : e["dimension"].str();
    const std::string fa = e["factor_a"].str(), fb = e["factor_b"].str();
    b.add("absdiff/" + dim + "/" + fa + "-vs-" + fb, "absdiff",
          "rank-biserial r of AbsDiff on " + dim + " (first factor against the second)", {fa, fb},
          e["effect_size"])
        .p(e["p_value"], e["p_holm"]);
  }
}

// Trait-pairs: mean confidence per group (units: the group's images), and the tests;
// analyses.confidence read through its typed contract (dual_encoder_results.h).
void confidence(SummaryBuilder& b, const ConfidenceSection& c) {
  for (std::size_t p = 0; p < c.pairs.size(); ++p) {
    const ConfidencePair& pair = c.pairs[p];
    const std::string& name = pair.pair;
    for (std::size_t g = 0; g < pair.groups.size(); ++g) {
      const ConfidenceGroup& grp = pair.groups[g];
      const std::string ptr = confidence_group_pointer(p, g);
      const std::string label = group_label(Node(&grp.key, ptr + "/key"));
      SummaryFinding f = b.add("confidence/" + name + "/" + label, kConfidenceSection,
                               "mean confidence in \"" + pair.first + "\" of the group's images",
                               {label}, NumberAt{grp.mean, ptr + "/mean"});
      if (grp.ci) f.ci(grp.ci->lower, grp.ci->upper, grp.ci->level);
      f.units_mean(units_table_name(kConfidenceSection, {label}), "image", "confidence_" + name);
    }
  }
  for (std::size_t i = 0; i < c.tests.size(); ++i) {
    const ConfidenceTest& e = c.tests[i];
    const stats::TestResult& res = e.result;
    const std::string ptr = confidence_test_pointer(i);
    std::vector<std::string> groups;
    for (const ConfidenceTest::Group& g : e.groups) groups.push_back(g.level);
    b.add("confidence_test/" + e.pair + "/" + e.factor + "/" + e.within + "=" + e.within_level,
          kConfidenceSection,
          res.effect_name + " of confidence in " + e.pair + " across " + e.factor + " within " +
              e.within + " = " + e.within_level + " (" + res.test + ")",
          groups, NumberAt{res.effect_size, ptr + "/result/effect_size"})
        .p(NumberAt{res.p_value, ptr + "/result/p_value"}, NumberAt{e.p_holm, ptr + "/p_holm"})
        .better("closer_to_zero");
  }
}

// Trait-pairs analyses.explain with faces: per group the mean share of the class activation
// map inside the faces (and inside their skin) with its bootstrap interval, and Kruskal-Wallis
// across the groups (cam_mass.json, src/explain/explain_mass.cpp).
void explain(SummaryBuilder& b, const Node& x) {
  const Node mass = x["cam_mass"];
  if (mass.null()) return;
  for (const std::string measure : {"cam_in_face", "cam_in_skin"}) {
    const Node m = mass[measure];
    const std::string where = measure == "cam_in_skin" ? "the faces' skin" : "the faces";
    for (std::size_t g = 0; g < m["groups"].size(); ++g) {
      const Node grp = m["groups"][g];
      if (!(grp["n"].number() > 0)) continue;  // no image of the group has a face
      const std::string label = group_label(grp["key"]);
      b.add("explain/" + measure + "/" + label, "explain",
            "mean share of the class activation map of \"" + x["pair"].str() + "\" inside " +
                where + " (the group's images with a face)",
            {label}, grp["mean"])
          .ci(grp["mean_ci"]);
    }
    if (m["test"].null()) continue;
    const Node c = m["test"]["comparisons"][std::size_t{0}];
    std::vector<std::string> groups;
    for (std::size_t g = 0; g < c["groups"].size(); ++g) {
      groups.push_back(group_label(c["groups"][g]["key"]));
    }
    b.add("explain_test/" + measure, "explain",
          c["effect_name"].str() + " of the map's share inside " + where + " across groups (" +
              c["test"].str() + ")",
          groups, c["effect_size"])
        .p(c["p_value"], c["p_holm"])
        .better("closer_to_zero");
  }
}

}  // namespace

void summarize_dual_encoder(SummaryBuilder& b) {
  const Node a = b.root()["analyses"];
  if (const auto c = confidence_from_json(a.json())) confidence(b, *c);
  if (const auto s = association_from_json(a.json())) association(b, *s);
  if (!a["scweat"].null()) scweat(b, a["scweat"]);
  if (!a["markedness"].null()) markedness(b, a["markedness"]);
  if (!a["neutral"].null()) neutral(b, a["neutral"]);
  if (!a["ranking"].null()) ranking(b, a["ranking"]);
  if (!a["absdiff"].null()) absdiff(b, a["absdiff"]);
  if (!a["explain"].null()) explain(b, a["explain"]);
}

}  // namespace vlbias::report_internal
