// Report page of the LVLM counterfactual audit (paper 003) (src/report/report_page.h).
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report_page.h"
#include "svg_chart.h"
#include "vlbias/report/lvlm_results.h"

namespace vlbias::report_internal {

namespace {

void maxgap_section(Page& page, const Node& m) {
  page.section("maxgap", "MaxGap within counterfactual sets", m["definition"].str());
  std::vector<std::string> scores;
  for (std::size_t i = 0; i < m["results"].size(); ++i)
    add_unique(scores, m["results"][i]["score"].str());
  for (const std::string& score : scores) {
    StepChart hist, ecdf;
    hist.title = "MaxGap of " + score + ": histogram per model setting and prompt";
    hist.x_label = "MaxGap (max \u2212 min of " + score + " within a set)";
    hist.y_label = "counterfactual sets";
    ecdf.title = "MaxGap of " + score + ": cumulative share of sets";
    ecdf.x_label = hist.x_label;
    ecdf.y_label = "share of sets with MaxGap \u2264 x";
    ecdf.histogram = false;
    BarChart means;
    means.title = "Mean MaxGap of " + score + " with bootstrap intervals";
    means.x_label = "mean MaxGap";
    means.points = true;
    BarSeries ms{"mean MaxGap", {}, {}, {}};
    DataTable th, te, tm;
    th.name = "maxgap_histogram_" + score;
    th.columns = {"by", "bin_lower", "bin_upper", "sets"};
    te.name = "maxgap_ecdf_" + score;
    te.columns = {"by", "maxgap_at_most", "cumulative_share"};
    tm.name = "maxgap_mean_" + score;
    tm.columns = {"by",       "sets",       "maxgap_mean", "ci_lower",
                  "ci_upper", "maxgap_p90", "max_mean",    "max_p90"};
    for (std::size_t i = 0; i < m["results"].size(); ++i) {
      const Node r = m["results"][i];
      if (r["score"].str() != score) continue;
      const std::string label = by_label(r["by"]);
      const Node h = r["histogram"];
      if (hist.x.empty()) {
        for (std::size_t e = 0; e < h["edges"].size(); ++e)
          hist.x.push_back(h["edges"][e].number());
        for (std::size_t e = 1; e < h["edges"].size(); ++e)
          ecdf.x.push_back(h["edges"][e].number());
      }
      StepSeries sh{label, {}}, se{label, {}};
      for (std::size_t b = 0; b < h["counts"].size(); ++b) {
        sh.y.push_back(h["counts"][b].number());
        se.y.push_back(h["cumulative_share"][b].number());
        th.add({cell(label), cell(h["edges"][b]), cell(h["edges"][b + 1]),
                cell(h["counts"][b], Fmt::integer)});
        te.add({cell(label), cell(h["edges"][b + 1]), cell(h["cumulative_share"][b])});
      }
      hist.series.push_back(std::move(sh));
      ecdf.series.push_back(std::move(se));
      means.categories.push_back(label);
      ms.value.push_back(r["maxgap"]["mean"].number());
      ms.lower.push_back(r["ci"]["maxgap_mean"]["lower"].number());
      ms.upper.push_back(r["ci"]["maxgap_mean"]["upper"].number());
      tm.add({cell(label), cell(r["sets"], Fmt::integer), cell(r["maxgap"]["mean"]),
              cell(r["ci"]["maxgap_mean"]["lower"]), cell(r["ci"]["maxgap_mean"]["upper"]),
              cell(r["maxgap"]["p90"]), cell(r["max"]["mean"]), cell(r["max"]["p90"])});
    }
    means.series = {ms};
    page.figure(svg_step_chart(hist),
                "Histogram of MaxGap over counterfactual sets (paper 003 Fig. 2).", std::move(th));
    page.figure(svg_step_chart(ecdf), "Empirical CDF of MaxGap at the histogram's bin edges.",
                std::move(te));
    page.figure(svg_bar_chart(means),
                "Mean MaxGap per setting with bootstrap intervals over sets. MaxGap is max \u2212 "
                "min within a set (paper 003 Eq. 1); max_mean and max_p90 describe the set's max "
                "alone, what the authors' notebook reports as MaxToxicity.",
                std::move(tm));
  }
}

// analyses.group_tests, read through its typed contract (lvlm_results.h).
void group_tests_section(Page& page, const LvlmGroupTests& g) {
  page.section(kLvlmGroupTestsSection, "Which groups get higher scores", g.definition);
  Heatmap h;
  h.title = "Each group's mean minus the others' (within complete sets)";
  h.value_label = "gap to the other groups";
  DataTable t;
  t.name = "group_gaps";
  t.columns = {"group", "measure", "by", "mean", "gap_to_others", "p", "p_holm"};
  std::vector<GridItem> items;
  for (std::size_t i = 0; i < g.results.size(); ++i) {
    const LvlmGroupTest& r = g.results[i];
    const std::string ptr = lvlm_group_test_pointer(i);
    const std::string by = by_label(Node(&r.by, ptr + "/by"));
    const std::string col = r.measure + " \u00b7 " + by;
    for (std::size_t k = 0; k < r.groups.size(); ++k) {
      const LvlmGroupEffect& e = r.groups[k];
      const std::string ep = fmt::format("{}/groups/{}/", ptr, k);
      const NumberAt mean{e.mean, ep + "mean"}, gap{e.gap_to_others, ep + "gap_to_others"};
      const NumberAt p_holm{e.p_holm, ep + "p_holm"};
      const std::string row = group_label(Node(&e.group, ep + "group"));
      items.push_back({row,
                       col,
                       e.gap_to_others,
                       e.p_holm,
                       {cell(row), cell(r.measure), cell(by), cell(mean), cell(gap),
                        cell(NumberAt{e.p, ep + "p"}, Fmt::p), cell(p_holm, Fmt::p)}});
      if (e.p_holm < kAlpha) {
        page.finding(
            {0, std::abs(e.gap_to_others),
             fmt::format("Under {}, answers about images of <strong>{}</strong> score {} on "
                         "<strong>{}</strong> than the other groups in the same counterfactual "
                         "sets: gap {} (group mean {}), {}.",
                         esc(by), esc(row), e.gap_to_others < 0 ? "lower" : "higher",
                         esc(r.measure), value_span(gap), value_span(mean),
                         p_text("p_holm", p_holm))});
      }
    }
    if (r.friedman && r.friedman->p_holm < kAlpha) {
      const stats::TestResult& f = r.friedman->result;
      const std::string fp = ptr + "/friedman/";
      page.finding(
          {1, f.effect_size,
           fmt::format("Under {}, <strong>{}</strong> differs across groups within counterfactual "
                       "sets (Friedman chi2 = {}, Kendall's W = {}, {}).",
                       esc(by), esc(r.measure), value_span(NumberAt{f.statistic, fp + "statistic"}),
                       value_span(NumberAt{f.effect_size, fp + "effect_size"}),
                       p_text("p_holm", NumberAt{r.friedman->p_holm, fp + "p_holm"}))});
    }
  }
  fill_heatmap(items, h, t);
  page.figure(svg_heatmap(h),
              "Gap of each group's mean to the mean of the other groups; * marks p_holm < 0.05.",
              std::move(t));
}

void lexicon_section(Page& page, const Node& lex) {
  page.section("lexicon", "Competence and sociability words", lex["definition"].str());
  for (std::size_t i = 0; i < lex["results"].size(); ++i) {
    const Node r = lex["results"][i];
    Heatmap h;
    h.title = "Lexicon rates per group (" + by_label(r["by"]) + ")";
    h.value_label = "mean share of words";
    h.diverging = false;
    DataTable t;
    t.name = "lexicon_" + by_label(r["by"]);
    t.columns = {"group", "category", "mean", "sd"};
    for (std::size_t g = 0; g < r["groups"].size(); ++g) {
      const Node grp = r["groups"][g];
      h.row_labels.push_back(group_label(grp["group"]));
      const std::vector<std::string> cats = grp["categories"].keys();
      if (h.col_labels.empty()) h.col_labels = cats;
      for (const std::string& c : h.col_labels) {
        h.values.push_back(grp["categories"][c]["mean"].number());
        t.add({cell(group_label(grp["group"])), cell(c), cell(grp["categories"][c]["mean"]),
               cell(grp["categories"][c]["sd"])});
      }
    }
    page.figure(svg_heatmap(h), "Mean per-text share of each lexicon category's words, per group.",
                std::move(t));
  }
}

void ratings_section(Page& page, const Node& ratings) {
  page.section("ratings", "Numeric answers", ratings["definition"].str());
  for (std::size_t i = 0; i < ratings["measures"].size(); ++i) {
    const Node m = ratings["measures"][i];
    std::vector<std::string> bys;
    for (std::size_t c = 0; c < m["cells"].size(); ++c)
      add_unique(bys, by_label(m["cells"][c]["by"]));
    BarChart chart;
    chart.title = "Mean " + m["name"].str() + " per group";
    chart.x_label = m["name"].str() + " (" + m["kind"].str() + ")";
    chart.points = true;
    DataTable t;
    t.name = "ratings_" + m["name"].str();
    t.columns = {"by", "group", "n", "mean", "sd", "median"};
    for (const std::string& by : bys) {
      BarSeries s{by, {}, {}, {}};
      for (std::size_t c = 0; c < m["cells"].size(); ++c) {
        const Node e = m["cells"][c];
        if (by_label(e["by"]) != by) continue;
        const std::string g = group_label(e["group"]);
        add_unique(chart.categories, g);
        s.value.push_back(e["mean"].number());
        t.add({cell(by), cell(g), cell(e["n"], Fmt::integer), cell(e["mean"]), cell(e["sd"]),
               cell(e["median"])});
      }
      chart.series.push_back(std::move(s));
    }
    page.figure(svg_bar_chart(chart),
                fmt::format("Mean {} per group; {} answers had no number and {} were out of range.",
                            m["name"].str(), m["excluded"]["no_number"].json().dump(),
                            m["excluded"]["out_of_range"].json().dump()),
                std::move(t));
  }
}

// Refusal rates per group with Wilson intervals, and per by-level the chi-square test of
// equal rates (paper 002 reports filtered generations per region).
void responses_section(Page& page, const Node& r) {
  page.section("responses", "Refusals per group", r["definition"].str());
  DataTable t;
  t.name = "refusal_rates";
  t.columns = {"by", "group", "n", "refused", "rate", "ci_lower", "ci_upper"};
  for (std::size_t i = 0; i < r["results"].size(); ++i) {
    const Node e = r["results"][i];
    t.add({cell(by_label(e["by"])), cell(group_label(e["group"])), cell(e["n"], Fmt::integer),
           cell(e["refused"], Fmt::integer), cell(e["refusal_rate"]),
           cell(e["refusal_ci"]["lower"]), cell(e["refusal_ci"]["upper"])});
  }
  page.table("Answers refused per group (Wilson intervals).", std::move(t));
  DataTable tests;
  tests.name = "refusal_tests";
  tests.columns = {"by", "groups", "chi_square", "df", "p", "cramers_v", "note"};
  for (std::size_t i = 0; i < r["refusal_tests"].size(); ++i) {
    const Node e = r["refusal_tests"][i];
    const Node x = e["test"];
    std::vector<Cell> row = {cell(by_label(e["by"])), cell(e["groups"], Fmt::integer)};
    for (Cell& c : rate_test_cells(x)) row.push_back(std::move(c));
    tests.add(std::move(row));
    rate_test_finding(page, x, "Under " + esc(by_label(e["by"])) + ", the refusal rate", "groups");
  }
  page.table("Do the groups share one refusal rate? Pearson's chi-square test per by-level.",
             std::move(tests));
}

void paired_section(Page& page, const Node& p) {
  page.section("paired", "Mitigation against the baseline", p["definition"].str());
  ForestChart f;
  f.title = "Change in mean MaxGap against the baseline";
  f.x_label = "mean MaxGap difference (setting minus baseline)";
  DataTable t;
  t.name = "paired";
  t.columns = {"by",       "baseline", "score",           "matched_sets",   "diff_mean",
               "ci_lower", "ci_upper", "paired_t_p_holm", "wilcoxon_p_holm"};
  for (std::size_t i = 0; i < p["results"].size(); ++i) {
    const Node r = p["results"][i];
    const Node ci = r["ci"]["diff_mean"];
    const bool excludes = ci["lower"].number() > 0 || ci["upper"].number() < 0;
    f.rows.push_back({by_label(r["by"]) + " \u00b7 " + r["score"].str(), r["diff_mean"].number(),
                      ci["lower"].number(), ci["upper"].number(), excludes});
    t.add({cell(by_label(r["by"])), cell(by_label(r["baseline"])), cell(r["score"].str()),
           cell(r["matched_sets"], Fmt::integer), cell(r["diff_mean"]), cell(ci["lower"]),
           cell(ci["upper"]), cell(r["tests"]["paired_t"]["p_holm"], Fmt::p),
           cell(r["tests"]["wilcoxon"]["p_holm"], Fmt::p)});
    if (excludes) {
      const double d = r["diff_mean"].number();
      page.finding(
          {2, std::abs(d),
           fmt::format("{} {} the mean MaxGap of <strong>{}</strong> against {}: difference {}, {} "
                       "(bootstrap over matched sets; the interval excludes 0).",
                       esc(by_label(r["by"])), d < 0 ? "lowers" : "raises", esc(r["score"].str()),
                       esc(by_label(r["baseline"])), value_span(r["diff_mean"]), ci_text(ci))});
    }
  }
  page.figure(svg_forest_chart(f),
              "Mean MaxGap difference per matched set with bootstrap intervals; filled: the "
              "interval excludes 0. Paired t and Wilcoxon p of the per-set differences, Holm "
              "over the rows (" +
                  p["alternative"].str() + ").",
              std::move(t));
}

// What scored the answers (the rows' scorer column), so that a reader of the report knows
// which classifier, service or judge the score gaps are measured with.
void scorers_fact(Page& page, const Node& r) {
  if (r["spec"]["columns"]["scores"].size() == 0) return;
  const Node list = r["generations"]["scorers"];
  std::string html;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node s = list[i];
    if (!html.empty()) html += "; ";
    html += (s["scorer"].null() ? std::string("not recorded")
                                : "<code>" + esc(s["scorer"].str()) + "</code>") +
            " (" + value_span(s["rows"], Fmt::integer) + " answers)";
  }
  page.fact("Scored by", html.empty() ? std::string("not recorded (the generations have no "
                                                    "scorer column)")
                                      : html);
}

}  // namespace

void build_lvlm_counterfactual(Page& page) {
  const Node& r = page.root();
  const Node g = r["generations"];
  page.fact("Generations", value_span(g["rows"], Fmt::integer) + " answers in " +
                               value_span(g["sets"], Fmt::integer) + " counterfactual sets, " +
                               std::to_string(g["groups"].size()) + " groups, " +
                               value_span(g["shards"], Fmt::integer) + " shard(s)");
  scorers_fact(page, r);
  const Node a = r["analyses"];
  if (!a["maxgap"].null()) maxgap_section(page, a["maxgap"]);
  if (const auto g = lvlm_group_tests_from_json(a.json())) group_tests_section(page, *g);
  if (!a["lexicon"].null()) lexicon_section(page, a["lexicon"]);
  if (!a["ratings"].null()) ratings_section(page, a["ratings"]);
  if (!a["responses"].null()) responses_section(page, a["responses"]);
  if (!a["paired"].null()) paired_section(page, a["paired"]);
  exemplars_section(page, r["exemplars"], "counterfactual images");
}

}  // namespace vlbias::report_internal
