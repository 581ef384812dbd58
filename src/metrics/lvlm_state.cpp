// Merging, canonical ordering and state files of the LVLM analysis (lvlm.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "lvlm_set_index.h"
#include "vlbias/io/atomic_file.h"
#include "vlbias/core/error.h"
#include "vlbias/metrics/lvlm.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias {

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
  into.rows += from.rows;
  into.rows_missing_group += from.rows_missing_group;
  into.rows_missing_key += from.rows_missing_key;
  for (std::size_t s = 0; s < S; ++s) into.rows_missing_score[s] += from.rows_missing_score[s];
}

std::size_t score_count(const LvlmState& s) {
  return s.rows_missing_score.size();
}
std::size_t member_width(const LvlmState& s) {
  return s.member_set.empty() ? 0 : s.member_values.size() / s.member_set.size();
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

// ------------------------------------------------------------------ state files

namespace {

constexpr char kMagic[8] = {'V', 'L', 'B', 'I', 'A', 'S', 'L', 'V'};
constexpr std::uint32_t kVersion = 1;

class Writer {
 public:
  void u64(std::uint64_t v) { bytes(&v, 8); }
  void u32(std::uint32_t v) { bytes(&v, 4); }
  void f64(double v) { bytes(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void strs(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) str(s);
  }
  void bytes(const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }
  std::string out;
};

class Reader {
 public:
  Reader(std::string_view data, const std::string& path) : d_(data), path_(path) {}
  std::uint64_t u64(const char* what) {
    std::uint64_t v;
    take(&v, 8, what);
    return v;
  }
  std::uint32_t u32(const char* what) {
    std::uint32_t v;
    take(&v, 4, what);
    return v;
  }
  double f64(const char* what) {
    double v;
    take(&v, 8, what);
    return v;
  }
  // A count of items of at least `min_item` bytes each: bounded by what is left.
  std::size_t count(const char* what, std::size_t min_item) {
    const std::uint64_t n = u64(what);
    VLBIAS_CHECK(n <= (d_.size() - at_) / std::max<std::size_t>(min_item, 1), InputError,
                 "LVLM state '{}' is truncated or corrupt: {} claims {} entries at byte {}, more "
                 "than the file holds",
                 path_, what, n, at_ - 8);
    return static_cast<std::size_t>(n);
  }
  std::string str(const char* what) {
    const std::size_t n = count(what, 1);
    std::string s(d_.substr(at_, n));
    at_ += n;
    return s;
  }
  std::vector<std::string> strs(const char* what) {
    const std::size_t n = count(what, 8);
    std::vector<std::string> v(n);
    for (auto& s : v) s = str(what);
    return v;
  }
  // An id that must be below `bound`.
  std::uint32_t id(const char* what, std::size_t bound) {
    const std::uint32_t v = u32(what);
    VLBIAS_CHECK(v < bound, InputError,
                 "LVLM state '{}' is corrupt: {} {} at byte {} is out of range (expected < {})",
                 path_, what, v, at_ - 4, bound);
    return v;
  }
  void done() {
    VLBIAS_CHECK(at_ == d_.size(), InputError,
                 "LVLM state '{}' has {} unexpected bytes after its end", path_, d_.size() - at_);
  }

 private:
  void take(void* p, std::size_t n, const char* what) {
    VLBIAS_CHECK(d_.size() - at_ >= n, InputError,
                 "LVLM state '{}' is truncated: the file ends at byte {} while reading {}", path_,
                 d_.size(), what);
    std::memcpy(p, d_.data() + at_, n);
    at_ += n;
  }
  std::string_view d_;
  std::string path_;
  std::size_t at_ = 0;
};

}  // namespace

void save_lvlm_state(const LvlmState& state, const std::string& path) {
  const std::size_t S = score_count(state);
  const std::size_t M = member_width(state);
  Writer w;
  w.bytes(kMagic, 8);
  w.u32(kVersion);
  w.str(state.fingerprint);
  w.u64(S);
  w.u64(M);
  w.u64(state.rows);
  w.u64(state.rows_missing_group);
  w.u64(state.rows_missing_key);
  for (const std::size_t n : state.rows_missing_score) w.u64(n);
  w.strs(state.groups);
  w.strs(state.by_levels);
  w.strs(state.lexicon_levels);
  w.strs(state.vocabulary);
  w.u64(state.set_keys.size());
  for (std::size_t i = 0; i < state.set_keys.size(); ++i) {
    w.str(state.set_keys[i]);
    w.u32(state.set_by[i]);
    for (std::size_t s = 0; s < S; ++s) {
      const SetScore& a = state.set_scores[i * S + s];
      w.f64(a.max);
      w.f64(a.min);
      w.u32(a.n);
      w.u64(a.max_groups);
    }
  }
  w.u64(state.member_set.size());
  for (std::size_t r = 0; r < state.member_set.size(); ++r) {
    w.u32(state.member_set[r]);
    w.u32(state.member_group[r]);
    for (std::size_t k = 0; k < M; ++k) w.f64(state.member_values[r * M + k]);
  }
  w.u64(state.cells.size());
  for (std::size_t c = 0; c < state.cells.size(); ++c) {
    w.u32(state.cells[c].first);
    w.u32(state.cells[c].second);
    std::size_t nonzero = 0;
    for (const auto x : state.word_counts[c]) nonzero += x != 0;
    w.u64(nonzero);
    for (std::size_t i = 0; i < state.word_counts[c].size(); ++i) {
      if (state.word_counts[c][i] == 0) continue;
      w.u32(static_cast<std::uint32_t>(i));
      w.u64(state.word_counts[c][i]);
    }
    w.u64(state.lengths[c].size());
    for (const auto& [len, n] : state.lengths[c]) {
      w.u32(len);
      w.u64(n);
    }
    w.u64(state.refused[c]);
    w.u64(state.empty[c]);
  }
  w.u64(state.lexicon_hist.size());
  for (const auto& [k, hist] : state.lexicon_hist) {
    w.u32(k.first);
    w.u32(k.second);
    w.u64(hist.size());
    for (const auto& h : hist) {
      w.u64(h.size());
      for (const auto& [cn, n] : h) {
        w.u32(cn.first);
        w.u32(cn.second);
        w.u64(n);
      }
    }
  }
  w.u64(state.lexicon_no_words.size());
  for (const auto& [k, n] : state.lexicon_no_words) {
    w.u32(k.first);
    w.u32(k.second);
    w.u64(n);
  }
  w.u64(state.ratings.size());
  for (const auto& r : state.ratings) {
    w.u64(r.values.size());
    for (const auto& [c, h] : r.values) {
      w.u32(c);
      w.u64(h.size());
      for (const auto& [v, n] : h) {
        w.f64(v);
        w.u64(n);
      }
    }
    w.u64(r.rows.size());
    for (const auto& [c, n] : r.rows) {
      w.u32(c);
      w.u64(n);
    }
    w.u64(r.no_number);
    w.u64(r.out_of_range);
    w.u64(r.examples.size());
    for (const auto& [h, t] : r.examples) {
      w.u64(h);
      w.str(t);
    }
  }
  write_file_atomically(path, w.out);
}

LvlmState load_lvlm_state(const std::string& path) {
  const MappedFile mapped(path);
  const std::string_view data(reinterpret_cast<const char*>(mapped.data()), mapped.size());
  VLBIAS_CHECK(data.size() >= 12 && std::memcmp(data.data(), kMagic, 8) == 0, InputError,
               "'{}' is not an LVLM state file (it does not start with 'VLBIASLV'); expected a "
               "file written by --save-state",
               path);
  Reader r(data.substr(8), path);
  const std::uint32_t version = r.u32("the version");
  VLBIAS_CHECK(version == kVersion, InputError,
               "LVLM state '{}' has format version {}; this vlbias reads version {}", path, version,
               kVersion);
  LvlmState s;
  s.fingerprint = r.str("the fingerprint");
  const std::size_t S = r.count("the score count", 8);
  const std::size_t M = r.count("the member width", 8);
  VLBIAS_CHECK(S <= 4096 && M <= 4096, InputError,
               "LVLM state '{}' is corrupt: {} scores and {} member measures", path, S, M);
  s.rows = r.u64("rows");
  s.rows_missing_group = r.u64("rows");
  s.rows_missing_key = r.u64("rows");
  s.rows_missing_score.resize(S);
  for (auto& n : s.rows_missing_score) n = r.u64("rows");
  s.groups = r.strs("groups");
  VLBIAS_CHECK(S == 0 || s.groups.size() <= 64, InputError,
               "LVLM state '{}' is corrupt: {} groups with MaxGap scores (at most 64)", path,
               s.groups.size());
  s.by_levels = r.strs("by-levels");
  s.lexicon_levels = r.strs("lexicon levels");
  s.vocabulary = r.strs("vocabulary");
  const std::size_t G = s.groups.size(), B = s.by_levels.size();
  const std::size_t sets = r.count("sets", 12 + S * 28);
  s.set_keys.reserve(sets);
  std::unordered_map<std::string, int> seen;
  for (std::size_t i = 0; i < sets; ++i) {
    s.set_keys.push_back(r.str("a set key"));
    s.set_by.push_back(r.id("a set's by-level", B));
    VLBIAS_CHECK(
        seen.emplace(fmt::format("{}\x1e{}", s.set_by.back(), s.set_keys.back()), 0).second,
        InputError, "LVLM state '{}' is corrupt: set {} is listed twice", path, i);
    for (std::size_t k = 0; k < S; ++k) {
      SetScore a;
      a.max = r.f64("a set score");
      a.min = r.f64("a set score");
      a.n = r.u32("a set score");
      a.max_groups = r.u64("a set score");
      VLBIAS_CHECK(a.n == 0 || (std::isfinite(a.max) && std::isfinite(a.min) && a.min <= a.max &&
                                a.max_groups != 0 && (G >= 64 || (a.max_groups >> G) == 0)),
                   InputError, "LVLM state '{}' is corrupt: set {} has an invalid score summary",
                   path, i);
      s.set_scores.push_back(a);
    }
  }
  const std::size_t members = r.count("members", 8 + 8 * M);
  for (std::size_t i = 0; i < members; ++i) {
    s.member_set.push_back(r.id("a member's set", sets));
    s.member_group.push_back(r.id("a member's group", G));
    for (std::size_t k = 0; k < M; ++k) s.member_values.push_back(r.f64("a member value"));
  }
  const std::size_t cells = r.count("cells", 40);
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint32_t b = r.id("a cell's by-level", B), g = r.id("a cell's group", G);
    VLBIAS_CHECK(s.cell_index.emplace(std::make_pair(b, g), c).second, InputError,
                 "LVLM state '{}' is corrupt: cell {} is listed twice", path, c);
    s.cells.emplace_back(b, g);
    auto& wc = s.word_counts.emplace_back();
    const std::size_t nz = r.count("word counts", 12);
    if (nz > 0) wc.assign(s.vocabulary.size(), 0);
    for (std::size_t i = 0; i < nz; ++i) {
      const std::uint32_t w = r.id("a word", s.vocabulary.size());
      wc[w] += r.u64("a word count");
    }
    auto& lens = s.lengths.emplace_back();
    const std::size_t nl = r.count("lengths", 12);
    for (std::size_t i = 0; i < nl; ++i) {
      const std::uint32_t len = r.u32("a length");
      lens[len] += r.u64("a length count");
    }
    s.refused.push_back(r.u64("refusals"));
    s.empty.push_back(r.u64("empty answers"));
  }
  const std::size_t L = s.lexicon_levels.size();
  const std::size_t nh = r.count("lexicon cells", 16);
  for (std::size_t i = 0; i < nh; ++i) {
    const std::uint32_t c = r.id("a lexicon cell", cells), l = r.id("a lexicon level", L);
    auto& hist = s.lexicon_hist[{c, l}];
    const std::size_t nc = r.count("lexicon categories", 8);
    VLBIAS_CHECK(nc <= 4096, InputError, "LVLM state '{}' is corrupt: {} lexicon categories", path,
                 nc);
    hist.resize(nc);
    for (auto& h : hist) {
      const std::size_t ne = r.count("a lexicon histogram", 16);
      for (std::size_t e = 0; e < ne; ++e) {
        const std::uint32_t cn = r.u32("a lexicon count"), nw = r.u32("a lexicon count");
        VLBIAS_CHECK(nw > 0, InputError, "LVLM state '{}' is corrupt: a text with 0 words", path);
        h[{cn, nw}] += r.u64("a lexicon count");
      }
    }
  }
  const std::size_t nn = r.count("lexicon texts without words", 16);
  for (std::size_t i = 0; i < nn; ++i) {
    const std::uint32_t c = r.id("a lexicon cell", cells), l = r.id("a lexicon level", L);
    s.lexicon_no_words[{c, l}] += r.u64("a count");
  }
  s.ratings.resize(r.count("rating measures", 40));
  for (auto& acc : s.ratings) {
    const std::size_t nv = r.count("rating cells", 12);
    for (std::size_t i = 0; i < nv; ++i) {
      auto& h = acc.values[r.id("a rating cell", cells)];
      const std::size_t ne = r.count("rating values", 16);
      for (std::size_t e = 0; e < ne; ++e) {
        const double v = r.f64("a rating value");
        VLBIAS_CHECK(std::isfinite(v), InputError,
                     "LVLM state '{}' is corrupt: a rating value is not finite", path);
        h[v] += r.u64("a rating count");
      }
    }
    const std::size_t nr = r.count("rating rows", 12);
    for (std::size_t i = 0; i < nr; ++i) {
      const std::uint32_t c = r.id("a rating cell", cells);
      acc.rows[c] += r.u64("a rating count");
    }
    acc.no_number = r.u64("exclusions");
    acc.out_of_range = r.u64("exclusions");
    const std::size_t ne = r.count("rating examples", 16);
    for (std::size_t i = 0; i < ne; ++i) {
      const std::uint64_t h = r.u64("an example");
      acc.examples.emplace_back(h, r.str("an example"));
    }
  }
  r.done();
  return s;
}

}  // namespace vlbias
