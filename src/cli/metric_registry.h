#pragma once
// Registration functions of the `vlbias metric` subcommands, one per metric file.
namespace CLI {
class App;
}

namespace vlbias::cli {
// src/cli/metric_ranking.cpp: Skew@k / MaxSkew@k and NDKL (paper 001).
void add_skew_metric(CLI::App& metric);
void add_ndkl_metric(CLI::App& metric);

// `vlbias metric scweat` (src/cli/metric_scweat.cpp).
void add_scweat_metric(CLI::App& metric);
}  // namespace vlbias::cli
