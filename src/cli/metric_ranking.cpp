// `vlbias metric skew` and `vlbias metric ndkl`: ranking fairness of paper 001
// (docs/methods.md#skew; Geyik et al. 2019).
//
// Items are the table's rows, ranked by --score descending with ties broken by
// row order. A row with a missing --attribute or --score cell is refused with
// an InputError naming its line: dropping it would silently change every rank
// below it.
#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/ranking_metrics.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/metric_json.h"

namespace vlbias::cli_internal {

namespace {

struct RankingArgs {
  std::string table, score, attribute, desired = "uniform", absent = "-inf", out;
  long long k = 0;
};

// Scores and class labels of every row of `table`.
RankedItems read_ranked_items(const Table& table, const std::string& score,
                              const std::string& attribute) {
  RankedItems items;
  set_classes(items, table, attribute);
  items.scores = table.numeric(score);
  return items;
}

void add_common_options(CLI::App* cmd, RankingArgs& args) {
  cmd->add_option("--table", args.table, "CSV/TSV/JSONL table, one row per ranked item")
      ->required();
  cmd->add_option("--score", args.score, "Numeric column to rank by (descending)")->required();
  cmd->add_option("--attribute", args.attribute, "Column holding each item's class")->required();
  cmd->add_option("--desired", args.desired, "Desired distribution: uniform | base-rate")
      ->capture_default_str();
  cmd->add_option("--out", args.out, "Write the JSON here instead of stdout");
}

}  // namespace

void add_skew_metric(CLI::App& metric) {
  auto args = std::make_shared<RankingArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "skew", "Skew@k per class and MaxSkew@k of a ranking (Geyik et al. 2019; paper 001)");
  add_common_options(cmd, *args);
  cmd->add_option("--k", args->k, "Length of the top of the ranking, 1..n")->required();
  cmd->add_option("--absent", args->absent,
                  "Skew of a class absent from the top k: -inf (authors' code) | zero")
      ->capture_default_str();
  cmd->callback([args] {
    SkewOptions o;
    o.desired = parse_desired_distribution(args->desired);
    o.absent = parse_absent_class(args->absent);
    VLBIAS_CHECK(args->k >= 1, UsageError, "--k must be at least 1; got {}.", args->k);
    o.k = static_cast<std::size_t>(args->k);
    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    const RankedItems items = read_ranked_items(table, args->score, args->attribute);
    VLBIAS_CHECK(o.k <= items.scores.size(), UsageError,
                 "--k must be between 1 and {} (the rows of {}); got {}.", items.scores.size(),
                 table.source, o.k);
    const SkewResult r = skew_at_k(items, o);
    Json out = skew_json(r, items.class_names);
    p.command = "metric skew";
    p.parameters = Json{{"score", args->score},
                        {"attribute", args->attribute},
                        {"k", r.k},
                        {"desired", to_string(o.desired)},
                        {"absent", to_string(o.absent)}};
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

void add_ndkl_metric(CLI::App& metric) {
  auto args = std::make_shared<RankingArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "ndkl", "Normalized discounted KL divergence of a ranking (Geyik et al. 2019; paper 001)");
  add_common_options(cmd, *args);
  cmd->callback([args] {
    const DesiredDistribution desired = parse_desired_distribution(args->desired);
    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    const RankedItems items = read_ranked_items(table, args->score, args->attribute);
    const NdklResult r = ndkl(items, desired);
    Json out = ndkl_json(r, items.class_names);
    p.command = "metric ndkl";
    p.parameters = Json{
        {"score", args->score}, {"attribute", args->attribute}, {"desired", to_string(desired)}};
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
