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
#include "vlbias/report/json_output.h"

namespace vlbias::cli_internal {

namespace {

struct PowerArgs {
  std::string pilot, out, analysis = "all", tests = "all";
  double effect = 0, alpha = 0.05, power = 0.8;
  std::size_t replicates = 1000;
  std::uint64_t seed = 0;
};

// RUN_DIR/results.json for a folder, the path itself otherwise.
std::filesystem::path results_path(const std::string& pilot) {
  const std::filesystem::path p(pilot);
  return std::filesystem::is_directory(p) ? p / "results.json" : p;
}

void run_power(const PowerArgs& a) {
  VLBIAS_CHECK(std::isfinite(a.effect) && a.effect > 0, UsageError,
               "--effect must be a gap greater than 0 in the test's units, got {}", a.effect);
  VLBIAS_CHECK(a.alpha > 0 && a.alpha < 1, UsageError, "--alpha must lie in (0, 1), got {}",
               a.alpha);
  VLBIAS_CHECK(a.power > 0 && a.power < 1, UsageError, "--power must lie in (0, 1), got {}",
               a.power);
  VLBIAS_CHECK(a.replicates >= 1, UsageError, "--replicates must be at least 1");
  const std::filesystem::path path = results_path(a.pilot);
  Provenance p;
  p.inputs = {path.string()};
  start_hashing_inputs(p);
  const Json results = parse_json(read_file_text(path, "an audit's results.json"), path.string());
  std::vector<PilotTest> tests = pilot_tests(results, a.alpha, path.string());
  std::erase_if(tests, [&](const PilotTest& t) {
    return (a.analysis != "all" && t.analysis != a.analysis) ||
           (a.tests == "null" && t.p_holm <= a.alpha);
  });
  VLBIAS_CHECK(!tests.empty(), UsageError,
               "{}: no {} test of analysis '{}' to analyse; try --analysis all --tests all",
               path.string(), a.tests == "null" ? "null" : "supported", a.analysis);
  PowerQuestions q;
  q.effect = a.effect;
  q.power = a.power;
  q.replicates = a.replicates;
  q.seed = a.seed;
  Json answers = Json::array();
  for (std::size_t i = 0; i < tests.size(); ++i) {
    answers.push_back(answer_power_questions(tests[i], i, q));
  }
  Json out{{"pilot", path.string()},
           {"kind", results.value("kind", "")},
           {"effect", a.effect},
           {"alpha", a.alpha},
           {"power", a.power},
           {"replicates", a.replicates},
           {"method",
            "simulation from the pilot's group sizes and standard deviations with the audit's "
            "own test and Holm over its family (docs/methods.md#power); se is the binomial "
            "Monte Carlo error of each power, analytic_power the normal-theory power at "
            "alpha / family"},
           {"tests", answers}};
  p.command = "power";
  p.parameters = Json{{"effect", a.effect},         {"alpha", a.alpha},       {"power", a.power},
                      {"replicates", a.replicates}, {"analysis", a.analysis}, {"tests", a.tests}};
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
      "(trait-pairs confidence ANOVA/Welch, association group contrasts), by simulation with\n"
      "the pilot's group sizes and sds, the same test and Holm over the same family: the\n"
      "power to detect --effect, the images per group needed for --power, and the minimum\n"
      "detectable effect at the pilot's own n, each with its Monte Carlo error");
  cmd->add_option("--pilot", args->pilot, "An audit's RUN_DIR or its results.json")->required();
  cmd->add_option("--effect", args->effect, "The gap to detect, in the test's units (> 0)")
      ->required();
  cmd->add_option("--alpha", args->alpha, "Significance level after Holm")->capture_default_str();
  cmd->add_option("--power", args->power, "Target power")->capture_default_str();
  cmd->add_option("--replicates", args->replicates, "Simulated studies per power estimate")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the simulation")->capture_default_str();
  cmd->add_option("--analysis", args->analysis, "all | confidence | association")
      ->check(CLI::IsMember({"all", "confidence", "association"}))
      ->capture_default_str();
  cmd->add_option("--tests", args->tests, "all | null (not significant after Holm)")
      ->check(CLI::IsMember({"all", "null"}))
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] { run_power(*args); });
}

}  // namespace vlbias::cli_internal
