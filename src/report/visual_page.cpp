// The report page of the visual-stereotypes audit (paper 000, ViSAGe;
// src/report/report_page.h).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report_page.h"
#include "svg_chart.h"
#include "vlbias/report/visual_results.h"

namespace vlbias::report_internal {

namespace {

// A number of a section's entry at JSON pointer `ptr`.
NumberAt visual_at(double value, const std::string& ptr, const char* key) {
  return {value, ptr + "/" + key};
}

// The annotations in the header, then the pooled likelihood ratio: a finding when its
// interval excludes 1, and a summary sentence.
void likelihood_summary(Page& page, const VisualLikelihoodResult& lik) {
  const std::string lp = visual_section_pointer(kVisualLikelihoodSection);
  page.fact(
      "Annotations",
      value_span(visual_at(lik.annotations.judgements, lp, "annotations/judgements"),
                 Fmt::integer) +
          " judgements of " +
          value_span(visual_at(lik.annotations.images, lp, "annotations/images"), Fmt::integer) +
          " images");
  page.section(kVisualLikelihoodSection, "Likelihood of visual stereotypes in generated images",
               lik.definition);
  const VisualLikelihoodPooled pooled = lik.pooled.value_or(VisualLikelihoodPooled{});
  const std::string pp = lp + "/pooled";
  const VisualInterval ci = pooled.ci_ratio.value_or(VisualInterval{});
  const double level = pooled.ci_ratio ? ci.ci.level : stats::kNaN;
  const std::string ci_html = ci_text(visual_at(ci.ci.lower, pp, "ci_ratio/lower"),
                                      visual_at(ci.ci.upper, pp, "ci_ratio/upper"), level);
  const NumberAt ratio = visual_at(pooled.ratio, pp, "ratio");
  if (ci.ci.lower > 1 || ci.ci.upper < 1) {
    const bool more = ci.ci.lower > 1;
    page.finding(
        {0, std::abs(std::log(pooled.ratio)),
         fmt::format("Annotators marked the identities' visual stereotypes present {} often than "
                     "random visual attributes: pooled L(stereo)/L(random) = {}, {} (bootstrap "
                     "over images; the interval excludes 1).",
                     more ? "more" : "less", value_span(ratio), ci_html)});
  }
  page.paragraph_html(fmt::format(
      "Pooled ratio L(stereo)/L(random) over {} identities: {} ({}); mean "
      "finite theta {}, median theta {}.",
      value_span(visual_at(pooled.identities, pp, "identities"), Fmt::integer), value_span(ratio),
      ci_html, value_span(visual_at(pooled.mean_finite_theta, pp, "mean_finite_theta")),
      value_span(visual_at(pooled.median_theta, pp, "median_theta"))));
}

// theta, and L(stereo) and L(random), per included identity.
void theta_figures(Page& page, const VisualLikelihoodResult& lik) {
  BarChart chart;
  chart.title = "theta = L(stereo) / L(random) per identity";
  chart.x_label = "theta (log scale; 1 = no difference)";
  chart.log_x = true;
  chart.reference = 1.0;
  BarSeries s{"theta", {}, {}, {}};
  BarChart lchart;
  lchart.title = "L(stereo) and L(random) per identity";
  lchart.x_label = "share of judgements marked present";
  BarSeries ls{"L(stereo)", {}, {}, {}}, lr{"L(random)", {}, {}, {}};
  DataTable t;
  t.name = "likelihood_identities";
  t.columns = {"identity", "region",      "theta_status", "l_stereo",     "l_random",
               "theta",    "theta_lower", "theta_upper",  "offensiveness"};
  for (std::size_t i = 0; i < lik.identities.size(); ++i) {
    const VisualLikelihoodIdentity& id = lik.identities[i];
    if (!id.included) continue;
    const std::string ip = visual_identity_pointer(kVisualLikelihoodSection, i);
    const VisualLikelihoodIntervals ci = id.ci.value_or(VisualLikelihoodIntervals{});
    const std::string label =
        id.identity + (id.theta_status == "finite" ? "" : " (" + id.theta_status + ")");
    chart.categories.push_back(label);
    lchart.categories.push_back(id.identity);
    s.value.push_back(id.theta);
    s.lower.push_back(ci.theta.ci.lower);
    s.upper.push_back(ci.theta.ci.upper);
    ls.value.push_back(id.l_stereo);
    ls.lower.push_back(ci.l_stereo.ci.lower);
    ls.upper.push_back(ci.l_stereo.ci.upper);
    lr.value.push_back(id.l_random);
    lr.lower.push_back(ci.l_random.ci.lower);
    lr.upper.push_back(ci.l_random.ci.upper);
    t.add({cell(id.identity), cell(id.region), cell(id.theta_status),
           cell(visual_at(id.l_stereo, ip, "l_stereo")),
           cell(visual_at(id.l_random, ip, "l_random")), cell(visual_at(id.theta, ip, "theta")),
           cell(visual_at(ci.theta.ci.lower, ip, "ci/theta/lower")),
           cell(visual_at(ci.theta.ci.upper, ip, "ci/theta/upper")),
           cell(visual_at(id.offensiveness, ip, "offensiveness"))});
  }
  chart.series = {s};
  lchart.series = {ls, lr};
  DataTable t2 = t;
  t2.name = "likelihood_l";
  page.figure(svg_bar_chart(chart),
              "theta per identity with bootstrap intervals over images (paper 000 Tables 1-2); "
              "infinite or "
              "undefined theta is marked and drawn as n/a.",
              std::move(t));
  page.figure(svg_bar_chart(lchart),
              "L(stereo) and L(random) per identity with bootstrap intervals.", std::move(t2));
}

// Mean offensiveness of the visual stereotypes present, by region.
void offensiveness_figure(Page& page, const VisualLikelihoodResult& lik) {
  BarChart off;
  off.title = "Offensiveness of the visual stereotypes present, by region";
  off.x_label = "mean O(id) of the region's identities";
  BarSeries os{"offensiveness", {}, {}, {}};
  DataTable t3;
  t3.name = "offensiveness_regions";
  t3.columns = {"region", "identities", "mean_offensiveness", "pooled_ratio"};
  Choropleth map;
  for (std::size_t i = 0; i < lik.regions.size(); ++i) {
    const VisualLikelihoodRegion& g = lik.regions[i];
    const std::string rp = visual_region_pointer(kVisualLikelihoodSection, i);
    off.categories.push_back(g.region);
    os.value.push_back(g.mean_offensiveness);
    t3.add({cell(g.region), cell(visual_at(g.identities, rp, "identities"), Fmt::integer),
            cell(visual_at(g.mean_offensiveness, rp, "mean_offensiveness")),
            cell(visual_at(g.pooled_ratio, rp, "pooled_ratio"))});
    map.areas.push_back({g.region, g.mean_offensiveness});
  }
  off.series = {os};
  DataTable t4 = t3;
  t4.name = "offensiveness_map";
  page.figure(svg_bar_chart(off),
              "Mean offensiveness O(id) per region (paper 000 Fig. 8, unnormalised).",
              std::move(t3));
  map.title = "Offensiveness of the visual stereotypes present, on the map";
  map.value_label = "mean O(id) of the region's identities";
  page.figure(svg_choropleth(map),
              "Mean offensiveness per region drawn on the region's countries (paper 000 Fig. 8; "
              "regions as in data/seegull/REGIONS.md); grey: no identity of the audit there.",
              std::move(t4));
}

void likelihood_section(Page& page, const Json& analyses) {
  const std::optional<VisualLikelihoodResult> lik = visual_likelihood_from_json(analyses);
  if (!lik) return;
  likelihood_summary(page, *lik);
  theta_figures(page, *lik);
  offensiveness_figure(page, *lik);
}

// The most salient visual stereotypes per identity.
void salience_section(Page& page, const Json& analyses) {
  const std::optional<VisualSalienceResult> sal = visual_salience_from_json(analyses);
  if (!sal) return;
  page.section(kVisualSalienceSection, "Salience of visual attributes in captions",
               sal->definition);
  const std::string sp = visual_section_pointer(kVisualSalienceSection);
  const VisualSalienceAnnotated a = sal->annotated.value_or(VisualSalienceAnnotated{});
  page.paragraph_html(fmt::format(
      "Of the {} top stereotypes with annotations, {} were marked present ({}).",
      value_span(visual_at(a.top_stereotypes_annotated, sp, "top_stereotypes_annotated"),
                 Fmt::integer),
      value_span(visual_at(a.top_stereotypes_marked_present, sp, "top_stereotypes_marked_present"),
                 Fmt::integer),
      value_span(visual_at(a.share_marked_present, sp, "share_marked_present"), Fmt::pct)));
  DataTable t;
  t.name = "salience_top";
  t.columns = {"identity", "rank", "attribute", "salience"};
  for (std::size_t i = 0; i < sal->identities_detail.size(); ++i) {
    const VisualSalienceIdentity& id = sal->identities_detail[i];
    for (std::size_t k = 0; k < id.top_stereotypes.size(); ++k) {
      const VisualSalienceTop& top = id.top_stereotypes[k];
      const std::string tp = visual_salience_top_pointer(i, k);
      t.add({cell(id.identity), cell(visual_at(top.rank, tp, "rank"), Fmt::integer),
             cell(top.attribute), cell(visual_at(top.salience, tp, "salience"))});
    }
  }
  page.table("The most salient visual stereotypes per identity.", std::move(t));
}

// S(d,s) (y) against S(d,ns) (x), one series per region, with the diagonal.
std::string pull_scatter(const std::vector<VisualPullIdentity>& ids) {
  ScatterChart chart;
  chart.title = "Similarity of default images to stereotypical vs non-stereotypical ones";
  chart.x_label = "S(d,ns): mean cosine to non-stereotypical images";
  chart.y_label = "S(d,s): to stereotypical images";
  chart.diagonal = true;
  std::vector<std::string> regions;
  for (const VisualPullIdentity& id : ids) add_unique(regions, id.region);
  for (const std::string& region : regions) {
    EllipseSeries s;
    s.name = region.empty() ? "(no region)" : region;
    for (const VisualPullIdentity& id : ids) {
      if (id.region != region) continue;
      s.x.push_back(id.s_d_ns);
      s.y.push_back(id.s_d_s);
      s.labels.push_back(id.identity);
    }
    chart.series.push_back(std::move(s));
  }
  return svg_scatter_chart(chart);
}

// The stereotypical pull per identity, with a finding per significant pull.
void pull_section(Page& page, const Json& analyses) {
  const std::optional<VisualPullResult> pull = visual_pull_from_json(analyses);
  if (!pull) return;
  page.section(kVisualPullSection, "Stereotypical pull", pull->definition);
  BarChart chart;
  chart.title = "Stereotypical pull per identity";
  chart.x_label = "pull = S(d,s) \u2212 S(d,ns) (cosine)";
  BarSeries s{"pull", {}, {}, {}};
  DataTable t;
  t.name = "pull_identities";
  t.columns = {"identity", "region", "s_d_s", "s_d_ns", "pull", "p_value", "p_holm"};
  for (std::size_t i = 0; i < pull->per_identity.size(); ++i) {
    const VisualPullIdentity& id = pull->per_identity[i];
    const std::string ip = visual_identity_pointer(kVisualPullSection, i);
    const NumberAt s_d_s = visual_at(id.s_d_s, ip, "s_d_s");
    const NumberAt s_d_ns = visual_at(id.s_d_ns, ip, "s_d_ns");
    const NumberAt value = visual_at(id.pull, ip, "pull");
    const NumberAt p_holm = visual_at(id.test.p_holm, ip, "test/p_holm");
    chart.categories.push_back(id.identity);
    s.value.push_back(id.pull);
    t.add({cell(id.identity), cell(id.region), cell(s_d_s), cell(s_d_ns), cell(value),
           cell(visual_at(id.test.p_value, ip, "test/p_value"), Fmt::p), cell(p_holm, Fmt::p)});
    if (id.test.p_holm < kAlpha) {
      page.finding(
          {1, std::abs(id.pull),
           fmt::format("Default generations for <strong>{}</strong> are pulled toward its visual "
                       "stereotypes: pull {} (S(d,s) {} vs S(d,ns) {}), {}.",
                       esc(id.identity), value_span(value), value_span(s_d_s), value_span(s_d_ns),
                       p_text("p_holm", p_holm))});
    }
  }
  chart.series = {s};
  DataTable scatter_table = t;
  scatter_table.name = "pull_scatter";
  page.figure(svg_bar_chart(chart),
              "Pull per identity: how much closer default images are to stereotypical than to "
              "non-stereotypical ones (paper 000 Tables 3-5).",
              std::move(t));
  page.figure(pull_scatter(pull->per_identity),
              "S(d,s) against S(d,ns) per identity, coloured by region (paper 000 Fig. 5): "
              "identities above the dashed diagonal y = x have default images closer to their "
              "stereotypical images than to the non-stereotypical ones.",
              std::move(scatter_table));
}

}  // namespace

void build_visual_stereotypes(Page& page) {
  const Node& r = page.root();
  const Node a = r["analyses"];
  const VisualStereotypesResult st =
      visual_stereotypes_from_json(a.json()).value_or(VisualStereotypesResult{});
  const std::string sp = visual_section_pointer(kVisualStereotypesSection);
  const auto count = [&](double value, const char* key) {
    return value_span(visual_at(value, sp, key), Fmt::integer);
  };
  page.fact("Identities",
            count(st.identities, "identities") + " (" +
                count(st.identities_with_at_least_min, "identities_with_at_least_min") +
                " with enough visual stereotypes for theta)");
  page.fact("Visual stereotypes", count(st.visual_stereotypes, "visual_stereotypes") + " from " +
                                      count(st.seegull_rows, "seegull_rows") + " SeeGULL rows");
  likelihood_section(page, a.json());
  salience_section(page, a.json());
  pull_section(page, a.json());
  exemplars_section(page, r["exemplars"], "images of the pull prompts");
}

}  // namespace vlbias::report_internal
