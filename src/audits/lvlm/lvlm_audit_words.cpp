// The word-based sections of the LVLM counterfactual analysis (lvlm_audit.h,
// docs/methods.md#paper-003): PMI words per group against the other groups of its by-level, and the
// rates of lexicon categories per group, pooled over the lexicon_by levels with enough texts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <type_traits>

#include "lvlm_audit_internal.h"
#include "table_builder.h"
#include "vlbias/core/error.h"
#include "vlbias/report/json_output.h"

namespace vlbias {

using namespace audits_internal;  // NOLINT(build/namespaces): lvlm_audit_internal.h

namespace {

// A word kept for a group by PMI.
struct Word {
  std::uint32_t id;
  double score;  // +inf when the word occurs only in the group
  std::uint64_t f_g, f_not;
};

// The words of a group (word counts `wc`, n_g in all) kept against the other groups of its
// by-level (`total`: the by-level's word counts; n_not: the other groups' tokens), best first,
// at most pmi_top of them.
std::vector<Word> pmi_words(const LvlmState& s, const LvlmReportOptions& o, double log_base,
                            const std::vector<std::uint64_t>& wc,
                            const std::vector<std::uint64_t>& total, std::uint64_t n_g,
                            std::uint64_t n_not) {
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
  return kept;
}

// The PMI result of cell c (by-level b): its group and words; writes their table rows.
Json pmi_group(const LvlmState& s, const LvlmConfig& config, const LvlmReportOptions& o,
               double log_base, std::size_t b, std::uint32_t c,
               const std::vector<std::uint64_t>& total, std::uint64_t n_total,
               TableBuilder& table) {
  const auto& wc = s.word_counts[c];
  std::uint64_t n_g = 0;
  for (const std::uint64_t x : wc) n_g += x;
  const std::uint64_t n_not = n_total - n_g;
  const std::vector<Word> kept = pmi_words(s, o, log_base, wc, total, n_g, n_not);
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
  return g;
}

}  // namespace

// ------------------------------------------------------------------ PMI

AnalysisOutput lvlm_pmi(const LvlmState& s, const LvlmConfig& config, const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.pmi, UsageError, "the scan did not count words for PMI");
  VLBIAS_CHECK(o.pmi_log_base == 0 || o.pmi_log_base > 1, UsageError,
               "the PMI log base must be e (0), 2 or 10; got {}", o.pmi_log_base);
  const double log_base = o.pmi_log_base == 0 ? 1.0 : std::log(o.pmi_log_base);
  const std::size_t V = s.vocabulary.size();
  AnalysisOutput out;
  TableBuilder table("pmi_words");
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
      groups.push_back(pmi_group(s, config, o, log_base, b, c, total, n_total, table));
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

namespace {

using Hist = std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>;
using HistEntry = std::decay_t<decltype(LvlmState::lexicon_hist)>::value_type;
using CountEntry = std::decay_t<decltype(LvlmState::lexicon_no_words)>::value_type;

// Mean, sd, median of the rate matches / words over a histogram (matches, words) -> texts.
HistStats mean_of(const Hist& h) {
  return hist_stats(h, [](const std::pair<std::uint32_t, std::uint32_t>& k) {
    return static_cast<double>(k.first) / static_cast<double>(k.second);
  });
}

// The lexicon_by levels of one by-level: texts per level (all groups of the by-level), and
// those kept (every level without lexicon_by; else those with at least min_obs texts).
struct LexiconLevels {
  std::map<std::uint32_t, std::uint64_t> texts;
  std::vector<std::uint32_t> kept, dropped;
  bool is_kept(std::uint32_t l) const { return std::binary_search(kept.begin(), kept.end(), l); }
};

LexiconLevels lexicon_levels(const std::vector<const HistEntry*>& hists, bool by_level,
                             std::size_t min_obs) {
  LexiconLevels levels;
  for (const HistEntry* e : hists) {
    const auto& [k, hist] = *e;
    if (hist.empty()) continue;
    for (const auto& [cn, n] : hist[0]) levels.texts[k.second] += n;
  }
  for (const auto& [l, n] : levels.texts) {
    (!by_level || n >= min_obs ? levels.kept : levels.dropped).push_back(l);
  }
  return levels;
}

// Per group (cell): its histograms pooled over the kept levels, per category. With
// lexicon_by, writes each (level, group)'s row of the lexicon_by table.
std::map<std::uint32_t, std::vector<Hist>> pool_levels(const LvlmState& s, const LvlmConfig& config,
                                                       std::size_t b,
                                                       const std::vector<const HistEntry*>& hists,
                                                       LexiconLevels& levels,
                                                       TableBuilder& levels_table) {
  const auto& cats = config.lexicon->categories;
  const std::size_t C = cats.size();
  const bool by_level = !config.lexicon_by.empty();
  std::map<std::uint32_t, std::vector<Hist>> pooled;  // cell -> per category
  for (const HistEntry* e : hists) {
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
          levels_table.put("level_texts", static_cast<double>(levels.texts[k.second]));
          levels_table.put("kept", levels.is_kept(k.second) ? "true" : "false");
        }
        levels_table.put(cats[c] + "_mean", h.mean);
      }
    }
    if (!levels.is_kept(k.second)) continue;
    auto& p = pooled[k.first];
    if (p.empty()) p.resize(C);
    for (std::size_t c = 0; c < C; ++c) {
      for (const auto& [cn, n] : hist[c]) p[c][cn] += n;
    }
  }
  return pooled;
}

