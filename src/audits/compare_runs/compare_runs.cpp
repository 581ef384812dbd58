// compare-runs: the comparison of several runs' summaries (include/vlbias/audits/compare_runs.h;
// docs/reports.md "Comparing runs"): which quantities the runs share, one test per pair of
// runs, the multiplicity correction, the ranks, and the output folder.
#include "vlbias/audits/compare_runs.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "compare_runs_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

namespace {

using namespace audits_internal;

std::string run_name(std::size_t i) {
  return i < 26 ? std::string(1, static_cast<char>('A' + i)) : fmt::format("R{}", i + 1);
}

void check_options(std::size_t runs, const CompareRunsOptions& o) {
  VLBIAS_CHECK(runs >= 2, UsageError, "compare-runs needs at least two run folders, got {}", runs);
  VLBIAS_CHECK(o.bootstrap >= 1, UsageError, "--bootstrap must be at least 1");
  stats::check_resamples(o.bootstrap, "compare-runs --bootstrap");
  VLBIAS_CHECK(o.level > 0 && o.level < 1, UsageError, "--level must lie in (0, 1), got {}",
               o.level);
  VLBIAS_CHECK(o.correction == "holm" || o.correction == "bh", UsageError,
               "--correction must be holm or bh, got '{}'", o.correction);
}

std::vector<RunData> load_runs(const std::vector<std::filesystem::path>& dirs) {
  std::vector<RunData> runs;
  std::map<std::filesystem::path, std::string> seen;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    std::error_code ec;
    const std::filesystem::path canon = std::filesystem::weakly_canonical(dirs[i], ec);
    const auto [it, fresh] = seen.emplace(ec ? dirs[i] : canon, dirs[i].string());
    VLBIAS_CHECK(fresh, InputError, "{}: the same run is given twice (as {} and {})",
                 dirs[i].string(), it->second, dirs[i].string());
    runs.push_back(load_run(dirs[i], run_name(i)));
    const std::string kind = runs.back().summary["kind"].get<std::string>();
    const std::string first = runs.front().summary["kind"].get<std::string>();
    VLBIAS_CHECK(kind == first, InputError,
                 "{}: a {} run; run A ({}) is a {} run: only runs of one audit kind compare",
                 runs.back().summary_path.string(), kind, dirs[0].string(), first);
  }
  return runs;
}

const Json& finding_of(const RunData& r, const std::string& id) {
  return r.summary["findings"][r.by_id.at(id)];
}

// The finding's interval, always as {lower, upper, level} (nulls when it has none), so every
// row of the report points at a number or a null.
Json ci_json(const Json& f) {
  Json ci{{"lower", nullptr}, {"upper", nullptr}, {"level", nullptr}};
  if (f.contains("ci") && f["ci"].is_object()) {
    for (const char* k : {"lower", "upper", "level"})
      if (f["ci"].contains(k) && f["ci"][k].is_number()) ci[k] = f["ci"][k];
  }
  return ci;
}

// One pair's entry: the estimates, then the paired or unpaired test and why.
Json pair_entry(RunData& ra, RunData& rb, const std::string& id, const CompareRunsOptions& o,
                const StimulusCheck& stim, std::uint64_t seed) {
  const Json& fa = finding_of(ra, id);
  const Json& fb = finding_of(rb, id);
  const UnitsData* ua = finding_units(ra, fa);
  const UnitsData* ub = finding_units(rb, fb);
  Json e{{"a", ra.name},
         {"b", rb.name},
         {"estimate_a", fa["estimate"]},
         {"estimate_b", fb["estimate"]},
         {"estimate_difference", json_number(num(fb["estimate"]) - num(fa["estimate"]))}};
  Json t;
  std::string reason;
  if (ua != nullptr && ub != nullptr && stim.same) {
    t = paired_test(*ua, *ub, o, seed);
    reason = fmt::format("{}; {} shared units ({} only in run {}, {} only in run {})", stim.text,
                         t["units"]["shared"].get<std::size_t>(),
                         t["units"]["only_a"].get<std::size_t>(), ra.name,
                         t["units"]["only_b"].get<std::size_t>(), rb.name);
  } else {
    t = unpaired_test(fa, fb, o.level);
    if (ua == nullptr && ub == nullptr) {
      reason = "neither run has a units table for this quantity";
    } else if (ua == nullptr || ub == nullptr) {
      reason = fmt::format("run {} has no units table for this quantity",
                           ua == nullptr ? ra.name : rb.name);
    } else {
      reason = stim.text;
    }
    if (t["method"] == "none") {
      const bool a_ok = run_ci(fa).ok, b_ok = run_ci(fb).ok;
      reason += !a_ok || !b_ok ? fmt::format(
                                     "; run {} reports no interval for this quantity, so "
                                     "there is no test",
                                     !a_ok ? ra.name : rb.name)
                               : "; both runs' intervals have zero width, so there is no test";
    }
  }
  for (auto it = t.begin(); it != t.end(); ++it) e[it.key()] = it.value();
  e["reason"] = reason;
  return e;
}

