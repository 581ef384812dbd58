// The comparisons of the LVLM counterfactual analysis (lvlm_audit.h, docs/methods.md#paper-003):
// set-blocked tests of the groups within complete counterfactual sets (Friedman, and a
// within-set permutation test per group), and paired comparisons of MaxGap between by-levels
// (mitigation vs baseline, LVLM vs LLM).
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "lvlm_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/lvlm_results.h"
#include "vlbias/report/summary.h"
#include "vlbias/stats/compare.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): lvlm_audit_internal.h

namespace {

// The tests of one by-level (b) and member measure (m).
struct ComparisonRow {
  std::size_t b, m, n_sets, incomplete;
  std::size_t clusters = 0;  // clustered tests: the clusters of the complete sets
  stats::TestResult friedman;
  std::vector<std::uint32_t> groups;
  std::vector<double> mean, gap, p;
  // The pilot variance a power analysis reads (power_pilot.h): within-set residual sd, set
  // sd, and with clusters the group x cluster sd; NaN where undefined.
  double residual_sd = kNaN, set_sd = kNaN, cluster_sd = kNaN;
};

// Where each set's run of members starts (members are sorted by set, then group), then the end.
std::vector<std::size_t> set_runs(const LvlmState& s) {
  std::vector<std::size_t> run_start;
  for (std::size_t i = 0; i < s.member_set.size(); ++i) {
    if (i == 0 || s.member_set[i] != s.member_set[i - 1]) run_start.push_back(i);
  }
  run_start.push_back(s.member_set.size());
  return run_start;
}

// The complete sets of row.b for measure row.m (every group of the by-level, gl, once, each
// value defined), k = |gl| values each in group order, and their set ids in `sets`; counts the
// others in row.incomplete.
std::vector<double> complete_blocks(const LvlmState& s, std::size_t M,
                                    const std::vector<std::uint32_t>& gl,
                                    const std::vector<std::size_t>& run_start, ComparisonRow& row,
                                    std::vector<std::uint32_t>& sets) {
  const std::size_t k = gl.size();
  std::vector<std::uint32_t> slot(s.groups.size(), 0xffffffffu);
  for (std::size_t j = 0; j < k; ++j) slot[gl[j]] = j;
  std::vector<double> blocks;  // complete sets, k values each in group order
  std::vector<double> block(k);
  for (std::size_t r = 0; r + 1 < run_start.size(); ++r) {
    const std::size_t a = run_start[r], e = run_start[r + 1];
    if (s.set_by[s.member_set[a]] != row.b) continue;
    bool complete = e - a == k;
    for (std::size_t i = a; complete && i < e; ++i) {
      const double v = s.member_values[i * M + row.m];
      const std::uint32_t j = slot[s.member_group[i]];
      // Sorted by group: a repeated group shows up as a wrong slot.
      if (std::isnan(v) || j != i - a)
        complete = false;
      else
        block[j] = v;
    }
    if (!complete) {
      ++row.incomplete;
      continue;
    }
    blocks.insert(blocks.end(), block.begin(), block.end());
    sets.push_back(s.member_set[a]);
  }
  return blocks;
}

// Per cluster (ids 0..C-1) and group, the mean of its sets' values: Friedman's blocks when
// sets are clustered (the sets of one image set are not independent blocks).
std::vector<double> cluster_means(const std::vector<double>& blocks, std::size_t k,
                                  const std::vector<std::uint32_t>& cluster, std::size_t C) {
  std::vector<double> sum(C * k, 0.0), count(C, 0.0);
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    for (std::size_t j = 0; j < k; ++j) sum[cluster[i] * k + j] += blocks[i * k + j];
    count[cluster[i]] += 1.0;
  }
  for (std::size_t c = 0; c < C; ++c) {
    for (std::size_t j = 0; j < k; ++j) sum[c * k + j] /= count[c];
  }
  return sum;
}

