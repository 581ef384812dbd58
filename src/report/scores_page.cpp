// Per-image scores by group (issue 44; src/audits/scores_by_group.h), shared by the
// representation and geo-diversity pages and summaries: per scored column and grouping a chart
// of each group's rate or mean with its interval, the table, the test across groups, the
// power statement of a null test, and a finding "COLUMN: 'A' 12% [8, 17] vs 'B' 3% [1, 6]"
// (highest against lowest group) when the test is significant after Holm.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report_page.h"
#include "summary_internal.h"
#include "svg_chart.h"

namespace vlbias::report_internal {

namespace {

std::string score_value(const Node& v, bool rate) {
  return value_span(v, rate ? Fmt::pct : Fmt::g4);
}

// "'A' 12% [8, 17]" for a group entry.
std::string score_group_text(const Node& g, bool rate) {
  return fmt::format("'{}' {} [{}, {}]", esc(g["group"].str()), score_value(g["estimate"], rate),
                     score_value(g["ci"]["lower"], rate), score_value(g["ci"]["upper"], rate));
}

void score_grouping(Page& page, const Node& column, const Node& by, double level) {
  const bool rate = column["kind"].str() == "rate";
  const std::string name = column["column"].str(), what = by["by"].str();
  const Node groups = by["groups"], test = by["test"];
  BarChart chart;
  chart.title = fmt::format("{} per {}", name, what);
  chart.x_label = rate ? fmt::format("share of images with {} = 1", name) : "mean " + name;
  chart.points = !rate;
  BarSeries s{name, {}, {}, {}};
  DataTable t;
  t.name = fmt::format("scores_{}_{}", name, what);
  t.columns = {what, "n", rate ? "rate" : "mean", "lower", "upper"};
  std::size_t hi = 0, lo = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Node g = groups[i];
    chart.categories.push_back(g["group"].str());
    s.value.push_back(g["estimate"].number());
    s.lower.push_back(g["ci"]["lower"].number());
    s.upper.push_back(g["ci"]["upper"].number());
    t.add({cell(g["group"].str()), cell(g["n"], Fmt::integer),
           cell(g["estimate"], rate ? Fmt::pct : Fmt::g4),
           cell(g["ci"]["lower"], rate ? Fmt::pct : Fmt::g4),
           cell(g["ci"]["upper"], rate ? Fmt::pct : Fmt::g4)});
    if (g["estimate"].number() > groups[hi]["estimate"].number()) hi = i;
    if (g["estimate"].number() < groups[lo]["estimate"].number()) lo = i;
  }
  chart.series = {s};
  page.figure(svg_bar_chart(chart),
              fmt::format("{} of {} per {} with {:g}% {} intervals.", rate ? "Rate" : "Mean", name,
                          what, 100 * level, rate ? "Wilson" : "Student t"),
              std::move(t));
  const bool chi = test["test"].str() == "chi_square";
  page.paragraph_html(fmt::format(
      "{} across {}s: {} = {} (df {}), p = {}, {}{}.", esc(name), esc(what),
      chi ? "Pearson's chi-square" : "Kruskal-Wallis H", value_span(test["statistic"]),
      test["df"].size() > 0 ? value_span(test["df"][0], Fmt::integer) : std::string("n/a"),
      value_span(test["p_value"], Fmt::p), p_text("p_holm", test["p_holm"]),
      test["note"].null() ? std::string() : " (" + esc(test["note"].str()) + ")"));
  if (const auto w = test_power_from_json(test.json())) {
    page.paragraph_html(power_statement(*w, test.ptr() + "/" + kTestPowerKey));
  }
  if (groups.size() >= 2 && test["p_holm"].number() < kAlpha) {
    // Their own kinds of effect, after the kinds' own findings: rates, then means (gaps in
    // the scores' own units).
    page.finding(
        {rate ? 5 : 6, std::abs(groups[hi]["estimate"].number() - groups[lo]["estimate"].number()),
         fmt::format("{}: {} vs {} ({} across {} {}s, {}).", esc(name),
                     score_group_text(groups[hi], rate), score_group_text(groups[lo], rate),
                     chi ? "chi-square" : "Kruskal-Wallis", groups.size(), esc(what),
                     p_text("p_holm", test["p_holm"]))});
  }
}

}  // namespace

