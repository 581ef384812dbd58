// Per-image scores by group (scores_by_group.h; docs/methods.md#scores-by-group).
#include "scores_by_group.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/io/input_identity.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/scores_results.h"
#include "vlbias/report/summary.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

namespace {

// The provenance columns vlbias score image-head writes (the same value on every row).
constexpr const char* kScoreProvenanceColumns[] = {"head", "weights", "weights_sha256", "options"};
// The most distinct values of a provenance column results.json lists.
constexpr std::size_t kMaxProvenanceValues = 20;

// A matched cell of a scores column as a finite number (InputError naming file, line, column).
double score_cell(const Table& t, const Column& c, const std::string& name, std::size_t row) {
  double v = stats::kNaN;
  if (c.type == ColumnType::Numeric) {
    v = c.numbers[row];
  } else {
    const std::string text = c.text(row);
    char* end = nullptr;
    v = text.empty() ? stats::kNaN : std::strtod(text.c_str(), &end);
    VLBIAS_CHECK(text.empty() || (end != nullptr && *end == '\0'), InputError,
                 "{}: line {}, column '{}' holds '{}'; expected a number (the score of the row's "
                 "image)",
                 t.source, t.line_of_row[row], name, text);
  }
  VLBIAS_CHECK(std::isfinite(v), InputError,
               "{}: line {}, column '{}' is {}; expected a finite number (the score of the row's "
               "image)",
               t.source, t.line_of_row[row], name, std::isnan(v) ? "missing or NaN" : "infinite");
  return v;
}

Json score_provenance(const Table& t) {
  Json out = Json::object();
  for (const char* name : kScoreProvenanceColumns) {
    if (!t.find(name)) continue;
    const Column& c = t.column(name);
    std::vector<std::string> seen;
    std::set<std::string> distinct;
    for (std::size_t row = 0; row < t.rows; ++row) {
      if (distinct.insert(c.text(row)).second && seen.size() < kMaxProvenanceValues)
        seen.push_back(c.text(row));
    }
    // One value (the head's own table), or the first few of a mixed table and how many.
    if (distinct.size() > seen.size())
      seen.push_back(fmt::format("and {} more", distinct.size() - seen.size()));
    if (seen.size() == 1) {
      out[name] = seen[0];
    } else {
      out[name] = seen;
    }
  }
  return out;
}

// The columns of one table, joined to the units through `row_of_unit` (SIZE_MAX = no row).
void read_score_columns(const ScoreTableSpec& s, const Table& t, std::size_t table_index,
                        const std::vector<std::size_t>& row_of_unit, ScoresData& out) {
  for (const std::string& name : s.columns) {
    const Column& c = t.column(name);  // InputError naming the file and its columns
    ScoreColumn col;
    col.table = table_index;
    col.name = name;
    col.value.assign(row_of_unit.size(), stats::kNaN);
    bool binary = true;
    for (std::size_t u = 0; u < row_of_unit.size(); ++u) {
      if (row_of_unit[u] == SIZE_MAX) continue;
      const double v = score_cell(t, c, name, row_of_unit[u]);
      binary = binary && (v == 0.0 || v == 1.0);
      col.value[u] = v;
    }
    std::string kind = binary ? "rate" : "mean";
    for (const auto& [k, v] : s.kinds) {
      if (k == name) {
        kind = v;
        col.kind_given = true;
      }
    }
    col.rate = kind == "rate";
    if (col.rate && !binary) {
      for (std::size_t u = 0; u < row_of_unit.size(); ++u) {
        const double v = col.value[u];
        VLBIAS_CHECK(std::isnan(v) || v == 0.0 || v == 1.0, InputError,
                     "{}: line {}, column '{}' is {}; a rate column (scores kind: rate) holds 0 "
                     "or 1 (give kind: mean for a score)",
                     t.source, t.line_of_row[row_of_unit[u]], name, v);
      }
    }
    out.columns.push_back(std::move(col));
  }
}

}  // namespace