// The sample variance of v (n >= 2).
double sample_variance(const std::vector<double>& v) {
  return v.size() < 2 ? kNaN : stats::variance(v);
}

// Sum of squared two-way residuals x_ij - row_i - col_j + grand of rows `idx` (k values each).
double two_way_ss(const std::vector<double>& x, std::size_t k,
                  const std::vector<std::size_t>& idx) {
  std::vector<double> row(idx.size(), 0.0), col(k, 0.0);
  double grand = 0;
  for (std::size_t r = 0; r < idx.size(); ++r) {
    for (std::size_t j = 0; j < k; ++j) {
      const double v = x[idx[r] * k + j];
      row[r] += v / static_cast<double>(k);
      col[j] += v / static_cast<double>(idx.size());
      grand += v / static_cast<double>(k * idx.size());
    }
  }
  double ss = 0;
  for (std::size_t r = 0; r < idx.size(); ++r) {
    for (std::size_t j = 0; j < k; ++j) {
      const double e = x[idx[r] * k + j] - row[r] - col[j] + grand;
      ss += e * e;
    }
  }
  return ss;
}

// The variance components of the set-blocked design (docs/methods.md#power): residual
// sigma_e^2 from the set x group residuals (within clusters when clustered), the set variance
// var(set means) - sigma_e^2 / k, and with C clusters the group x cluster variance: the
// residual variance of the cluster-mean table minus sigma_e^2 mean(1 / m_c) (moments,
// truncated at 0).
void blocked_variance(const std::vector<double>& blocks, std::size_t n, std::size_t k,
                      const std::vector<std::uint32_t>& cluster, std::size_t C,
                      ComparisonRow& row) {
  std::vector<double> set_mean(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j) set_mean[i] += blocks[i * k + j] / static_cast<double>(k);
  }
  double ss = 0, df = 0;
  std::vector<std::vector<std::size_t>> members(std::max<std::size_t>(C, 1));
  for (std::size_t i = 0; i < n; ++i) members[C == 0 ? 0 : cluster[i]].push_back(i);
  for (const auto& idx : members) {
    ss += two_way_ss(blocks, k, idx);
    df += static_cast<double>((std::max<std::size_t>(idx.size(), 1) - 1) * (k - 1));
  }
  const double resid = df > 0 ? ss / df : (C > 0 ? 0.0 : kNaN);
  row.residual_sd = std::sqrt(resid);
  row.set_sd = std::sqrt(std::max(0.0, sample_variance(set_mean) - resid / static_cast<double>(k)));
  if (C < 2) return;
  const std::vector<double> means = cluster_means(blocks, k, cluster, C);
  std::vector<std::size_t> all(C);
  double inv_m = 0;
  for (std::size_t c = 0; c < C; ++c) {
    all[c] = c;
    inv_m += 1.0 / static_cast<double>(members[c].size()) / static_cast<double>(C);
  }
  const double v = two_way_ss(means, k, all) / static_cast<double>((C - 1) * (k - 1));
  row.cluster_sd = std::sqrt(std::max(0.0, v - resid * inv_m));
}