void scores_section(Page& page, const Node& scores) {
  if (scores.null()) return;
  page.section("scores", "Scores of the images per group",
               "Per-image scores (e.g. vlbias score image-head's NSFW, inappropriateness or "
               "aesthetic heads): the rate of a 0/1 column with a Wilson interval or the mean of "
               "a score with a Student t interval per group, Pearson's chi-square (rates) or "
               "Kruskal-Wallis (means) across groups, Holm over every test of the section.");
  DataTable src;
  src.name = "scores_tables";
  src.columns = {"table", "rows", "matched", "unmatched", "unused_rows", "head"};
  for (std::size_t i = 0; i < scores["tables"].size(); ++i) {
    const Node t = scores["tables"][i], p = t["provenance"];
    src.add({cell(t["table"].str()), cell(t["rows"], Fmt::integer),
             cell(t["matched_images"], Fmt::integer), cell(t["unmatched_images"], Fmt::integer),
             cell(t["unused_rows"], Fmt::integer),
             cell(p["head"].null() ? std::string() : p["head"].str())});
  }
  page.table("The scores tables: rows, images matched and not, and the scoring head",
             std::move(src));
  // The hashes as text (a table of two 64-digit columns would not fit the page's width).
  for (std::size_t i = 0; i < scores["tables"].size(); ++i) {
    const Node t = scores["tables"][i], p = t["provenance"];
    std::string html = fmt::format("<code>{}</code>: SHA-256 <code>{}</code>",
                                   esc(t["table"].str()), esc(t["sha256"].str()));
    if (!p["weights_sha256"].null() && p["weights_sha256"].size() == 0)
      html += fmt::format("; the head's weights SHA-256 <code>{}</code>",
                          esc(p["weights_sha256"].str()));
    page.paragraph_html(html + ".");
  }
  const double level = scores["ci"].number();
  for (std::size_t c = 0; c < scores["columns"].size(); ++c) {
    const Node column = scores["columns"][c];
    for (std::size_t b = 0; b < column["by"].size(); ++b)
      score_grouping(page, column, column["by"][b], level);
  }
}

void summarize_scores(SummaryBuilder& b, const Node& scores) {
  if (scores.null()) return;
  const double level = scores["ci"].number();
  for (std::size_t c = 0; c < scores["columns"].size(); ++c) {
    const Node column = scores["columns"][c];
    const std::string name = column["column"].str();
    const bool rate = column["kind"].str() == "rate";
    const std::string quantity =
        rate ? "share of the images with " + name + " = 1" : "mean of " + name + " over the images";
    b.add("score/" + name, "scores", quantity + " (every image)", {}, column["all"]["estimate"])
        .ci(column["all"]["ci"], level);
    for (std::size_t k = 0; k < column["by"].size(); ++k) {
      const Node by = column["by"][k];
      const std::string what = by["by"].str();
      for (std::size_t i = 0; i < by["groups"].size(); ++i) {
        const Node g = by["groups"][i];
        SummaryFinding f = b.add("score/" + name + "/" + what + "/" + g["group"].str(), "scores",
                                 quantity + " of the " + what, {g["group"].str()}, g["estimate"]);
        f.ci(g["ci"], level).p(by["test"]["p_value"], by["test"]["p_holm"]);
      }
      // The mean over the groups: compare-runs pairs two runs' units/score__COLUMN.csv by group.
      SummaryFinding m = b.add("score_mean/" + name + "/" + what, "scores",
                               "unweighted mean over the " + what + "s of the " + quantity, {},
                               by["mean_over_groups"]);
      if (what == "prompt") m.units_mean(units_table_name("score", {name}), what, name);
    }
  }
}

}  // namespace vlbias::report_internal
