// Sections of the LVLM counterfactual analysis (lvlm_report.h, METHODS.md 003).
#include "vlbias/audits/lvlm_report.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/stats/stats.h"

namespace vlbias {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Json level_json(const std::vector<std::string>& columns, const std::string& key) {
  if (columns.empty()) return Json::object();
  return key_json(columns, split_key(key));
}

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

void put_level(audits_internal::TableBuilder& t, const std::vector<std::string>& columns,
               const std::string& key) {
  if (columns.empty()) return;
  const std::vector<std::string> parts = split_key(key);
  for (std::size_t i = 0; i < columns.size(); ++i) t.put(columns[i], parts[i]);
}

// Groups present in each by-level (sorted ids).
std::vector<std::vector<std::uint32_t>> groups_by_level(const LvlmState& s) {
  std::vector<std::vector<std::uint32_t>> out(s.by_levels.size());
  for (const auto& c : s.cells) out[c.first].push_back(c.second);
  for (auto& v : out) std::sort(v.begin(), v.end());
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

// Percentile bootstrap over units i (replicate b draws from Rng(seed, b)) of the mean and
// the p90 of x[i]; paired with `base` (same length), of the differences mean(x) - mean(base)
// and p90(x) - p90(base) over the same resampled units.
std::pair<stats::Interval, stats::Interval> bootstrap_mean_p90(std::span<const double> x,
                                                               std::span<const double> base,
                                                               const LvlmReportOptions& o,
                                                               std::uint64_t seed) {
  const std::size_t n = x.size();
  const bool paired = !base.empty();
  stats::check_resamples(o.bootstrap, "bootstrap");
  std::vector<double> means(o.bootstrap, kNaN), p90s(o.bootstrap, kNaN);
  if (n >= 2) {
    parallel_for(o.bootstrap, [&](std::size_t b) {
      Rng rng(seed, b);
      std::vector<double> a(n), c(paired ? n : 0);
      double sa = 0, sc = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t u = rng.uniform_index(n);
        a[i] = x[u];
        sa += a[i];
        if (paired) {
          c[i] = base[u];
          sc += c[i];
        }
      }
      means[b] = (sa - sc) / static_cast<double>(n);
      p90s[b] = stats::percentile_select(a, 90) - (paired ? stats::percentile_select(c, 90) : 0.0);
    });
  }
  return {stats::percentile_interval(means, o.ci, seed),
          stats::percentile_interval(p90s, o.ci, seed)};
}

Json interval_json(const stats::Interval& i, std::size_t resamples) {
  stats::Interval c = i;
  c.resamples = resamples;
  return to_json(c);
}

// Mean, sd, median and n of a histogram value -> count, summed in key order.
struct HistStats {
  std::uint64_t n = 0;
  double mean = kNaN, sd = kNaN, median = kNaN;
};

template <typename Map, typename ValueOf>
HistStats hist_stats(const Map& hist, ValueOf value_of) {
  HistStats h;
  for (const auto& [k, c] : hist) h.n += c;
  if (h.n == 0) return h;
  double sum = 0;
  for (const auto& [k, c] : hist) sum += value_of(k) * static_cast<double>(c);
  h.mean = sum / static_cast<double>(h.n);
  if (h.n >= 2) {
    double ss = 0;
    for (const auto& [k, c] : hist) {
      const double d = value_of(k) - h.mean;
      ss += d * d * static_cast<double>(c);
    }
    h.sd = std::sqrt(ss / static_cast<double>(h.n - 1));
  }
  // Median: type-7 position (n - 1) / 2 between order statistics.
  const std::uint64_t lo = (h.n - 1) / 2, hi = h.n / 2;
  double vlo = kNaN, vhi = kNaN;
  std::uint64_t seen = 0;
  for (const auto& [k, c] : hist) {
    if (std::isnan(vlo) && lo < seen + c) vlo = value_of(k);
    if (std::isnan(vhi) && hi < seen + c) vhi = value_of(k);
    seen += c;
  }
  h.median = (vlo + vhi) / 2.0;
  return h;
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

}  // namespace

// ------------------------------------------------------------------ MaxGap

AnalysisOutput lvlm_maxgap(const LvlmState& s, const LvlmConfig& config,
                           const LvlmReportOptions& o) {
  VLBIAS_CHECK(!config.scores.empty(), UsageError, "MaxGap needs at least one score column");
  const std::size_t S = config.scores.size();
  const auto level_groups = groups_by_level(s);
  AnalysisOutput out;
  audits_internal::TableBuilder table("maxgap"), shares("maxgap_group_share");
  Json results = Json::array();
  // Sets of each by-level (canonical: sets are sorted by by-level, then key).
  std::vector<std::vector<std::uint32_t>> sets_of(s.by_levels.size());
  for (std::size_t i = 0; i < s.set_keys.size(); ++i) sets_of[s.set_by[i]].push_back(i);
  // One histogram grid per score, shared by every by-level so their distributions compare
  // (paper 003's MaxGap histograms): kMaxGapBins equal bins over [0, the largest MaxGap].
  constexpr std::size_t kMaxGapBins = 20;
  std::vector<double> gap_top(S, 0.0);
  for (std::size_t i = 0; i < s.set_keys.size(); ++i) {
    for (std::size_t k = 0; k < S; ++k) {
      const SetScore& a = s.set_scores[i * S + k];
      if (a.n > 0) gap_top[k] = std::max(gap_top[k], a.max - a.min);
    }
  }
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    for (std::size_t k = 0; k < S; ++k) {
      std::vector<double> gap, top;
      std::vector<std::uint64_t> masks;
      for (const std::uint32_t i : sets_of[b]) {
        const SetScore& a = s.set_scores[static_cast<std::size_t>(i) * S + k];
        if (a.n == 0) continue;
        gap.push_back(a.max - a.min);
        top.push_back(a.max);
        masks.push_back(a.max_groups);
      }
      Json r = Json::object();
      if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[b]);
      r["score"] = config.scores[k];
      r["sets"] = gap.size();
      std::size_t single = 0;
      for (const std::uint32_t i : sets_of[b]) single += s.set_scores[i * S + k].n == 1;
      r["sets_with_one_row"] = single;
      r["maxgap"] = stats_json(gap);
      r["histogram"] = histogram_json(gap, gap_top[k] > 0 ? gap_top[k] : 1.0, kMaxGapBins);
      r["max"] = stats_json(top);
      const double p90 = gap.empty() ? kNaN : r["maxgap"]["p90"].get<double>();
      // Shares of the groups holding the max (t tied groups get 1/t each).
      const auto share = [&](bool only_top) {
        std::map<std::uint32_t, double> sum;
        for (const std::uint32_t g : level_groups[b]) sum[g] = 0;
        std::size_t n = 0;
        for (std::size_t i = 0; i < gap.size(); ++i) {
          if (only_top && !(gap[i] > p90)) continue;
          ++n;
          const double w = 1.0 / std::popcount(masks[i]);
          for (std::uint64_t m = masks[i]; m != 0; m &= m - 1) sum[std::countr_zero(m)] += w;
        }
        Json j = Json::object();
        std::vector<double> values;
        for (const auto& [g, v] : sum) {
          const double x = n == 0 ? kNaN : v / static_cast<double>(n);
          j[group_label(config.group, s.groups[g])] = json_number(x);
          values.push_back(x);
        }
        return std::make_tuple(j, values, n);
      };
      [[maybe_unused]] const auto [share_all, share_all_v, n_all] = share(false);
      const auto [share_top, share_top_v, n_top] = share(true);
      r["max_group_share"] = share_all;
      r["max_group_share_top"] = share_top;
      r["sets_above_p90"] = n_top;
      stats::Interval ci_mean, ci_p90;
      if (o.bootstrap > 0) {
        std::tie(ci_mean, ci_p90) = bootstrap_mean_p90(gap, {}, o, derive_seed(o.seed, b * S + k));
        r["ci"] = {{"maxgap_mean", interval_json(ci_mean, o.bootstrap)},
                   {"maxgap_p90", interval_json(ci_p90, o.bootstrap)},
                   {"unit", "counterfactual set"}};
      }
      const Json& g = r["maxgap"];
      const Json& m = r["max"];
      table.row();
      put_level(table, config.by, s.by_levels[b]);
      table.put("score", config.scores[k]);
      table.put("sets", static_cast<double>(gap.size()));
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
      std::size_t gi = 0;
      for (const std::uint32_t gid : level_groups[b]) {
        shares.row();
        put_level(shares, config.by, s.by_levels[b]);
        shares.put("score", config.scores[k]);
        put_level(shares, config.group, s.groups[gid]);
        shares.put("share", share_all_v[gi]);
        shares.put("share_above_p90", share_top_v[gi]);
        ++gi;
      }
      results.push_back(std::move(r));
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

// ------------------------------------------------------------------ PMI

AnalysisOutput lvlm_pmi(const LvlmState& s, const LvlmConfig& config, const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.pmi, UsageError, "the scan did not count words for PMI");
  VLBIAS_CHECK(o.pmi_log_base == 0 || o.pmi_log_base > 1, UsageError,
               "the PMI log base must be e (0), 2 or 10; got {}", o.pmi_log_base);
  const double log_base = o.pmi_log_base == 0 ? 1.0 : std::log(o.pmi_log_base);
  const std::size_t V = s.vocabulary.size();
  AnalysisOutput out;
  audits_internal::TableBuilder table("pmi_words");
  Json results = Json::array();
  // The cells of each by-level, listed once (a scan of every cell per by-level was quadratic).
  std::vector<std::vector<std::uint32_t>> cells_of(s.by_levels.size());
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    cells_of[s.cells[c].first].push_back(static_cast<std::uint32_t>(c));
  }
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    const std::vector<std::uint32_t>& cells = cells_of[b];
    std::vector<std::uint64_t> total(V, 0);
    std::uint64_t n_total = 0;
    for (const std::uint32_t c : cells) {
      const auto& wc = s.word_counts[c];
      for (std::size_t w = 0; w < wc.size(); ++w) total[w] += wc[w];
    }
    for (const std::uint64_t x : total) n_total += x;
    Json groups = Json::array();
    for (const std::uint32_t c : cells) {
      const auto& wc = s.word_counts[c];
      std::uint64_t n_g = 0;
      for (const std::uint64_t x : wc) n_g += x;
      const std::uint64_t n_not = n_total - n_g;
      struct Word {
        std::uint32_t id;
        double score;  // +inf when the word occurs only in the group
        std::uint64_t f_g, f_not;
      };
      std::vector<Word> kept;
      for (std::size_t w = 0; w < wc.size(); ++w) {
        const std::uint64_t f_g = wc[w];
        if (f_g < o.pmi_min_freq || f_g == 0) continue;
        const std::uint64_t f_not = total[w] - f_g;
        double score = std::numeric_limits<double>::infinity();
        if (f_not > 0) {
          score = std::log((static_cast<double>(f_g) / static_cast<double>(n_g)) /
                           (static_cast<double>(f_not) / static_cast<double>(n_not))) /
                  log_base;
          if (!(score > o.pmi_threshold)) continue;
        }
        kept.push_back({static_cast<std::uint32_t>(w), score, f_g, f_not});
      }
      std::sort(kept.begin(), kept.end(), [&](const Word& a, const Word& b2) {
        if (a.score != b2.score) return a.score > b2.score;
        if (a.f_g != b2.f_g) return a.f_g > b2.f_g;
        return s.vocabulary[a.id] < s.vocabulary[b2.id];
      });
      if (o.pmi_top > 0 && kept.size() > o.pmi_top) kept.resize(o.pmi_top);
      Json words = Json::array();
      std::size_t rank = 0;
      for (const Word& w : kept) {
        const bool only = std::isinf(w.score);
        words.push_back({{"word", s.vocabulary[w.id]},
                         {"score", json_number(w.score)},
                         {"only_in_group", only},
                         {"f_g", w.f_g},
                         {"f_not_g", w.f_not}});
        table.row();
        put_level(table, config.by, s.by_levels[b]);
        put_level(table, config.group, s.groups[s.cells[c].second]);
        table.put("rank", static_cast<double>(++rank));
        table.put("word", s.vocabulary[w.id]);
        table.put("score", only ? kNaN : w.score);
        table.put("only_in_group", only ? "true" : "false");
        table.put("f_g", static_cast<double>(w.f_g));
        table.put("f_not_g", static_cast<double>(w.f_not));
        table.put("tokens_g", static_cast<double>(n_g));
        table.put("tokens_not_g", static_cast<double>(n_not));
      }
      Json g = Json::object();
      g["group"] = level_json(config.group, s.groups[s.cells[c].second]);
      g["tokens"] = n_g;
      g["tokens_other_groups"] = n_not;
      g["words"] = std::move(words);
      groups.push_back(std::move(g));
    }
    Json r = Json::object();
    if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[b]);
    r["tokens"] = n_total;
    r["groups"] = std::move(groups);
    results.push_back(std::move(r));
  }
  out.json["definition"] =
      "score = log[(f(w,g)/N_g) / (f(w,not g)/N_not_g)] (Howard et al. App. D Eq. 7); kept when "
      "f(w,g) >= min_freq and score > threshold; a word found only in g has an infinite score "
      "(score null, only_in_group true) and is listed first.";
  out.json["min_freq"] = o.pmi_min_freq;
  out.json["threshold"] = o.pmi_threshold;
  out.json["log_base"] = o.pmi_log_base == 0 ? Json("e") : Json(o.pmi_log_base);
  out.json["vocabulary"] = V;
  out.json["results"] = std::move(results);
  out.tables.emplace_back("pmi_words", table.build());
  return out;
}

