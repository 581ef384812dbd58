// Merging and canonical ordering of the LVLM analysis (lvlm.h); its state files are in
// lvlm_state_file.cpp.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "lvlm_set_index.h"
#include "vlbias/core/error.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias {

using metrics_internal::member_width;
using metrics_internal::score_count;
using metrics_internal::SetIndex;

namespace {

// old id -> new id for a level list merged into / sorted in another.
std::vector<std::uint32_t> merge_levels(std::vector<std::string>& into,
                                        const std::vector<std::string>& from) {
  std::unordered_map<std::string, std::uint32_t> index;
  for (std::size_t i = 0; i < into.size(); ++i) index.emplace(into[i], i);
  std::vector<std::uint32_t> map(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    const auto [it, fresh] = index.emplace(from[i], static_cast<std::uint32_t>(into.size()));
    if (fresh) into.push_back(from[i]);
    map[i] = it->second;
  }
  return map;
}

// Sorts `levels` and returns old id -> new id.
std::vector<std::uint32_t> sort_levels(std::vector<std::string>& levels) {
  std::vector<std::uint32_t> order(levels.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return levels[a] < levels[b]; });
  std::vector<std::uint32_t> map(levels.size());
  std::vector<std::string> sorted(levels.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    map[order[i]] = static_cast<std::uint32_t>(i);
    sorted[i] = std::move(levels[order[i]]);
  }
  levels = std::move(sorted);
  return map;
}

std::uint64_t remap_mask(std::uint64_t mask, const std::vector<std::uint32_t>& group_map) {
  std::uint64_t out = 0;
  for (std::size_t g = 0; g < group_map.size() && g < 64; ++g) {
    if (mask & (std::uint64_t{1} << g)) out |= std::uint64_t{1} << group_map[g];
  }
  return out;
}

void merge_score(SetScore& a, const SetScore& b) {
  if (b.n == 0) return;
  if (a.n == 0) {
    a = b;
    return;
  }
  if (b.max > a.max) {
    a.max = b.max;
    a.max_groups = b.max_groups;
  } else if (b.max == a.max) {
    a.max_groups |= b.max_groups;
  }
  a.min = std::min(a.min, b.min);
  a.n += b.n;
}

template <typename Map>
void add_counts(Map& into, const Map& from) {
  for (const auto& [k, v] : from) into[k] += v;
}

}  // namespace

