#pragma once
// Each subcommand registers itself on the root CLI11 app. Command bodies throw
// vlbias::Error subclasses; cli::run maps them to exit codes.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace vlbias::cli {

void add_compare_command(CLI::App& app);
void add_describe_command(CLI::App& app);
// `vlbias metric NAME ...`: one subcommand per metric, each printing one JSON object.
void add_metric_commands(CLI::App& app);
// The metric subcommands, registered on `metric` by add_metric_commands.
void add_skew_metric(CLI::App& metric);    // metric_ranking.cpp (paper 001)
void add_ndkl_metric(CLI::App& metric);    // metric_ranking.cpp (paper 001)
void add_scweat_metric(CLI::App& metric);  // metric_scweat.cpp (paper 001)

// "a,b , c" -> {"a", "b", "c"}; empty items are a UsageError naming `option`.
std::vector<std::string> split_list(const std::string& text, const std::string& option);
// Doubles from "5,25,50" for `option`; UsageError on malformed numbers.
std::vector<double> split_numbers(const std::string& text, const std::string& option);

}  // namespace vlbias::cli
