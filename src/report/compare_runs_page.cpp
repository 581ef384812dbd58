// The report page of a comparison of runs (`vlbias compare-runs`, results.json of kind
// "comparison"; include/vlbias/audits/compare_runs.h): the runs compared, the significant
// differences in sentences, the estimates side by side, every difference with its interval
// (a forest plot), and the rankings with how often each run ranks first.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "report_page.h"

namespace vlbias::report_internal {

namespace {

std::string quantity_label(const Node& q) {
  std::string s = q["quantity"].str();
  if (s.empty()) s = q["id"].str();
  const Node g = q["groups"];
  if (g.size() > 0) {
    std::string groups;
    for (std::size_t i = 0; i < g.size(); ++i) groups += (i ? ", " : "") + g[i].str();
    s += " (" + groups + ")";
  }
  return s;
}

std::string adjusted_name(const Page& page) {
  return page.root()["options"]["correction"].str() == "bh" ? "p_bh" : "p_holm";
}

void runs_facts(Page& page) {
  const Node runs = page.root()["runs"];
  std::string html = "<ul>";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Node r = runs[i];
    html += fmt::format("<li><strong>run {}</strong>: <code>{}</code> ({} findings",
                        esc(r["name"].str()), esc(r["path"].str()),
                        value_span(r["findings"], Fmt::integer));
    const Node seed = r["run"]["seed"];
    if (!seed.null()) html += ", seed " + value_span(seed, Fmt::integer);
    const std::string version = r["run"]["vlbias_version"].str();
    if (!version.empty()) html += ", vlbias " + esc(version);
    html += ")</li>";
  }
  page.fact("Runs compared", html + "</ul>");
  page.fact("Audit kind of the runs", esc(page.root()["compared_kind"].str()));
  const Node o = page.root()["options"];
  page.fact("Tests", fmt::format("{} differences, {} with a p-value; {} correction; {} bootstrap "
                                 "replicates; intervals at level {}",
                                 value_span(page.root()["tests"]["count"], Fmt::integer),
                                 value_span(page.root()["tests"]["with_p"], Fmt::integer),
                                 o["correction"].str() == "bh" ? "Benjamini-Hochberg" : "Holm",
                                 value_span(o["bootstrap"], Fmt::integer), value_span(o["level"])));
  const Node st = page.root()["stimuli"]["inputs"];
  std::string names;
  for (std::size_t i = 0; i < st.size(); ++i) names += (i ? ", " : "") + st[i].str();
  page.fact("Stimulus inputs (paired when equal)",
            names.empty() ? std::string("none for this kind: units matched by key")
                          : esc(names) + " (" + esc(page.root()["stimuli"]["source"].str()) + ")");
}

// "run B's Q is 0.031 lower than run A's (95% CI [..]; p_holm = ..; paired ...)."
void difference_finding(Page& page, const Node& q, const Node& d) {
  const double diff = d["difference"].number();
  if (!d["significant"].boolean() || !std::isfinite(diff)) return;
  const std::string how =
      d["method"].str() == "paired"
          ? fmt::format("paired bootstrap over {} shared units",
                        value_span(d["units"]["shared"], Fmt::integer))
          : std::string("unpaired normal approximation: ") + esc(d["reason"].str());
  const double scale = std::max(std::fabs(d["estimate_a"].number()), 1e-300);
  page.finding(
      {0, std::fabs(diff) / scale,
       fmt::format("run {}'s <strong>{}</strong> is {} {} than run {}'s (difference {}, {}; {}; "
                   "{}).",
                   esc(d["b"].str()), esc(quantity_label(q)),
                   format_number(std::fabs(diff), Fmt::g4), diff < 0 ? "lower" : "higher",
                   esc(d["a"].str()), value_span(d["difference"]), ci_text(d["ci"]),
                   p_text(adjusted_name(page), d["p_adjusted"]), how)});
}

void side_by_side(Page& page) {
  const Node qs = page.root()["quantities"];
  DataTable t;
  t.name = "estimates";
  t.columns = {"quantity", "section",  "run",          "estimate",
               "ci_lower", "ci_upper", "p_holm (run)", "units"};
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const Node es = qs[i]["estimates"];
    for (std::size_t j = 0; j < es.size(); ++j) {
      const Node e = es[j];
      t.add({cell(quantity_label(qs[i])), cell(qs[i]["section"].str()), cell(e["run"].str()),
             cell(e["estimate"]), cell(e["ci"]["lower"]), cell(e["ci"]["upper"]),
             cell(e["p_holm"], Fmt::p), cell(e["units"], Fmt::integer)});
    }
  }
  page.section("estimates", "Estimates side by side",
               "Each run's own estimate and interval of every quantity the runs share, as its "
               "summary.json gives them.");
  page.table("Estimates of every run", std::move(t));
}

