// The trait-pairs audit's confidence section (paper 004 Fig. 1): per pair, group means with
// their intervals, and the tests across groups; analyses.confidence is read through its typed
// contract (include/vlbias/report/dual_encoder_results.h).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "report_page.h"
#include "svg_chart.h"
#include "vlbias/report/dual_encoder_results.h"

namespace vlbias::report_internal {

namespace {

// Per pair, the group means with their intervals.
void confidence_pairs(Page& page, const ConfidenceSection& c) {
  for (std::size_t p = 0; p < c.pairs.size(); ++p) {
    const ConfidencePair& pair = c.pairs[p];
    BarChart chart;
    chart.title = "Confidence: " + pair.pair;
    chart.x_label = "confidence in \"" + pair.first + "\" (0.5 = undecided)";
    chart.reference = 0.5;
    chart.points = true;
    BarSeries s;
    s.name = pair.pair;
    DataTable t;
    t.name = "confidence_" + pair.pair;
    t.columns = {"group", "n", "mean", "ci_lower", "ci_upper"};
    for (std::size_t g = 0; g < pair.groups.size(); ++g) {
      const ConfidenceGroup& grp = pair.groups[g];
      const std::string ptr = confidence_group_pointer(p, g);
      const std::string label = group_label(Node(&grp.key, ptr + "/key"));
      const double lower = grp.ci ? grp.ci->lower : NAN, upper = grp.ci ? grp.ci->upper : NAN;
      chart.categories.push_back(label);
      s.value.push_back(grp.mean);
      s.lower.push_back(lower);
      s.upper.push_back(upper);
      t.add({cell(label), cell(NumberAt{grp.n, ptr + "/n"}, Fmt::integer),
             cell(NumberAt{grp.mean, ptr + "/mean"}), cell(NumberAt{lower, ptr + "/ci/lower"}),
             cell(NumberAt{upper, ptr + "/ci/upper"})});
    }
    chart.series.push_back(std::move(s));
    page.figure(svg_bar_chart(chart),
                "Mean confidence per group with bootstrap intervals (paper 004 Fig. 1).",
                std::move(t));
  }
}

// A finding for a test significant after Holm: the largest and smallest group means name the
// direction.
void confidence_finding(Page& page, const ConfidenceTest& e, const std::string& ptr) {
  const stats::TestResult& res = e.result;
  const std::vector<ConfidenceTest::Group>& groups = e.groups;
  std::size_t hi = 0, lo = 0;
  for (std::size_t g = 1; g < groups.size(); ++g) {
    if (groups[g].mean > groups[hi].mean) hi = g;
    if (groups[g].mean < groups[lo].mean) lo = g;
  }
  const auto mean_at = [&](std::size_t g) {
    return value_span(NumberAt{g < groups.size() ? groups[g].mean : NAN,
                               fmt::format("{}/groups/{}/mean", ptr, g)});
  };
  const auto level = [&](std::size_t g) { return g < groups.size() ? groups[g].level : ""; };
  // Tests across many groups first, then two-group tests: their effect sizes differ.
  const bool two_groups = groups.size() == 2;
  page.finding(
      {two_groups ? -1 : -2, std::abs(res.effect_size),
       fmt::format("Among {} = {}, confidence in \"{}\" differs across {} ({} = {}, {} = {}, "
                   "{}): highest for <strong>{}</strong> ({}), lowest for "
                   "<strong>{}</strong> ({}).",
                   esc(e.within), esc(e.within_level), esc(e.pair), esc(e.factor),
                   esc(statistic_name(res.test)),
                   value_span(NumberAt{res.statistic, ptr + "/result/statistic"}),
                   esc(effect_name(res.effect_name)),
                   value_span(NumberAt{res.effect_size, ptr + "/result/effect_size"}),
                   p_text("p_holm", NumberAt{e.p_holm, ptr + "/p_holm"}), esc(level(hi)),
                   mean_at(hi), esc(level(lo)), mean_at(lo))});
}

}  // namespace

void confidence_section(Page& page) {
  const auto c = confidence_from_json(page.root()["analyses"].json());
  if (!c) return;
  page.section(kConfidenceSection, "Confidence in the first trait of each pair", c->definition);
  confidence_pairs(page, *c);
  DataTable t;
  t.name = "confidence_tests";
  t.columns = {"pair", "across", "within", "test", "statistic", "effect_size", "p_value", "p_holm"};
  for (std::size_t i = 0; i < c->tests.size(); ++i) {
    const ConfidenceTest& e = c->tests[i];
    const std::string ptr = confidence_test_pointer(i);
    const stats::TestResult& res = e.result;
    t.add({cell(e.pair), cell(e.factor), cell(e.within + " = " + e.within_level), cell(res.test),
           cell(NumberAt{res.statistic, ptr + "/result/statistic"}),
           cell(NumberAt{res.effect_size, ptr + "/result/effect_size"}),
           cell(NumberAt{res.p_value, ptr + "/result/p_value"}, Fmt::p),
           cell(NumberAt{e.p_holm, ptr + "/p_holm"}, Fmt::p)});
    if (e.p_holm < kAlpha) confidence_finding(page, e, ptr);
  }
  page.table("Tests across groups (Holm and BH over every test of the table).", std::move(t));
}

}  // namespace vlbias::report_internal
