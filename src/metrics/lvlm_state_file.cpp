// The LVLM state file (lvlm.h, --save-state / --load-state): "VLBIASLV", a format version,
// then the state's fields in order, little-endian as the machine writes them. Loading checks
// every count against the bytes left and every id against its list, so a truncated or
// edited file is an InputError, never an out-of-range read.
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "lvlm_set_index.h"
#include "vlbias/core/error.h"
#include "vlbias/io/mapped_file.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias {

using metrics_internal::member_width;
using metrics_internal::score_count;

namespace {

constexpr char kMagic[8] = {'V', 'L', 'B', 'I', 'A', 'S', 'L', 'V'};
constexpr std::uint32_t kVersion = 2;  // 2: the scorers' row counts

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

// ------------------------------------------------------------------ writing

void write_sets(Writer& w, const LvlmState& state, std::size_t S) {
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
}

void write_members(Writer& w, const LvlmState& state, std::size_t M) {
  w.u64(state.member_set.size());
  for (std::size_t r = 0; r < state.member_set.size(); ++r) {
    w.u32(state.member_set[r]);
    w.u32(state.member_group[r]);
    for (std::size_t k = 0; k < M; ++k) w.f64(state.member_values[r * M + k]);
  }
}

// Per cell: its levels, its nonzero word counts, its length histogram, refusals and empties.
void write_cells(Writer& w, const LvlmState& state) {
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
}

void write_lexicon(Writer& w, const LvlmState& state) {
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
}

void write_ratings(Writer& w, const LvlmState& state) {
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
}

// ------------------------------------------------------------------ reading

// The sets and their score summaries; returns the number of sets.
std::size_t read_sets(Reader& r, LvlmState& s, const std::string& path, std::size_t S) {
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
  return sets;
}

void read_members(Reader& r, LvlmState& s, std::size_t sets, std::size_t M) {
  const std::size_t members = r.count("members", 8 + 8 * M);
  for (std::size_t i = 0; i < members; ++i) {
    s.member_set.push_back(r.id("a member's set", sets));
    s.member_group.push_back(r.id("a member's group", s.groups.size()));
    for (std::size_t k = 0; k < M; ++k) s.member_values.push_back(r.f64("a member value"));
  }
}

// The cells; returns their number.
std::size_t read_cells(Reader& r, LvlmState& s, const std::string& path) {
  const std::size_t G = s.groups.size(), B = s.by_levels.size();
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
  return cells;
}

void read_lexicon(Reader& r, LvlmState& s, const std::string& path, std::size_t cells) {
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
}

void read_ratings(Reader& r, LvlmState& s, const std::string& path, std::size_t cells) {
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
}

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
  write_sets(w, state, S);
  write_members(w, state, M);
  write_cells(w, state);
  write_lexicon(w, state);
  write_ratings(w, state);
  w.u64(state.scorers.size());
  for (const auto& [key, rows] : state.scorers) {
    w.str(key);
    w.u64(rows);
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
  const std::size_t sets = read_sets(r, s, path, S);
  read_members(r, s, sets, M);
  const std::size_t cells = read_cells(r, s, path);
  read_lexicon(r, s, path, cells);
  read_ratings(r, s, path, cells);
  const std::size_t scorers = r.count("the scorers", 16);
  VLBIAS_CHECK(scorers <= LvlmState::kMaxScorers, InputError,
               "LVLM state '{}' is corrupt: {} scorers (at most {})", path, scorers,
               LvlmState::kMaxScorers);
  for (std::size_t i = 0; i < scorers; ++i) {
    std::string key = r.str("a scorer");
    s.scorers[std::move(key)] = r.u64("a scorer's rows");
  }
  r.done();
  return s;
}

}  // namespace vlbias
