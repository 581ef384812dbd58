// `vlbias compare` and `vlbias describe`.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/compare.h"
#include "vlbias/stats/correlate.h"

namespace vlbias::cli_internal {

namespace {

struct CompareArgs {
  std::string table, value, by, within, test = "anova", out, alternative = "two-sided";
  std::string pair_key, zero_method = "wilcox", cluster;
  bool pairwise = false, paired = false;
  std::size_t min_group_size = 2, permutations = 9999;
  std::uint64_t seed = 0;
};

struct DescribeArgs {
  std::string table, value, by, out, percentiles = "5,25,50,75,95";
  double ci = 0.95;
  std::size_t bootstrap = 0;
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
};

Json string_list(const std::vector<std::string>& v) {
  return Json(v);
}

stats::ZeroMethod parse_zero_method(const std::string& name) {
  if (name == "pratt") return stats::ZeroMethod::Pratt;
  if (name == "zsplit") return stats::ZeroMethod::Zsplit;
  VLBIAS_CHECK(name == "wilcox", UsageError,
               "unknown --zero-method '{}': expected wilcox, pratt or zsplit", name);
  return stats::ZeroMethod::Wilcox;
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare a numeric column across groups (ANOVA, t tests, Mann-Whitney, Kruskal-Wallis),\n"
      "optionally within cells of other columns, with Holm and BH adjusted p-values.\n"
      "Paired: --paired --pair-key id matches the two groups' rows by id (paired t or\n"
      "Wilcoxon signed-rank on first group minus second); one-sided --alternative for every\n"
      "two-group test (greater: the first group, in key order, is larger)");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table, one row per item")->required();
  cmd->add_option("--value", args->value, "Numeric column to compare")->required();
  cmd->add_option("--by", args->by, "Grouping column(s), comma-separated (intersectional)")
      ->required();
  cmd->add_option("--within", args->within, "Run one comparison per cell of these column(s)");
  cmd->add_option("--test", args->test,
                  "anova | welch | student | mannwhitney | kruskal | paired-t | wilcoxon "
                  "(--paired: default paired-t)")
      ->capture_default_str();
  cmd->add_option("--alternative", args->alternative,
                  "two-sided | greater | less (two-group tests, as scipy's alternative=)")
      ->capture_default_str();
  cmd->add_flag("--paired", args->paired,
                "Paired test of two groups whose rows are matched by --pair-key (a key in one "
                "group only is reported and left out; a key twice in a group is an error)");
  cmd->add_option("--pair-key", args->pair_key, "Column matching the rows of a paired test");
  cmd->add_option("--zero-method", args->zero_method,
                  "Wilcoxon zero differences: wilcox (drop) | pratt | zsplit (scipy's)")
      ->capture_default_str();
  cmd->add_option("--cluster", args->cluster,
                  "Clustered rows (e.g. filename,rank: an image set without its seed): the\n"
                  "p-value comes from a permutation test that moves whole clusters between\n"
                  "groups (paired: swaps a cluster's pairs together); the classical p is kept\n"
                  "as cluster.p_unclustered");
  cmd->add_option("--permutations", args->permutations,
                  "Permutations of the --cluster test (all arrangements when fewer)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the --cluster test's permutations")
      ->capture_default_str();
  cmd->add_flag("--pairwise", args->pairwise, "One comparison per pair of groups");
  cmd->add_option("--min-group-size", args->min_group_size, "Flag groups smaller than this")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args, cmd] {
    CompareOptions o;
    o.value = args->value;
    o.by = split_list(args->by, "--by");
    if (!args->within.empty()) o.within = split_list(args->within, "--within");
    const bool test_given = cmd->count("--test") > 0;
    o.test = args->paired && !test_given ? GroupTest::PairedT : parse_group_test(args->test);
    o.pairwise = args->pairwise;
    o.alternative = parse_alternative(args->alternative);
    VLBIAS_CHECK(args->paired == !args->pair_key.empty(), UsageError,
                 "--paired and --pair-key go together: --paired matches rows by the --pair-key "
                 "column");
    o.pair_key = args->pair_key;
    o.zero_method = parse_zero_method(args->zero_method);
    o.min_group_size = args->min_group_size;
    if (!args->cluster.empty()) o.cluster = split_list(args->cluster, "--cluster");
    o.permutations = args->permutations;
    o.seed = args->seed;
    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    const CompareReport report = compare_groups(table, o);
    Json out = to_json(report);
    p.command = "compare";
    p.parameters = Json{{"value", o.value},
                        {"by", string_list(o.by)},
                        {"within", string_list(o.within)},
                        {"test", to_string(o.test)},
                        {"pairwise", o.pairwise},
                        {"alternative", stats::to_string(o.alternative)},
                        {"min_group_size", o.min_group_size}};
    if (!o.pair_key.empty()) p.parameters["pair_key"] = o.pair_key;
    if (o.test == GroupTest::Wilcoxon) {
      p.parameters["zero_method"] = stats::to_string(o.zero_method);
    }
    if (!o.cluster.empty()) {
      p.parameters["cluster"] = string_list(o.cluster);
      p.parameters["permutations"] = o.permutations;
      p.parameters["seed"] = o.seed;
    }
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

void add_describe_command(CLI::App& app) {
  auto args = std::make_shared<DescribeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "describe", "Per-group n, mean, sd, percentiles and bootstrap CIs of the mean");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table, one row per item")->required();
  cmd->add_option("--value", args->value, "Numeric column to describe")->required();
  cmd->add_option("--by", args->by, "Grouping column(s), comma-separated (default: all rows)");
  cmd->add_option("--percentiles", args->percentiles, "Percentiles to report (type 7)")
      ->capture_default_str();
  cmd->add_option("--ci", args->ci, "Confidence level of the bootstrap CI")->capture_default_str();
  cmd->add_option("--bootstrap", args->bootstrap, "Bootstrap resamples (0: no CI)")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--min-group-size", args->min_group_size, "Flag groups smaller than this")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] {
    DescribeOptions o;
    o.value = args->value;
    if (!args->by.empty()) o.by = split_list(args->by, "--by");
    o.percentiles = split_numbers(args->percentiles, "--percentiles");
    o.ci_level = args->ci;
    o.bootstrap = args->bootstrap;
    o.seed = args->seed;
    o.min_group_size = args->min_group_size;
    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    const DescribeReport report = describe_groups(table, o);
    Json out = to_json(report);
    p.command = "describe";
    p.parameters =
        Json{{"value", o.value}, {"by", string_list(o.by)},  {"percentiles", o.percentiles},
             {"ci", o.ci_level}, {"bootstrap", o.bootstrap}, {"min_group_size", o.min_group_size}};
    if (o.bootstrap > 0) p.seed = o.seed;
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