ScoresData read_scores(const std::vector<ScoreTableSpec>& specs,
                       const std::vector<std::string>& units, const std::string& what) {
  ScoresData out;
  std::map<std::string, std::vector<std::size_t>> units_of_image;
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (!units[u].empty()) units_of_image[units[u]].push_back(u);
  }
  for (const ScoreTableSpec& s : specs) {
    const Table t = read_table(s.table.string());
    ScoreTableInfo info;
    info.path = s.table.string();
    info.sha256 = input_sha256(info.path);
    info.key = s.key;
    info.rows = t.rows;
    const Column& key = t.column(s.key);
    std::vector<std::size_t> row_of_unit(units.size(), SIZE_MAX);
    std::map<std::string, std::size_t> row_of_image;
    for (std::size_t row = 0; row < t.rows; ++row) {
      const std::string image = key.text(row);
      VLBIAS_CHECK(!image.empty(), InputError,
                   "{}: line {}, column '{}' is empty; expected the image the row scores", t.source,
                   t.line_of_row[row], s.key);
      const auto [it, added] = row_of_image.emplace(image, row);
      VLBIAS_CHECK(added, InputError,
                   "{}: image '{}' (column '{}') has two rows, lines {} and {}; expected one score "
                   "row per image",
                   t.source, image, s.key, t.line_of_row[it->second], t.line_of_row[row]);
      const auto u = units_of_image.find(image);
      if (u == units_of_image.end()) {
        ++info.unused_rows;
        continue;
      }
      for (const std::size_t i : u->second) row_of_unit[i] = row;
    }
    for (const std::size_t r : row_of_unit)
      (r == SIZE_MAX ? info.unmatched_units : info.matched_units)++;
    VLBIAS_CHECK(info.matched_units > 0, InputError,
                 "{}: none of its {} rows' '{}' values names one of the {} images of {} (e.g. "
                 "'{}' vs '{}'); expected the same image names",
                 t.source, t.rows, s.key, units.size(), what,
                 t.rows > 0 ? key.text(0) : std::string(),
                 units.empty() ? std::string() : units[0]);
    if (info.unmatched_units > 0 || info.unused_rows > 0) {
      out.notes.push_back(fmt::format(
          "scores: '{}' scores {} of the {} images of {}; {} have no row (left out of its "
          "columns), {} row{} name no image of the audit",
          info.path, info.matched_units, units.size(), what, info.unmatched_units, info.unused_rows,
          info.unused_rows == 1 ? "" : "s"));
    }
    info.provenance = score_provenance(t);
    read_score_columns(s, t, out.tables.size(), row_of_unit, out);
    out.tables.push_back(std::move(info));
  }
  return out;
}

void check_score_groups(const ScoresData& d, const std::vector<ScoreGrouping>& groupings) {
  for (const ScoreColumn& c : d.columns) {
    for (const ScoreGrouping& g : groupings) {
      std::vector<std::size_t> units(g.names.size(), 0), scored(g.names.size(), 0);
      for (std::size_t u = 0; u < g.of_unit.size(); ++u) {
        if (g.of_unit[u] == kNoScoreGroup) continue;
        ++units[g.of_unit[u]];
        scored[g.of_unit[u]] += !std::isnan(c.value[u]);
      }
      for (std::size_t k = 0; k < g.names.size(); ++k) {
        VLBIAS_CHECK(units[k] == 0 || scored[k] > 0, InputError,
                     "{}: {} '{}' has {} image{} and none has a row (key '{}'), so column '{}' "
                     "has no value there; expected a score for some image of every {}",
                     d.tables[c.table].path, g.by, g.names[k], units[k], units[k] == 1 ? "" : "s",
                     d.tables[c.table].key, c.name, g.by);
      }
    }
  }
}

namespace {

struct ScoreGroupStats {
  std::size_t n = 0, successes = 0;
  double estimate = stats::kNaN, sd = stats::kNaN;
  stats::Interval ci;
};

ScoreGroupStats score_group_stats(const std::vector<double>& v, bool rate, double ci) {
  ScoreGroupStats s;
  s.n = v.size();
  if (rate) {
    for (const double x : v) s.successes += x == 1.0;
    s.estimate =
        s.n > 0 ? static_cast<double>(s.successes) / static_cast<double>(s.n) : stats::kNaN;
    s.ci = stats::wilson_interval(s.successes, s.n, ci);
  } else {
    s.estimate = stats::mean(v);
    s.sd = stats::variance(v);
    s.sd = std::isnan(s.sd) ? stats::kNaN : std::sqrt(s.sd);
    s.ci = stats::t_mean_interval(v, ci);
  }
  return s;
}

ScoreGroupResult score_group_result(const std::string& name, const ScoreGroupStats& s, bool rate) {
  ScoreGroupResult r;
  r.group = name;
  r.n = static_cast<double>(s.n);
  if (rate) r.successes = static_cast<double>(s.successes);
  r.estimate = s.estimate;
  if (!rate) r.sd = s.sd;
  r.ci_lower = s.ci.lower;
  r.ci_upper = s.ci.upper;
  r.note = s.ci.note;
  return r;
}

// The test across the groups with a value (chi-square of equal rates, Kruskal-Wallis).
stats::TestResult score_group_test(const std::vector<std::vector<double>>& groups,
                                   const std::vector<ScoreGroupStats>& st, bool rate) {
  std::vector<std::size_t> successes, totals;
  std::vector<std::span<const double>> spans;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (groups[k].empty()) continue;
    successes.push_back(st[k].successes);
    totals.push_back(st[k].n);
    spans.emplace_back(groups[k]);
  }
  stats::TestResult r;
  if (spans.size() < 2) {
    r.test = rate ? "chi_square" : "kruskal";
    r.note = "fewer than 2 groups with a value: no test";
    return r;
  }
  return rate ? stats::chi_square_rates(successes, totals) : stats::kruskal_wallis(spans);
}

}  // namespace