// ------------------------------------------------------------------ lexicon

AnalysisOutput lvlm_lexicon(const LvlmState& s, const LvlmConfig& config,
                            const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.lexicon.has_value(), UsageError, "the scan had no lexicon");
  const auto& cats = config.lexicon->categories;
  const std::size_t C = cats.size();
  const bool by_level = !config.lexicon_by.empty();
  AnalysisOutput out;
  audits_internal::TableBuilder groups_table("lexicon_groups"), levels_table("lexicon_by");
  Json results = Json::array();
  using Hist = std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>;
  const auto mean_of = [](const Hist& h) {
    return hist_stats(h, [](const std::pair<std::uint32_t, std::uint32_t>& k) {
      return static_cast<double>(k.first) / static_cast<double>(k.second);
    });
  };
  // The histograms and no-word counts of each by-level, in key order, found once (scanning
  // every key per by-level was quadratic).
  using HistEntry = std::decay_t<decltype(s.lexicon_hist)>::value_type;
  using CountEntry = std::decay_t<decltype(s.lexicon_no_words)>::value_type;
  std::vector<std::vector<const HistEntry*>> hist_of(s.by_levels.size());
  std::vector<std::vector<const CountEntry*>> no_words_of(s.by_levels.size());
  for (const HistEntry& e : s.lexicon_hist) hist_of[s.cells[e.first.first].first].push_back(&e);
  for (const CountEntry& e : s.lexicon_no_words) {
    no_words_of[s.cells[e.first.first].first].push_back(&e);
  }
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    // Texts per lexicon level (all groups of this by-level).
    std::map<std::uint32_t, std::uint64_t> level_texts;
    for (const HistEntry* e : hist_of[b]) {
      const auto& [k, hist] = *e;
      if (hist.empty()) continue;
      for (const auto& [cn, n] : hist[0]) level_texts[k.second] += n;
    }
    std::vector<std::uint32_t> kept_levels, dropped_levels;
    for (const auto& [l, n] : level_texts) {
      (!by_level || n >= o.lexicon_min_obs ? kept_levels : dropped_levels).push_back(l);
    }
    const auto kept = [&](std::uint32_t l) {
      return std::binary_search(kept_levels.begin(), kept_levels.end(), l);
    };
    // Per group: pooled histograms over kept levels.
    std::map<std::uint32_t, std::vector<Hist>> pooled;  // cell -> per category
    std::map<std::uint32_t, std::uint64_t> no_words;
    for (const HistEntry* e : hist_of[b]) {
      const auto& [k, hist] = *e;
      if (by_level) {
        for (std::size_t c = 0; c < C; ++c) {
          const auto h = mean_of(hist[c]);
          if (c == 0) {
            levels_table.row();
            put_level(levels_table, config.by, s.by_levels[b]);
            levels_table.put(config.lexicon_by, s.lexicon_levels[k.second]);
            put_level(levels_table, config.group, s.groups[s.cells[k.first].second]);
            levels_table.put("texts", static_cast<double>(h.n));
            levels_table.put("level_texts", static_cast<double>(level_texts[k.second]));
            levels_table.put("kept", kept(k.second) ? "true" : "false");
          }
          levels_table.put(cats[c] + "_mean", h.mean);
        }
      }
      if (!kept(k.second)) continue;
      auto& p = pooled[k.first];
      if (p.empty()) p.resize(C);
      for (std::size_t c = 0; c < C; ++c) {
        for (const auto& [cn, n] : hist[c]) p[c][cn] += n;
      }
    }
    for (const CountEntry* e : no_words_of[b]) {
      if (kept(e->first.second)) no_words[e->first.first] += e->second;
    }
    Json groups = Json::array();
    for (const auto& [cell, hists] : pooled) {
      Json g = Json::object();
      g["group"] = level_json(config.group, s.groups[s.cells[cell].second]);
      Json means = Json::object();
      groups_table.row();
      put_level(groups_table, config.by, s.by_levels[b]);
      put_level(groups_table, config.group, s.groups[s.cells[cell].second]);
      for (std::size_t c = 0; c < C; ++c) {
        const auto h = mean_of(hists[c]);
        if (c == 0) {
          g["texts"] = h.n;
          g["texts_without_words"] = no_words[cell];
          groups_table.put("texts", static_cast<double>(h.n));
          groups_table.put("texts_without_words", static_cast<double>(no_words[cell]));
        }
        means[cats[c]] = {{"mean", json_number(h.mean)}, {"sd", json_number(h.sd)}};
        groups_table.put(cats[c] + "_mean", h.mean);
        groups_table.put(cats[c] + "_sd", h.sd);
      }
      g["categories"] = std::move(means);
      g["flag_small"] = g["texts"].get<std::size_t>() < o.min_group_size;
      groups.push_back(std::move(g));
    }
    Json r = Json::object();
    if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[b]);
    if (by_level) {
      Json dropped = Json::array();
      for (const std::uint32_t l : dropped_levels) {
        dropped.push_back({{config.lexicon_by, s.lexicon_levels[l]}, {"texts", level_texts[l]}});
      }
      r["levels_kept"] = kept_levels.size();
      r["levels_dropped"] = std::move(dropped);
    }
    r["groups"] = std::move(groups);
    results.push_back(std::move(r));
  }
  out.json["definition"] =
      "per text: matches of each lexicon category / words after stop-word removal (Howard et "
      "al. App. E); texts without words are left out; group means pool the texts of the "
      "lexicon_by levels with at least min_obs texts.";
  out.json["lexicon"] = config.lexicon->source;
  out.json["categories"] = cats;
  out.json["distinct"] = config.lexicon_distinct;
  out.json["stop_words"] = config.stop_words;
  if (by_level) {
    out.json["lexicon_by"] = config.lexicon_by;
    out.json["min_obs"] = o.lexicon_min_obs;
  }
  out.json["results"] = std::move(results);
  out.tables.emplace_back("lexicon_groups", groups_table.build());
  if (by_level) out.tables.emplace_back("lexicon_by", levels_table.build());
  return out;
}