// Applies id maps to every structure of `s` (groups, by-levels, lexicon levels,
// vocabulary and sets), merging entries that map to the same id. Used both for
// merging another state (after appending its content) and for canonicalisation.
namespace {

struct Maps {
  std::vector<std::uint32_t> group, by, lex, word, set;
};

void add_into(LvlmState& into, const LvlmState& from, const Maps& m, std::size_t S, std::size_t M) {
  // Cells.
  std::vector<std::uint32_t> cell_map(from.cells.size());
  for (std::size_t c = 0; c < from.cells.size(); ++c) {
    const auto key = std::make_pair(m.by[from.cells[c].first], m.group[from.cells[c].second]);
    const auto [it, fresh] =
        into.cell_index.emplace(key, static_cast<std::uint32_t>(into.cells.size()));
    if (fresh) {
      into.cells.push_back(key);
      into.word_counts.emplace_back();
      into.lengths.emplace_back();
      into.refused.push_back(0);
      into.empty.push_back(0);
    }
    cell_map[c] = it->second;
  }
  for (std::size_t c = 0; c < from.cells.size(); ++c) {
    const std::uint32_t t = cell_map[c];
    const auto& wc = from.word_counts[c];
    auto& out = into.word_counts[t];
    for (std::size_t w = 0; w < wc.size(); ++w) {
      if (wc[w] == 0) continue;
      const std::uint32_t id = m.word[w];
      if (out.size() <= id) out.resize(std::max<std::size_t>(id + 1, into.vocabulary.size()), 0);
      out[id] += wc[w];
    }
    add_counts(into.lengths[t], from.lengths[c]);
    into.refused[t] += from.refused[c];
    into.empty[t] += from.empty[c];
  }
  // Lexicon.
  for (const auto& [k, hist] : from.lexicon_hist) {
    auto& out = into.lexicon_hist[{cell_map[k.first], m.lex[k.second]}];
    if (out.empty()) out.resize(hist.size());
    for (std::size_t c = 0; c < hist.size(); ++c) add_counts(out[c], hist[c]);
  }
  for (const auto& [k, n] : from.lexicon_no_words) {
    into.lexicon_no_words[{cell_map[k.first], m.lex[k.second]}] += n;
  }
  // Ratings.
  for (std::size_t r = 0; r < from.ratings.size(); ++r) {
    const auto& a = from.ratings[r];
    auto& b = into.ratings[r];
    for (const auto& [c, h] : a.values) add_counts(b.values[cell_map[c]], h);
    for (const auto& [c, n] : a.rows) b.rows[cell_map[c]] += n;
    b.no_number += a.no_number;
    b.out_of_range += a.out_of_range;
    std::vector<std::pair<std::uint64_t, std::string>> ex = b.examples;
    ex.insert(ex.end(), a.examples.begin(), a.examples.end());
    std::sort(ex.begin(), ex.end());
    ex.erase(std::unique(ex.begin(), ex.end()), ex.end());
    if (ex.size() > 5) ex.resize(5);
    b.examples = std::move(ex);
  }
  // Sets.
  for (std::size_t i = 0; i < from.set_keys.size(); ++i) {
    const std::uint32_t t = m.set[i];
    for (std::size_t s = 0; s < S; ++s) {
      SetScore b = from.set_scores[i * S + s];
      b.max_groups = remap_mask(b.max_groups, m.group);
      merge_score(into.set_scores[static_cast<std::size_t>(t) * S + s], b);
    }
  }
  // Members.
  for (std::size_t r = 0; r < from.member_set.size(); ++r) {
    into.member_set.push_back(m.set[from.member_set[r]]);
    into.member_group.push_back(m.group[from.member_group[r]]);
    into.member_values.insert(into.member_values.end(), from.member_values.begin() + r * M,
                              from.member_values.begin() + (r + 1) * M);
  }
  for (const auto& [key, rows] : from.scorers) into.scorers[key] += rows;
  VLBIAS_CHECK(into.scorers.size() <= LvlmState::kMaxScorers, InputError,
               "merged LVLM states name more than {} distinct scorers", LvlmState::kMaxScorers);
  into.rows += from.rows;
  into.rows_missing_group += from.rows_missing_group;
  into.rows_missing_key += from.rows_missing_key;
  for (std::size_t s = 0; s < S; ++s) into.rows_missing_score[s] += from.rows_missing_score[s];
}

}  // namespace

void lvlm_merge(LvlmState& into, const LvlmState& other) {
  if (into.fingerprint.empty()) {
    into = other;
    return;
  }
  VLBIAS_CHECK(into.fingerprint == other.fingerprint, InputError,
               "cannot merge LVLM states built with different settings (columns, measures, "
               "lexicon or stop words differ); scan every shard with the same spec");
  const std::size_t S = score_count(into);
  std::size_t M = member_width(into);
  if (M == 0) M = member_width(other);
  VLBIAS_CHECK(into.member_set.empty() || other.member_set.empty() ||
                   member_width(into) == member_width(other),
               InputError, "cannot merge LVLM states with different member measures");
  Maps m;
  m.group = merge_levels(into.groups, other.groups);
  VLBIAS_CHECK(S == 0 || into.groups.size() <= 64, InputError,
               "merged LVLM states have {} groups; MaxGap's group shares support at most 64",
               into.groups.size());
  m.by = merge_levels(into.by_levels, other.by_levels);
  m.lex = merge_levels(into.lexicon_levels, other.lexicon_levels);
  m.word = merge_levels(into.vocabulary, other.vocabulary);
  // Sets: keyed by (by-level, key).
  SetIndex index(into);
  m.set.resize(other.set_keys.size());
  for (std::size_t i = 0; i < other.set_keys.size(); ++i) {
    m.set[i] = index.intern(into, m.by[other.set_by[i]], other.set_keys[i], S);
  }
  add_into(into, other, m, S, M);
}