// Friedman over the n complete sets of k values, and per group the mean gap to the other
// groups of its set with its permutation p (stream `seed`). With `cluster` (one id per set,
// 0..C-1) the permutation relabels each cluster's sets alike and Friedman's blocks are the
// clusters' means.
void set_blocked_tests(const std::vector<double>& blocks, std::size_t n, std::size_t k,
                       const std::vector<std::uint32_t>& cluster, const LvlmReportOptions& o,
                       std::uint64_t seed, ComparisonRow& row) {
  const std::size_t C =
      cluster.empty() ? 0 : *std::max_element(cluster.begin(), cluster.end()) + std::size_t{1};
  row.clusters = C;
  row.friedman = C == 0 ? stats::friedman(blocks, k)
                        : stats::friedman(cluster_means(blocks, k, cluster, C), k);
  blocked_variance(blocks, n, k, cluster, C, row);
  // Per set: d_j = x_j - mean of the others. Null: each set's label lands on a uniform member.
  std::vector<double> d(blocks.size());
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < k; ++j) sum += blocks[i * k + j];
    for (std::size_t j = 0; j < k; ++j) {
      const double x = blocks[i * k + j];
      d[i * k + j] = x - (sum - x) / static_cast<double>(k - 1);
    }
  }
  row.mean.assign(k, 0);
  row.gap.assign(k, 0);
  for (std::size_t j = 0; j < k; ++j) {
    double sm = 0, sg = 0;
    for (std::size_t i = 0; i < n; ++i) {
      sm += blocks[i * k + j];
      sg += d[i * k + j];
    }
    row.mean[j] = sm / static_cast<double>(n);
    row.gap[j] = sg / static_cast<double>(n);
  }
  std::vector<double> null(o.permutations);
  parallel_for(o.permutations, [&](std::size_t rep) {
    Rng rng(seed, rep);
    double sum = 0;
    if (C == 0) {
      for (std::size_t i = 0; i < n; ++i) sum += d[i * k + rng.uniform_index(k)];
    } else {
      // The label of a set's member j lands on member u[c] of every set of cluster c.
      std::vector<std::uint32_t> u(C);
      for (std::size_t c = 0; c < C; ++c) u[c] = static_cast<std::uint32_t>(rng.uniform_index(k));
      for (std::size_t i = 0; i < n; ++i) sum += d[i * k + u[cluster[i]]];
    }
    null[rep] = sum / static_cast<double>(n);
  });
  row.p.assign(k, 0);
  for (std::size_t j = 0; j < k; ++j) {
    const double t = std::abs(row.gap[j]) * (1.0 - 1e-12);
    std::size_t exceed = 0;
    for (const double x : null) exceed += std::abs(x) >= t;
    row.p[j] = (1.0 + static_cast<double>(exceed)) / (1.0 + static_cast<double>(o.permutations));
  }
}