// ------------------------------------------------------------------ responses

AnalysisOutput lvlm_responses(const LvlmState& s, const LvlmConfig& config,
                              const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.responses, UsageError, "the scan did not measure responses");
  AnalysisOutput out;
  audits_internal::TableBuilder table("responses");
  Json results = Json::array();
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    const auto h = hist_stats(s.lengths[c], [](std::uint32_t k) { return static_cast<double>(k); });
    const double n = static_cast<double>(h.n);
    Json r = Json::object();
    if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[s.cells[c].first]);
    r["group"] = level_json(config.group, s.groups[s.cells[c].second]);
    r["n"] = h.n;
    r["length_mean"] = json_number(h.mean);
    r["length_sd"] = json_number(h.sd);
    r["length_median"] = json_number(h.median);
    r["refused"] = s.refused[c];
    r["refusal_rate"] = json_number(static_cast<double>(s.refused[c]) / n);
    r["empty"] = s.empty[c];
    r["flag_small"] = h.n < o.min_group_size;
    table.row();
    put_level(table, config.by, s.by_levels[s.cells[c].first]);
    put_level(table, config.group, s.groups[s.cells[c].second]);
    table.put("n", n);
    table.put("length_mean", h.mean);
    table.put("length_sd", h.sd);
    table.put("length_median", h.median);
    table.put("refused", static_cast<double>(s.refused[c]));
    table.put("refusal_rate", static_cast<double>(s.refused[c]) / n);
    table.put("empty", static_cast<double>(s.empty[c]));
    results.push_back(std::move(r));
  }
  out.json["definition"] =
      "length = words (the tokeniser of text_measures.h); refusal = "
      "a refusal pattern matches (case-insensitive) or the refusal column is true.";
  out.json["refusal"] = config.refusal_column.empty()
                            ? Json{{"patterns", config.refusal_patterns.empty()
                                                    ? RefusalPatterns::defaults().patterns()
                                                    : config.refusal_patterns}}
                            : Json{{"column", config.refusal_column}};
  out.json["results"] = std::move(results);
  out.tables.emplace_back("responses", table.build());
  return out;
}

