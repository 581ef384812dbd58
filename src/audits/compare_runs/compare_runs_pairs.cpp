// compare-runs: one pair's test (paired bootstrap with paired t, or the normal approximation
// from the runs' own intervals) and the ranks of the runs (include/vlbias/audits/compare_runs.h).

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "compare_runs_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/intervals.h"
#include "vlbias/stats/stats.h"

namespace vlbias::audits_internal {

double num(const Json& j) {
  return j.is_number() ? j.get<double>() : NAN;
}

// A run's interval of a finding: {lower, upper, level} with finite bounds, or none.
RunCi run_ci(const Json& f) {
  RunCi c;
  if (!f.contains("ci") || !f["ci"].is_object()) return c;
  c.lower = num(f["ci"]["lower"]);
  c.upper = num(f["ci"]["upper"]);
  if (f["ci"].contains("level") && f["ci"]["level"].is_number()) c.level = num(f["ci"]["level"]);
  c.ok = std::isfinite(c.lower) && std::isfinite(c.upper) && c.upper >= c.lower && c.level > 0 &&
         c.level < 1;
  return c;
}
double run_se(const RunCi& c) {
  return (c.upper - c.lower) / (2.0 * stats::normal_quantile((1.0 + c.level) / 2.0));
}

Json paired_test(const UnitsData& a, const UnitsData& b, const CompareRunsOptions& o,
                 std::uint64_t seed) {
  std::map<std::string, std::size_t> b_index;
  for (std::size_t i = 0; i < b.keys.size(); ++i) b_index.emplace(b.keys[i], i);
  std::vector<UnitSums> ua, ub;  // shared units, in A's order
  for (std::size_t i = 0; i < a.keys.size(); ++i) {
    const auto it = b_index.find(a.keys[i]);
    if (it == b_index.end()) continue;
    ua.push_back(a.units[i]);
    ub.push_back(b.units[it->second]);
  }
  const std::size_t n = ua.size();
  Json units{{"shared", n}, {"only_a", a.keys.size() - n}, {"only_b", b.keys.size() - n}};
  Json out{{"method", "paired"}, {"test", "paired bootstrap"}, {"units", units}};
  std::vector<std::uint32_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::uint32_t>(i);
  const double diff = aggregate(ub, b.difference, all) - aggregate(ua, a.difference, all);
  out["difference"] = json_number(diff);
  std::vector<double> reps(o.bootstrap, NAN);
  if (n >= 2) {
    parallel_for(o.bootstrap, [&](std::size_t r) {
      Rng rng(seed, r);
      std::vector<std::uint32_t> idx(n);
      for (auto& i : idx) i = static_cast<std::uint32_t>(rng.uniform_index(n));
      reps[r] = aggregate(ub, b.difference, idx) - aggregate(ua, a.difference, idx);
    });
  }
  std::size_t below = 0, above = 0, defined = 0;
  for (const double d : reps) {
    if (std::isnan(d)) continue;
    ++defined;
    below += d <= 0;
    above += d >= 0;
  }
  const stats::Interval ci = stats::percentile_interval(reps, o.level, seed);
  out["ci"] =
      Json{{"lower", json_number(ci.lower)}, {"upper", json_number(ci.upper)}, {"level", o.level}};
  const double p = defined == 0
                       ? NAN
                       : std::min(1.0, 2.0 * static_cast<double>(std::min(below, above) + 1) /
                                           static_cast<double>(defined + 1));
  out["p"] = json_number(p);
  out["bootstrap"] = Json{{"resamples", o.bootstrap}, {"defined", defined}, {"seed", seed}};
  if (!ci.note.empty()) out["note"] = n < 2 ? fmt::format("{} shared unit(s)", n) : ci.note;
  if (!a.difference && !b.difference && n >= 2) {
    std::vector<double> ma(n), mb(n);
    for (std::size_t i = 0; i < n; ++i) {
      ma[i] = ua[i].n0 > 0 ? ua[i].s0 / ua[i].n0 : NAN;
      mb[i] = ub[i].n0 > 0 ? ub[i].s0 / ub[i].n0 : NAN;
    }
    std::vector<double> fa, fb;  // units with a value in both
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(ma[i]) || std::isnan(mb[i])) continue;
      fa.push_back(ma[i]);
      fb.push_back(mb[i]);
    }
    const stats::TestResult t = stats::paired_t(fb, fa);
    out["paired_t"] = Json{{"t", json_number(t.statistic)},
                           {"df", t.df.empty() ? Json(nullptr) : json_number(t.df[0])},
                           {"p", json_number(t.p_value)},
                           {"n", fa.size()}};
  } else {
    out["paired_t"] = nullptr;
  }
  return out;
}

Json unpaired_test(const Json& fa, const Json& fb, double level) {
  const RunCi ca = run_ci(fa), cb = run_ci(fb);
  const double diff = num(fb["estimate"]) - num(fa["estimate"]);
  Json out{{"method", "unpaired"}, {"test", "normal approximation"}};
  out["difference"] = json_number(diff);
  if (!ca.ok || !cb.ok || !std::isfinite(diff)) {
    out["method"] = "none";
    out["test"] = nullptr;
    out["ci"] = Json{{"lower", nullptr}, {"upper", nullptr}, {"level", level}};
    out["p"] = nullptr;
    return out;
  }
  const double se = std::hypot(run_se(ca), run_se(cb));
  const double z = stats::normal_quantile((1.0 + level) / 2.0);
  out["se"] = json_number(se);
  if (!(se > 0)) {
    out["method"] = "none";
    out["ci"] = Json{{"lower", nullptr}, {"upper", nullptr}, {"level", level}};
    out["p"] = nullptr;
    return out;
  }
  out["ci"] = Json{{"lower", diff - z * se}, {"upper", diff + z * se}, {"level", level}};
  out["p"] = json_number(stats::normal_two_sided_p(diff / se));
  return out;
}

std::vector<std::size_t> best_of(const std::vector<double>& v, const std::string& better) {
  std::vector<std::size_t> best;
  double best_score = NAN;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) continue;
    const double s = better == "lower" ? v[i] : better == "higher" ? -v[i] : std::fabs(v[i]);
    if (best.empty() || s < best_score) {
      best = {i};
      best_score = s;
    } else if (s == best_score) {
      best.push_back(i);
    }
  }
  return best;
}

std::vector<double> point_ranks(const std::vector<double>& v, const std::string& better) {
  auto score = [&](double x) {
    return better == "lower" ? x : better == "higher" ? -x : std::fabs(x);
  };
  std::vector<double> ranks(v.size(), NAN);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) continue;
    double r = 1;
    for (std::size_t j = 0; j < v.size(); ++j)
      if (!std::isnan(v[j]) && score(v[j]) < score(v[i])) ++r;
    ranks[i] = r;
  }
  return ranks;
}

}  // namespace vlbias::audits_internal
