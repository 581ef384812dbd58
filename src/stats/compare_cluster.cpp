// Cluster-level permutation tests of clustered comparisons (compare.h, ClusterTest): whole
// clusters relabelled between groups, or the pairs of a cluster swapped together.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "compare_internal.h"
#include "vlbias/core/error.h"

namespace vlbias::stats_internal {

namespace {

// The statistic both schemes hand to the resampling engine: minus the test's p-value, so that
// "at least as extreme" (Alternative::Greater) means a p-value at most the observed one.
double minus_p(const stats::TestResult& r) {
  return std::isnan(r.p_value) ? stats::kNaN : -r.p_value;
}

// Says how small the p-value of an exact enumeration can get, when that bounds what the
// design can show (few clusters).
void note_smallest_p(ClusterTest& t) {
  const stats::ResamplingResult& r = t.permutation;
  if (r.method != "exact" || r.resamples == 0) return;
  const double smallest = 1.0 / static_cast<double>(r.resamples);
  if (smallest <= 0.01) return;
  if (!t.permutation.note.empty()) t.permutation.note += "; ";
  t.permutation.note +=
      fmt::format("{} clusters allow {} arrangements, so no p-value below {:.3g} is possible",
                  t.clusters, r.resamples, smallest);
}

}  // namespace

ClusterTest clustered_groups_test(const GroupValues& groups,
                                  const std::vector<const std::vector<std::uint32_t>*>& clusters,
                                  const RunTest& test, double p_unclustered,
                                  std::size_t permutations, std::uint64_t seed,
                                  const Namer& cluster_name, const Namer& group_name) {
  // Cluster k (in order of first appearance): its group and its values.
  std::unordered_map<std::uint32_t, std::uint32_t> index_of;
  std::vector<std::uint32_t> label;
  std::vector<std::vector<double>> members;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t i = 0; i < groups[g]->size(); ++i) {
      const std::uint32_t id = (*clusters[g])[i];
      const auto [it, added] = index_of.emplace(id, static_cast<std::uint32_t>(label.size()));
      if (added) {
        label.push_back(static_cast<std::uint32_t>(g));
        members.emplace_back();
      }
      VLBIAS_CHECK(label[it->second] == g, InputError,
                   "cluster {} has rows in groups {} and {}: a clustered test moves whole "
                   "clusters between groups, so each cluster must lie in one group (for "
                   "matched rows use --paired --pair-key)",
                   cluster_name(id), group_name(label[it->second]), group_name(g));
      members[it->second].push_back((*groups[g])[i]);
    }
  }
  ClusterTest t;
  t.clusters = label.size();
  t.clusters_per_group.assign(groups.size(), 0);
  for (const std::uint32_t g : label) ++t.clusters_per_group[g];
  t.p_unclustered = p_unclustered;
  const std::size_t k = groups.size();
  auto statistic = [&](std::span<const std::uint32_t> labels) {
    std::vector<std::vector<double>> values(k);
    for (std::size_t c = 0; c < labels.size(); ++c) {
      auto& v = values[labels[c]];
      v.insert(v.end(), members[c].begin(), members[c].end());
    }
    GroupValues view;
    for (const auto& v : values) view.push_back(&v);
    return minus_p(test(view));
  };
  t.permutation =
      stats::permutation_test(label, statistic, permutations, seed, stats::Alternative::Greater);
  note_smallest_p(t);
  return t;
}

ClusterTest clustered_pairs_test(const std::vector<double>& a, const std::vector<double>& b,
                                 const std::vector<std::uint32_t>& cluster_of_pair,
                                 const RunTest& test, double p_unclustered,
                                 std::size_t permutations, std::uint64_t seed) {
  std::unordered_map<std::uint32_t, std::uint32_t> index_of;
  std::vector<std::uint32_t> cluster_of;  // pair -> cluster index
  for (const std::uint32_t id : cluster_of_pair) {
    const auto [it, added] = index_of.emplace(id, static_cast<std::uint32_t>(index_of.size()));
    cluster_of.push_back(it->second);
  }
  ClusterTest t;
  t.clusters = index_of.size();
  t.clusters_per_group = {t.clusters};
  t.p_unclustered = p_unclustered;
  // The sign of cluster c says whether its pairs keep (+1) or swap (-1) their two values.
  const std::vector<double> signs(t.clusters, 1.0);
  auto statistic = [&](std::span<const double> flipped) {
    std::vector<double> x = a, y = b;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (flipped[cluster_of[i]] < 0.0) std::swap(x[i], y[i]);
    }
    return minus_p(test({&x, &y}));
  };
  t.permutation =
      stats::sign_flip_test(signs, statistic, permutations, seed, stats::Alternative::Greater);
  note_smallest_p(t);
  return t;
}

}  // namespace vlbias::stats_internal
