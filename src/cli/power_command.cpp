// `vlbias power --pilot RUN_DIR --effect E`: power, n per group and the minimum detectable
// effect of a study's own tests, by simulation from a finished audit (issue 24 item 7;
// include/vlbias/audits/power_pilot.h, include/vlbias/stats/power.h).
#include <CLI/CLI.hpp>
#include <filesystem>

#include "commands.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/run_paths.h"
#include "vlbias/report/dual_encoder_results.h"
#include "vlbias/report/geo_results.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/pilot_sections.h"
#include "vlbias/stats/power.h"

namespace vlbias::cli_internal {

namespace {

struct PowerArgs {
  std::string pilot, out, analysis = "all", tests = "all";
  double effect = 0, alpha = 0.05, power = 0.8;
  bool effect_given = false;  // without --effect: the minimum detectable effect only
  std::size_t replicates = 1000;
  std::uint64_t seed = 0;
};

// RUN_DIR/results.json for a folder (never through a link inside the run), the path itself
// otherwise.
std::filesystem::path results_path(const std::string& pilot) {
  const std::filesystem::path p(pilot);
  if (!std::filesystem::is_directory(p)) return p;
  return run_input_file(p, "results.json", "an audit's results.json");
}

void run_power(const PowerArgs& a) {
  VLBIAS_CHECK(!a.effect_given ||
                   (std::isfinite(a.effect) && a.effect > 0 && a.effect <= stats::kMaxPowerValue),
               UsageError,
               "--effect must be a gap greater than 0 and at most {} in the test's units, got {}",
               stats::kMaxPowerValue, a.effect);
  VLBIAS_CHECK(a.alpha > 0 && a.alpha < 1, UsageError, "--alpha must lie in (0, 1), got {}",
               a.alpha);
  VLBIAS_CHECK(a.power > 0 && a.power < 1, UsageError, "--power must lie in (0, 1), got {}",
               a.power);
  VLBIAS_CHECK(a.replicates >= 1, UsageError, "--replicates must be at least 1");
  // --out never is, holds or sits in the pilot run (its folder, or that of its results.json).
  if (!a.out.empty() && a.out != "-") {
    const std::filesystem::path pilot = std::filesystem::absolute(a.pilot);
    const bool run_file =
        !std::filesystem::is_directory(pilot) && pilot.filename() == "results.json";
    check_out_apart_from_inputs(a.out, {run_file ? pilot.parent_path() : pilot}, "power --out");
  }
  const std::filesystem::path path = results_path(a.pilot);
  Provenance p;
  p.inputs = {path.string()};
  start_hashing_inputs(p);
  // Power reads the typed sections only (report/pilot_sections.h).
  const PilotSections sections = pilot_sections_from_json(
      parse_json(read_file_text(path, "an audit's results.json"), path.string()));
  PowerQuestions q;
  q.effect = a.effect;
  q.power = a.power;
  q.replicates = a.replicates;
  q.seed = a.seed;
  Json answers = Json::array();
  const bool representation = sections.kind == "representation";
  if (representation) {
    // Goodness-of-fit tests: their power is closed-form (noncentral chi-square), not simulated.
    for (Json& j : representation_power_answers(sections, a.alpha, q)) answers.push_back(j);
  } else {
    std::vector<PilotTest> tests = pilot_tests(sections, a.alpha, path.string());
    std::erase_if(tests, [&](const PilotTest& t) {
      return (a.analysis != "all" && t.analysis != a.analysis) ||
             (a.tests == "null" && t.p_holm <= a.alpha);
    });
    VLBIAS_CHECK(!tests.empty(), UsageError,
                 "{}: no {} test of analysis '{}' to analyse; try --analysis all --tests all",
                 path.string(), a.tests == "null" ? "null" : "supported", a.analysis);
    for (std::size_t i = 0; i < tests.size(); ++i) {
      answers.push_back(answer_power_questions(tests[i], i, q));
    }
  }
  Json not_supported = Json::array();
  for (Json& u : unsupported_tests(sections)) not_supported.push_back(std::move(u));
  Json out{
      {"pilot", path.string()},
      {"kind", sections.kind},
      {"effect", a.effect_given ? Json(a.effect) : Json(nullptr)},
      {"alpha", a.alpha},
      {"power", a.power},
      {"replicates", a.replicates},
      {"method",
       representation
           ? "closed form: the noncentral chi-square power of each prompt's goodness-of-fit "
             "test at alpha / prompts, the effect as Cohen's w (docs/methods.md#goodness-of-fit)"
           : "simulation from the pilot's group sizes and standard deviations (set-blocked "
             "tests: blocks and variance components) with the audit's own test and Holm over "
             "its family (docs/methods.md#power); se is the binomial Monte Carlo error of "
             "each power, analytic_power the normal-theory power at alpha / family"},
      {"tests", answers},
      {"not_supported", std::move(not_supported)}};
  p.command = "power";
  p.parameters = Json{{"effect", a.effect_given ? Json(a.effect) : Json(nullptr)},
                      {"alpha", a.alpha},
                      {"power", a.power},
                      {"replicates", a.replicates},
                      {"analysis", a.analysis},
                      {"tests", a.tests}};
  p.seed = a.seed;
  out["provenance"] = provenance_json(p);
  write_json(out, a.out);
}

}  // namespace

void add_power_command(CLI::App& app) {
  auto args = std::make_shared<PowerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "power",
      "Power and sample size from a finished audit as the pilot: for each supported test\n"
      "(trait-pairs confidence ANOVA/Welch, association group contrasts, LVLM Friedman group\n"
      "tests, geo-diversity filtered-rate chi-square), by simulation with the pilot's group\n"
      "sizes and sds (sets and variance components), the same test and Holm over the same\n"
      "family: the power to detect --effect, the units per group (sets, clusters) needed for\n"
      "--power, and the minimum detectable effect at the pilot's own n, each with its Monte\n"
      "Carlo error; the tests it cannot simulate are listed under not_supported with why.\n"
      "A representation audit's goodness-of-fit tests per prompt are answered in closed form\n"
      "(noncentral chi-square; --effect as Cohen's w)");
  cmd->add_option("--pilot", args->pilot, "An audit's RUN_DIR or its results.json")->required();
  CLI::Option* effect = cmd->add_option(
      "--effect", args->effect,
      "The gap to detect, in the test's units (> 0): also the power at it and the n needed "
      "(without it: the minimum detectable effect only)");
  cmd->add_option("--alpha", args->alpha, "Significance level after Holm")->capture_default_str();
  cmd->add_option("--power", args->power, "Target power")->capture_default_str();
  cmd->add_option("--replicates", args->replicates, "Simulated studies per power estimate")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the simulation")->capture_default_str();
  cmd->add_option("--analysis", args->analysis,
                  "all | confidence | association | group_tests | filtered | scores")
      ->check(CLI::IsMember({"all", kConfidenceSection, kAssociationSection, kLvlmGroupTestsSection,
                             kGeoFilteredSection, "scores"}))
      ->capture_default_str();
  cmd->add_option("--tests", args->tests, "all | null (not significant after Holm)")
      ->check(CLI::IsMember({"all", "null"}))
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args, effect] {
    args->effect_given = effect->count() > 0;
    run_power(*args);
  });
}

}  // namespace vlbias::cli_internal
