// Group comparisons over tables: `vlbias compare` and `vlbias describe`.
#include "vlbias/stats/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"

namespace vlbias {

namespace {

struct TestName {
  GroupTest test;
  const char* name;
};
constexpr TestName kTests[] = {{GroupTest::Anova, "anova"},
                               {GroupTest::Welch, "welch"},
                               {GroupTest::Student, "student"},
                               {GroupTest::MannWhitney, "mannwhitney"},
                               {GroupTest::Kruskal, "kruskal"}};

// The rows of one cell split by group: values[g] holds the values of group g.
struct CellGroups {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::vector<double>> values;
};

// Rows where `mask` holds (all rows when empty) and the value is present.
std::vector<bool> rows_with_value(const std::vector<double>& values,
                                  const std::vector<bool>& mask) {
  std::vector<bool> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = !std::isnan(values[i]) && (mask.empty() || mask[i]);
  }
  return out;
}

CellGroups split_cell(const Table& table, const std::vector<std::string>& by,
                      const std::vector<double>& values, const std::vector<bool>& mask) {
  const Grouping grouping = group_by(table, by, mask);
  CellGroups cell;
  cell.keys = grouping.keys;
  cell.values.resize(grouping.size());
  for (std::size_t g = 0; g < grouping.size(); ++g) cell.values[g].reserve(grouping.sizes[g]);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint32_t g = grouping.group_of_row[i];
    if (g != Grouping::kNoGroup) cell.values[g].push_back(values[i]);
  }
  return cell;
}

GroupStats group_stats(const std::vector<std::string>& key, const std::vector<double>& x,
                       std::size_t min_group_size) {
  GroupStats s;
  s.key = key;
  s.n = x.size();
  s.mean = stats::mean(x);
  s.sd = stats::variance(x);
  s.sd = std::isnan(s.sd) ? s.sd : std::sqrt(s.sd);
  s.small = s.n < min_group_size;
  return s;
}

std::string join_keys(const std::vector<std::vector<std::string>>& keys) {
  std::string out;
  for (const auto& key : keys) {
    if (!out.empty()) out += "; ";
    for (std::size_t c = 0; c < key.size(); ++c) out += (c ? "/" : "") + key[c];
  }
  return out;
}

stats::TestResult run_test(GroupTest test, const std::vector<const std::vector<double>*>& groups) {
  if (is_two_group_test(test)) {
    const std::span<const double> a(*groups[0]), b(*groups[1]);
    switch (test) {
      case GroupTest::Welch:
        return stats::welch_t(a, b);
      case GroupTest::Student:
        return stats::student_t(a, b);
      default:
        return stats::mann_whitney_u(a, b);
    }
  }
  std::vector<std::span<const double>> spans;
  for (const auto* g : groups) spans.emplace_back(*g);
  return test == GroupTest::Anova ? stats::one_way_anova(spans) : stats::kruskal_wallis(spans);
}

// One --within cell split by the --by groups: the groups of `all_by` its rows fall in, in key
// order (all_by's ids are), each with its values in row order, as group_by over the cell's rows
// gives them; and the groups with no row in the cell. Derived from the one grouping of the whole
// table: grouping the table again per cell, and searching the cell's keys for every group, made
// `compare` quadratic in the cells and the groups (issue 19). `local_of` (all_by.size() entries,
// all kNoGroup) is scratch space, left as it was found.
struct CellSplit {
  CellGroups cell;
  std::vector<std::vector<std::string>> absent;
};