// The section of the tests: Holm and BH over the Friedman p of every test and over the
// permutation p of every (test, group) pair.
AnalysisOutput group_tests_section(const LvlmState& s, const LvlmConfig& config,
                                   const LvlmReportOptions& o,
                                   const std::vector<std::string>& measures,
                                   const std::vector<ComparisonRow>& rows,
                                   LvlmGroupTests& section) {
  std::vector<double> fp, pp;
  for (const ComparisonRow& r : rows) {
    fp.push_back(r.friedman.p_value);
    for (const double p : r.p) pp.push_back(p);
  }
  const std::vector<double> f_holm = stats::holm(fp), f_bh = stats::benjamini_hochberg(fp);
  const std::vector<double> p_holm = stats::holm(pp), p_bh = stats::benjamini_hochberg(pp);
  AnalysisOutput out;
  TableBuilder tests(kLvlmGroupTestsSection), effects("group_effects");
  section = LvlmGroupTests{};
  std::size_t pi = 0;
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const ComparisonRow& r = rows[t];
    LvlmGroupTest& j = section.results.emplace_back();
    if (!config.by.empty()) j.by = level_json(config.by, s.by_levels[r.b]);
    j.measure = measures[r.m];
    j.complete_sets = static_cast<double>(r.n_sets);
    j.incomplete_sets = static_cast<double>(r.incomplete);
    j.clusters = o.cluster.empty() ? kNaN : static_cast<double>(r.clusters);
    j.pilot_variance = LvlmGroupTest::PilotVariance{r.residual_sd, r.set_sd, r.cluster_sd};
    j.friedman = LvlmGroupTest::Friedman{r.friedman, f_holm[t], f_bh[t]};
    tests.row();
    put_level(tests, config.by, s.by_levels[r.b]);
    tests.put("measure", measures[r.m]);
    tests.put("complete_sets", static_cast<double>(r.n_sets));
    tests.put("incomplete_sets", static_cast<double>(r.incomplete));
    if (!o.cluster.empty()) tests.put("clusters", static_cast<double>(r.clusters));
    tests.put("friedman_chi2", r.friedman.statistic);
    tests.put("df", r.friedman.df.empty() ? kNaN : r.friedman.df[0]);
    tests.put("p", r.friedman.p_value);
    tests.put("p_holm", f_holm[t]);
    tests.put("p_bh", f_bh[t]);
    tests.put("kendalls_w", r.friedman.effect_size);
    for (std::size_t g = 0; g < r.p.size(); ++g, ++pi) {
      j.groups.push_back({level_json(config.group, s.groups[r.groups[g]]), r.mean[g], r.gap[g],
                          r.p[g], p_holm[pi], p_bh[pi]});
      effects.row();
      put_level(effects, config.by, s.by_levels[r.b]);
      effects.put("measure", measures[r.m]);
      put_level(effects, config.group, s.groups[r.groups[g]]);
      effects.put("mean", r.mean[g]);
      effects.put("gap_to_others", r.gap[g]);
      effects.put("p", r.p[g]);
      effects.put("p_holm", p_holm[pi]);
      effects.put("p_bh", p_bh[pi]);
    }
  }
  section.definition =
      "Set-blocked tests over complete counterfactual sets (every group once, value defined): "
      "Friedman chi-square (scipy.stats.friedmanchisquare); per group the mean gap to the other "
      "groups of its set, with a Monte Carlo p from permuting the labels within each set, "
      "p = (1 + #{|T*| >= |T|}) / (1 + B). pilot_variance: the set-blocked design's variance "
      "components for vlbias power (docs/methods.md#power): residual_sd from the set x group "
      "residuals (within clusters when clustered), set_sd, cluster_sd (group x cluster).";
  if (!o.cluster.empty()) {
    section.cluster = o.cluster;
    section.cluster_definition =
        "Sets are clustered by the cluster columns (the seeds of one image set): a permutation "
        "relabels the groups of every set of a cluster alike (one uniform member per cluster), "
        "and Friedman's blocks are the clusters' per-group means over their complete sets.";
  }
  section.permutations = o.permutations;
  section.seed = o.seed;
  out.json = to_json(section);
  out.tables.emplace_back(kLvlmGroupTestsSection, tests.build());
  out.tables.emplace_back("group_effects", effects.build());
  return out;
}

}  // namespace

// ------------------------------------------------------------------ group tests

AnalysisOutput lvlm_group_tests(const LvlmState& s, const LvlmConfig& config,
                                const LvlmReportOptions& o) {
  LvlmGroupTests section;
  return lvlm_group_tests_typed(s, config, o, section);
}

AnalysisOutput lvlm_group_tests_typed(const LvlmState& s, const LvlmConfig& config,
                                      const LvlmReportOptions& o, LvlmGroupTests& section) {
  VLBIAS_CHECK(config.keep_members, UsageError, "group tests need the per-row members");
  VLBIAS_CHECK(o.permutations > 0, UsageError, "group tests need permutations > 0");
  const std::vector<std::string> measures = config.member_measures();
  const std::size_t M = measures.size();
  const auto level_groups = groups_by_level(s);
  std::vector<ComparisonRow> rows;
  const std::vector<std::size_t> run_start = set_runs(s);
  std::size_t task = 0;
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    const auto& gl = level_groups[b];
    const std::size_t k = gl.size();
    for (std::size_t m = 0; m < M; ++m, ++task) {
      ComparisonRow row{b, m, 0, 0, 0, {}, gl, {}, {}, {}};
      std::vector<std::uint32_t> sets;
      const std::vector<double> blocks = complete_blocks(s, M, gl, run_start, row, sets);
      const std::size_t n = blocks.size() / std::max<std::size_t>(k, 1);
      row.n_sets = n;
      if (n == 0 || k < 2) {
        row.friedman.test = "friedman";
        row.friedman.note = n == 0 ? "no complete counterfactual set (every group once, "
                                     "every value defined)"
                                   : "fewer than 2 groups";
        rows.push_back(std::move(row));
        continue;
      }
      const std::vector<std::uint32_t> cluster = set_clusters(s, config, o, sets);
      set_blocked_tests(blocks, n, k, cluster, o, derive_seed(o.seed, task), row);
      rows.push_back(std::move(row));
    }
  }
  return group_tests_section(s, config, o, measures, rows, section);
}

