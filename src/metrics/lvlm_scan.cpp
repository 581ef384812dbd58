// One streaming pass over generated answers into an LvlmState (lvlm.h).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "vlbias/io/string_index.h"
#include "lvlm_set_index.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/metrics/lvlm.h"
#include "vlbias/io/record_stream.h"

namespace vlbias {

using metrics_internal::SetIndex;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kRatingExamples = 5;

// Interns level tuples: text -> id in order of first appearance.
class LevelIndex {
 public:
  explicit LevelIndex(std::vector<std::string>& levels) : levels_(levels) {
    for (std::size_t i = 0; i < levels.size(); ++i) index_.emplace(levels[i], i);
  }
  std::uint32_t intern(const std::string& key) {
    const auto [it, fresh] = index_.emplace(key, static_cast<std::uint32_t>(levels_.size()));
    if (fresh) levels_.push_back(key);
    return it->second;
  }

 private:
  std::vector<std::string>& levels_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

bool truthy(std::string_view t) {
  return t == "true" || t == "1" || t == "True" || t == "TRUE" || t == "yes" || t == "refused";
}

}  // namespace

std::string join_key(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '\x1f';
    out += parts[i];
  }
  return out;
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = key.find('\x1f', start);
    parts.push_back(key.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

std::string LvlmConfig::fingerprint() const {
  std::string f = "vlbias-lvlm-state-1";
  const auto list = [&](const char* name, const std::vector<std::string>& v) {
    f += fmt::format("|{}=", name);
    for (const std::string& x : v) f += fmt::format("{}:{},", x.size(), x);
  };
  list("set_key", set_key);
  list("group", group);
  list("by", by);
  list("scores", scores);
  f += fmt::format("|text={}:{}|pmi={}|responses={}", text.size(), text, pmi, responses);
  list("refusal_patterns", refusal_patterns);
  f += fmt::format("|refusal_column={}", refusal_column);
  if (lexicon) {
    f += fmt::format("|lexicon={}", lexicon->categories.size());
    list("categories", lexicon->categories);
    list("words", lexicon->words);
    for (const auto& c : lexicon->word_categories) {
      for (const std::uint32_t k : c) f += fmt::format("{},", k);
      f += ';';
    }
  }
  f += fmt::format("|lexicon_by={}|distinct={}|stop_words={}", lexicon_by, lexicon_distinct,
                   stop_words);
  for (const RatingSpec& r : ratings) {
    f += fmt::format("|rating={}:{}:{}", r.name, to_string(r.kind), r.where_column);
    list("where", r.where_values);
  }
  f += fmt::format("|members={}", keep_members);
  return f;
}

std::vector<std::string> LvlmConfig::member_measures() const {
  std::vector<std::string> m = scores;
  if (responses) {
    m.push_back("length");
    m.push_back("refused");
  }
  for (const RatingSpec& r : ratings) m.push_back(r.name);
  if (lexicon) {
    for (const std::string& c : lexicon->categories) m.push_back(c);
  }
  return m;
}

namespace {

void check_config(const LvlmConfig& c) {
  VLBIAS_CHECK(!c.group.empty(), UsageError, "the LVLM analysis needs at least one group column");
  VLBIAS_CHECK(c.scores.empty() || !c.set_key.empty(), UsageError,
               "score columns (MaxGap) need set-key columns naming the counterfactual set");
  VLBIAS_CHECK(!c.keep_members || !c.set_key.empty(), UsageError,
               "group tests need set-key columns naming the counterfactual set");
  const bool needs_text = c.pmi || c.responses || c.lexicon || !c.ratings.empty();
  VLBIAS_CHECK(!needs_text || !c.text.empty(), UsageError,
               "PMI, lexicon, response and rating measures need a text column");
  VLBIAS_CHECK(c.lexicon_by.empty() || c.lexicon, UsageError,
               "lexicon_by '{}' is given without a lexicon", c.lexicon_by);
}

// Hands every row of a source (a file, or a table in memory) to on_row, with progress in bytes.
using RecordFeed = std::function<void(
    const std::vector<std::string>& columns, const std::function<void(const Record&)>& on_row,
    const std::function<void(std::size_t, std::size_t)>& on_progress)>;

// The scan itself; `path` names the source in messages, `file_bytes` sizes the progress bar.
void scan_records(const std::string& path, std::uintmax_t file_bytes, const RecordFeed& feed,
                  const LvlmConfig& config, LvlmState& state, bool progress) {
  check_config(config);
  const std::string fp = config.fingerprint();
  if (state.fingerprint.empty()) {
    state.fingerprint = fp;
    state.rows_missing_score.assign(config.scores.size(), 0);
    state.ratings.resize(config.ratings.size());
  }
  VLBIAS_CHECK(state.fingerprint == fp, InternalError,
               "lvlm_scan: the state was built with another configuration");

  // Requested columns, without repeats.
  std::vector<std::string> columns;
  const auto column = [&](const std::string& name) {
    const auto it = std::find(columns.begin(), columns.end(), name);
    if (it != columns.end()) return static_cast<std::size_t>(it - columns.begin());
    columns.push_back(name);
    return columns.size() - 1;
  };
  std::vector<std::size_t> key_cols, group_cols, by_cols, score_cols, rating_cols;
  for (const auto& c : config.set_key) key_cols.push_back(column(c));
  for (const auto& c : config.group) group_cols.push_back(column(c));
  for (const auto& c : config.by) by_cols.push_back(column(c));
  for (const auto& c : config.scores) score_cols.push_back(column(c));
  const std::size_t text_col = config.text.empty() ? 0 : column(config.text);
  const std::size_t refusal_col = config.refusal_column.empty() ? 0 : column(config.refusal_column);
  const std::size_t lexby_col = config.lexicon_by.empty() ? 0 : column(config.lexicon_by);
  for (const RatingSpec& r : config.ratings) {
    rating_cols.push_back(r.where_column.empty() ? 0 : column(r.where_column));
  }

  const std::size_t S = config.scores.size();
  const std::size_t M = config.keep_members ? config.member_measures().size() : 0;
  const RefusalPatterns refusals = config.refusal_patterns.empty()
                                       ? RefusalPatterns::defaults()
                                       : RefusalPatterns(config.refusal_patterns);
  const StopWords stop = StopWords::from_spec(config.stop_words);
  const Lexicon* lex = config.lexicon ? &*config.lexicon : nullptr;
  const std::size_t C = lex ? lex->categories.size() : 0;

  LevelIndex groups(state.groups), by_levels(state.by_levels), lex_levels(state.lexicon_levels);
  SetIndex set_index(state);
  Dictionary vocab_dict;
  vocab_dict.rebuild(state.vocabulary);
  // Per-vocabulary-word flags, extended as the vocabulary grows.
  std::vector<std::uint8_t> word_is_stop;
  std::vector<std::int32_t> word_lexicon;
  const auto word_id = [&](std::string_view w) {
    const std::uint32_t id = vocab_dict.intern(state.vocabulary, w);
    while (word_is_stop.size() < state.vocabulary.size()) {
      const std::string& v = state.vocabulary[word_is_stop.size()];
      word_is_stop.push_back(stop.contains(v) ? 1 : 0);
      const auto at = lex ? lex->find(v) : std::nullopt;
      word_lexicon.push_back(at ? static_cast<std::int32_t>(*at) : -1);
    }
    return id;
  };
  const auto cell_of = [&](std::uint32_t by, std::uint32_t group) {
    const auto [it, fresh] = state.cell_index.emplace(
        std::make_pair(by, group), static_cast<std::uint32_t>(state.cells.size()));
    if (fresh) {
      state.cells.emplace_back(by, group);
      state.word_counts.emplace_back();
      state.lengths.emplace_back();
      state.refused.push_back(0);
      state.empty.push_back(0);
    }
    return it->second;
  };

  std::vector<std::string> parts;
  std::string key, scratch;
  std::vector<std::uint32_t> lex_counts(C);
  std::vector<std::int32_t> lex_seen;
  std::vector<double> member(M);
  const std::size_t total_mib = static_cast<std::size_t>(file_bytes >> 20) + 1;
  std::optional<Progress> bar;
  if (progress) bar.emplace(fmt::format("scanning {} (MiB)", path), total_mib);
  std::size_t shown_mib = 0;

  feed(
      columns,
      [&](const Record& rec) {
        ++state.rows;
        const auto tuple = [&](const std::vector<std::size_t>& cols, std::string& out) {
          out.clear();
          for (std::size_t i = 0; i < cols.size(); ++i) {
            if (rec.missing(cols[i])) return false;
            if (i > 0) out += '\x1f';
            out += rec.text(cols[i]);
          }
          return true;
        };
        if (!tuple(group_cols, key)) {
          ++state.rows_missing_group;
          return;
        }
        const std::uint32_t g = groups.intern(key);
        VLBIAS_CHECK(S == 0 || state.groups.size() <= 64, InputError,
                     "'{}' line {}: more than 64 groups; MaxGap's group shares support at most 64",
                     path, rec.line());
        if (!tuple(by_cols, key)) {
          ++state.rows_missing_key;
          return;
        }
        const std::uint32_t b = by_levels.intern(key);
        const std::uint32_t cell = cell_of(b, g);

        // Counterfactual set.
        std::uint32_t set = std::numeric_limits<std::uint32_t>::max();
        if (!config.set_key.empty()) {
          if (tuple(key_cols, key)) {
            set = set_index.intern(state, b, key, S);
          } else {
            ++state.rows_missing_key;
          }
        }
        std::fill(member.begin(), member.end(), kNaN);
        for (std::size_t s = 0; s < S; ++s) {
          const double v = rec.number(score_cols[s]);
          if (std::isnan(v)) {
            ++state.rows_missing_score[s];
            continue;
          }
          if (M) member[s] = v;
          if (set == std::numeric_limits<std::uint32_t>::max()) continue;
          SetScore& a = state.set_scores[static_cast<std::size_t>(set) * S + s];
          const std::uint64_t bit = std::uint64_t{1} << g;
          if (a.n == 0 || v > a.max) {
            a.max = v;
            a.max_groups = bit;
          } else if (v == a.max) {
            a.max_groups |= bit;
          }
          if (a.n == 0 || v < a.min) a.min = v;
          ++a.n;
        }

        if (!config.text.empty()) {
          const std::string_view text = rec.text(text_col);
          // One tokenisation serves the length, PMI and lexicon measures.
          std::uint32_t words = 0, n_words = 0;
          if (config.responses || config.pmi || lex) {
            std::fill(lex_counts.begin(), lex_counts.end(), 0);
            lex_seen.clear();
            std::vector<std::uint64_t>& counts = state.word_counts[cell];
            tokenize(
                text, scratch,
                [&](std::string_view w) {
                  ++words;
                  if (!config.pmi && !lex) return;
                  const std::uint32_t id = word_id(w);
                  if (config.pmi) {
                    if (counts.size() <= id) counts.resize(state.vocabulary.size(), 0);
                    ++counts[id];
                  }
                  if (!lex || word_is_stop[id]) return;
                  ++n_words;
                  const std::int32_t at = word_lexicon[id];
                  if (at < 0) return;
                  if (config.lexicon_distinct) {
                    if (std::find(lex_seen.begin(), lex_seen.end(), at) != lex_seen.end()) return;
                    lex_seen.push_back(at);
                  }
                  for (const std::uint32_t k : lex->word_categories[static_cast<std::size_t>(at)]) {
                    ++lex_counts[k];
                  }
                },
                path);
          }
          std::size_t m = S;
          if (config.responses) {
            const bool refused = config.refusal_column.empty() ? refusals.matches(text)
                                                               : truthy(rec.text(refusal_col));
            ++state.lengths[cell][words];
            if (refused) ++state.refused[cell];
            if (words == 0) ++state.empty[cell];
            if (M) {
              member[m] = static_cast<double>(words);
              member[m + 1] = refused ? 1.0 : 0.0;
            }
            m += 2;
          }
          for (std::size_t r = 0; r < config.ratings.size(); ++r, ++m) {
            const RatingSpec& spec = config.ratings[r];
            if (!spec.where_column.empty()) {
              const std::string_view w = rec.text(rating_cols[r]);
              if (std::find(spec.where_values.begin(), spec.where_values.end(), w) ==
                  spec.where_values.end()) {
                continue;
              }
            }
            LvlmState::RatingAcc& acc = state.ratings[r];
            ++acc.rows[cell];
            const NumericAnswer a = extract_numeric(text, spec.kind);
            if (a.exclusion == Exclusion::None) {
              ++acc.values[cell][a.value];
              if (M) member[m] = a.value;
              continue;
            }
            ++(a.exclusion == Exclusion::NoNumber ? acc.no_number : acc.out_of_range);
            std::pair<std::uint64_t, std::string> ex{hash_bytes(text),
                                                     std::string(text.substr(0, 300))};
            if (acc.examples.size() < kRatingExamples || ex < acc.examples.back()) {
              const auto at = std::lower_bound(acc.examples.begin(), acc.examples.end(), ex);
              if (at == acc.examples.end() || *at != ex) {
                acc.examples.insert(at, std::move(ex));
                if (acc.examples.size() > kRatingExamples) acc.examples.pop_back();
              }
            }
          }
          if (lex) {
            std::uint32_t level = 0;
            if (!config.lexicon_by.empty()) {
              level = lex_levels.intern(std::string(rec.text(lexby_col)));
            } else if (state.lexicon_levels.empty()) {
              state.lexicon_levels.push_back("");
            }
            const auto lk = std::make_pair(cell, level);
            if (n_words == 0) {
              ++state.lexicon_no_words[lk];
            } else {
              auto& hist = state.lexicon_hist[lk];
              if (hist.empty()) hist.resize(C);
              for (std::size_t k = 0; k < C; ++k) {
                ++hist[k][{lex_counts[k], n_words}];
                if (M) member[m + k] = static_cast<double>(lex_counts[k]) / n_words;
              }
            }
          }
        }
        if (M && set != std::numeric_limits<std::uint32_t>::max()) {
          state.member_set.push_back(set);
          state.member_group.push_back(g);
          state.member_values.insert(state.member_values.end(), member.begin(), member.end());
        }
      },
      [&](std::size_t done, std::size_t) {
        const std::size_t mib = std::min(done >> 20, total_mib);
        if (bar && mib > shown_mib) bar->advance(mib - shown_mib);
        shown_mib = std::max(shown_mib, mib);
      });
  if (bar) bar->finish();
}

}  // namespace

void lvlm_scan(const std::string& path, const LvlmConfig& config, LvlmState& state, bool progress) {
  std::error_code size_error;
  const auto file_bytes = std::filesystem::file_size(path, size_error);
  scan_records(
      path, size_error ? 0 : file_bytes,
      [&](const std::vector<std::string>& columns, const std::function<void(const Record&)>& on_row,
          const std::function<void(std::size_t, std::size_t)>& on_progress) {
        for_each_record(path, columns, on_row, on_progress);
      },
      config, state, progress);
}

void lvlm_scan_table(const Table& table, const LvlmConfig& config, LvlmState& state) {
  scan_records(
      table.source, 0,
      [&](const std::vector<std::string>& columns, const std::function<void(const Record&)>& on_row,
          const std::function<void(std::size_t, std::size_t)>&) {
        for_each_record(table, columns, on_row);
      },
      config, state, false);
}

}  // namespace vlbias
