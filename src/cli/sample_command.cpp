// `vlbias sample`: stratified sampling of a table's rows, n (or a fraction) per cell of the
// --by columns among the rows --where keeps, drawn as numpy's default_rng(seed) draws them
// (sample.h, docs/specs.md#sampling).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/io/table/row_filter.h"
#include "vlbias/io/table/sample.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"

namespace vlbias::cli_internal {
namespace {

struct SampleArgs {
  std::string table, by, where, unit, out, report;
  std::optional<std::size_t> n;
  std::optional<double> frac;
  std::size_t per_cell_min = 0;
  bool allow_short = false, replace = false;
  std::uint64_t seed = 0;
};

std::string key_text(const SampleCell& c) {
  std::string s;
  for (std::size_t i = 0; i < c.key.size(); ++i) s += (i ? " x " : "") + c.key[i];
  return s;
}

// The per-cell table on stderr: every cell when some cell is short, dropped or empty (so the
// user sees what happened to each), else a one-line summary.
void print_cells(const SampleResult& r, const SampleOptions& o) {
  if (quiet()) return;
  const bool notable = r.short_cells > 0 || r.dropped_cells > 0 ||
                       std::any_of(r.cells.begin(), r.cells.end(), [](const SampleCell& c) {
                         return c.status == SampleCell::Status::Empty;
                       });
  if (notable) {
    std::size_t width = 4;
    for (const SampleCell& c : r.cells) width = std::max(width, key_text(c).size());
    std::string by;
    for (const auto& b : o.by) by += (by.empty() ? "" : " x ") + b;
    eprint("vlbias sample: cells of {}\n  {:<{}}  {:>9}  {:>9}  {:>9}  status\n", by, "cell", width,
           "available", "target", "drawn");
    for (const SampleCell& c : r.cells) {
      eprint("  {:<{}}  {:>9}  {:>9}  {:>9}  {}\n", key_text(c), width, c.available, c.target,
             c.drawn, to_string(c.status));
    }
  }
  eprint(
      "vlbias sample: {} rows drawn from {} cells ({} short, {} dropped); {} of {} rows "
      "passed the filter, {} of them with a missing --by cell\n",
      r.rows.size(), r.cells.size(), r.short_cells, r.dropped_cells, r.rows_passing_filter,
      r.rows_in_table, r.rows_missing_key);
}

// --unit: n whole units (e.g. paper 003's counterfactual sets) per cell instead of n rows. The
// units are drawn from a table of each unit's first passing row, as
// `df[mask].drop_duplicates(unit).groupby(by).sample(...)` draws them, and every passing row
// of a drawn unit is kept, in table order. A unit's --by cells must agree on all its rows.
SampleResult sample_units(const Table& table, const SampleOptions& o, const std::string& unit) {
  const Column& unit_column = table.column(unit);
  std::vector<bool> pass(table.rows, true);
  if (!o.where.empty()) pass = RowFilter::parse(o.where, o.where_origin).evaluate(table);
  std::vector<const Column*> by;
  for (const std::string& name : o.by) by.push_back(&table.column(name));
  std::map<std::string, std::size_t> unit_index;  // unit value -> its index in `firsts`
  std::vector<std::size_t> firsts, unit_of_row(table.rows, 0);
  std::size_t passing = 0;
  for (std::size_t r = 0; r < table.rows; ++r) {
    if (!pass[r]) continue;
    ++passing;
    const std::string value = unit_column.text(r);
    VLBIAS_CHECK(!value.empty(), InputError, "sample: {} line {} has no --unit '{}' value",
                 table.source, table.line_of_row[r], unit);
    const auto [it, fresh] = unit_index.emplace(value, firsts.size());
    if (fresh) firsts.push_back(r);
    unit_of_row[r] = it->second;
    const std::size_t first = firsts[it->second];
    for (std::size_t b = 0; b < by.size(); ++b) {
      VLBIAS_CHECK(by[b]->text(r) == by[b]->text(first), InputError,
                   "sample: {} line {}: unit '{}' has {} '{}' here but '{}' on line {}; every "
                   "row of a --unit must be in one cell of --by",
                   table.source, table.line_of_row[r], value, o.by[b], by[b]->text(r),
                   by[b]->text(first), table.line_of_row[first]);
    }
  }
  SampleOptions unit_options = o;
  unit_options.where.clear();
  SampleResult r = stratified_sample(take_rows(table, firsts), unit_options);
  std::vector<bool> drawn(firsts.size(), false);
  for (const std::size_t u : r.rows) drawn[u] = true;
  r.rows.clear();
  for (std::size_t row = 0; row < table.rows; ++row) {
    if (pass[row] && drawn[unit_of_row[row]]) r.rows.push_back(row);
  }
  r.rows_in_table = table.rows;
  r.rows_passing_filter = passing;
  return r;
}

Json sample_report_json(const SampleResult& r, const SampleOptions& o, const SampleArgs& a) {
  Json cells = Json::array();
  for (const SampleCell& c : r.cells) {
    cells.push_back(Json{{"key", key_json(o.by, c.key)},
                         {"available", c.available},
                         {"target", c.target},
                         {"drawn", c.drawn},
                         {"status", to_string(c.status)}});
  }
  Json out{{"rows_in_table", r.rows_in_table},
           {"rows_passing_filter", r.rows_passing_filter},
           {"rows_missing_key", r.rows_missing_key},
           {"rows_drawn", r.rows.size()},
           {"short_cells", r.short_cells},
           {"dropped_cells", r.dropped_cells},
           {"written", a.allow_short || r.short_cells == 0},
           {"generator",
            "numpy.random.default_rng(seed).choice(available, target, replace), "
            "cells in key order"},
           {"cells", cells}};
  Provenance p;
  p.command = "sample";
  p.inputs = {a.table};
  p.seed = o.seed;
  p.parameters = Json{{"by", o.by},
                      {"n", o.n ? Json(*o.n) : Json()},
                      {"frac", o.frac ? Json(*o.frac) : Json()},
                      {"where", o.where},
                      {"unit", a.unit.empty() ? Json() : Json(a.unit)},
                      {"per_cell_min", o.per_cell_min},
                      {"allow_short", a.allow_short},
                      {"replace", o.replace}};
  out["provenance"] = provenance_json(p);
  return out;
}

[[noreturn]] void refuse_short(const SampleResult& r) {
  std::string cells;
  std::size_t shown = 0;
  for (const SampleCell& c : r.cells) {
    const bool is_short = c.status == SampleCell::Status::Short ||
                          (c.status == SampleCell::Status::Empty && c.target > 0);
    if (!is_short || shown++ >= 10) continue;
    cells += fmt::format("{}{} ({} rows for {})", cells.empty() ? "" : ", ", key_text(c),
                         c.available, c.target);
  }
  if (r.short_cells > 10) cells += fmt::format(" and {} more", r.short_cells - 10);
  VLBIAS_FAIL(InputError,
              "sample: {} cell(s) have fewer rows than the target: {}; nothing was written "
              "(--allow-short takes every row of a short cell, --per-cell-min N drops cells "
              "under N rows, --replace draws with replacement)",
              r.short_cells, cells);
}

void run_sample(const SampleArgs& a) {
  VLBIAS_CHECK(std::filesystem::path(a.out).extension() == ".csv", UsageError,
               "sample: --out '{}' must end in .csv (the sample is written as CSV)", a.out);
  SampleOptions o;
  o.by = split_list(a.by, "--by");
  o.n = a.n;
  o.frac = a.frac;
  o.where = a.where;
  o.replace = a.replace;
  o.per_cell_min = a.per_cell_min;
  o.seed = a.seed;
  VLBIAS_CHECK(a.unit.empty() || !a.replace, UsageError,
               "sample: --unit draws each unit at most once; it cannot be combined with --replace");
  const Table table = read_table(a.table);
  const SampleResult r =
      a.unit.empty() ? stratified_sample(table, o) : sample_units(table, o, a.unit);
  print_cells(r, o);
  if (!a.report.empty()) write_json(sample_report_json(r, o, a), a.report);
  if (r.short_cells > 0 && !a.allow_short) refuse_short(r);
  write_csv(take_rows(table, r.rows), a.out);
  if (!quiet()) eprint("vlbias: wrote {}\n", a.out);
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto args = std::make_shared<SampleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sample",
      "Stratified sample of a table's rows: n (or a fraction) per cell of the --by columns,\n"
      "among the rows --where keeps, drawn as numpy's default_rng(seed).choice draws them");
  cmd->add_option("--table", args->table, "CSV/TSV/JSONL table, one row per item")->required();
  cmd->add_option("--by", args->by, "Cell columns, comma-separated (e.g. race,gender)")->required();
  cmd->add_option("--n", args->n, "Rows per cell");
  cmd->add_option("--frac", args->frac, "Fraction of each cell (rounded half to even)");
  cmd->add_option("--where", args->where,
                  "Row filter, e.g. \"age >= 20 and age <= 60\" (docs/specs.md#row-filters)");
  cmd->add_option("--unit", args->unit,
                  "Draw whole units of this column (e.g. set: a counterfactual set): --n/--frac "
                  "count units per cell, every row of a drawn unit is kept");
  cmd->add_option("--per-cell-min", args->per_cell_min,
                  "Drop (draw nothing from) cells with fewer rows than this; reported")
      ->capture_default_str();
  cmd->add_flag("--allow-short", args->allow_short,
                "Take every row of a cell smaller than --n instead of refusing");
  cmd->add_flag("--replace", args->replace, "Draw with replacement (rows may repeat)");
  cmd->add_option("--seed", args->seed, "Seed (numpy.random.default_rng(seed))")->required();
  cmd->add_option("--out", args->out, "The sample as CSV: the input's columns, input row order")
      ->required();
  cmd->add_option("--report", args->report,
                  "Per-cell available/target/drawn counts as JSON (written also when refused)");
  cmd->callback([args] { run_sample(*args); });
}

}  // namespace vlbias::cli_internal
