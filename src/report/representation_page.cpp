// The report page of the representation audit (issue 42; src/report/report_page.h): who
// appears per prompt (stacked shares), the imbalance measures, the tests against parity and
// the target, the generated-vs-real scatter, agreement between labellers and power.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report_page.h"
#include "svg_chart.h"
#include "vlbias/report/representation_results.h"

namespace vlbias::report_internal {

namespace {

// Prompt i's number at `rest` (its JSON pointer below the prompt, for the page's data-ptr).
struct PromptNumbers {
  const DistributionPrompt& p;
  std::string ptr;
  NumberAt share(std::size_t c) const {
    return {p.shares && c < p.shares->size() ? (*p.shares)[c] : NAN,
            fmt::format("{}/shares/{}", ptr, c)};
  }
  NumberAt count(std::size_t c) const {
    return {c < p.counts.size() ? p.counts[c] : NAN, fmt::format("{}/counts/{}", ptr, c)};
  }
  NumberAt bound(const char* which, std::size_t c, bool upper) const {
    const std::vector<ShareInterval>& v = which[0] == 'w' ? p.wilson : p.simultaneous;
    const double x = c < v.size() ? (upper ? v[c].upper : v[c].lower) : NAN;
    return {x, fmt::format("{}/{}/{}/{}", ptr, which, c, upper ? "upper" : "lower")};
  }
};

// Per attribute: the stacked shares per prompt (sorted by the first class's share) and the
// table of shares with their intervals; a finding per prompt far from parity. analyses.distribution
// is read through its typed contract (representation_results.h).
void distribution_section(Page& page, const DistributionSection& dist, const Node& tests) {
  page.section(kDistributionSection, "Who appears, per prompt",
               fmt::format("Shares of each class among the {}s labelled with a class, with "
                           "per-class Wilson intervals and simultaneous {} intervals.",
                           dist.unit, dist.interval));
  for (std::size_t ai = 0; ai < dist.attributes.size(); ++ai) {
    const DistributionAttribute& a = dist.attributes[ai];
    const std::string& name = a.attribute;
    const auto numbers = [&](std::size_t i) {
      return PromptNumbers{a.prompts[i], distribution_prompt_pointer(ai, i)};
    };
    std::vector<std::size_t> order(a.prompts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto first_share = [&](std::size_t i) {
      const double v = numbers(i).share(0).value;
      return std::isnan(v) ? -1.0 : v;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return first_share(x) > first_share(y); });
    StackedBarChart chart;
    chart.title = fmt::format("{} per prompt", name);
    chart.x_label = fmt::format("share of labelled {}s", dist.unit);
    for (const std::string& c : a.classes) chart.series.push_back({c, {}, {}, {}});
    DataTable t;
    t.name = "shares_" + name;
    t.columns = {"prompt",
                 "class",
                 "count",
                 "n",
                 "share",
                 "wilson_lower",
                 "wilson_upper",
                 "simultaneous_lower",
                 "simultaneous_upper"};
    for (const std::size_t i : order) {
      const PromptNumbers p = numbers(i);
      chart.categories.push_back(p.p.prompt);
      for (std::size_t c = 0; c < a.classes.size(); ++c) {
        chart.series[c].value.push_back(p.share(c).value);
        t.add({cell(p.p.prompt), cell(a.classes[c]), cell(p.count(c), Fmt::integer),
               cell(NumberAt{p.p.n, p.ptr + "/n"}, Fmt::integer), cell(p.share(c), Fmt::pct),
               cell(p.bound("wilson", c, false), Fmt::pct),
               cell(p.bound("wilson", c, true), Fmt::pct),
               cell(p.bound("simultaneous", c, false), Fmt::pct),
               cell(p.bound("simultaneous", c, true), Fmt::pct)});
      }
    }
    page.figure(svg_stacked_bar_chart(chart),
                fmt::format("Shares of {} per prompt, sorted by the share of {} (the dashed line "
                            "is 50%).",
                            name, a.classes.empty() ? std::string() : a.classes[0]),
                std::move(t));
    // Findings: prompts off parity after correction, the largest share first.
    const Node parity = representation_hypothesis(tests, name, "parity");
    for (std::size_t i = 0; i < a.prompts.size() && !parity.null(); ++i) {
      const PromptNumbers p = numbers(i);
      const Node test = parity["prompts"][i];
      if (!(test["p_holm"].number() < kAlpha)) continue;
      std::size_t top = 0;
      for (std::size_t c = 1; c < a.classes.size(); ++c)
        if (p.share(c).value > p.share(top).value) top = c;
      page.finding({2, p.share(top).value,
                    fmt::format("'{}': {} [{}, {}] of {}s labelled {} ({}; parity {:g}%; {}).",
                                esc(p.p.prompt), value_span(p.share(top), Fmt::pct),
                                value_span(p.bound("wilson", top, false), Fmt::pct),
                                value_span(p.bound("wilson", top, true), Fmt::pct), dist.unit,
                                esc(top < a.classes.size() ? a.classes[top] : std::string()),
                                esc(name), 100.0 / static_cast<double>(a.classes.size()),
                                p_text("p_holm", test["p_holm"]))});
    }
  }
}

// A measure's cells: estimate, lower, upper.
void measure_cells(std::vector<Cell>& row, const Node& m) {
  row.push_back(cell(m["estimate"]));
  row.push_back(cell(m["ci"]["lower"]));
  row.push_back(cell(m["ci"]["upper"]));
}

void measures_section(Page& page, const Node& measures) {
  page.section("measures", "Imbalance measures",
               "MAD from parity (DALL-Eval; HEIM's gender and skin-tone imbalance), OpenBias's "
               "entropy bias 1 - H/log K and KL to the target, with percentile bootstrap "
               "intervals over each prompt's images.");
  for (std::size_t ai = 0; ai < measures["attributes"].size(); ++ai) {
    const Node a = measures["attributes"][ai];
    const std::string name = a["attribute"].str();
    // Narrow tables (the page never scrolls sideways): MAD and entropy bias per prompt, KL to
    // the target where there is one, then each measure over the prompt groups.
    DataTable t;
    t.name = "measures_" + name;
    t.columns = {"prompt", "mad", "lower", "upper", "entropy_bias", "lower", "upper"};
    DataTable kl;
    kl.name = "measures_kl_" + name;
    kl.columns = {"prompt", "kl_target", "lower", "upper"};
    for (std::size_t i = 0; i < a["prompts"].size(); ++i) {
      const Node p = a["prompts"][i];
      std::vector<Cell> row = {cell(p["prompt"].str())};
      measure_cells(row, p["mad"]);
      measure_cells(row, p["entropy_bias"]);
      t.add(std::move(row));
      if (p["kl_target"].null()) continue;
      std::vector<Cell> k = {cell(p["prompt"].str())};
      measure_cells(k, p["kl_target"]);
      kl.add(std::move(k));
    }
    page.table(fmt::format("MAD and entropy bias of {} per prompt", name), std::move(t));
    if (!kl.rows.empty())
      page.table(fmt::format("KL (nats) of {} to the target per prompt", name), std::move(kl));
    for (const char* measure : {"mad", "entropy_bias"}) {
      DataTable g;
      g.name = fmt::format("measures_groups_{}_{}", measure, name);
      g.columns = {"group", "prompts", "pooled", "lower", "upper", "mean", "lower", "upper"};
      for (std::size_t i = 0; i < a["groups"].size(); ++i) {
        const Node x = a["groups"][i];
        std::vector<Cell> row = {cell(x["group"].null() ? "all prompts" : x["group"].str()),
                                 cell(x["prompts"], Fmt::integer)};
        measure_cells(row, x["pooled"][measure]);
        measure_cells(row, x["mean_over_prompts"][measure]);
        g.add(std::move(row));
      }
      page.table(fmt::format("{} of {} over prompt groups: pooled = the group's counts as one "
                             "distribution (without context), mean = the mean of its prompts' "
                             "values (with context)",
                             measure == std::string("mad") ? "MAD" : "Entropy bias", name),
                 std::move(g));
    }
  }
}

void tests_section(Page& page, const Node& tests) {
  page.section("tests", "Tests against parity and the target",
               fmt::format("Goodness of fit of each prompt's counts ({}: exact multinomial "
                           "below {} observations, else chi-square), corrected over prompts.",
                           tests["test"].str(), value_span(tests["exact_below"], Fmt::integer)));
  for (std::size_t ai = 0; ai < tests["attributes"].size(); ++ai) {
    const Node a = tests["attributes"][ai];
    for (std::size_t h = 0; h < a["hypotheses"].size(); ++h) {
      const Node hy = a["hypotheses"][h];
      DataTable t;
      t.name = fmt::format("tests_{}_{}", a["attribute"].str(), hy["hypothesis"].str());
      t.columns = {"prompt", "n", "test", "statistic", "p", "p_holm", "p_bh", "cohens_w", "note"};
      for (std::size_t i = 0; i < hy["prompts"].size(); ++i) {
        const Node p = hy["prompts"][i], r = p["result"];
        t.add({cell(p["prompt"].str()), cell(p["n"], Fmt::integer), cell(r["test"].str()),
               cell(r["statistic"]), cell(r["p_value"], Fmt::p), cell(p["p_holm"], Fmt::p),
               cell(p["p_bh"], Fmt::p), cell(r["effect_size"]),
               cell(p["note"].str().empty() ? r["note"].str() : p["note"].str())});
      }
      page.table(fmt::format("{} against {}", a["attribute"].str(), hy["hypothesis"].str()),
                 std::move(t));
    }
  }
}

void amplification_section(Page& page, const Node& amp, const Node& tests) {
  page.section("amplification", "Against the real world",
               "Generated share minus real share per prompt (bootstrap over images), and the "
               "least-squares slope of generated on real shares across prompts (bootstrap over "
               "prompts): a slope above 1 exaggerates the real differences.");
  const std::string attribute = amp["attribute"].str();
  const Node target_tests = representation_hypothesis(tests, attribute, "target");
  for (std::size_t ci = 0; ci < amp["classes"].size(); ++ci) {
    const Node c = amp["classes"][ci];
    const std::string cls = c["class"].str();
    ScatterChart chart;
    chart.title = fmt::format("Generated vs real share of {}", cls);
    chart.x_label = "real share";
    chart.y_label = "generated share";
    chart.diagonal = true;
    chart.fit_intercept = c["slope"]["intercept"].number();
    chart.fit_slope = c["slope"]["estimate"].number();
    EllipseSeries s;
    s.name = "prompts";
    DataTable t;
    t.name = "amplification_" + cls;
    t.columns = {"prompt", "key", "n", "real", "generated", "gap", "gap_lower", "gap_upper"};
    for (std::size_t i = 0; i < c["prompts"].size(); ++i) {
      const Node p = c["prompts"][i];
      s.x.push_back(p["real"].number());
      s.y.push_back(p["generated"].number());
      s.labels.push_back(p["key"].str());
      t.add({cell(p["prompt"].str()), cell(p["key"].str()), cell(p["n"], Fmt::integer),
             cell(p["real"], Fmt::pct), cell(p["generated"], Fmt::pct), cell(p["gap"]["estimate"]),
             cell(p["gap"]["ci"]["lower"]), cell(p["gap"]["ci"]["upper"])});
    }
    chart.series = {s};
    const Node slope = c["slope"];
    page.paragraph_html(
        fmt::format("Share of {}: least-squares slope of generated on real {} ({}), intercept {}, "
                    "Pearson's r {}, over {} prompts; mean gap (generated minus real) {} ({}).",
                    esc(cls), value_span(slope["estimate"]), ci_text(slope["ci"]),
                    value_span(slope["intercept"]), value_span(slope["r"]),
                    value_span(slope["prompts"], Fmt::integer),
                    value_span(c["mean_gap"]["estimate"]), ci_text(c["mean_gap"]["ci"])));
    page.figure(
        svg_scatter_chart(chart),
        "Generated against real share of " + cls +
            " per prompt (labelled by its key); the dashed diagonal is y = x, the solid line the "
            "least-squares fit.",
        std::move(t));
    if (!slope["ci"].null() &&
        (slope["ci"]["lower"].number() > 1 || slope["ci"]["upper"].number() < 1)) {
      const bool amplified = slope["ci"]["lower"].number() > 1;
      page.finding({1, std::abs(slope["estimate"].number() - 1),
                    fmt::format("Across {} prompts the generated share of {} {} the real one: "
                                "slope {} ({}; 1 = faithful).",
                                value_span(slope["prompts"], Fmt::integer), esc(cls),
                                amplified ? "exaggerates" : "flattens",
                                value_span(slope["estimate"]), ci_text(slope["ci"]))});
    }
    for (std::size_t i = 0; i < c["prompts"].size() && !target_tests.null(); ++i) {
      const Node p = c["prompts"][i], gap = p["gap"];
      const bool off = gap["ci"]["lower"].number() > 0 || gap["ci"]["upper"].number() < 0;
      if (!off) continue;
      page.finding({3, std::abs(gap["estimate"].number()),
                    fmt::format("'{}': {} of faces labelled {}; real share {} (gap {}, {}).",
                                esc(p["prompt"].str()), value_span(p["generated"], Fmt::pct),
                                esc(cls), value_span(p["real"], Fmt::pct),
                                value_span(gap["estimate"]), ci_text(gap["ci"]))});
    }
  }
}

void agreement_and_power(Page& page, const Node& agreement, const Node& power) {
  if (!agreement.null()) {
    page.section("agreement", "Agreement between labellers",
                 "Krippendorff's alpha (nominal) over the faces or images every labeller "
                 "labelled, with pairwise Cohen's kappa; bootstrap over units.");
    DataTable t;
    t.name = "agreement";
    t.columns = {"attribute", "units", "alpha", "lower", "upper"};
    for (std::size_t i = 0; i < agreement["attributes"].size(); ++i) {
      const Node a = agreement["attributes"][i], k = a["krippendorff_alpha"];
      t.add({cell(a["attribute"].str()), cell(a["units"], Fmt::integer), cell(k["estimate"]),
             cell(k["ci"]["lower"]), cell(k["ci"]["upper"])});
    }
    page.table("Krippendorff's alpha per attribute", std::move(t));
  }
  if (!power.null()) {
    page.section("power", "What each prompt could detect", power["method"].str());
    DataTable t;
    t.name = "power";
    t.columns = {"attribute", "prompt", "n", "mde_cohens_w", "mde_gap_parity", "mde_gap_target"};
    for (std::size_t i = 0; i < power["attributes"].size(); ++i) {
      const Node a = power["attributes"][i];
      for (std::size_t j = 0; j < a["prompts"].size(); ++j) {
        const Node p = a["prompts"][j];
        t.add({cell(a["attribute"].str()), cell(p["prompt"].str()), cell(p["n"], Fmt::integer),
               cell(p["cohens_w"]), cell(p["share_gap_from_parity"]),
               cell(p["share_gap_from_target"])});
      }
    }
    page.table("Minimum detectable departure per prompt", std::move(t));
  }
}

}  // namespace

Node representation_hypothesis(const Node& tests, const std::string& attribute,
                               const char* hypothesis) {
  for (std::size_t i = 0; i < tests["attributes"].size(); ++i) {
    const Node a = tests["attributes"][i];
    if (a["attribute"].str() != attribute) continue;
    for (std::size_t h = 0; h < a["hypotheses"].size(); ++h) {
      if (a["hypotheses"][h]["hypothesis"].str() == hypothesis) return a["hypotheses"][h];
    }
  }
  return Node(nullptr, "");
}

void build_representation(Page& page) {
  const Node root = page.root();
  const Node a = root["analyses"];
  page.fact("Prompts", value_span(root["prompts"], Fmt::integer));
  page.fact("Labels",
            value_span(root["label_rows"], Fmt::integer) + " rows" +
                (root["labeller"].str().empty() ? std::string()
                                                : " of labeller " + esc(root["labeller"].str())));
  if (const auto d = distribution_from_json(a.json())) distribution_section(page, *d, a["tests"]);
  if (!a["measures"].null()) measures_section(page, a["measures"]);
  if (!a["tests"].null()) tests_section(page, a["tests"]);
  if (!a["amplification"].null()) amplification_section(page, a["amplification"], a["tests"]);
  agreement_and_power(page, a["agreement"], a["power"]);
  if (const auto s = scores_from_json(a.json())) scores_section(page, *s);
  exemplars_section(page, root["exemplars"], "generated images");
}

}  // namespace vlbias::report_internal
