// Group comparisons over tables: `vlbias compare` and `vlbias describe`.
#include "vlbias/stats/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "compare_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"

namespace vlbias {

namespace {

struct TestName {
  GroupTest test;
  const char* name;
};
constexpr TestName kTests[] = {
    {GroupTest::Anova, "anova"},      {GroupTest::Welch, "welch"},
    {GroupTest::Student, "student"},  {GroupTest::MannWhitney, "mannwhitney"},
    {GroupTest::Kruskal, "kruskal"},  {GroupTest::PairedT, "paired-t"},
    {GroupTest::Wilcoxon, "wilcoxon"}};

// The rows of one cell split by group: values[g] holds the values of group g, and for paired
// tests pair_ids[g] the pair key (its group id in the pair-key grouping) of each value, and for
// clustered comparisons cluster_ids[g] the cluster (its group id in the cluster grouping).
struct CellGroups {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::vector<double>> values;
  std::vector<std::vector<std::uint32_t>> pair_ids;
  std::vector<std::vector<std::uint32_t>> cluster_ids;
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

stats::TestResult run_test(const CompareOptions& o,
                           const std::vector<const std::vector<double>*>& groups) {
  const GroupTest test = o.test;
  if (is_two_group_test(test)) {
    const std::span<const double> a(*groups[0]), b(*groups[1]);
    switch (test) {
      case GroupTest::Welch:
        return stats::welch_t(a, b, o.alternative);
      case GroupTest::Student:
        return stats::student_t(a, b, o.alternative);
      case GroupTest::PairedT:
        return stats::paired_t(a, b, o.alternative);
      case GroupTest::Wilcoxon:
        return stats::wilcoxon(a, b, o.alternative, o.zero_method);
      default:
        return stats::mann_whitney_u(a, b, o.alternative);
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
                          const std::vector<std::uint32_t>& pair_of_row,
                          const std::vector<std::uint32_t>& cluster_of_row,
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
  out.cell.pair_ids.resize(pair_of_row.empty() ? 0 : ids.size());
  out.cell.cluster_ids.resize(cluster_of_row.empty() ? 0 : ids.size());
  for (std::uint32_t j = 0; j < ids.size(); ++j) {
    local_of[ids[j]] = j;
    out.cell.keys.push_back(all_by.keys[ids[j]]);
  }
  for (const std::uint32_t r : rows) {
    const std::uint32_t g = all_by.group_of_row[r];
    if (g == Grouping::kNoGroup) continue;
    out.cell.values[local_of[g]].push_back(values[r]);
    if (!pair_of_row.empty()) out.cell.pair_ids[local_of[g]].push_back(pair_of_row[r]);
    if (!cluster_of_row.empty()) out.cell.cluster_ids[local_of[g]].push_back(cluster_of_row[r]);
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
              "unknown test '{}': expected anova, welch, student, mannwhitney, kruskal, paired-t "
              "or wilcoxon",
              name);
}

bool is_two_group_test(GroupTest test) {
  return test == GroupTest::Welch || test == GroupTest::Student || test == GroupTest::MannWhitney ||
         is_paired_test(test);
}

bool is_paired_test(GroupTest test) {
  return test == GroupTest::PairedT || test == GroupTest::Wilcoxon;
}

namespace {

void check_compare_options(const CompareOptions& o) {
  VLBIAS_CHECK(!o.by.empty(), UsageError, "compare needs at least one --by column");
  for (const auto& w : o.within) {
    VLBIAS_CHECK(std::find(o.by.begin(), o.by.end(), w) == o.by.end(), UsageError,
                 "column '{}' is given both in --by and in --within", w);
  }
  VLBIAS_CHECK(o.alternative == stats::Alternative::TwoSided || is_two_group_test(o.test),
               UsageError,
               "--alternative {} needs a two-group test (welch, student, mannwhitney, paired-t, "
               "wilcoxon); {} is two-sided only",
               stats::to_string(o.alternative), to_string(o.test));
  VLBIAS_CHECK(!is_paired_test(o.test) || !o.pair_key.empty(), UsageError,
               "test '{}' is paired: give --paired --pair-key COLUMN to match the rows",
               to_string(o.test));
  VLBIAS_CHECK(is_paired_test(o.test) || o.pair_key.empty(), UsageError,
               "--paired/--pair-key need a paired test (paired-t or wilcoxon), not '{}'",
               to_string(o.test));
  if (!o.pair_key.empty()) {
    VLBIAS_CHECK(std::find(o.by.begin(), o.by.end(), o.pair_key) == o.by.end() &&
                     std::find(o.within.begin(), o.within.end(), o.pair_key) == o.within.end(),
                 UsageError, "the pair key '{}' is also a --by or --within column", o.pair_key);
  }
  for (const auto& c : o.cluster) {
    VLBIAS_CHECK(std::find(o.by.begin(), o.by.end(), c) == o.by.end() && c != o.pair_key,
                 UsageError,
                 "column '{}' is given both in --cluster and in --by or --pair-key: a cluster "
                 "groups rows within a group (unpaired) or pairs (paired)",
                 c);
  }
  VLBIAS_CHECK(o.cluster.empty() || o.permutations > 0, UsageError,
               "--permutations must be at least 1 for a clustered comparison");
}

// Cells of the `within` columns (one cell holding every row when none), as lists of the rows
// with a value and every key present; rows with a missing `within` key are marked in
// `key_missing`.
struct Cells {
  std::vector<std::vector<std::string>> keys = {{}};
  std::vector<std::vector<std::uint32_t>> rows = std::vector<std::vector<std::uint32_t>>(1);
};

Cells cells_of(const Table& table, const std::vector<std::string>& within,
               const std::vector<double>& values, std::vector<bool>& key_missing) {
  Cells cells;
  Grouping grouping;
  if (!within.empty()) {
    grouping = group_by(table, within);
    cells.keys = grouping.keys;
    cells.rows.assign(grouping.size(), {});
  }
  for (std::size_t i = 0; i < table.rows; ++i) {
    const std::uint32_t g = within.empty() ? 0 : grouping.group_of_row[i];
    if (g == Grouping::kNoGroup) key_missing[i] = true;
    if (g == Grouping::kNoGroup || key_missing[i] || std::isnan(values[i])) continue;
    cells.rows[g].push_back(static_cast<std::uint32_t>(i));
  }
  return cells;
}

struct CompareContext {
  const Table& table;
  const CompareOptions& options;
  const Grouping& pair_keys;  // the pair-key grouping (paired tests), else empty
  const Grouping& clusters;   // the cluster grouping (clustered comparisons), else empty
};

// The values of groups a and b matched by pair key, in key order: a key twice in one group is
// an InputError; keys in one group only are counted (and the first 10 named).
struct Matched {
  std::vector<double> a, b;
  std::vector<std::uint32_t> cluster;  // clustered comparisons: the cluster of each pair
  PairingInfo info;
};

struct KeyedValue {
  std::uint32_t key;  // pair key id
  double value;
  std::uint32_t cluster = Grouping::kNoGroup;
};

std::vector<KeyedValue> keyed_values(const CompareContext& ctx, const CellGroups& cell,
                                     std::size_t g, const std::vector<std::string>& within) {
  std::vector<KeyedValue> kv;
  kv.reserve(cell.values[g].size());
  const bool clustered = !cell.cluster_ids.empty();
  for (std::size_t i = 0; i < cell.values[g].size(); ++i) {
    kv.push_back({cell.pair_ids[g][i], cell.values[g][i],
                  clustered ? cell.cluster_ids[g][i] : Grouping::kNoGroup});
  }
  std::stable_sort(kv.begin(), kv.end(),
                   [](const auto& l, const auto& r) { return l.key < r.key; });
  for (std::size_t i = 1; i < kv.size(); ++i) {
    VLBIAS_CHECK(kv[i].key != kv[i - 1].key, InputError,
                 "{}: pair key {} = '{}' appears more than once in group {}{}; expected one row "
                 "per key and group",
                 ctx.table.source, ctx.options.pair_key, ctx.pair_keys.keys[kv[i].key][0],
                 join_keys({cell.keys[g]}),
                 within.empty() ? "" : fmt::format(" (within {})", join_keys({within})));
  }
  return kv;
}

Matched match_pairs(const CompareContext& ctx, const CellGroups& cell, std::size_t ga,
                    std::size_t gb, const std::vector<std::string>& within) {
  const auto ka = keyed_values(ctx, cell, ga, within), kb = keyed_values(ctx, cell, gb, within);
  Matched m;
  m.info.unmatched.assign(2, 0);
  std::vector<std::uint32_t> unmatched;
  std::size_t i = 0, j = 0;
  while (i < ka.size() || j < kb.size()) {
    if (j == kb.size() || (i < ka.size() && ka[i].key < kb[j].key)) {
      ++m.info.unmatched[0];
      unmatched.push_back(ka[i++].key);
    } else if (i == ka.size() || kb[j].key < ka[i].key) {
      ++m.info.unmatched[1];
      unmatched.push_back(kb[j++].key);
    } else {
      VLBIAS_CHECK(ka[i].cluster == kb[j].cluster, InputError,
                   "{}: the two rows of pair {} = '{}' are in different clusters ({} and {}); a "
                   "pair's rows must share their cluster",
                   ctx.table.source, ctx.options.pair_key, ctx.pair_keys.keys[ka[i].key][0],
                   ctx.clusters.label(ka[i].cluster), ctx.clusters.label(kb[j].cluster));
      m.cluster.push_back(ka[i].cluster);
      m.a.push_back(ka[i++].value);
      m.b.push_back(kb[j++].value);
    }
  }
  m.info.pairs = m.a.size();
  std::sort(unmatched.begin(), unmatched.end());
  for (std::size_t u = 0; u < unmatched.size() && u < 10; ++u) {
    m.info.unmatched_keys.push_back(ctx.pair_keys.keys[unmatched[u]][0]);
  }
  return m;
}

// Replaces the classical p-value of `cmp` by the cluster permutation test's (compare.h).
void cluster_test(const CompareContext& ctx, const CellGroups& cell, const Matched& matched,
                  const std::vector<std::size_t>& members, std::uint64_t seed, Comparison& cmp) {
  const CompareOptions& o = ctx.options;
  const stats_internal::RunTest test = [&o](const stats_internal::GroupValues& g) {
    return run_test(o, g);
  };
  if (is_paired_test(o.test)) {
    cmp.cluster = stats_internal::clustered_pairs_test(matched.a, matched.b, matched.cluster, test,
                                                       cmp.result.p_value, o.permutations, seed);
  } else {
    stats_internal::GroupValues groups;
    std::vector<const std::vector<std::uint32_t>*> clusters;
    for (const std::size_t g : members) {
      groups.push_back(&cell.values[g]);
      clusters.push_back(&cell.cluster_ids[g]);
    }
    cmp.cluster = stats_internal::clustered_groups_test(
        groups, clusters, test, cmp.result.p_value, o.permutations, seed,
        [&ctx](std::size_t id) { return ctx.clusters.label(id); },
        [&](std::size_t g) { return join_keys({cell.keys[members[g]]}); });
  }
  cmp.result.p_value = cmp.cluster.permutation.p_value;
}

// One comparison of the groups `members` of a cell; `seed` draws its cluster permutations.
Comparison compare_members(const CompareContext& ctx, const CellSplit& split,
                           const std::vector<std::string>& within,
                           const std::vector<std::size_t>& members, std::uint64_t seed) {
  const CompareOptions& o = ctx.options;
  const CellGroups& cell = split.cell;
  Comparison cmp;
  cmp.within = within;
  cmp.absent_groups = split.absent;
  std::vector<const std::vector<double>*> groups;
  for (std::size_t g : members) groups.push_back(&cell.values[g]);
  Matched matched;
  if (is_paired_test(o.test) && members.size() == 2) {
    matched = match_pairs(ctx, cell, members[0], members[1], within);
    cmp.pairing = matched.info;
    groups = {&matched.a, &matched.b};
  }
  for (std::size_t m = 0; m < members.size(); ++m) {
    cmp.groups.push_back(group_stats(cell.keys[members[m]], *groups[m], o.min_group_size));
  }
  if (groups.size() < 2) {
    cmp.result = undefined_test(
        o.test, fmt::format("fewer than two groups have data in this cell ({} group{})",
                            groups.size(), groups.size() == 1 ? "" : "s"));
  } else if (is_paired_test(o.test) && matched.info.pairs == 0) {
    cmp.result = undefined_test(o.test, "no pair key is present in both groups");
  } else {
    cmp.result = run_test(o, groups);
    if (!o.cluster.empty() && !std::isnan(cmp.result.p_value)) {
      cluster_test(ctx, cell, matched, members, seed, cmp);
    }
  }
  return cmp;
}

}  // namespace

CompareReport compare_groups(const Table& table, const CompareOptions& options) {
  check_compare_options(options);
  CompareReport report;
  report.options = options;
  report.rows = table.rows;
  const std::vector<double>& values = table.numeric(options.value, /*allow_missing=*/true);
  for (double v : values) report.rows_missing_value += std::isnan(v) ? 1 : 0;
  const Grouping pair_keys =
      options.pair_key.empty() ? Grouping{} : group_by(table, {options.pair_key});
  const std::vector<std::uint32_t>& pair_of_row = pair_keys.group_of_row;
  const Grouping clusters = options.cluster.empty() ? Grouping{} : group_by(table, options.cluster);
  std::vector<bool> key_missing(table.rows, false);
  for (std::size_t i = 0; i < pair_of_row.size(); ++i) {
    key_missing[i] = pair_of_row[i] == Grouping::kNoGroup;
  }
  for (std::size_t i = 0; i < clusters.group_of_row.size(); ++i) {
    if (clusters.group_of_row[i] == Grouping::kNoGroup) key_missing[i] = true;
  }
  const Cells cells = cells_of(table, options.within, values, key_missing);
  const Grouping all_by = group_by(table, options.by);
  report.empty_cells = all_by.empty_cells;
  for (std::size_t i = 0; i < table.rows; ++i) {
    if (all_by.group_of_row[i] == Grouping::kNoGroup) key_missing[i] = true;
    if (key_missing[i]) ++report.rows_missing_key;
    if (!key_missing[i] && !std::isnan(values[i])) ++report.rows_used;
  }

  const CompareContext context{table, options, pair_keys, clusters};
  std::vector<std::uint32_t> local_of(all_by.size(), Grouping::kNoGroup);
  for (std::size_t c = 0; c < cells.keys.size(); ++c) {
    const CellSplit split = split_by_groups(all_by, values, cells.rows[c], pair_of_row,
                                            clusters.group_of_row, local_of);
    const std::size_t k = split.cell.keys.size();
    if (!options.pairwise && is_two_group_test(options.test) && k > 2) {
      VLBIAS_FAIL(UsageError,
                  "test '{}' compares two groups but '{}' has {} groups ({}){}: use --pairwise "
                  "or a k-group test (anova, kruskal)",
                  to_string(options.test), fmt::join(options.by, ","), k,
                  join_keys(split.cell.keys), options.within.empty() ? "" : " in a --within cell");
    }
    if (options.pairwise && k >= 2) {
      for (std::size_t a = 0; a < k; ++a) {
        for (std::size_t b = a + 1; b < k; ++b) {
          const std::uint64_t seed = derive_seed(options.seed, report.comparisons.size());
          report.comparisons.push_back(
              compare_members(context, split, cells.keys[c], {a, b}, seed));
        }
      }
    } else {
      std::vector<std::size_t> all(k);
      for (std::size_t g = 0; g < k; ++g) all[g] = g;
      const std::uint64_t seed = derive_seed(options.seed, report.comparisons.size());
      report.comparisons.push_back(compare_members(context, split, cells.keys[c], all, seed));
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
