// `vlbias metric agreement`: how two scorers agree on the same texts (Pearson, Spearman,
// Cohen's kappa at a threshold, mean difference), overall and per group with a Kruskal-Wallis
// test of whether b - a depends on the group (docs/methods.md#agreement;
// include/vlbias/metrics/agreement.h). The table holds both scores as columns, e.g. a
// scored.jsonl of `score classifier` with another scorer's column added.
#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "vlbias/core/edit_distance.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table.h"
#include "vlbias/metrics/agreement.h"
#include "vlbias/report/metric_json.h"

namespace vlbias::cli_internal {

namespace {

struct AgreementArgs {
  std::string table, scores, group, out;
  double threshold = 0.5, threshold_b = 0.5, level = 0.95;
  std::size_t bootstrap = 2000;
  std::uint64_t seed = 0;
};

// UsageError naming the option, the column, the closest column name when one is near (a typo)
// and the columns the table has.
void require_column(const Table& table, const std::string& name, const char* option) {
  if (table.find(name)) return;
  std::string names, closest;
  std::size_t best = name.size() / 3 + 2;  // suggest only near misses
  for (const Column& c : table.columns) {
    names += (names.empty() ? "" : ", ") + c.name;
    const std::size_t d = edit_distance(name, c.name);
    if (d < best) {
      best = d;
      closest = c.name;
    }
  }
  const std::string hint = closest.empty() ? "" : fmt::format(" (did you mean '{}'?)", closest);
  VLBIAS_FAIL(UsageError, "{} names column '{}'{}, which {} does not have (its columns: {}).",
              option, name, hint, table.source, names);
}

std::vector<std::string> parse_scores(const std::string& text) {
  std::vector<std::string> scores = split_list(text, "--scores");
  VLBIAS_CHECK(scores.size() == 2, UsageError,
               "--scores expects two column names A,B (the two scorers); got {} in '{}'.",
               scores.size(), text);
  VLBIAS_CHECK(scores[0] != scores[1], UsageError,
               "--scores names column '{}' twice; expected two different scorers.", scores[0]);
  return scores;
}

AgreementOptions options_of(const AgreementArgs& a, bool threshold_b_given) {
  AgreementOptions o;
  o.threshold_a = a.threshold;
  o.threshold_b = threshold_b_given ? a.threshold_b : a.threshold;
  VLBIAS_CHECK(std::isfinite(o.threshold_a), UsageError,
               "--threshold must be a finite number; got {}.", o.threshold_a);
  VLBIAS_CHECK(std::isfinite(o.threshold_b), UsageError,
               "--threshold-b must be a finite number; got {}.", o.threshold_b);
  VLBIAS_CHECK(a.level > 0.0 && a.level < 1.0, UsageError,
               "--ci (--level) must be a confidence level between 0 and 1 (e.g. 0.95); got {}.",
               a.level);
  o.level = a.level;
  o.bootstrap = a.bootstrap;
  o.seed = a.seed;
  return o;
}

}  // namespace

void add_agreement_metric(CLI::App& metric) {
  auto args = std::make_shared<AgreementArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "agreement",
      "How two scorers agree on the same texts (Pearson, Spearman, Cohen's kappa at a threshold, "
      "mean difference, with CIs) overall and per group, with a test of whether b - a depends on "
      "the group");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table with both scores as columns")
      ->required();
  cmd->add_option("--scores", args->scores, "The two score columns A,B (e.g. toxicity,perspective)")
      ->required();
  cmd->add_option("--group", args->group,
                  "Group column(s), comma-separated (e.g. dialect): agreement per group");
  cmd->add_option("--threshold", args->threshold, "A label is positive when score >= this")
      ->capture_default_str();
  CLI::Option* threshold_b = cmd->add_option("--threshold-b", args->threshold_b,
                                             "B's threshold when its scale differs (default: A's)");
  cmd->add_option("--ci,--level", args->level, "Confidence level")->capture_default_str();
  cmd->add_option("--bootstrap", args->bootstrap, "Bootstrap resamples for kappa's CI (0: none)")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args, threshold_b] {
    const std::vector<std::string> scores = parse_scores(args->scores);
    const AgreementOptions o = options_of(*args, threshold_b->count() > 0);
    std::vector<std::string> group;
    if (!args->group.empty()) group = split_list(args->group, "--group");

    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    for (const std::string& s : scores) require_column(table, s, "--scores");
    for (const std::string& g : group) require_column(table, g, "--group");
    const AgreementReport r = agreement_analysis(table, scores[0], scores[1], group, o);

    Json out = agreement_json(r, o);
    p.command = "metric agreement";
    p.parameters = Json{{"scores", scores},
                        {"group", group},
                        {"threshold", o.threshold_a},
                        {"threshold_b", o.threshold_b},
                        {"ci", o.level},
                        {"bootstrap", o.bootstrap}};
    p.seed = o.seed;
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
