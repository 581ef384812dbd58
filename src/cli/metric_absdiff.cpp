// `vlbias metric absdiff`: AbsDiff per factor and dimension, with two-sided
// Mann-Whitney U tests between factors (docs/methods.md#absdiff; Hausladen et al. 2.3).
//
// The table has one row per image; --values names its Delta cos columns, one per
// dimension (the dimension names are the column names). --factor is repeatable:
// "lighting" is categorical, "age:1.1" ordinal with threshold 1.1 (the text after
// the last ':' must be a number).
#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/metrics/absdiff.h"
#include "vlbias/report/json_output.h"

namespace vlbias::cli_internal {

namespace {

struct AbsDiffArgs {
  std::string table, values, out;
  std::vector<std::string> factors;
  long long pairs = 1000;
  std::uint64_t seed = 0;
};

const char* const kSampling =
    "uniform over valid pairs, with replacement; all pairs once when there are at most `pairs`";

AbsDiffFactor parse_factor(const std::string& spec) {
  AbsDiffFactor f;
  const std::size_t colon = spec.rfind(':');
  f.column = spec.substr(0, colon);
  VLBIAS_CHECK(!f.column.empty(), UsageError,
               "--factor '{}' has no column name; expected COLUMN (categorical) or "
               "COLUMN:THRESHOLD (ordinal, e.g. age:1.1).",
               spec);
  if (colon == std::string::npos) return f;
  const std::string text = spec.substr(colon + 1);
  std::size_t used = 0;
  double t = std::nan("");
  try {
    t = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  VLBIAS_CHECK(!text.empty() && used == text.size() && std::isfinite(t) && t >= 0.0, UsageError,
               "--factor '{}' has threshold '{}'; expected COLUMN or COLUMN:THRESHOLD with a "
               "number >= 0 (e.g. age:1.1).",
               spec, text);
  f.ordinal = true;
  f.threshold = t;
  return f;
}

void require_column(const Table& table, const std::string& name, const std::string& option) {
  if (table.find(name)) return;
  std::string names;
  for (const Column& c : table.columns) names += (names.empty() ? "" : ", ") + c.name;
  VLBIAS_FAIL(UsageError, "{} names column '{}', which {} does not have (its columns: {}).", option,
              name, table.source, names);
}

}  // namespace

void add_absdiff_metric(CLI::App& metric) {
  auto args = std::make_shared<AbsDiffArgs>();
  CLI::App* cmd = metric.add_subcommand(
      "absdiff",
      "AbsDiff |Delta cos(i1) - Delta cos(i2)| over image pairs that differ only in one factor,\n"
      "per factor and dimension, with two-sided Mann-Whitney U tests between factors (paper 001)");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table, one row per image")->required();
  cmd->add_option("--values", args->values,
                  "Comma list of numeric columns holding Delta cos, one per dimension")
      ->required();
  cmd->add_option("--factor", args->factors,
                  "Factor column, repeatable: NAME (categorical) or NAME:THRESHOLD (ordinal)")
      ->required();
  cmd->add_option("--pairs", args->pairs, "Pairs per factor and dimension")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the pair sampling")->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->callback([args] {
    AbsDiffOptions o;
    VLBIAS_CHECK(!args->factors.empty(), UsageError,
                 "metric absdiff needs at least one --factor; none was given.");
    for (const std::string& spec : args->factors) o.factors.push_back(parse_factor(spec));
    VLBIAS_CHECK(args->pairs >= 1, UsageError, "--pairs must be at least 1; got {}.", args->pairs);
    o.pairs = static_cast<std::size_t>(args->pairs);
    o.seed = args->seed;
    const std::vector<std::string> dimensions = split_list(args->values, "--values");

    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    for (const std::string& d : dimensions) require_column(table, d, "--values");
    for (const AbsDiffFactor& f : o.factors) require_column(table, f.column, "--factor");
    const std::vector<double> values = value_matrix(table, dimensions, /*allow_missing=*/false);
    const AbsDiffReport r = absdiff_analysis(table, values, dimensions, o);

    Json out = Json::object();
    Json cells = Json::array();
    for (const AbsDiffCell& c : r.cells) cells.push_back(to_json(c));
    out["cells"] = cells;
    Json comparisons = Json::array();
    for (const AbsDiffComparison& c : r.comparisons) comparisons.push_back(to_json(c));
    out["comparisons"] = comparisons;
    out["rows_missing"] = r.rows_missing;
    out["notes"] = r.notes;
    out["sampling"] = kSampling;
    p.command = "metric absdiff";
    p.parameters = Json{
        {"values", dimensions}, {"factors", args->factors}, {"pairs", o.pairs}, {"seed", o.seed}};
    p.seed = o.seed;
    out["provenance"] = provenance_json(p);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