void canonicalize(LvlmState& state) {
  const std::size_t S = score_count(state);
  const std::size_t M = member_width(state);
  LvlmState out;
  out.fingerprint = state.fingerprint;
  out.rows_missing_score.assign(S, 0);
  out.ratings.resize(state.ratings.size());
  Maps m;
  out.groups = state.groups;
  m.group = sort_levels(out.groups);
  out.by_levels = state.by_levels;
  m.by = sort_levels(out.by_levels);
  out.lexicon_levels = state.lexicon_levels;
  m.lex = sort_levels(out.lexicon_levels);
  out.vocabulary = state.vocabulary;
  m.word = sort_levels(out.vocabulary);
  // Sets sorted by (new by-level, key).
  std::vector<std::uint32_t> order(state.set_keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::uint32_t ba = m.by[state.set_by[a]], bb = m.by[state.set_by[b]];
    return ba != bb ? ba < bb : state.set_keys[a] < state.set_keys[b];
  });
  m.set.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    m.set[order[i]] = static_cast<std::uint32_t>(i);
    out.set_keys.push_back(state.set_keys[order[i]]);
    out.set_by.push_back(m.by[state.set_by[order[i]]]);
  }
  out.set_scores.resize(order.size() * S);
  // Cells in sorted (by, group) order before adding, so cell ids are canonical too.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> cells;
  for (const auto& c : state.cells) cells.emplace_back(m.by[c.first], m.group[c.second]);
  std::sort(cells.begin(), cells.end());
  for (const auto& c : cells) {
    out.cell_index.emplace(c, static_cast<std::uint32_t>(out.cells.size()));
    out.cells.push_back(c);
    out.word_counts.emplace_back();
    out.lengths.emplace_back();
    out.refused.push_back(0);
    out.empty.push_back(0);
  }
  add_into(out, state, m, S, M);
  // Members sorted by (set, group, values) so that tests see them in one order.
  if (!out.member_set.empty()) {
    std::vector<std::uint32_t> mo(out.member_set.size());
    std::iota(mo.begin(), mo.end(), 0u);
    const auto& v = out.member_values;
    std::sort(mo.begin(), mo.end(), [&](std::uint32_t a, std::uint32_t b) {
      if (out.member_set[a] != out.member_set[b]) return out.member_set[a] < out.member_set[b];
      if (out.member_group[a] != out.member_group[b]) {
        return out.member_group[a] < out.member_group[b];
      }
      for (std::size_t k = 0; k < M; ++k) {
        const double x = v[a * M + k], y = v[b * M + k];
        if (std::isnan(x) != std::isnan(y)) return std::isnan(y);
        if (x != y && !std::isnan(x)) return x < y;
      }
      return false;
    });
    std::vector<std::uint32_t> ms(mo.size()), mg(mo.size());
    std::vector<double> mv(mo.size() * M);
    for (std::size_t i = 0; i < mo.size(); ++i) {
      ms[i] = out.member_set[mo[i]];
      mg[i] = out.member_group[mo[i]];
      std::copy(v.begin() + mo[i] * M, v.begin() + (mo[i] + 1) * M, mv.begin() + i * M);
    }
    out.member_set = std::move(ms);
    out.member_group = std::move(mg);
    out.member_values = std::move(mv);
  }
  // Word count vectors sized to the vocabulary (the canonical form has no ragged tails).
  for (auto& wc : out.word_counts) {
    if (!wc.empty()) wc.resize(out.vocabulary.size(), 0);
  }
  state = std::move(out);
}

}  // namespace vlbias
