// The report page of the visual-stereotypes audit (paper 000, ViSAGe;
// src/report/report_page.h).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "report_page.h"
#include "svg_chart.h"

namespace vlbias::report_internal {

namespace {

// The annotations in the header, then the pooled likelihood ratio: a finding when its
// interval excludes 1, and a summary sentence.
void likelihood_summary(Page& page, const Node& lik) {
  page.fact("Annotations", value_span(lik["annotations"]["judgements"], Fmt::integer) +
                               " judgements of " +
                               value_span(lik["annotations"]["images"], Fmt::integer) + " images");
  page.section("likelihood", "Likelihood of visual stereotypes in generated images",
               lik["definition"].str());
  const Node pooled = lik["pooled"];
  const Node ci = pooled["ci_ratio"];
  if (ci["lower"].number() > 1 || ci["upper"].number() < 1) {
    const bool more = ci["lower"].number() > 1;
    page.finding(
        {0, std::abs(std::log(pooled["ratio"].number())),
         fmt::format("Annotators marked the identities' visual stereotypes present {} often than "
                     "random visual attributes: pooled L(stereo)/L(random) = {}, {} (bootstrap "
                     "over images; the interval excludes 1).",
                     more ? "more" : "less", value_span(pooled["ratio"]), ci_text(ci))});
  }
  page.paragraph_html(fmt::format(
      "Pooled ratio L(stereo)/L(random) over {} identities: {} ({}); mean "
      "finite theta {}, median theta {}.",
      value_span(pooled["identities"], Fmt::integer), value_span(pooled["ratio"]), ci_text(ci),
      value_span(pooled["mean_finite_theta"]), value_span(pooled["median_theta"])));
}

// theta, and L(stereo) and L(random), per included identity.
void theta_figures(Page& page, const Node& lik) {
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
  const Node ids = lik["identities"];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Node id = ids[i];
    if (!id["included"].boolean()) continue;
    const std::string label =
        id["identity"].str() +
        (id["theta_status"].str() == "finite" ? "" : " (" + id["theta_status"].str() + ")");
    chart.categories.push_back(label);
    lchart.categories.push_back(id["identity"].str());
    s.value.push_back(id["theta"].number());
    s.lower.push_back(id["ci"]["theta"]["lower"].number());
    s.upper.push_back(id["ci"]["theta"]["upper"].number());
    ls.value.push_back(id["l_stereo"].number());
    ls.lower.push_back(id["ci"]["l_stereo"]["lower"].number());
    ls.upper.push_back(id["ci"]["l_stereo"]["upper"].number());
    lr.value.push_back(id["l_random"].number());
    lr.lower.push_back(id["ci"]["l_random"]["lower"].number());
    lr.upper.push_back(id["ci"]["l_random"]["upper"].number());
    t.add({cell(id["identity"].str()), cell(id["region"].str()), cell(id["theta_status"].str()),
           cell(id["l_stereo"]), cell(id["l_random"]), cell(id["theta"]),
           cell(id["ci"]["theta"]["lower"]), cell(id["ci"]["theta"]["upper"]),
           cell(id["offensiveness"])});
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
void offensiveness_figure(Page& page, const Node& lik) {
  BarChart off;
  off.title = "Offensiveness of the visual stereotypes present, by region";
  off.x_label = "mean O(id) of the region's identities";
  BarSeries os{"offensiveness", {}, {}, {}};
  DataTable t3;
  t3.name = "offensiveness_regions";
  t3.columns = {"region", "identities", "mean_offensiveness", "pooled_ratio"};
  for (std::size_t i = 0; i < lik["regions"].size(); ++i) {
    const Node g = lik["regions"][i];
    off.categories.push_back(g["region"].str());
    os.value.push_back(g["mean_offensiveness"].number());
    t3.add({cell(g["region"].str()), cell(g["identities"], Fmt::integer),
            cell(g["mean_offensiveness"]), cell(g["pooled_ratio"])});
  }
  off.series = {os};
  DataTable t4 = t3;
  t4.name = "offensiveness_map";
  page.figure(svg_bar_chart(off),
              "Mean offensiveness O(id) per region (paper 000 Fig. 8, unnormalised).",
              std::move(t3));
  Choropleth map;
  map.title = "Offensiveness of the visual stereotypes present, on the map";
  map.value_label = "mean O(id) of the region's identities";
  for (std::size_t i = 0; i < lik["regions"].size(); ++i) {
    const Node g = lik["regions"][i];
    map.areas.push_back({g["region"].str(), g["mean_offensiveness"].number()});
  }
  page.figure(svg_choropleth(map),
              "Mean offensiveness per region drawn on the region's countries (paper 000 Fig. 8; "
              "regions as in data/seegull/REGIONS.md); grey: no identity of the audit there.",
              std::move(t4));
}

void likelihood_section(Page& page, const Node& a) {
  const Node lik = a["likelihood"];
  if (lik.null()) return;
  likelihood_summary(page, lik);
  theta_figures(page, lik);
  offensiveness_figure(page, lik);
}

// The most salient visual stereotypes per identity.
void salience_section(Page& page, const Node& a) {
  const Node sal = a["salience"];
  if (sal.null()) return;
  page.section("salience", "Salience of visual attributes in captions", sal["definition"].str());
  page.paragraph_html(
      fmt::format("Of the {} top stereotypes with annotations, {} were marked present ({}).",
                  value_span(sal["top_stereotypes_annotated"], Fmt::integer),
                  value_span(sal["top_stereotypes_marked_present"], Fmt::integer),
                  value_span(sal["share_marked_present"], Fmt::pct)));
  DataTable t;
  t.name = "salience_top";
  t.columns = {"identity", "rank", "attribute", "salience"};
  const Node ids = sal["identities_detail"];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Node top = ids[i]["top_stereotypes"];
    for (std::size_t k = 0; k < top.size(); ++k) {
      t.add({cell(ids[i]["identity"].str()), cell(top[k]["rank"], Fmt::integer),
             cell(top[k]["attribute"].str()), cell(top[k]["salience"])});
    }
  }
  page.table("The most salient visual stereotypes per identity.", std::move(t));
}

// S(d,s) (y) against S(d,ns) (x), one series per region, with the diagonal.
std::string pull_scatter(const Node& ids) {
  ScatterChart chart;
  chart.title = "Similarity of default images to stereotypical vs non-stereotypical ones";
  chart.x_label = "S(d,ns): mean cosine to non-stereotypical images";
  chart.y_label = "S(d,s): to stereotypical images";
  chart.diagonal = true;
  std::vector<std::string> regions;
  for (std::size_t i = 0; i < ids.size(); ++i) add_unique(regions, ids[i]["region"].str());
  for (const std::string& region : regions) {
    EllipseSeries s;
    s.name = region.empty() ? "(no region)" : region;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i]["region"].str() != region) continue;
      s.x.push_back(ids[i]["s_d_ns"].number());
      s.y.push_back(ids[i]["s_d_s"].number());
      s.labels.push_back(ids[i]["identity"].str());
    }
    chart.series.push_back(std::move(s));
  }
  return svg_scatter_chart(chart);
}