// The per-run aggregates over the units every run holds (aligned by key), for the paired
// ranking; empty when fewer than two units are shared.
std::vector<std::vector<UnitSums>> shared_units(const std::vector<const UnitsData*>& units) {
  std::vector<std::map<std::string, std::size_t>> index(units.size());
  for (std::size_t r = 0; r < units.size(); ++r)
    for (std::size_t i = 0; i < units[r]->keys.size(); ++i) index[r].emplace(units[r]->keys[i], i);
  std::vector<std::vector<UnitSums>> out(units.size());
  for (const std::string& key : units[0]->keys) {
    bool everywhere = true;
    for (const auto& m : index) everywhere = everywhere && m.count(key) == 1;
    if (!everywhere) continue;
    for (std::size_t r = 0; r < units.size(); ++r)
      out[r].push_back(units[r]->units[index[r].at(key)]);
  }
  return out;
}

// The ranking of the runs holding quantity `id` (positions `present`), see compare_runs.h.
Json ranking(std::vector<RunData>& runs, const std::vector<std::size_t>& present,
             const std::string& id, bool all_paired, const CompareRunsOptions& o,
             std::uint64_t seed) {
  const Json& f0 = finding_of(runs[present[0]], id);
  const std::string better =
      f0.contains("better") && f0["better"].is_string() ? f0["better"].get<std::string>() : "";
  if (better.empty())
    return Json{{"method", nullptr},
                {"reason", "summary.json does not say which direction is better"}};
  const std::size_t k = present.size();
  std::vector<double> est(k), se(k, NAN);
  std::vector<const UnitsData*> units(k);
  bool all_ci = true;
  for (std::size_t i = 0; i < k; ++i) {
    const Json& f = finding_of(runs[present[i]], id);
    est[i] = num(f["estimate"]);
    const RunCi c = run_ci(f);
    all_ci = all_ci && c.ok;
    if (c.ok) se[i] = run_se(c);
    units[i] = finding_units(runs[present[i]], f);
  }
  std::vector<std::vector<UnitSums>> shared;
  if (all_paired) shared = shared_units(units);
  const bool paired = all_paired && shared[0].size() >= 2;
  Json out{{"better", better}};
  std::vector<double> first(k, 0.0);
  std::size_t defined = 0;
  if (paired || all_ci) {
    std::vector<std::vector<std::size_t>> best(o.bootstrap);
    parallel_for(o.bootstrap, [&](std::size_t r) {
      Rng rng(seed, r);
      std::vector<double> v(k);
      if (paired) {
        const std::size_t n = shared[0].size();
        std::vector<std::uint32_t> idx(n);
        for (auto& i : idx) i = static_cast<std::uint32_t>(rng.uniform_index(n));
        for (std::size_t i = 0; i < k; ++i) v[i] = aggregate(shared[i], units[i]->difference, idx);
      } else {
        for (std::size_t i = 0; i < k; ++i) v[i] = est[i] + se[i] * standard_normal_draw(rng);
      }
      best[r] = best_of(v, better);
    });
    for (const auto& b : best) {
      if (b.empty()) continue;
      ++defined;
      for (const std::size_t i : b) first[i] += 1.0 / static_cast<double>(b.size());
    }
    out["method"] = paired ? "paired bootstrap" : "normal draws";
    out["reason"] =
        paired ? fmt::format("the same resampled units for every run ({} shared)", shared[0].size())
               : std::string("normal draws from each run's interval");
    out["replicates"] = defined;
    out["seed"] = seed;
  } else {
    out["method"] = "estimates only";
    out["reason"] = "a run reports no interval for this quantity: no rank uncertainty";
  }
  const std::vector<double> ranks = point_ranks(est, better);
  Json list = Json::array();
  for (std::size_t i = 0; i < k; ++i) {
    list.push_back(
        Json{{"run", runs[present[i]].name},
             {"estimate", json_number(est[i])},
             {"rank", json_number(ranks[i])},
             {"share_first", defined > 0 ? json_number(first[i] / defined) : Json(nullptr)}});
  }
  out["ranks"] = list;
  return out;
}

