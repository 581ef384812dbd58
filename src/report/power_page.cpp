// The report's power statements (issue 24 item 7): for every test an audit found not
// significant after Holm and gave a `power` entry (include/vlbias/audits/power_pilot.h), the
// smallest gap the study could have found, so that no finding is not read as no bias.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "report_page.h"
#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/power_results.h"

namespace vlbias::report_internal {

namespace {

// A test's power entry, read through its typed contract (power_results.h), with the entry's
// JSON pointer.
struct PowerAt {
  TestPower power;
  std::string ptr;
};

// The tests of results.json that carry a `power` entry, in table order, read through their
// sections' contracts.
std::vector<PowerAt> tests_with_power(const Json& analyses) {
  std::vector<PowerAt> out;
  const std::string key = std::string("/") + kTestPowerKey;
  if (const auto conf = confidence_from_json(analyses)) {  // trait-pairs
    for (std::size_t i = 0; i < conf->tests.size(); ++i) {
      if (conf->tests[i].power)
        out.push_back({*conf->tests[i].power, confidence_test_pointer(i) + key});
    }
  }
  if (const auto assoc = association_from_json(analyses)) {  // dual-encoder
    for (std::size_t i = 0; i < assoc->contrasts.size(); ++i) {
      if (assoc->contrasts[i].power) {
        out.push_back({*assoc->contrasts[i].power, association_contrast_pointer(i) + key});
      }
    }
  }
  if (const auto group_tests = lvlm_group_tests_from_json(analyses)) {  // lvlm-counterfactual
    for (std::size_t i = 0; i < group_tests->results.size(); ++i) {
      if (group_tests->results[i].power) {
        out.push_back({*group_tests->results[i].power, lvlm_group_test_pointer(i) + key});
      }
    }
  }
  if (const auto filtered = geo_filtered_from_json(analyses); filtered && filtered->test_power) {
    out.push_back({*filtered->test_power, geo_filtered_test_pointer() + key});  // geo-diversity
  }
  return out;
}

}  // namespace

std::string power_statement(const TestPower& w, const std::string& ptr) {
  const TestPower::Mde& mde = w.mde;
  const std::string at = ptr + "/mde/";
  const std::string pct = fmt::format("{:g}%", mde.target_power * 100.0);
  std::string s = fmt::format("No significant gap in {} ({});", esc(w.label),
                              p_text("p_holm", NumberAt{w.p_holm, ptr + "/p_holm"}));
  if (std::isnan(mde.at.effect)) {
    return s + fmt::format(
                   " with these sample sizes no gap the measure allows reaches {} power "
                   "({}).",
                   pct, esc(mde.note));
  }
  return s + fmt::format(
                 " with these sample sizes the study would detect a gap of <strong>{}</strong> or "
                 "more with {} power (simulated power {} &#177; {} over {} replicates, {} test, "
                 "Holm over {} tests; normal theory at that gap: {}).",
                 value_span(NumberAt{mde.at.effect, at + "effect"}), pct,
                 value_span(NumberAt{mde.at.power, at + "power"}),
                 value_span(NumberAt{mde.at.se, at + "se"}),
                 value_span(NumberAt{mde.at.replicates, at + "replicates"}, Fmt::integer),
                 esc(w.test), value_span(NumberAt{w.family, ptr + "/family"}, Fmt::integer),
                 value_span(NumberAt{mde.at.analytic_power, at + "analytic_power"}));
}

void power_section(Page& page) {
  const Node analyses = page.root()["analyses"];
  const Node p = analyses["power"];
  if (p.null()) return;
  const std::vector<PowerAt> tests = tests_with_power(analyses.json());
  page.section("power", "What the null results could have found", p["definition"].str());
  if (tests.empty()) {
    page.paragraph_html("Every supported test is significant after Holm correction.");
    return;
  }
  std::string list = "<ul>";
  DataTable t;
  t.name = "power_null_tests";
  t.columns = {"test", "p_holm", "mde", "power", "se", "analytic_power"};
  NumberAt largest{stats::kNaN, ""};  // the null test with the largest MDE
  for (const PowerAt& e : tests) {
    list += "<li>" + power_statement(e.power, e.ptr) + "</li>";
    const PowerEstimateResult& mde = e.power.mde.at;
    const std::string at = e.ptr + "/mde/";
    t.add({cell(e.power.label), cell(NumberAt{e.power.p_holm, e.ptr + "/p_holm"}, Fmt::p),
           cell(NumberAt{mde.effect, at + "effect"}), cell(NumberAt{mde.power, at + "power"}),
           cell(NumberAt{mde.se, at + "se"}),
           cell(NumberAt{mde.analytic_power, at + "analytic_power"})});
    if (std::isfinite(mde.effect) && (largest.ptr.empty() || mde.effect > largest.value)) {
      largest = NumberAt{mde.effect, at + "effect"};
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