// ------------------------------------------------------------------ paired

namespace {

// Paired t and Wilcoxon of treatment - baseline over matched sets (x1[i], x0[i]), through
// compare_groups so that, with clusters (one id per set), both become the cluster sign-flip
// test of compare.h (a cluster's sets swap arms together). The arms are named so that the
// treatment sorts first: compare's differences are first minus second.
struct PairedTests {
  stats::TestResult paired_t, wilcoxon;
  Json json = Json::object();
};

PairedTests paired_tests(const std::vector<double>& x1, const std::vector<double>& x0,
                         const std::vector<std::uint32_t>& cluster, const LvlmReportOptions& o,
                         std::uint64_t seed) {
  const std::size_t n = x1.size();
  Table t;
  t.source = "<matched sets>";
  t.rows = 2 * n;
  std::vector<std::string> pair, arm, clusters;
  std::vector<double> value;
  for (std::size_t i = 0; i < n; ++i) {
    for (const bool treated : {true, false}) {
      pair.push_back(std::to_string(i));
      arm.push_back(treated ? "0 treatment" : "1 baseline");
      if (!cluster.empty()) clusters.push_back(std::to_string(cluster[i]));
      value.push_back(treated ? x1[i] : x0[i]);
    }
  }
  add_string_column(t, "pair", pair);
  add_string_column(t, "arm", arm);
  add_numeric_column(t, "maxgap", std::move(value));
  CompareOptions c;
  c.value = "maxgap";
  c.by = {"arm"};
  c.pair_key = "pair";
  c.alternative = o.paired_alternative;
  if (!cluster.empty()) {
    add_string_column(t, "cluster", clusters);
    c.cluster = {"cluster"};
    c.permutations = o.paired_permutations;
    c.seed = seed;
  }
  PairedTests out;
  for (const GroupTest test : {GroupTest::PairedT, GroupTest::Wilcoxon}) {
    c.test = test;
    stats::TestResult& r = test == GroupTest::PairedT ? out.paired_t : out.wilcoxon;
    r.test = to_string(test);
    Json extra = Json::object();
    if (n == 0) {
      r.note = "no matched set";
    } else {
      const Comparison cmp = compare_groups(t, c).comparisons.at(0);
      r = cmp.result;
      if (!cluster.empty()) {
        extra["p_unclustered"] = json_number(cmp.cluster.p_unclustered);
        extra["permutation"] = cmp.cluster.permutation.method;
      }
    }
    Json j = to_json(r);
    j.update(extra);
    j["alternative"] = stats::to_string(o.paired_alternative);
    out.json[test == GroupTest::PairedT ? "paired_t" : "wilcoxon"] = std::move(j);
  }
  return out;
}

// Holm over every paired result's p of each test (paired_t, wilcoxon): p_holm beside each.
void holm_over_results(Json& results) {
  for (const char* test : {"paired_t", "wilcoxon"}) {
    std::vector<double> p;
    for (const Json& r : results) {
      const Json& v = r["tests"][test]["p_value"];
      p.push_back(v.is_null() ? kNaN : v.get<double>());
    }
    const std::vector<double> holm = stats::holm(p);
    for (std::size_t i = 0; i < p.size(); ++i) {
      results[i]["tests"][test]["p_holm"] = json_number(holm[i]);
    }
  }
}

// The paired comparison of by-level b with its baseline b0 on score k (bootstrap stream
// `task`); writes its row of the paired table.
Json paired_result(const LvlmState& s, const LvlmConfig& config, const LvlmReportOptions& o,
                   const std::vector<std::vector<std::uint32_t>>& sets_of, std::size_t b,
                   std::uint32_t b0, std::size_t k, std::size_t task, TableBuilder& table,
                   std::vector<std::pair<std::string, Table>>& units) {
  const std::size_t S = config.scores.size();
  std::unordered_map<std::string, double> base_gap;
  for (const std::uint32_t i : sets_of[b0]) {
    const SetScore& a = s.set_scores[i * S + k];
    if (a.n > 0) base_gap.emplace(s.set_keys[i], a.max - a.min);
  }
  std::vector<double> x0, x1;          // baseline, treatment (treatment set order: sorted keys)
  std::vector<std::uint32_t> matched;  // the treatment's set of each pair
  for (const std::uint32_t i : sets_of[b]) {
    const SetScore& a = s.set_scores[i * S + k];
    const auto it = base_gap.find(s.set_keys[i]);
    if (a.n == 0 || it == base_gap.end()) continue;
    x0.push_back(it->second);
    x1.push_back(a.max - a.min);
    matched.push_back(i);
  }
  const std::size_t n = x0.size();
  const auto mean = [](const std::vector<double>& v) { return stats::mean(v); };
  const auto p90 = [](std::vector<double> v) {
    return v.empty() ? kNaN : stats::percentile_select(v, 90);
  };
  Json r = Json::object();
  r["by"] = level_json(config.by, s.by_levels[b]);
  r["baseline"] = level_json(config.by, s.by_levels[b0]);
  r["score"] = config.scores[k];
  r["matched_sets"] = n;
  const double m0 = n ? mean(x0) : kNaN, m1 = n ? mean(x1) : kNaN;
  const double q0 = p90(x0), q1 = p90(x1);
  r["maxgap_mean_baseline"] = json_number(m0);
  r["maxgap_mean"] = json_number(m1);
  r["diff_mean"] = json_number(m1 - m0);
  r["maxgap_p90_baseline"] = json_number(q0);
  r["maxgap_p90"] = json_number(q1);
  r["diff_p90"] = json_number(q1 - q0);
  stats::TestResult pr;
  pr.test = "pearson";
  if (n >= 2) {
    pr = stats::pearson(x0, x1);
  } else {
    pr.note = "fewer than 2 matched sets";
  }
  r["pearson"] = to_json(pr);
  // Fisher z interval of r (scipy's pearsonr(...).confidence_interval()); needs n > 3.
  stats::Interval r_ci;
  r_ci.level = o.ci;
  r_ci.note = "a Fisher interval needs more than 3 matched sets";
  if (n > 3) r_ci = stats::fisher_z_interval(pr.statistic, 1.0 / std::sqrt(n - 3.0), o.ci);
  r["pearson"]["ci"] = to_json(r_ci);
  const std::vector<std::uint32_t> cluster = set_clusters(s, config, o, matched);
  // Their own stream: the bootstrap's seeds stay as they were.
  const PairedTests tests =
      paired_tests(x1, x0, cluster, o, derive_seed(derive_seed(o.seed, task), 1));
  r["tests"] = tests.json;
  stats::Interval ci_mean, ci_p90;
  if (o.bootstrap > 0) {
    const std::uint64_t seed = derive_seed(o.seed, task);
    std::tie(ci_mean, ci_p90) = bootstrap_mean_p90(x1, x0, cluster, o, seed);
    r["ci"] = {{"diff_mean", interval_json(ci_mean, o.bootstrap)},
               {"diff_p90", interval_json(ci_p90, o.bootstrap)},
               {"unit", bootstrap_unit(o, "matched counterfactual set")}};
    if (!cluster.empty())
      r["ci"]["clusters"] = *std::max_element(cluster.begin(), cluster.end()) + 1;
  }
  // The matched sets' MaxGap and their difference, whose mean is diff_mean (summary.json).
  if (n > 0) {
    TableBuilder u("units");
    for (std::size_t i = 0; i < n; ++i) {
      u.row();
      u.put("set", s.set_keys[matched[i]]);
      u.put("maxgap_baseline", x0[i]);
      u.put("maxgap", x1[i]);
      u.put("diff", x1[i] - x0[i]);
    }
    units.emplace_back(
        units_table_name(
            "paired", {config.scores[k], level_text(r["by"]) + "-vs-" + level_text(r["baseline"])}),
        u.build());
  }
  table.row();
  put_level(table, config.by, s.by_levels[b]);
  table.put("baseline", o.compare_baseline);
  table.put("score", config.scores[k]);
  table.put("matched_sets", static_cast<double>(n));
  table.put("maxgap_mean_baseline", m0);
  table.put("maxgap_mean", m1);
  table.put("diff_mean", m1 - m0);
  table.put("diff_mean_lower", ci_mean.lower);
  table.put("diff_mean_upper", ci_mean.upper);
  table.put("maxgap_p90_baseline", q0);
  table.put("maxgap_p90", q1);
  table.put("diff_p90", q1 - q0);
  table.put("diff_p90_lower", ci_p90.lower);
  table.put("diff_p90_upper", ci_p90.upper);
  table.put("pearson_r", pr.statistic);
  table.put("pearson_p", pr.p_value);
  table.put("pearson_r_lower", r_ci.lower);
  table.put("pearson_r_upper", r_ci.upper);
  table.put("paired_t", tests.paired_t.statistic);
  table.put("paired_t_p", tests.paired_t.p_value);
  table.put("wilcoxon_p", tests.wilcoxon.p_value);
  return r;
}

}  // namespace

