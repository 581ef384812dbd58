// The trait-pairs report's analyses.explain
// (src/audits/dual_encoder/dual_encoder_audit_explain.cpp): each group's explained images and mean
// probability, the CAM mass in the faces per group with a bar chart, the Kruskal-Wallis test across
// groups and the pairs after Holm, a finding when the test rejects, and the overlays of each
// group's most probable images (paper 004, Fig. 2).
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report_page.h"

namespace vlbias::report_internal {

namespace {

// "cam_in_face" -> the words the page uses for it.
std::string mass_label(const std::string& measure) {
  return measure == "cam_in_skin" ? "share of the map in the faces' skin"
                                  : "share of the map in the faces";
}

// One measure of cam_mass.json: its group means with intervals as a chart, the test across
// groups and the pairs as a table, a finding when the test rejects at kAlpha.
void cam_mass_measure(Page& page, const Node& m, const std::string& measure,
                      const std::string& by) {
  const Node groups = m["groups"];
  BarChart chart;
  chart.title = mass_label(measure);
  chart.x_label = measure + " (0 to 1)";
  chart.points = true;
  BarSeries s;
  s.name = measure;
  DataTable t;
  t.name = "explain_" + measure;
  t.columns = {"group", "n", "mean", "ci_lower", "ci_upper"};
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Node grp = groups[g];
    if (grp["n"].number() > 0) {  // a group without a face has no bar
      chart.categories.push_back(group_label(grp["key"]));
      s.value.push_back(grp["mean"].number());
      s.lower.push_back(grp["mean_ci"]["lower"].number());
      s.upper.push_back(grp["mean_ci"]["upper"].number());
    }
    t.add({cell(group_label(grp["key"])), cell(grp["n"], Fmt::integer), cell(grp["mean"]),
           cell(grp["mean_ci"]["lower"]), cell(grp["mean_ci"]["upper"])});
  }
  chart.series.push_back(std::move(s));
  page.figure(svg_bar_chart(chart),
              "Mean " + mass_label(measure) +
                  " per group, images with a face, with percentile "
                  "bootstrap intervals of the mean.",
              std::move(t));
  if (m["test"].null()) {
    if (!m["note"].null()) page.paragraph_html(esc(measure + ": " + m["note"].str()) + ".");
    return;
  }
  DataTable tests;
  tests.name = "explain_" + measure + "_tests";
  tests.columns = {"comparison", "test", "statistic", "effect_size", "p_value", "p_holm"};
  const auto add = [&](const Node& c, const std::string& what) {
    tests.add({cell(what), cell(c["test"].str()), cell(c["statistic"]), cell(c["effect_size"]),
               cell(c["p_value"], Fmt::p), cell(c["p_holm"], Fmt::p)});
  };
  const Node across = m["test"]["comparisons"][std::size_t{0}];
  add(across, "all groups");
  const Node pairs = m["pairwise"]["comparisons"];
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Node c = pairs[i];
    add(c, group_label(c["groups"][std::size_t{0}]["key"]) + " vs " +
               group_label(c["groups"][std::size_t{1}]["key"]));
  }
  page.table(
      "Kruskal-Wallis across the groups, then Mann-Whitney U per pair (Holm over the "
      "pairs) on " +
          measure + ".",
      std::move(tests));
  if (!(across["p_value"].number() < kAlpha) || groups.size() < 2) return;
  std::size_t hi = 0, lo = 0;
  for (std::size_t g = 1; g < groups.size(); ++g) {
    if (groups[g]["mean"].number() > groups[hi]["mean"].number()) hi = g;
    if (groups[g]["mean"].number() < groups[lo]["mean"].number()) lo = g;
  }
  page.finding(
      {-1, std::abs(across["effect_size"].number()),
       fmt::format("The {} differs across {} (Kruskal-Wallis H = {}, epsilon squared = {}, {}): "
                   "highest for <strong>{}</strong> ({}), lowest for <strong>{}</strong> ({}).",
                   esc(mass_label(measure)), esc(by), value_span(across["statistic"]),
                   value_span(across["effect_size"]), p_text("p", across["p_value"]),
                   esc(group_label(groups[hi]["key"])), value_span(groups[hi]["mean"]),
                   esc(group_label(groups[lo]["key"])), value_span(groups[lo]["mean"]))});
}

}  // namespace

void explain_section(Page& page) {
  const Node x = page.root()["analyses"]["explain"];
  if (x.null()) return;
  page.section("explain", "Where the evidence lies: class activation maps", x["definition"].str());
  page.paragraph_html(fmt::format(
      "{} of {} images explained with {} for the pair \"{}\" ({} could not be read); the maps "
      "(maps.npy), one row per image (rows.csv) and the overlays are in the run's folder "
      "<code>{}/</code>.",
      value_span(x["explained"], Fmt::integer), value_span(x["images"], Fmt::integer),
      esc(x["method"].str()), esc(x["pair"].str()), value_span(x["failed"], Fmt::integer),
      esc(x["folder"].str())));
  DataTable t;
  t.name = "explain_groups";
  t.columns = {"group", "explained", "mean_probability"};
  const Node groups = x["groups"];
  for (std::size_t g = 0; g < groups.size(); ++g) {
    t.add({cell(group_label(groups[g]["group"])), cell(groups[g]["explained"], Fmt::integer),
           cell(groups[g]["mean_probability"])});
  }
  page.table("Explained images per group and their mean probability of the pair's first trait.",
             std::move(t));
  const Node mass = x["cam_mass"];
  if (!mass.null()) {
    std::string by;
    for (std::size_t i = 0; i < mass["by"].size(); ++i) {
      by += (i == 0 ? "" : ", ") + mass["by"][i].str();
    }
    for (const char* measure : {"cam_in_face", "cam_in_skin"}) {
      cam_mass_measure(page, mass[measure], measure, by);
    }
  }
  exemplars_section(page, x["exemplars"], "overlays", "explain_overlays",
                    "Class activation maps of the most probable images per group");
}

}  // namespace vlbias::report_internal