// The groups' pooled means of one by-level; writes their rows of the lexicon_groups table.
Json lexicon_groups(const LvlmState& s, const LvlmConfig& config, const LvlmReportOptions& o,
                    std::size_t b, const std::map<std::uint32_t, std::vector<Hist>>& pooled,
                    std::map<std::uint32_t, std::uint64_t>& no_words, TableBuilder& groups_table) {
  const auto& cats = config.lexicon->categories;
  Json groups = Json::array();
  for (const auto& [cell, hists] : pooled) {
    Json g = Json::object();
    g["group"] = level_json(config.group, s.groups[s.cells[cell].second]);
    Json means = Json::object();
    groups_table.row();
    put_level(groups_table, config.by, s.by_levels[b]);
    put_level(groups_table, config.group, s.groups[s.cells[cell].second]);
    for (std::size_t c = 0; c < cats.size(); ++c) {
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
  return groups;
}

}  // namespace

AnalysisOutput lvlm_lexicon(const LvlmState& s, const LvlmConfig& config,
                            const LvlmReportOptions& o) {
  VLBIAS_CHECK(config.lexicon.has_value(), UsageError, "the scan had no lexicon");
  const auto& cats = config.lexicon->categories;
  const bool by_level = !config.lexicon_by.empty();
  AnalysisOutput out;
  TableBuilder groups_table("lexicon_groups"), levels_table("lexicon_by");
  Json results = Json::array();
  // The histograms and no-word counts of each by-level, in key order, found once (scanning
  // every key per by-level was quadratic).
  std::vector<std::vector<const HistEntry*>> hist_of(s.by_levels.size());
  std::vector<std::vector<const CountEntry*>> no_words_of(s.by_levels.size());
  for (const HistEntry& e : s.lexicon_hist) hist_of[s.cells[e.first.first].first].push_back(&e);
  for (const CountEntry& e : s.lexicon_no_words) {
    no_words_of[s.cells[e.first.first].first].push_back(&e);
  }
  for (std::size_t b = 0; b < s.by_levels.size(); ++b) {
    LexiconLevels levels = lexicon_levels(hist_of[b], by_level, o.lexicon_min_obs);
    const std::map<std::uint32_t, std::vector<Hist>> pooled =
        pool_levels(s, config, b, hist_of[b], levels, levels_table);
    std::map<std::uint32_t, std::uint64_t> no_words;
    for (const CountEntry* e : no_words_of[b]) {
      if (levels.is_kept(e->first.second)) no_words[e->first.first] += e->second;
    }
    Json groups = lexicon_groups(s, config, o, b, pooled, no_words, groups_table);
    Json r = Json::object();
    if (!config.by.empty()) r["by"] = level_json(config.by, s.by_levels[b]);
    if (by_level) {
      Json dropped = Json::array();
      for (const std::uint32_t l : levels.dropped) {
        dropped.push_back({{config.lexicon_by, s.lexicon_levels[l]}, {"texts", levels.texts[l]}});
      }
      r["levels_kept"] = levels.kept.size();
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

}  // namespace vlbias