AnalysisOutput lvlm_paired(const LvlmState& s, const LvlmConfig& config,
                           const LvlmReportOptions& o) {
  VLBIAS_CHECK(!config.scores.empty(), UsageError, "paired comparisons need a score column");
  const auto col = std::find(config.by.begin(), config.by.end(), o.compare_column);
  VLBIAS_CHECK(col != config.by.end(), UsageError,
               "the comparison column '{}' must be one of the by columns", o.compare_column);
  const std::size_t ci = static_cast<std::size_t>(col - config.by.begin());
  const std::size_t S = config.scores.size();
  std::map<std::string, std::uint32_t> level_index;
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) level_index.emplace(s.by_levels[b], b);
  const std::vector<std::vector<std::uint32_t>> sets_of = sets_by_level(s);
  AnalysisOutput out;
  TableBuilder table("paired");
  Json results = Json::array();
  bool any_baseline = false;
  std::size_t task = 0;
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    std::vector<std::string> parts = split_key(s.by_levels[b]);
    if (parts[ci] == o.compare_baseline) {
      any_baseline = true;
      continue;
    }
    parts[ci] = o.compare_baseline;
    const auto base = level_index.find(join_key(parts));
    if (base == level_index.end()) continue;
    const std::uint32_t b0 = base->second;
    for (std::size_t k = 0; k < S; ++k, ++task) {
      results.push_back(paired_result(s, config, o, sets_of, b, b0, k, task, table, out.units));
    }
  }
  VLBIAS_CHECK(any_baseline, InputError,
               "no by-level has {} = '{}'; expected the baseline value of the comparison column",
               o.compare_column, o.compare_baseline);
  holm_over_results(results);
  out.json["definition"] =
      "per counterfactual set present in both by-levels: MaxGap in the baseline and in the "
      "treatment; differences treatment - baseline of the mean and p90 with a paired bootstrap "
      "over sets; Pearson r of the per-set MaxGap; paired t and Wilcoxon signed-rank of "
      "treatment - baseline (with clusters: their cluster sign-flip permutation p), Holm over "
      "the results of each test.";
  out.json["alternative"] = stats::to_string(o.paired_alternative);
  out.json["compare_column"] = o.compare_column;
  out.json["baseline"] = o.compare_baseline;
  out.json["results"] = std::move(results);
  out.tables.emplace_back("paired", table.build());
  return out;
}

}  // namespace vlbias
