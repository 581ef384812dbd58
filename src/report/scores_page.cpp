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
#include "vlbias/report/scores_results.h"

namespace vlbias::report_internal {

namespace {

std::string score_value(const NumberAt& v, bool rate) {
  return value_span(v, rate ? Fmt::pct : Fmt::g4);
}

// A group's (or every image's) entry at JSON pointer `ptr`: its numbers with their pointers.
struct ScoreGroupAt {
  const ScoreGroupResult& g;
  std::string ptr;
  NumberAt at(double value, const char* key) const { return {value, ptr + "/" + key}; }
  NumberAt n() const { return at(g.n, "n"); }
  NumberAt estimate() const { return at(g.estimate, "estimate"); }
  NumberAt lower() const { return at(g.ci_lower, "ci/lower"); }
  NumberAt upper() const { return at(g.ci_upper, "ci/upper"); }
};

// "'A' 12% [8, 17]" for a group entry.
std::string score_group_text(const ScoreGroupAt& g, bool rate) {
  return fmt::format("'{}' {} [{}, {}]", esc(g.g.group), score_value(g.estimate(), rate),
                     score_value(g.lower(), rate), score_value(g.upper(), rate));
}

// Column c's grouping b (the section's columns[c].by[b]).
void score_grouping(Page& page, const ScoresColumnResult& column, std::size_t c, std::size_t b,
                    double level) {
  const ScoresByResult& by = column.by[b];
  const bool rate = column.kind == "rate";
  const std::string &name = column.column, &what = by.by;
  const ScoresByResult::Test test = by.test.value_or(ScoresByResult::Test{});
  const std::string tp = scores_test_pointer(c, b);
  const auto test_at = [&](double value, const std::string& key) {
    return NumberAt{value, tp + "/" + key};
  };
  std::vector<ScoreGroupAt> groups;
  for (std::size_t i = 0; i < by.groups.size(); ++i)
    groups.push_back({by.groups[i], scores_group_pointer(c, b, i)});
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
    const ScoreGroupAt& g = groups[i];
    chart.categories.push_back(g.g.group);
    s.value.push_back(g.g.estimate);
    s.lower.push_back(g.g.ci_lower);
    s.upper.push_back(g.g.ci_upper);
    t.add({cell(g.g.group), cell(g.n(), Fmt::integer),
           cell(g.estimate(), rate ? Fmt::pct : Fmt::g4),
           cell(g.lower(), rate ? Fmt::pct : Fmt::g4), cell(g.upper(), rate ? Fmt::pct : Fmt::g4)});
    if (g.g.estimate > groups[hi].g.estimate) hi = i;
    if (g.g.estimate < groups[lo].g.estimate) lo = i;
  }
  chart.series = {s};
  page.figure(svg_bar_chart(chart),
              fmt::format("{} of {} per {} with {:g}% {} intervals.", rate ? "Rate" : "Mean", name,
                          what, 100 * level, rate ? "Wilson" : "Student t"),
              std::move(t));
  const stats::TestResult& r = test.result;
  const bool chi = r.test == "chi_square";
  const NumberAt p_holm = test_at(test.p_holm, "p_holm");
  page.paragraph_html(fmt::format(
      "{} across {}s: {} = {} (df {}), p = {}, {}{}.", esc(name), esc(what),
      chi ? "Pearson's chi-square" : "Kruskal-Wallis H",
      value_span(test_at(r.statistic, "statistic")),
      r.df.empty() ? std::string("n/a") : value_span(test_at(r.df[0], "df/0"), Fmt::integer),
      value_span(test_at(r.p_value, "p_value"), Fmt::p), p_text("p_holm", p_holm),
      r.note.empty() ? std::string() : " (" + esc(r.note) + ")"));
  if (test.power) page.paragraph_html(power_statement(*test.power, tp + "/" + kTestPowerKey));
  if (groups.size() >= 2 && test.p_holm < kAlpha) {
    // Their own kinds of effect, after the kinds' own findings: rates, then means (gaps in
    // the scores' own units).
    page.finding(
        {rate ? 5 : 6, std::abs(groups[hi].g.estimate - groups[lo].g.estimate),
         fmt::format("{}: {} vs {} ({} across {} {}s, {}).", esc(name),
                     score_group_text(groups[hi], rate), score_group_text(groups[lo], rate),
                     chi ? "chi-square" : "Kruskal-Wallis", groups.size(), esc(what),
                     p_text("p_holm", p_holm))});
  }
}

}  // namespace