CellSplit split_by_groups(const Grouping& all_by, const std::vector<double>& values,
                          const std::vector<std::uint32_t>& rows,
                          std::vector<std::uint32_t>& local_of) {
  std::vector<std::uint32_t> ids;
  for (const std::uint32_t r : rows) {
    const std::uint32_t g = all_by.group_of_row[r];
    if (g == Grouping::kNoGroup || local_of[g] != Grouping::kNoGroup) continue;
    local_of[g] = 0;
    ids.push_back(g);
  }
  std::sort(ids.begin(), ids.end());
  CellSplit out;
  out.cell.keys.reserve(ids.size());
  out.cell.values.resize(ids.size());
  for (std::uint32_t j = 0; j < ids.size(); ++j) {
    local_of[ids[j]] = j;
    out.cell.keys.push_back(all_by.keys[ids[j]]);
  }
  for (const std::uint32_t r : rows) {
    const std::uint32_t g = all_by.group_of_row[r];
    if (g != Grouping::kNoGroup) out.cell.values[local_of[g]].push_back(values[r]);
  }
  std::size_t next = 0;  // ids are sorted: walk them beside every group
  for (std::uint32_t g = 0; g < all_by.size(); ++g) {
    if (next < ids.size() && ids[next] == g) {
      ++next;
    } else {
      out.absent.push_back(all_by.keys[g]);
    }
  }
  for (const std::uint32_t g : ids) local_of[g] = Grouping::kNoGroup;
  return out;
}

// A comparison that could not be run (fewer than two groups with data).
stats::TestResult undefined_test(GroupTest test, const std::string& why) {
  stats::TestResult r;
  r.test = to_string(test);
  r.note = why;
  return r;
}

}  // namespace

const char* to_string(GroupTest test) {
  for (const auto& t : kTests) {
    if (t.test == test) return t.name;
  }
  return "?";
}

GroupTest parse_group_test(const std::string& name) {
  for (const auto& t : kTests) {
    if (name == t.name) return t.test;
  }
  VLBIAS_FAIL(UsageError,
              "unknown test '{}': expected anova, welch, student, mannwhitney or kruskal", name);
}

bool is_two_group_test(GroupTest test) {
  return test == GroupTest::Welch || test == GroupTest::Student || test == GroupTest::MannWhitney;
}

CompareReport compare_groups(const Table& table, const CompareOptions& options) {
  VLBIAS_CHECK(!options.by.empty(), UsageError, "compare needs at least one --by column");
  for (const auto& w : options.within) {
    VLBIAS_CHECK(std::find(options.by.begin(), options.by.end(), w) == options.by.end(), UsageError,
                 "column '{}' is given both in --by and in --within", w);
  }
  CompareReport report;
  report.options = options;
  report.rows = table.rows;
  const std::vector<double>& values = table.numeric(options.value, /*allow_missing=*/true);
  for (double v : values) report.rows_missing_value += std::isnan(v) ? 1 : 0;

  // Cells of the `within` columns (one cell holding every row when none), as lists of the rows
  // with a value.
  std::vector<std::vector<std::string>> cell_keys = {{}};
  std::vector<std::vector<std::uint32_t>> cell_rows(1);
  std::vector<bool> key_missing(table.rows, false);
  if (!options.within.empty()) {
    const Grouping within = group_by(table, options.within);
    cell_keys = within.keys;
    cell_rows.assign(within.size(), {});
    for (std::size_t i = 0; i < table.rows; ++i) {
      const std::uint32_t g = within.group_of_row[i];
      if (g == Grouping::kNoGroup) {
        key_missing[i] = true;
      } else if (!std::isnan(values[i])) {
        cell_rows[g].push_back(static_cast<std::uint32_t>(i));
      }
    }
  } else {
    for (std::size_t i = 0; i < table.rows; ++i) {
      if (!std::isnan(values[i])) cell_rows[0].push_back(static_cast<std::uint32_t>(i));
    }
  }
  const Grouping all_by = group_by(table, options.by);
  report.empty_cells = all_by.empty_cells;
  for (std::size_t i = 0; i < table.rows; ++i) {
    if (all_by.group_of_row[i] == Grouping::kNoGroup) key_missing[i] = true;
    if (key_missing[i]) ++report.rows_missing_key;
    if (!key_missing[i] && !std::isnan(values[i])) ++report.rows_used;
  }

  std::vector<std::uint32_t> local_of(all_by.size(), Grouping::kNoGroup);
  for (std::size_t c = 0; c < cell_keys.size(); ++c) {
    const CellSplit split = split_by_groups(all_by, values, cell_rows[c], local_of);
    const CellGroups& cell = split.cell;
    const std::vector<std::vector<std::string>>& absent = split.absent;
    const std::size_t k = cell.keys.size();
    std::vector<std::pair<std::size_t, std::size_t>> pairs;  // empty: all groups at once
    if (options.pairwise) {
      for (std::size_t a = 0; a < k; ++a) {
        for (std::size_t b = a + 1; b < k; ++b) pairs.emplace_back(a, b);
      }
    } else if (is_two_group_test(options.test) && k > 2) {
      VLBIAS_FAIL(UsageError,
                  "test '{}' compares two groups but '{}' has {} groups ({}){}: use --pairwise "
                  "or a k-group test (anova, kruskal)",
                  to_string(options.test), fmt::join(options.by, ","), k, join_keys(cell.keys),
                  options.within.empty() ? "" : " in a --within cell");
    }

    auto add = [&](const std::vector<std::size_t>& members) {
      Comparison cmp;
      cmp.within = cell_keys[c];
      cmp.absent_groups = absent;
      std::vector<const std::vector<double>*> groups;
      for (std::size_t g : members) {
        cmp.groups.push_back(group_stats(cell.keys[g], cell.values[g], options.min_group_size));
        groups.push_back(&cell.values[g]);
      }
      if (groups.size() < 2) {
        cmp.result = undefined_test(
            options.test, fmt::format("fewer than two groups have data in this cell ({} group{})",
                                      groups.size(), groups.size() == 1 ? "" : "s"));
      } else {
        cmp.result = run_test(options.test, groups);
      }
      report.comparisons.push_back(std::move(cmp));
    };

    if (options.pairwise && k >= 2) {
      for (const auto& [a, b] : pairs) add({a, b});
    } else {
      std::vector<std::size_t> all(k);
      for (std::size_t g = 0; g < k; ++g) all[g] = g;
      add(all);
    }
  }

  std::vector<double> p;
  for (const auto& cmp : report.comparisons) p.push_back(cmp.result.p_value);
  const auto holm = stats::holm(p);
  const auto bh = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < report.comparisons.size(); ++i) {
    report.comparisons[i].p_holm = holm[i];
    report.comparisons[i].p_bh = bh[i];
  }
  return report;
}