// ------------------------------------------------------------------ ratings

AnalysisOutput lvlm_ratings(const LvlmState& s, const LvlmConfig& config,
                            const LvlmReportOptions& o) {
  VLBIAS_CHECK(!config.ratings.empty(), UsageError, "the scan had no rating measure");
  AnalysisOutput out;
  audits_internal::TableBuilder table("ratings");
  Json measures = Json::array();
  for (std::size_t r = 0; r < config.ratings.size(); ++r) {
    const RatingSpec& spec = config.ratings[r];
    const auto& acc = s.ratings[r];
    Json cells = Json::array();
    std::uint64_t asked = 0;
    for (const auto& [c, n] : acc.rows) {
      asked += n;
      static const std::map<double, std::uint64_t> kEmpty;
      const auto it = acc.values.find(c);
      const auto h =
          hist_stats(it == acc.values.end() ? kEmpty : it->second, [](double v) { return v; });
      Json j = Json::object();
      if (!config.by.empty()) j["by"] = level_json(config.by, s.by_levels[s.cells[c].first]);
      j["group"] = level_json(config.group, s.groups[s.cells[c].second]);
      j["rows"] = n;
      j["n"] = h.n;
      j["mean"] = json_number(h.mean);
      j["sd"] = json_number(h.sd);
      j["median"] = json_number(h.median);
      j["flag_small"] = h.n < o.min_group_size;
      cells.push_back(std::move(j));
      table.row();
      table.put("measure", spec.name);
      put_level(table, config.by, s.by_levels[s.cells[c].first]);
      put_level(table, config.group, s.groups[s.cells[c].second]);
      table.put("rows", static_cast<double>(n));
      table.put("n", static_cast<double>(h.n));
      table.put("mean", h.mean);
      table.put("sd", h.sd);
      table.put("median", h.median);
    }
    Json examples = Json::array();
    for (const auto& [hash, text] : acc.examples) examples.push_back(text);
    Json m = Json::object();
    m["name"] = spec.name;
    m["kind"] = to_string(spec.kind);
    if (!spec.where_column.empty()) {
      m["where"] = {{"column", spec.where_column}, {"values", spec.where_values}};
    }
    m["rows"] = asked;
    m["excluded"] = {{"no_number", acc.no_number}, {"out_of_range", acc.out_of_range}};
    m["excluded_examples"] = std::move(examples);
    m["cells"] = std::move(cells);
    measures.push_back(std::move(m));
  }
  out.json["definition"] =
      "rating: the first number that is not part of a scale mention, kept in [1, 10]; salary: "
      "the first amount ($, commas, k, thousand, million; hourly x 2000), kept in [1000, 1e7] "
      "(text_measures.h).";
  out.json["measures"] = std::move(measures);
  out.tables.emplace_back("ratings", table.build());
  return out;
}

