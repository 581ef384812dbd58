// The report's power statements (issue 24 item 7): for every test an audit found not
// significant after Holm and gave a `power` entry (include/vlbias/audits/power_pilot.h), the
// smallest gap the study could have found, so that no finding is not read as no bias.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "report_page.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/lvlm_results.h"

namespace vlbias::report_internal {

namespace {

// The tests of results.json that carry a `power` entry, in table order.
std::vector<Node> tests_with_power(const Node& analyses) {
  std::vector<Node> out;
  const Node conf = analyses["confidence"]["tests"];
  for (std::size_t i = 0; i < conf.size(); ++i) {
    if (conf[i].has("power")) out.push_back(conf[i]);
  }
  const Node contrasts = analyses["association"]["contrasts"]["results"];
  for (std::size_t i = 0; i < contrasts.size(); ++i) {
    if (contrasts[i].has("power")) out.push_back(contrasts[i]);
  }
  const Node group_tests = analyses[kLvlmGroupTestsSection]["results"];  // lvlm-counterfactual
  for (std::size_t i = 0; i < group_tests.size(); ++i) {
    if (group_tests[i].has("power")) out.push_back(group_tests[i]);
  }
  const Node filtered = analyses[kGeoFilteredSection]["test"];  // geo-diversity
  if (filtered.has("power")) out.push_back(filtered);
  return out;
}

}  // namespace

std::string power_statement(const Node& test) {
  const Node w = test["power"];
  const Node mde = w["mde"];
  const std::string pct = fmt::format("{:g}%", mde["target_power"].number() * 100.0);
  std::string s = fmt::format("No significant gap in {} ({});", esc(w["label"].str()),
                              p_text("p_holm", w["p_holm"]));
  if (mde["effect"].null()) {
    return s + fmt::format(
                   " with these sample sizes no gap the measure allows reaches {} power "
                   "({}).",
                   pct, esc(mde["note"].str()));
  }
  return s + fmt::format(
                 " with these sample sizes the study would detect a gap of <strong>{}</strong> or "
                 "more with {} power (simulated power {} &#177; {} over {} replicates, {} test, "
                 "Holm over {} tests; normal theory at that gap: {}).",
                 value_span(mde["effect"]), pct, value_span(mde["power"]), value_span(mde["se"]),
                 value_span(mde["replicates"], Fmt::integer), esc(w["test"].str()),
                 value_span(w["family"], Fmt::integer), value_span(mde["analytic_power"]));
}

void power_section(Page& page) {
  const Node analyses = page.root()["analyses"];
  const Node p = analyses["power"];
  if (p.null()) return;
  const std::vector<Node> tests = tests_with_power(analyses);
  page.section("power", "What the null results could have found", p["definition"].str());
  if (tests.empty()) {
    page.paragraph_html("Every supported test is significant after Holm correction.");
    return;
  }
  std::string list = "<ul>";
  DataTable t;
  t.name = "power_null_tests";
  t.columns = {"test", "p_holm", "mde", "power", "se", "analytic_power"};
  Node largest(nullptr, "");  // the null test with the largest MDE
  for (const Node& e : tests) {
    list += "<li>" + power_statement(e) + "</li>";
    const Node mde = e["power"]["mde"];
    t.add({cell(e["power"]["label"].str()), cell(e["power"]["p_holm"], Fmt::p), cell(mde["effect"]),
           cell(mde["power"]), cell(mde["se"]), cell(mde["analytic_power"])});
    if (std::isfinite(mde["effect"].number()) &&
        (largest.null() || mde["effect"].number() > largest.number())) {
      largest = mde["effect"];
    }
  }
  page.paragraph_html(list + "</ul>");
  page.table(
      "Minimum detectable effect of every null test (the smallest gap found with the "
      "target power, by simulation).",
      std::move(t));
  const Node unsupported = p["not_supported"];
  if (unsupported.size() > 0) {
    std::string u = "<ul>";
    for (std::size_t i = 0; i < unsupported.size(); ++i) {
      u += fmt::format("<li><code>{}</code>: {}</li>", esc(unsupported[i]["tests"].str()),
                       esc(unsupported[i]["reason"].str()));
    }
    page.paragraph_html(
        "Tests without a power statement (power cannot simulate them from "
        "results.json):" +
        u + "</ul>");
  }
  page.finding({9, 0,
                fmt::format("{} tests found no significant gap; they could not have found gaps "
                            "smaller than their minimum detectable effects (up to {}; see "
                            "<a href=\"#power\">What the null results could have found</a>).",
                            value_span(p["null_tests"], Fmt::integer), value_span(largest))});
}

}  // namespace vlbias::report_internal