AnalysisOutput scores_analysis(const ScoresData& d, const std::vector<ScoreGrouping>& groupings,
                               double ci, const std::string& units_by) {
  check_score_groups(d, groupings);
  AnalysisOutput out;
  TableBuilder groups_table("scores_groups"), tests_table("scores_tests");
  ScoresSection section;
  section.ci = ci;
  for (const ScoreColumn& c : d.columns) {
    const std::string& path = d.tables[c.table].path;
    const char* kind = c.rate ? "rate" : "mean";
    std::vector<double> all;
    for (const double v : c.value)
      if (!std::isnan(v)) all.push_back(v);
    ScoresColumnResult& jc = section.columns.emplace_back();
    jc.table = path;
    jc.column = c.name;
    jc.kind = kind;
    jc.kind_from = c.kind_given ? "spec" : "values";
    jc.all = score_group_result("all", score_group_stats(all, c.rate, ci), c.rate);
    for (const ScoreGrouping& g : groupings) {
      std::vector<std::vector<double>> values(g.names.size());
      for (std::size_t u = 0; u < g.of_unit.size(); ++u) {
        if (g.of_unit[u] != kNoScoreGroup && !std::isnan(c.value[u]))
          values[g.of_unit[u]].push_back(c.value[u]);
      }
      std::vector<ScoreGroupStats> st(g.names.size());
      ScoresByResult& jb = jc.by.emplace_back();
      jb.by = g.by;
      std::vector<double> estimates;
      TableBuilder units("units");
      for (std::size_t k = 0; k < g.names.size(); ++k) {
        if (values[k].empty()) continue;
        st[k] = score_group_stats(values[k], c.rate, ci);
        jb.groups.push_back(score_group_result(g.names[k], st[k], c.rate));
        estimates.push_back(st[k].estimate);
        groups_table.row();
        groups_table.put("table", path);
        groups_table.put("column", c.name);
        groups_table.put("kind", kind);
        groups_table.put("by", g.by);
        groups_table.put("group", g.names[k]);
        groups_table.put("n", static_cast<double>(st[k].n));
        groups_table.put("estimate", st[k].estimate);
        groups_table.put("lower", st[k].ci.lower);
        groups_table.put("upper", st[k].ci.upper);
        units.row();
        units.put(g.by, g.names[k]);
        units.put(c.name, st[k].estimate);
      }
      if (g.by == units_by) {
        out.units.emplace_back(units_table_name("score", {c.name}), units.build());
      }
      const stats::TestResult r = score_group_test(values, st, c.rate);
      // The mean of the groups' estimates: summary.json's mean over prompts (units table).
      jb.mean_over_groups = stats::mean(estimates);
      jb.test = ScoresByResult::Test{r, stats::kNaN, std::nullopt};
      tests_table.row();
      tests_table.put("table", path);
      tests_table.put("column", c.name);
      tests_table.put("kind", kind);
      tests_table.put("by", g.by);
      tests_table.put("test", r.test);
      tests_table.put("statistic", r.statistic);
      tests_table.put("df", r.df.empty() ? stats::kNaN : r.df[0]);
      tests_table.put("p", r.p_value);
      tests_table.put("note", r.note);
    }
  }
  // Holm over every test of the section with a p-value (the columns and groupings of one run).
  std::vector<double> p;
  std::vector<ScoresByResult::Test*> where;
  for (ScoresColumnResult& jc : section.columns) {
    for (ScoresByResult& jb : jc.by) {
      if (std::isfinite(jb.test->result.p_value)) {
        p.push_back(jb.test->result.p_value);
        where.push_back(&*jb.test);
      }
    }
  }
  const std::vector<double> adjusted = stats::holm(p);
  for (std::size_t i = 0; i < where.size(); ++i) where[i]->p_holm = adjusted[i];
  std::vector<double> p_holm_rows;
  for (const ScoresColumnResult& jc : section.columns) {
    for (const ScoresByResult& jb : jc.by) p_holm_rows.push_back(jb.test->p_holm);
  }
  Table tests_built = tests_table.build();
  add_numeric_column(tests_built, "p_holm", std::move(p_holm_rows));
  for (const ScoreTableInfo& t : d.tables) {
    section.tables.push_back({t.path, t.sha256, t.key, t.rows, t.matched_units, t.unmatched_units,
                              t.unused_rows, t.provenance});
  }
  out.json = to_json(section);
  out.pilot.scores = std::move(section);
  out.tables.emplace_back("scores_groups", groups_table.build());
  out.tables.emplace_back("scores_tests", std::move(tests_built));
  out.notes = d.notes;
  return out;
}

}  // namespace vlbias::audits_internal