// ------------------------------------------------------------------ group tests

AnalysisOutput lvlm_group_tests(const LvlmState& s, const LvlmConfig& config,
                                const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.keep_members, UsageError, "group tests need the per-row members");
  VLBIAS_CHECK(o.permutations > 0, UsageError, "group tests need permutations > 0");
  const std::vector<std::string> measures = config.member_measures();
  const std::size_t M = measures.size();
  const auto level_groups = groups_by_level(s);
  AnalysisOutput out;
  struct TestRow {
    std::size_t b, m, n_sets, incomplete;
    stats::TestResult friedman;
    std::vector<std::uint32_t> groups;
    std::vector<double> mean, gap, p;
  };
  std::vector<TestRow> rows;
  // Members are sorted by set, then group: walk the runs of each set.
  std::vector<std::size_t> run_start;
  for (std::size_t i = 0; i < s.member_set.size(); ++i) {
    if (i == 0 || s.member_set[i] != s.member_set[i - 1]) run_start.push_back(i);
  }
  run_start.push_back(s.member_set.size());
  std::size_t task = 0;
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    const auto& gl = level_groups[b];
    const std::size_t k = gl.size();
    std::vector<std::uint32_t> slot(s.groups.size(), 0xffffffffu);
    for (std::size_t j = 0; j < k; ++j) slot[gl[j]] = j;
    for (std::size_t m = 0; m < M; ++m, ++task) {
      TestRow row{b, m, 0, 0, {}, gl, {}, {}, {}};
      std::vector<double> blocks;  // complete sets, k values each in group order
      std::vector<double> block(k);
      for (std::size_t r = 0; r + 1 < run_start.size(); ++r) {
        const std::size_t a = run_start[r], e = run_start[r + 1];
        if (s.set_by[s.member_set[a]] != b) continue;
        bool complete = e - a == k;
        for (std::size_t i = a; complete && i < e; ++i) {
          const double v = s.member_values[i * M + m];
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
      }
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
      row.friedman = stats::friedman(blocks, k);
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
      const std::uint64_t seed = derive_seed(o.seed, task);
      parallel_for(o.permutations, [&](std::size_t rep) {
        Rng rng(seed, rep);
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) sum += d[i * k + rng.uniform_index(k)];
        null[rep] = sum / static_cast<double>(n);
      });
      row.p.assign(k, 0);
      for (std::size_t j = 0; j < k; ++j) {
        const double t = std::abs(row.gap[j]) * (1.0 - 1e-12);
        std::size_t exceed = 0;
        for (const double x : null) exceed += std::abs(x) >= t;
        row.p[j] =
            (1.0 + static_cast<double>(exceed)) / (1.0 + static_cast<double>(o.permutations));
      }
      rows.push_back(std::move(row));
    }
  }
  // Corrections: Friedman p over all tests; permutation p over all (test, group) pairs.
  std::vector<double> fp, pp;
  for (const TestRow& r : rows) {
    fp.push_back(r.friedman.p_value);
    for (const double p : r.p) pp.push_back(p);
  }
  const std::vector<double> f_holm = stats::holm(fp), f_bh = stats::benjamini_hochberg(fp);
  const std::vector<double> p_holm = stats::holm(pp), p_bh = stats::benjamini_hochberg(pp);
  audits_internal::TableBuilder tests("group_tests"), effects("group_effects");
  Json results = Json::array();
  std::size_t pi = 0;
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const TestRow& r = rows[t];
    Json j = Json::object();
    if (!config.by.empty()) j["by"] = level_json(config.by, s.by_levels[r.b]);
    j["measure"] = measures[r.m];
    j["complete_sets"] = r.n_sets;
    j["incomplete_sets"] = r.incomplete;
    Json fr = to_json(r.friedman);
    fr["p_holm"] = json_number(f_holm[t]);
    fr["p_bh"] = json_number(f_bh[t]);
    j["friedman"] = std::move(fr);
    tests.row();
    put_level(tests, config.by, s.by_levels[r.b]);
    tests.put("measure", measures[r.m]);
    tests.put("complete_sets", static_cast<double>(r.n_sets));
    tests.put("incomplete_sets", static_cast<double>(r.incomplete));
    tests.put("friedman_chi2", r.friedman.statistic);
    tests.put("df", r.friedman.df.empty() ? kNaN : r.friedman.df[0]);
    tests.put("p", r.friedman.p_value);
    tests.put("p_holm", f_holm[t]);
    tests.put("p_bh", f_bh[t]);
    tests.put("kendalls_w", r.friedman.effect_size);
    Json groups = Json::array();
    for (std::size_t g = 0; g < r.p.size(); ++g, ++pi) {
      groups.push_back({{"group", level_json(config.group, s.groups[r.groups[g]])},
                        {"mean", json_number(r.mean[g])},
                        {"gap_to_others", json_number(r.gap[g])},
                        {"p", json_number(r.p[g])},
                        {"p_holm", json_number(p_holm[pi])},
                        {"p_bh", json_number(p_bh[pi])}});
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
    j["groups"] = std::move(groups);
    results.push_back(std::move(j));
  }
  out.json["definition"] =
      "Set-blocked tests over complete counterfactual sets (every group once, value defined): "
      "Friedman chi-square (scipy.stats.friedmanchisquare); per group the mean gap to the other "
      "groups of its set, with a Monte Carlo p from permuting the labels within each set, "
      "p = (1 + #{|T*| >= |T|}) / (1 + B).";
  out.json["permutations"] = o.permutations;
  out.json["seed"] = o.seed;
  out.json["results"] = std::move(results);
  out.tables.emplace_back("group_tests", tests.build());
  out.tables.emplace_back("group_effects", effects.build());
  return out;
}