void scores_section(Page& page, const ScoresSection& scores) {
  page.section(kScoresSection, "Scores of the images per group",
               "Per-image scores (e.g. vlbias score image-head's NSFW, inappropriateness or "
               "aesthetic heads): the rate of a 0/1 column with a Wilson interval or the mean of "
               "a score with a Student t interval per group, Pearson's chi-square (rates) or "
               "Kruskal-Wallis (means) across groups, Holm over every test of the section.");
  DataTable src;
  src.name = "scores_tables";
  src.columns = {"table", "rows", "matched", "unmatched", "unused_rows", "head"};
  for (std::size_t i = 0; i < scores.tables.size(); ++i) {
    const ScoresTableResult& t = scores.tables[i];
    const std::string tp = scores_table_pointer(i);
    const auto count = [&](std::size_t v, const char* key) {
      return cell(NumberAt{static_cast<double>(v), tp + "/" + key}, Fmt::integer);
    };
    // The scoring head's own provenance object, free-form (score_image_head.h).
    const Node p(&t.provenance, tp + "/provenance");
    src.add({cell(t.table), count(t.rows, "rows"), count(t.matched_images, "matched_images"),
             count(t.unmatched_images, "unmatched_images"), count(t.unused_rows, "unused_rows"),
             cell(p["head"].null() ? std::string() : p["head"].str())});
  }
  page.table("The scores tables: rows, images matched and not, and the scoring head",
             std::move(src));
  // The hashes as text (a table of two 64-digit columns would not fit the page's width).
  for (std::size_t i = 0; i < scores.tables.size(); ++i) {
    const ScoresTableResult& t = scores.tables[i];
    const Node p(&t.provenance, scores_table_pointer(i) + "/provenance");
    std::string html =
        fmt::format("<code>{}</code>: SHA-256 <code>{}</code>", esc(t.table), esc(t.sha256));
    if (!p["weights_sha256"].null() && p["weights_sha256"].size() == 0)
      html += fmt::format("; the head's weights SHA-256 <code>{}</code>",
                          esc(p["weights_sha256"].str()));
    page.paragraph_html(html + ".");
  }
  for (std::size_t c = 0; c < scores.columns.size(); ++c) {
    for (std::size_t b = 0; b < scores.columns[c].by.size(); ++b)
      score_grouping(page, scores.columns[c], c, b, scores.ci);
  }
}

void summarize_scores(SummaryBuilder& b, const ScoresSection& scores) {
  const double level = scores.ci;
  for (std::size_t c = 0; c < scores.columns.size(); ++c) {
    const ScoresColumnResult& column = scores.columns[c];
    const std::string& name = column.column;
    const bool rate = column.kind == "rate";
    const std::string quantity =
        rate ? "share of the images with " + name + " = 1" : "mean of " + name + " over the images";
    const std::string cp = scores_column_pointer(c);
    b.add("score/" + name, kScoresSection, quantity + " (every image)", {},
          NumberAt{column.all.estimate, cp + "/all/estimate"})
        .ci(column.all.ci_lower, column.all.ci_upper, level);
    for (std::size_t k = 0; k < column.by.size(); ++k) {
      const ScoresByResult& by = column.by[k];
      const std::string& what = by.by;
      const ScoresByResult::Test test = by.test.value_or(ScoresByResult::Test{});
      const std::string tp = scores_test_pointer(c, k);
      for (std::size_t i = 0; i < by.groups.size(); ++i) {
        const ScoreGroupAt g{by.groups[i], scores_group_pointer(c, k, i)};
        SummaryFinding f = b.add("score/" + name + "/" + what + "/" + g.g.group, kScoresSection,
                                 quantity + " of the " + what, {g.g.group}, g.estimate());
        f.ci(g.g.ci_lower, g.g.ci_upper, level)
            .p(NumberAt{test.result.p_value, tp + "/p_value"},
               NumberAt{test.p_holm, tp + "/p_holm"});
      }
      // The mean over the groups: compare-runs pairs two runs' units/score__COLUMN.csv by group.
      SummaryFinding m =
          b.add("score_mean/" + name + "/" + what, kScoresSection,
                "unweighted mean over the " + what + "s of the " + quantity, {},
                NumberAt{by.mean_over_groups, scores_by_pointer(c, k) + "/mean_over_groups"});
      if (what == "prompt") m.units_mean(units_table_name("score", {name}), what, name);
    }
  }
}

}  // namespace vlbias::report_internal
