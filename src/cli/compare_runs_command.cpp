// `vlbias compare-runs RUN_A RUN_B [RUN_C ...] --out DIR`: runs of one audit kind side by side,
// the difference of every shared quantity with its interval and p, Holm/BH over all, and the
// ranking of the runs (issue 25 item 1; include/vlbias/audits/compare_runs.h).
#include <CLI/CLI.hpp>
#include <filesystem>

#include "commands.h"
#include "vlbias/audits/compare_runs.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/io/run/run_paths.h"

namespace vlbias::cli_internal {

namespace {

struct CompareRunsArgs {
  std::vector<std::string> runs;
  std::string out, correction = "holm", pairs = "reference", stimuli;
  bool stimuli_given = false;
  CompareRunsOptions options;
};

void run_compare_runs(CompareRunsArgs& a) {
  std::vector<std::filesystem::path> dirs(a.runs.begin(), a.runs.end());
  // Before anything is read or written: --out B once replaced run B's results.json.
  check_out_apart_from_inputs(a.out, dirs, "compare-runs --out");
  CompareRunsOptions o = a.options;
  o.correction = a.correction;
  o.pairs = a.pairs == "all" ? RunPairs::All : RunPairs::Reference;
  if (a.stimuli_given) {
    o.stimuli_given = true;
    if (a.stimuli != "none") o.stimuli = split_list(a.stimuli, "--stimuli");
  }
  const Json results = compare_runs(dirs, o);
  const std::filesystem::path report = write_comparison(a.out, results);
  if (!quiet()) {
    eprint("vlbias: wrote {}/results.json and {}\n", a.out, report.string());
  }
}

}  // namespace

void add_compare_runs_command(CLI::App& app) {
  auto args = std::make_shared<CompareRunsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare-runs",
      "Compare runs of one audit kind from their summary.json and units tables: every shared\n"
      "quantity side by side, the difference B - A with its interval and p (paired bootstrap\n"
      "over the shared units when the stimuli are the same, else unpaired from each run's\n"
      "interval, saying why), Holm/BH over all, and the ranking of the runs with how often\n"
      "each ranks first. Writes DIR/results.json, DIR/tables/*.csv and DIR/report.html");
  cmd->add_option("runs", args->runs, "Run folders (the first is the reference)")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--out", args->out, "The comparison's folder (created if absent)")->required();
  cmd->add_option("--bootstrap", args->options.bootstrap, "Replicates of each paired test")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->options.seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--correction", args->correction, "holm | bh (over every test)")
      ->check(CLI::IsMember({"holm", "bh"}))
      ->capture_default_str();
  cmd->add_option("--level", args->options.level, "Level of the intervals (alpha = 1 - level)")
      ->capture_default_str();
  cmd->add_option("--pairs", args->pairs, "reference: each run against the first | all pairs")
      ->check(CLI::IsMember({"reference", "all"}))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
      "--stimuli",
      [args](const std::string& v) {
        args->stimuli = v;
        args->stimuli_given = true;
      },
      "run.inputs names whose hashes must agree for a paired test (comma-separated; 'none':\n"
      "match units by key only); default: the kind's stimulus inputs (docs/reports.md)");
  cmd->callback([args] { run_compare_runs(*args); });
}

}  // namespace vlbias::cli_internal