void differences(Page& page) {
  const Node qs = page.root()["quantities"];
  ForestChart f;
  f.title = "Difference to the reference run";
  f.x_label = "B - A (in each quantity's units)";
  DataTable t;
  t.name = "differences";
  t.columns = {"quantity", "a",      "b",    "difference", "ci_lower", "ci_upper",
               "p",        "p_holm", "p_bh", "method",     "reason"};
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const Node ds = qs[i]["differences"];
    for (std::size_t j = 0; j < ds.size(); ++j) {
      const Node d = ds[j];
      difference_finding(page, qs[i], d);
      t.add({cell(quantity_label(qs[i])), cell(d["a"].str()), cell(d["b"].str()),
             cell(d["difference"]), cell(d["ci"]["lower"]), cell(d["ci"]["upper"]),
             cell(d["p"], Fmt::p), cell(d["p_holm"], Fmt::p), cell(d["p_bh"], Fmt::p),
             cell(d["method"].str()), cell(d["reason"].str())});
      if (!std::isnan(d["ci"]["lower"].number()) && !std::isnan(d["ci"]["upper"].number())) {
        f.rows.push_back({quantity_label(qs[i]) + ": " + d["b"].str() + " - " + d["a"].str(),
                          d["difference"].number(), d["ci"]["lower"].number(),
                          d["ci"]["upper"].number(), d["significant"].boolean()});
      }
    }
  }
  page.section("differences", "Differences between runs",
               "B - A for each pair of runs: paired (bootstrap over the units both runs hold, "
               "when their stimuli are the same) or unpaired (normal approximation from each "
               "run's own interval), as each row says and why.");
  DataTable chart = t;
  chart.name = "difference_intervals";
  std::erase_if(chart.rows, [](const std::vector<Cell>& row) {
    return std::isnan(row[4].value) || std::isnan(row[5].value);
  });
  page.figure(svg_forest_chart(f),
              "Each difference with its interval; filled: significant after correction.",
              std::move(chart));
  page.table("Every difference and its test", std::move(t));
}

void rankings(Page& page) {
  const Node qs = page.root()["quantities"];
  DataTable t;
  t.name = "ranks";
  t.columns = {"quantity", "better", "run", "estimate", "rank", "share_first", "method"};
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const Node r = qs[i]["ranking"];
    const Node ranks = r["ranks"];
    for (std::size_t j = 0; j < ranks.size(); ++j) {
      t.add({cell(quantity_label(qs[i])), cell(r["better"].str()), cell(ranks[j]["run"].str()),
             cell(ranks[j]["estimate"]), cell(ranks[j]["rank"], Fmt::integer),
             cell(ranks[j]["share_first"], Fmt::pct), cell(r["method"].str())});
    }
  }
  page.section("ranks", "Rankings",
               "Runs ranked by each quantity in the direction its summary calls better (rank 1 "
               "best), with the share of bootstrap replicates in which each run ranks first "
               "(ties shared): the same resampled units for every run when all are paired, "
               "normal draws from each run's interval otherwise.");
  if (t.rows.empty()) {
    page.paragraph_html("No quantity says which direction is better: no ranking.");
    return;
  }
  page.table("Ranks and how often each run ranks first", std::move(t));
}

}  // namespace

void build_comparison(Page& page) {
  runs_facts(page);
  side_by_side(page);
  differences(page);
  rankings(page);
}

}  // namespace vlbias::report_internal
