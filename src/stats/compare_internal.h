#pragma once
// Internal to src/stats/compare*.cpp: the cluster-level permutation tests of a clustered
// comparison (compare.h, ClusterTest), kept apart from the table handling of compare.cpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vlbias/stats/compare.h"

namespace vlbias::stats_internal {

// The groups of one comparison, each a list of values.
using GroupValues = std::vector<const std::vector<double>*>;
// Runs the comparison's own test on groups built from the data (must be thread-safe).
using RunTest = std::function<stats::TestResult(const GroupValues&)>;
// Names of clusters and groups, for error messages.
using Namer = std::function<std::string(std::size_t)>;

// Unpaired: clusters[g][i] is the cluster id of groups[g][i]. InputError when a cluster has
// rows in two groups (naming it with `cluster_name(id)` and the groups with `group_name(g)`).
ClusterTest clustered_groups_test(const GroupValues& groups,
                                  const std::vector<const std::vector<std::uint32_t>*>& clusters,
                                  const RunTest& test, double p_unclustered,
                                  std::size_t permutations, std::uint64_t seed,
                                  const Namer& cluster_name, const Namer& group_name);

// Paired: a[i], b[i] form pair i, whose cluster id is cluster_of_pair[i].
ClusterTest clustered_pairs_test(const std::vector<double>& a, const std::vector<double>& b,
                                 const std::vector<std::uint32_t>& cluster_of_pair,
                                 const RunTest& test, double p_unclustered,
                                 std::size_t permutations, std::uint64_t seed);

}  // namespace vlbias::stats_internal