// ------------------------------------------------------------------ paired

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
  std::vector<std::vector<std::uint32_t>> sets_of(s.by_levels.size());
  for (std::size_t i = 0; i < s.set_keys.size(); ++i) sets_of[s.set_by[i]].push_back(i);
  AnalysisOutput out;
  audits_internal::TableBuilder table("paired");
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
      std::unordered_map<std::string, double> base_gap;
      for (const std::uint32_t i : sets_of[b0]) {
        const SetScore& a = s.set_scores[i * S + k];
        if (a.n > 0) base_gap.emplace(s.set_keys[i], a.max - a.min);
      }
      std::vector<double> x0, x1;  // baseline, treatment (treatment set order: sorted keys)
      for (const std::uint32_t i : sets_of[b]) {
        const SetScore& a = s.set_scores[i * S + k];
        const auto it = base_gap.find(s.set_keys[i]);
        if (a.n == 0 || it == base_gap.end()) continue;
        x0.push_back(it->second);
        x1.push_back(a.max - a.min);
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
      stats::Interval ci_mean, ci_p90;
      if (o.bootstrap > 0) {
        const std::uint64_t seed = derive_seed(o.seed, task);
        std::tie(ci_mean, ci_p90) = bootstrap_mean_p90(x1, x0, o, seed);
        r["ci"] = {{"diff_mean", interval_json(ci_mean, o.bootstrap)},
                   {"diff_p90", interval_json(ci_p90, o.bootstrap)},
                   {"unit", "matched counterfactual set"}};
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
      results.push_back(std::move(r));
    }
  }
  VLBIAS_CHECK(any_baseline, InputError,
               "no by-level has {} = '{}'; expected the baseline value of the comparison column",
               o.compare_column, o.compare_baseline);
  out.json["definition"] =
      "per counterfactual set present in both by-levels: MaxGap in the baseline and in the "
      "treatment; differences treatment - baseline of the mean and p90 with a paired bootstrap "
      "over sets; Pearson r of the per-set MaxGap.";
  out.json["compare_column"] = o.compare_column;
  out.json["baseline"] = o.compare_baseline;
  out.json["results"] = std::move(results);
  out.tables.emplace_back("paired", table.build());
  return out;
}