// The stereotypical pull per identity, with a finding per significant pull.
void pull_section(Page& page, const Node& a) {
  const Node pull = a["pull"];
  if (pull.null()) return;
  page.section("pull", "Stereotypical pull", pull["definition"].str());
  BarChart chart;
  chart.title = "Stereotypical pull per identity";
  chart.x_label = "pull = S(d,s) \u2212 S(d,ns) (cosine)";
  BarSeries s{"pull", {}, {}, {}};
  DataTable t;
  t.name = "pull_identities";
  t.columns = {"identity", "region", "s_d_s", "s_d_ns", "pull", "p_value", "p_holm"};
  const Node ids = pull["per_identity"];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Node id = ids[i];
    chart.categories.push_back(id["identity"].str());
    s.value.push_back(id["pull"].number());
    t.add({cell(id["identity"].str()), cell(id["region"].str()), cell(id["s_d_s"]),
           cell(id["s_d_ns"]), cell(id["pull"]), cell(id["test"]["p_value"], Fmt::p),
           cell(id["test"]["p_holm"], Fmt::p)});
    if (id["test"]["p_holm"].number() < kAlpha) {
      page.finding(
          {1, std::abs(id["pull"].number()),
           fmt::format("Default generations for <strong>{}</strong> are pulled toward its visual "
                       "stereotypes: pull {} (S(d,s) {} vs S(d,ns) {}), {}.",
                       esc(id["identity"].str()), value_span(id["pull"]), value_span(id["s_d_s"]),
                       value_span(id["s_d_ns"]), p_text("p_holm", id["test"]["p_holm"]))});
    }
  }
  chart.series = {s};
  DataTable scatter_table = t;
  scatter_table.name = "pull_scatter";
  page.figure(svg_bar_chart(chart),
              "Pull per identity: how much closer default images are to stereotypical than to "
              "non-stereotypical ones (paper 000 Tables 3-5).",
              std::move(t));
  page.figure(pull_scatter(ids),
              "S(d,s) against S(d,ns) per identity, coloured by region (paper 000 Fig. 5): "
              "identities above the dashed diagonal y = x have default images closer to their "
              "stereotypical images than to the non-stereotypical ones.",
              std::move(scatter_table));
}

}  // namespace

void build_visual_stereotypes(Page& page) {
  const Node& r = page.root();
  const Node a = r["analyses"];
  const Node st = a["stereotypes"];
  page.fact("Identities", value_span(st["identities"], Fmt::integer) + " (" +
                              value_span(st["identities_with_at_least_min"], Fmt::integer) +
                              " with enough visual stereotypes for theta)");
  page.fact("Visual stereotypes", value_span(st["visual_stereotypes"], Fmt::integer) + " from " +
                                      value_span(st["seegull_rows"], Fmt::integer) +
                                      " SeeGULL rows");
  likelihood_section(page, a);
  salience_section(page, a);
  pull_section(page, a);
  exemplars_section(page, r["exemplars"], "images of the pull prompts");
}

}  // namespace vlbias::report_internal
