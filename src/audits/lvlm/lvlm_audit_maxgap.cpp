// MaxGap of the LVLM counterfactual analysis (lvlm_audit.h, docs/methods.md#paper-003): per
// by-level and score, the distribution of max - min over each counterfactual set's rows, which
// groups hold the max, and bootstrap intervals over sets.
#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "lvlm_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"
#include "vlbias/report/summary.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): lvlm_audit_internal.h

namespace {

std::string group_label(const std::vector<std::string>& columns, const std::string& key) {
  const std::vector<std::string> parts = split_key(key);
  std::string out;
  for (std::size_t i = 0; i < columns.size() && i < parts.size(); ++i) {
    if (i > 0) out += ", ";
    out += columns[i];
    out += '=';
    out += parts[i];
  }
  return out;
}

Json stats_json(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  const stats::Summary d = stats::describe(v);
  const std::vector<double> qs = {25, 50, 75, 90};
  const std::vector<double> p = stats::percentiles(v, qs);
  Json j = Json::object();
  j["mean"] = json_number(d.mean);
  j["sd"] = json_number(d.sd);
  j["p25"] = json_number(p[0]);
  j["p50"] = json_number(p[1]);
  j["p75"] = json_number(p[2]);
  j["p90"] = json_number(p[3]);
  j["max"] = json_number(d.max);
  return j;
}

// Counts of `x` in `bins` equal bins over [0, hi] (numpy.histogram's convention: bins are
// half-open except the last, edges = i * (hi / bins)), and the cumulative share at each
// upper edge (the ECDF at the edges).
Json histogram_json(const std::vector<double>& x, double hi, std::size_t bins) {
  std::vector<double> edges(bins + 1);
  const double step = hi / static_cast<double>(bins);
  for (std::size_t i = 0; i < bins; ++i) edges[i] = static_cast<double>(i) * step;
  edges[bins] = hi;
  std::vector<std::size_t> counts(bins, 0);
  for (double v : x) {
    const auto it = std::upper_bound(edges.begin(), edges.end(), v);
    std::size_t i = static_cast<std::size_t>(it - edges.begin());
    i = i == 0 ? 0 : std::min(i - 1, bins - 1);
    ++counts[i];
  }
  Json cumulative = Json::array();
  std::size_t seen = 0;
  for (std::size_t c : counts) {
    seen += c;
    cumulative.push_back(
        x.empty() ? Json() : Json(static_cast<double>(seen) / static_cast<double>(x.size())));
  }
  return Json{{"edges", numbers_json(edges)}, {"counts", counts}, {"cumulative_share", cumulative}};
}

// One histogram grid per score, shared by every by-level so their distributions compare
// (paper 003's MaxGap histograms): kMaxGapBins equal bins over [0, the largest MaxGap].
constexpr std::size_t kMaxGapBins = 20;

// MaxGap = max - min of score k over a set's rows, and the set's max, for every set of `sets`
// with a value; `masks` holds the groups of the max, a bit each.
struct SetGaps {
  std::vector<double> gap, top;
  std::vector<std::uint64_t> masks;
  std::vector<std::uint32_t> sets;  // the set of each entry (sets without a score are left out)
};

SetGaps set_gaps(const LvlmState& s, const std::vector<std::uint32_t>& sets, std::size_t S,
                 std::size_t k) {
  SetGaps g;
  for (const std::uint32_t i : sets) {
    const SetScore& a = s.set_scores[static_cast<std::size_t>(i) * S + k];
    if (a.n == 0) continue;
    g.gap.push_back(a.max - a.min);
    g.top.push_back(a.max);
    g.masks.push_back(a.max_groups);
    g.sets.push_back(i);
  }
  return g;
}

// Shares of the groups holding the max (t tied groups get 1/t each), over every set or, with
// only_top, over the sets whose MaxGap is above `p90`: by group label, as values in group
// order, and the number of sets counted.
std::tuple<Json, std::vector<double>, std::size_t> max_group_shares(
    const LvlmState& s, const LvlmConfig& config, const std::vector<std::uint32_t>& groups,
    const SetGaps& g, bool only_top, double p90) {
  std::map<std::uint32_t, double> sum;
  for (const std::uint32_t grp : groups) sum[grp] = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < g.gap.size(); ++i) {
    if (only_top && !(g.gap[i] > p90)) continue;
    ++n;
    const double w = 1.0 / std::popcount(g.masks[i]);
    for (std::uint64_t m = g.masks[i]; m != 0; m &= m - 1) sum[std::countr_zero(m)] += w;
  }
  Json j = Json::object();
  std::vector<double> values;
  for (const auto& [grp, v] : sum) {
    const double x = n == 0 ? kNaN : v / static_cast<double>(n);
    j[group_label(config.group, s.groups[grp])] = json_number(x);
    values.push_back(x);
  }
  return std::make_tuple(j, values, n);
}

// The maxgap table's row of result `r` (by-level b, score k).
void put_maxgap_row(TableBuilder& table, const LvlmState& s, const LvlmConfig& config,
                    std::size_t b, std::size_t k, const Json& r, std::size_t sets,
                    const stats::Interval& ci_mean, const stats::Interval& ci_p90) {
  const Json& g = r["maxgap"];
  const Json& m = r["max"];
  table.row();
  put_level(table, config.by, s.by_levels[b]);
  table.put("score", config.scores[k]);
  table.put("sets", static_cast<double>(sets));
  for (const char* f : {"mean", "sd", "p25", "p50", "p75", "p90", "max"}) {
    table.put(fmt::format("maxgap_{}", f), g[f].is_null() ? kNaN : g[f].get<double>());
  }
  table.put("maxgap_mean_lower", ci_mean.lower);
  table.put("maxgap_mean_upper", ci_mean.upper);
  table.put("maxgap_p90_lower", ci_p90.lower);
  table.put("maxgap_p90_upper", ci_p90.upper);
  for (const char* f : {"mean", "sd", "p25", "p50", "p75", "p90", "max"}) {
    table.put(fmt::format("max_{}", f), m[f].is_null() ? kNaN : m[f].get<double>());
  }
}