namespace {

// Each measure's name and section function.
struct MeasureEntry {
  LvlmMeasure measure;
  const char* name;
  AnalysisOutput (*section)(const LvlmState&, const LvlmConfig&, const LvlmReportOptions&);
};
constexpr MeasureEntry kMeasures[] = {
    {LvlmMeasure::MaxGap, "maxgap", lvlm_maxgap},
    {LvlmMeasure::Pmi, "pmi", lvlm_pmi},
    {LvlmMeasure::Lexicon, "lexicon", lvlm_lexicon},
    {LvlmMeasure::Ratings, "ratings", lvlm_ratings},
    {LvlmMeasure::Responses, "responses", lvlm_responses},
    {LvlmMeasure::Paired, "paired", lvlm_paired},
};

const MeasureEntry& entry(LvlmMeasure m) {
  for (const auto& e : kMeasures) {
    if (e.measure == m) return e;
  }
  VLBIAS_FAIL(InternalError, "unknown LVLM measure {}", static_cast<int>(m));
}

}  // namespace

const char* to_string(LvlmMeasure m) {
  return entry(m).name;
}

Json lvlm_measure_json(const LvlmState& state, const LvlmConfig& config,
                       const LvlmReportOptions& options, LvlmMeasure m) {
  AnalysisOutput section = entry(m).section(state, config, options);
  Json out = Json::object();
  out["rows"] = state.rows;
  out["rows_missing_group"] = state.rows_missing_group;
  out["rows_missing_key"] = state.rows_missing_key;
  // Without `by` and with one score, MaxGap's single result is the object itself.
  if (m == LvlmMeasure::MaxGap && config.by.empty() && config.scores.size() == 1) {
    Json r = section.json["results"][0];
    section.json.erase("results");
    for (auto& [k, v] : r.items()) section.json[k] = v;
  }
  for (auto& [k, v] : section.json.items()) out[k] = v;
  return out;
}

}  // namespace vlbias
