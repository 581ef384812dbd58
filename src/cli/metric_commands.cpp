// `vlbias metric NAME`: the metric commands. Each metric's file defines an
// add_*_metric function; this file gathers them under `metric`.
#include <CLI/CLI.hpp>

#include "commands.h"

namespace vlbias::cli_internal {

void add_metric_commands(CLI::App& app) {
  CLI::App* metric = app.add_subcommand("metric", "Compute one metric and print it as JSON");
  metric->require_subcommand(1);
  // One line per metric, in the order `vlbias metric --help` lists them.
  add_skew_metric(*metric);
  add_ndkl_metric(*metric);
  add_scweat_metric(*metric);
  add_associate_metric(*metric);
  add_markedness_metric(*metric);
  add_trait_confidence_metric(*metric);
  add_absdiff_metric(*metric);
  add_trends_metric(*metric);
  add_clipscore_metric(*metric);
  add_distribution_metrics(*metric);
  add_lvlm_metrics(*metric);
  add_agreement_metric(*metric);
}

}  // namespace vlbias::cli_internal