// The result of by-level b and score k (over `sets`, the by-level's sets, and `groups`, its
// groups); writes its rows of the maxgap and maxgap_group_share tables.
Json maxgap_result(const LvlmState& s, const LvlmConfig& config, const LvlmReportOptions& o,
                   std::size_t b, std::size_t k, const std::vector<std::uint32_t>& sets,
                   const std::vector<std::uint32_t>& groups, double gap_top, TableBuilder& table,
                   TableBuilder& shares, std::vector<std::pair<std::string, Table>>& units) {
  const std::size_t S = config.scores.size();
  const SetGaps g = set_gaps(s, sets, S, k);
  Json r = Json::object();
  if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[b]);
  r["score"] = config.scores[k];
  r["sets"] = g.gap.size();
  std::size_t single = 0;
  for (const std::uint32_t i : sets) single += s.set_scores[i * S + k].n == 1;
  r["sets_with_one_row"] = single;
  r["maxgap"] = stats_json(g.gap);
  r["histogram"] = histogram_json(g.gap, gap_top > 0 ? gap_top : 1.0, kMaxGapBins);
  r["max"] = stats_json(g.top);
  const double p90 = g.gap.empty() ? kNaN : r["maxgap"]["p90"].get<double>();
  [[maybe_unused]] const auto [share_all, share_all_v, n_all] =
      max_group_shares(s, config, groups, g, false, p90);
  const auto [share_top, share_top_v, n_top] = max_group_shares(s, config, groups, g, true, p90);
  r["max_group_share"] = share_all;
  r["max_group_share_top"] = share_top;
  r["sets_above_p90"] = n_top;
  stats::Interval ci_mean, ci_p90;
  if (o.bootstrap > 0) {
    const std::vector<std::uint32_t> cluster = set_clusters(s, config, o, g.sets);
    std::tie(ci_mean, ci_p90) =
        bootstrap_mean_p90(g.gap, {}, cluster, o, derive_seed(o.seed, b * S + k));
    r["ci"] = {{"maxgap_mean", interval_json(ci_mean, o.bootstrap)},
               {"maxgap_p90", interval_json(ci_p90, o.bootstrap)},
               {"unit", bootstrap_unit(o, "counterfactual set")}};
    if (!cluster.empty())
      r["ci"]["clusters"] = *std::max_element(cluster.begin(), cluster.end()) + 1;
  }
  put_maxgap_row(table, s, config, b, k, r, g.gap.size(), ci_mean, ci_p90);
  // The per-set MaxGap whose mean is r.maxgap.mean (summary.json's units).
  if (!g.gap.empty()) {
    TableBuilder u("units");
    for (std::size_t i = 0; i < g.gap.size(); ++i) {
      u.row();
      u.put("set", s.set_keys[g.sets[i]]);
      u.put("maxgap", g.gap[i]);
    }
    units.emplace_back(
        units_table_name("maxgap", {config.scores[k], level_text(r.value("by", Json()))}),
        u.build());
  }
  std::size_t gi = 0;
  for (const std::uint32_t gid : groups) {
    shares.row();
    put_level(shares, config.by, s.by_levels[b]);
    shares.put("score", config.scores[k]);
    put_level(shares, config.group, s.groups[gid]);
    shares.put("share", share_all_v[gi]);
    shares.put("share_above_p90", share_top_v[gi]);
    ++gi;
  }
  return r;
}

}  // namespace

AnalysisOutput lvlm_maxgap(const LvlmState& s, const LvlmConfig& config,
                           const LvlmReportOptions& o) {
  VLBIAS_CHECK(!config.scores.empty(), UsageError, "MaxGap needs at least one score column");
  const std::size_t S = config.scores.size();
  const auto level_groups = groups_by_level(s);
  AnalysisOutput out;
  TableBuilder table("maxgap"), shares("maxgap_group_share");
  Json results = Json::array();
  const std::vector<std::vector<std::uint32_t>> sets_of = sets_by_level(s);
  std::vector<double> gap_top(S, 0.0);
  for (std::size_t i = 0; i < s.set_keys.size(); ++i) {
    for (std::size_t k = 0; k < S; ++k) {
      const SetScore& a = s.set_scores[i * S + k];
      if (a.n > 0) gap_top[k] = std::max(gap_top[k], a.max - a.min);
    }
  }
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    for (std::size_t k = 0; k < S; ++k) {
      results.push_back(maxgap_result(s, config, o, b, k, sets_of[b], level_groups[b], gap_top[k],
                                      table, shares, out.units));
    }
  }
  out.json["definition"] =
      "MaxGap = max - min of the score over a counterfactual set's rows (Howard et al. Eq. 1); "
      "Max = the set's max. max_group_share: share of sets whose max a group holds (t tied "
      "groups get 1/t each); _top: among sets with MaxGap above the p90. histogram: counts in 20 "
      "equal bins over [0, the score's largest MaxGap] (half-open, the last closed) and the "
      "cumulative share at each upper edge.";
  out.json["results"] = std::move(results);
  std::vector<std::size_t> missing = s.rows_missing_score;
  Json miss = Json::object();
  for (std::size_t k = 0; k < S; ++k) miss[config.scores[k]] = missing[k];
  out.json["rows_missing_score"] = miss;
  out.tables.emplace_back("maxgap", table.build());
  out.tables.emplace_back("maxgap_group_share", shares.build());
  return out;
}

}  // namespace vlbias
