// `vlbias correlate`: correlation tables with intervals and adjusted p-values (issue 24).
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/correlate.h"

namespace vlbias::cli_internal {

namespace {

struct CorrelateArgs {
  std::string table, x, y, by, method = "pearson", alternative = "two-sided", out, csv;
  double ci = 0.95;
  std::size_t bootstrap = 1000;
  std::uint64_t seed = 0;
};

Json cell_json(const CorrelationCell& c, const std::vector<std::string>& by) {
  Json j = Json::object();
  j["group"] = c.group.empty() ? Json(nullptr) : key_json(by, c.group);
  j["x"] = c.x;
  j["y"] = c.y;
  j["method"] = to_string(c.method);
  j["n"] = c.n;
  j["dropped"] = Json{{"missing", c.dropped_missing}, {"non_numeric", c.dropped_non_numeric}};
  j["statistic"] = json_number(c.result.statistic);
  j["p_value"] = json_number(c.result.p_value);
  j["p_holm"] = json_number(c.p_holm);
  j["p_bh"] = json_number(c.p_bh);
  if (!c.result.method.empty()) j["p_method"] = c.result.method;
  j["ties"] = c.ties;
  Json ci = to_json(c.interval);
  ci["method"] = c.interval_method;
  j["interval"] = ci;
  if (!c.result.note.empty()) j["note"] = c.result.note;
  return j;
}

Json report_json(const CorrelateReport& r) {
  Json cells = Json::array();
  for (const auto& c : r.cells) cells.push_back(cell_json(c, r.options.by));
  Json out = Json::object();
  out["correlations"] = cells;
  out["rows"] = Json{{"total", r.rows}, {"missing_key", r.rows_missing_key}};
  out["alternative"] = stats::to_string(r.options.alternative);
  out["adjustment"] =
      "holm and benjamini-hochberg over every cell of the same method (all groups and pairs)";
  return out;
}

// One row per cell: the `by` columns ("" for every row), x, y, method, n, dropped rows,
// statistic, p-values and the interval.
void write_cells_csv(const CorrelateReport& r, const std::string& path) {
  Table t;
  t.source = path;
  t.rows = r.cells.size();
  const auto& by = r.options.by;
  for (std::size_t b = 0; b < by.size(); ++b) {
    std::vector<std::string> v;
    for (const auto& c : r.cells) v.push_back(c.group.empty() ? std::string() : c.group[b]);
    add_string_column(t, by[b], v);
  }
  auto text = [&](const std::string& name, auto get) {
    std::vector<std::string> v;
    for (const auto& c : r.cells) v.push_back(get(c));
    add_string_column(t, name, v);
  };
  auto number = [&](const std::string& name, auto get) {
    std::vector<double> v;
    for (const auto& c : r.cells) v.push_back(static_cast<double>(get(c)));
    add_numeric_column(t, name, v);
  };
  text("x", [](const CorrelationCell& c) { return c.x; });
  text("y", [](const CorrelationCell& c) { return c.y; });
  text("method", [](const CorrelationCell& c) { return std::string(to_string(c.method)); });
  number("n", [](const CorrelationCell& c) { return c.n; });
  number("dropped",
         [](const CorrelationCell& c) { return c.dropped_missing + c.dropped_non_numeric; });
  number("statistic", [](const CorrelationCell& c) { return c.result.statistic; });
  number("p_value", [](const CorrelationCell& c) { return c.result.p_value; });
  number("p_holm", [](const CorrelationCell& c) { return c.p_holm; });
  number("p_bh", [](const CorrelationCell& c) { return c.p_bh; });
  number("ci_lower", [](const CorrelationCell& c) { return c.interval.lower; });
  number("ci_upper", [](const CorrelationCell& c) { return c.interval.upper; });
  text("note", [](const CorrelationCell& c) { return c.result.note; });
  write_csv(t, path);
}

}  // namespace

void add_correlate_command(CLI::App& app) {
  auto args = std::make_shared<CorrelateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "correlate",
      "Correlation table: every --x column against every --y column, overall and per --by\n"
      "group: n, r (Pearson, Spearman, Kendall tau-b), p as scipy computes it, an interval\n"
      "(Pearson: Fisher z; Spearman, Kendall: percentile bootstrap over rows) and Holm and\n"
      "BH adjusted p-values. Rows with x or y missing or not a number are dropped per pair\n"
      "and counted");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table, one row per item")->required();
  cmd->add_option("--x", args->x, "Column(s), comma-separated")->required();
  cmd->add_option("--y", args->y, "Column(s), comma-separated")->required();
  cmd->add_option("--by", args->by, "Grouping column(s): one table per group, plus all rows");
  cmd->add_option("--method", args->method, "pearson | spearman | kendall | all (or a list)")
      ->capture_default_str();
  cmd->add_option("--alternative", args->alternative, "two-sided | greater | less")
      ->capture_default_str();
  cmd->add_option("--ci", args->ci, "Interval level")->capture_default_str();
  cmd->add_option("--bootstrap", args->bootstrap,
                  "Bootstrap replicates of the Spearman and Kendall intervals (0: none)")
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here instead of stdout");
  cmd->add_option("--csv", args->csv, "Also write the table as CSV here");
  cmd->callback([args] {
    CorrelateOptions o;
    o.x = split_list(args->x, "--x");
    o.y = split_list(args->y, "--y");
    if (!args->by.empty()) o.by = split_list(args->by, "--by");
    o.methods = parse_correlation_methods(args->method);
    o.alternative = parse_alternative(args->alternative);
    o.level = args->ci;
    o.bootstrap = args->bootstrap;
    o.seed = args->seed;
    Provenance p;
    p.inputs = {args->table};
    start_hashing_inputs(p);
    const Table table = read_table(args->table);
    const CorrelateReport report = correlate_table(table, o);
    Json out = report_json(report);
    std::vector<std::string> methods;
    for (const auto m : o.methods) methods.emplace_back(to_string(m));
    p.command = "correlate";
    p.parameters = Json{{"x", o.x},
                        {"y", o.y},
                        {"by", o.by},
                        {"methods", methods},
                        {"alternative", stats::to_string(o.alternative)},
                        {"ci", o.level},
                        {"bootstrap", o.bootstrap}};
    p.seed = o.seed;
    out["provenance"] = provenance_json(p);
    if (!args->csv.empty()) write_cells_csv(report, args->csv);
    write_json(out, args->out);
  });
}

}  // namespace vlbias::cli_internal
