#pragma once
// Group comparisons over a table (src/stats/compare.cpp): the engine behind
// `vlbias compare` and `vlbias describe`, reused by the audits (paper 004 runs
// exactly this: CLIP confidence by race within gender, by gender within race).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

enum class GroupTest { Anova, Welch, Student, MannWhitney, Kruskal, PairedT, Wilcoxon };
// "anova", "welch", "student", "mannwhitney", "kruskal", "paired-t", "wilcoxon"; parse
// throws UsageError.
const char* to_string(GroupTest test);
GroupTest parse_group_test(const std::string& name);
// True for the tests that compare exactly two groups.
bool is_two_group_test(GroupTest test);
// True for paired-t and wilcoxon (values matched by CompareOptions::pair_key).
bool is_paired_test(GroupTest test);

struct CompareOptions {
  std::string value;                // numeric column compared
  std::vector<std::string> by;      // grouping columns (intersectional when several)
  std::vector<std::string> within;  // optional: one comparison per cell of these columns
  GroupTest test = GroupTest::Anova;
  bool pairwise = false;           // one comparison per pair of groups
  std::size_t min_group_size = 2;  // groups below this n are flagged `small`
  // One-sided alternatives for the two-group tests (greater: the first group's values are
  // larger); anova and kruskal take two-sided only (UsageError otherwise).
  stats::Alternative alternative = stats::Alternative::TwoSided;
  // Paired tests: the rows of the two groups are matched by the value of this column (one
  // row per key and group: a key twice in a group is an InputError naming it; a key in one
  // group only is left out and reported). Required by, and only allowed with, a paired test.
  std::string pair_key;
  stats::ZeroMethod zero_method = stats::ZeroMethod::Wilcox;  // wilcoxon only
  // Clustered designs (several rows per unit of sampling, e.g. the seeds of one image set):
  // the values of these columns name each row's cluster, and the p-value comes from a
  // permutation test that moves whole clusters (see ClusterTest). Empty: the classical p.
  std::vector<std::string> cluster;
  std::size_t permutations = 9999;  // B of the cluster permutation test (exact when <= B)
  std::uint64_t seed = 0;           // comparison i draws with derive_seed(seed, i)
};

// The cluster-level permutation test behind a clustered comparison (CompareOptions::cluster).
// Rows of one cluster are not independent, so the classical p-value is too small; the unit
// that is exchangeable under the null hypothesis is the cluster.
//   Unpaired tests: every cluster lies within one group (else InputError naming it), and
//   the null distribution relabels whole clusters between the groups, keeping each group's
//   number of clusters (stats::permutation_test's scheme over the clusters).
//   Paired tests: a pair's cluster is that of its two rows (which must agree), and the null
//   distribution swaps the two values of every pair of a cluster together (a cluster-level
//   sign flip, stats::sign_flip_test's scheme over the clusters).
// The statistic is the test's own p-value, smaller = more extreme, so the same rule serves
// every test and alternative (for the t and F tests it is the statistic standardised by its
// degrees of freedom, which change as clusters of different sizes move). Exact enumeration
// when there are at most `permutations` arrangements, else Monte Carlo:
// p = (1 + #{p* <= p}) / (1 + B), as permutation_test.
struct ClusterTest {
  std::size_t clusters = 0;                     // clusters in the comparison
  std::vector<std::size_t> clusters_per_group;  // unpaired: per group; paired: {clusters}
  double p_unclustered = stats::kNaN;           // the classical p, rows taken as independent
  stats::ResamplingResult permutation;          // its p_value is the comparison's p_value
};

// How the rows of a paired comparison were matched.
struct PairingInfo {
  std::size_t pairs = 0;                    // keys present in both groups (the n tested)
  std::vector<std::size_t> unmatched;       // per group: rows whose key the other group lacks
  std::vector<std::string> unmatched_keys;  // the first 10 such keys, in key order
};

struct GroupStats {
  std::vector<std::string> key;  // values of the `by` columns
  std::size_t n = 0;
  double mean = stats::kNaN;
  double sd = stats::kNaN;  // NaN when n < 2
  bool small = false;       // n < min_group_size
};

struct Comparison {
  std::vector<std::string> within;  // values of the `within` columns (empty if none)
  stats::TestResult result;
  double p_holm = stats::kNaN;  // adjusted over every comparison in the report
  double p_bh = stats::kNaN;
  std::vector<GroupStats> groups;  // the groups compared (2 for pairwise; paired: matched rows)
  PairingInfo pairing;             // paired tests only
  ClusterTest cluster;             // clustered comparisons only (options.cluster)
  // `by` groups present elsewhere in the table but with no rows in this cell.
  std::vector<std::vector<std::string>> absent_groups;
};

struct CompareReport {
  CompareOptions options;
  std::vector<Comparison> comparisons;
  std::size_t rows = 0;                // table rows
  std::size_t rows_used = 0;           // rows that entered some comparison
  std::size_t rows_missing_value = 0;  // value cell empty
  std::size_t rows_missing_key = 0;    // a by/within (or pair key, cluster) cell empty
  // Intersectional cells of the `by` columns (over the whole table) with no rows.
  std::vector<std::vector<std::string>> empty_cells;
};

// Runs the comparisons. Throws UsageError for a two-group test on more than two
// groups without `pairwise` (naming the groups), InputError for unknown or
// non-numeric columns. A cell with fewer than two non-empty groups yields a
// comparison with NaN results and a note.
CompareReport compare_groups(const Table& table, const CompareOptions& options);

struct DescribeOptions {
  std::string value;
  std::vector<std::string> by;  // empty: one group with every row
  std::vector<double> percentiles = {5, 25, 50, 75, 95};
  double ci_level = 0.95;
  std::size_t bootstrap = 0;  // 0: no CI
  std::uint64_t seed = 0;
  std::size_t min_group_size = 2;
};

struct GroupDescription {
  std::vector<std::string> key;
  stats::Summary summary;
  std::vector<double> percentiles;  // at DescribeOptions::percentiles
  stats::Interval mean_ci;          // percentile bootstrap CI of the mean
  bool small = false;
};

struct DescribeReport {
  DescribeOptions options;
  std::vector<GroupDescription> groups;
  std::size_t rows = 0;
  std::size_t rows_missing_value = 0;
  std::size_t rows_missing_key = 0;
  std::vector<std::vector<std::string>> empty_cells;
};

// Per-group n, mean, sd, min/max, percentiles and bootstrap CI of the mean.
// The bootstrap for group g is seeded with derive_seed(seed, g).
DescribeReport describe_groups(const Table& table, const DescribeOptions& options);

}  // namespace vlbias