// The stimulus check of every pair of runs (stim[a][b], a < b): it depends on the runs only,
// not on the finding, so it is done once.
using StimulusTable = std::vector<std::vector<StimulusCheck>>;
StimulusTable stimulus_table(const std::vector<RunData>& runs,
                             const std::vector<std::string>& stimuli) {
  StimulusTable stim(runs.size(), std::vector<StimulusCheck>(runs.size()));
  for (std::size_t a = 0; a < runs.size(); ++a)
    for (std::size_t b = a + 1; b < runs.size(); ++b)
      stim[a][b] = compare_stimuli(runs[a], runs[b], stimuli);
  return stim;
}

// Whether every run holding the quantity pairs with the first one (units and stimuli).
bool every_pair_paired(std::vector<RunData>& runs, const std::vector<std::size_t>& present,
                       const std::string& id, const StimulusTable& stim) {
  for (const std::size_t r : present) {
    if (finding_units(runs[r], finding_of(runs[r], id)) == nullptr) return false;
    if (r != present[0] && !stim[present[0]][r].same) return false;
  }
  return true;
}

Json estimates_json(std::vector<RunData>& runs, const std::vector<std::size_t>& present,
                    const std::string& id, std::vector<std::string>& notes) {
  Json list = Json::array();
  for (const std::size_t r : present) {
    const Json& f = finding_of(runs[r], id);
    const UnitsData* u = finding_units(runs[r], f);
    Json e{{"run", runs[r].name},
           {"estimate", f["estimate"]},
           {"ci", ci_json(f)},
           {"p_holm", f.value("p_holm", Json(nullptr))},
           {"significant", f.value("significant", Json(nullptr))},
           {"ptr", f.value("ptr", Json(nullptr))},
           {"units", u == nullptr ? Json(nullptr) : Json(u->units.size())}};
    if (u != nullptr) {
      const double agg = aggregate_all(*u);
      e["units_estimate"] = json_number(agg);
      const double est = num(f["estimate"]);
      if (std::isfinite(est) && !(std::fabs(agg - est) <= 1e-9 * std::max(1.0, std::fabs(est)))) {
        notes.push_back(fmt::format(
            "Run {}'s units table for '{}' gives {:.6g}, its summary {:.6g}: the paired test uses "
            "the units.",
            runs[r].name, id, agg, est));
      }
      if (u->rows_missing > 0) {
        notes.push_back(fmt::format("{}: {} row(s) without a value left out ('{}').", u->source,
                                    u->rows_missing, id));
      }
    }
    list.push_back(e);
  }
  return list;
}

// p_holm, p_bh, p_adjusted and significant of every difference with a p.
void adjust(Json& quantities, const CompareRunsOptions& o) {
  std::vector<Json*> tests;
  std::vector<double> p;
  for (Json& q : quantities) {
    for (Json& d : q["differences"]) {
      tests.push_back(&d);
      p.push_back(num(d["p"]));
    }
  }
  const std::vector<double> holm = stats::holm(p);
  const std::vector<double> bh = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < tests.size(); ++i) {
    Json& d = *tests[i];
    const double adj = o.correction == "holm" ? holm[i] : bh[i];
    d["p_holm"] = json_number(holm[i]);
    d["p_bh"] = json_number(bh[i]);
    d["p_adjusted"] = json_number(adj);
    d["significant"] = std::isnan(adj) ? Json(nullptr) : Json(adj < 1.0 - o.level);
  }
}