DescribeReport describe_groups(const Table& table, const DescribeOptions& options) {
  VLBIAS_CHECK(options.ci_level > 0.0 && options.ci_level < 1.0, UsageError,
               "--ci must be between 0 and 1 (exclusive), got {}", options.ci_level);
  for (double q : options.percentiles) {
    VLBIAS_CHECK(q >= 0.0 && q <= 100.0, UsageError, "percentile {} is outside [0, 100]", q);
  }
  DescribeReport report;
  report.options = options;
  report.rows = table.rows;
  const std::vector<double>& values = table.numeric(options.value, /*allow_missing=*/true);
  for (double v : values) report.rows_missing_value += std::isnan(v) ? 1 : 0;

  CellGroups cell;
  if (options.by.empty()) {
    cell.keys = {{}};
    cell.values.resize(1);
    for (double v : values) {
      if (!std::isnan(v)) cell.values[0].push_back(v);
    }
  } else {
    const Grouping all_by = group_by(table, options.by);
    report.rows_missing_key = all_by.rows_with_missing_key;
    report.empty_cells = all_by.empty_cells;
    cell = split_cell(table, options.by, values, rows_with_value(values, {}));
  }
  for (std::size_t g = 0; g < cell.keys.size(); ++g) {
    GroupDescription d;
    d.key = cell.keys[g];
    d.summary = stats::describe(cell.values[g]);
    d.percentiles = stats::percentiles(cell.values[g], options.percentiles);
    d.small = d.summary.n < options.min_group_size;
    d.mean_ci.level = options.ci_level;
    if (options.bootstrap > 0 && !cell.values[g].empty()) {
      d.mean_ci = stats::bootstrap_mean_ci(cell.values[g], options.bootstrap, options.ci_level,
                                           derive_seed(options.seed, g));
    }
    report.groups.push_back(std::move(d));
  }
  return report;
}

}  // namespace vlbias