Json runs_json(const std::vector<RunData>& runs) {
  Json list = Json::array();
  for (const RunData& r : runs) {
    list.push_back(Json{{"name", r.name},
                        {"path", r.dir.string()},
                        {"label", r.dir.filename().empty() ? r.dir.parent_path().filename().string()
                                                           : r.dir.filename().string()},
                        {"run", r.summary.value("run", Json::object())},
                        {"findings", r.summary["findings"].size()}});
  }
  return list;
}

}  // namespace

Json compare_runs(const std::vector<std::filesystem::path>& dirs, const CompareRunsOptions& o) {
  check_options(dirs.size(), o);
  std::vector<RunData> runs = load_runs(dirs);
  const std::string kind = runs[0].summary["kind"].get<std::string>();
  const std::vector<std::string> stimuli =
      o.stimuli_given ? o.stimuli : default_stimulus_inputs(kind);
  const StimulusTable stim = stimulus_table(runs, stimuli);
  std::vector<std::string> ids;  // in order of first appearance
  std::set<std::string> seen;
  for (const RunData& r : runs)
    for (const Json& f : r.summary["findings"])
      if (seen.insert(f["id"].get<std::string>()).second) ids.push_back(f["id"]);
  const std::uint64_t test_seed = derive_seed(o.seed, 0), rank_seed = derive_seed(o.seed, 1);
  Json quantities = Json::array(), unmatched = Json::array();
  std::vector<std::string> notes;
  std::size_t t = 0;
  for (const std::string& id : ids) {
    std::vector<std::size_t> present;
    for (std::size_t r = 0; r < runs.size(); ++r)
      if (runs[r].by_id.count(id)) present.push_back(r);
    if (present.size() < 2) {
      unmatched.push_back(Json{{"id", id}, {"run", runs[present[0]].name}});
      continue;
    }
    const Json& f0 = finding_of(runs[present[0]], id);
    Json q{{"id", id},
           {"section", f0.value("section", Json(nullptr))},
           {"quantity", f0.value("quantity", Json(id))},
           {"groups", f0.value("groups", Json(nullptr))},
           {"better", f0.value("better", Json(nullptr))}};
    q["estimates"] = estimates_json(runs, present, id, notes);
    Json diffs = Json::array();
    for (std::size_t i = 0; i < present.size(); ++i) {
      for (std::size_t j = i + 1; j < present.size(); ++j) {
        if (o.pairs == RunPairs::Reference && i > 0) break;
        diffs.push_back(pair_entry(runs[present[i]], runs[present[j]], id, o,
                                   stim[present[i]][present[j]], derive_seed(test_seed, t++)));
      }
    }
    q["differences"] = diffs;
    const bool all_paired = every_pair_paired(runs, present, id, stim);
    q["ranking"] =
        ranking(runs, present, id, all_paired, o, derive_seed(rank_seed, quantities.size()));
    quantities.push_back(q);
  }
  VLBIAS_CHECK(!quantities.empty(), InputError,
               "the runs share no finding id: nothing to compare (are they runs of one spec?)");
  if (!unmatched.empty()) {
    notes.push_back(fmt::format("{} finding(s) appear in one run only and are not compared.",
                                unmatched.size()));
  }
  adjust(quantities, o);
  std::size_t with_p = 0;
  for (const Json& q : quantities)
    for (const Json& d : q["differences"]) with_p += d["p"].is_number();
  Json out{{"kind", "comparison"},
           {"title", fmt::format("vlbias comparison of {} {} runs", runs.size(), kind)},
           {"compared_kind", kind},
           {"runs", runs_json(runs)},
           {"options", Json{{"bootstrap", o.bootstrap},
                            {"seed", o.seed},
                            {"correction", o.correction},
                            {"level", o.level},
                            {"alpha", 1.0 - o.level},
                            {"pairs", o.pairs == RunPairs::Reference ? "reference" : "all"}}},
           {"stimuli", Json{{"inputs", stimuli},
                            {"source", o.stimuli_given ? "--stimuli" : "default for the kind"}}},
           {"tests", Json{{"count", t}, {"with_p", with_p}}},
           {"quantities", quantities},
           {"unmatched", unmatched},
           {"notes", notes}};
  Provenance p;
  p.command = "compare-runs";
  for (const RunData& r : runs)
    for (const std::string& f : r.files_read) p.inputs.push_back(f);
  p.parameters = out["options"];
  p.seed = o.seed;
  out["provenance"] = provenance_json(p);
  return out;
}

}  // namespace vlbias
