// One streaming pass over generated answers into an LvlmState (lvlm.h).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "lvlm_set_index.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/row_filter.h"
#include "vlbias/io/table/string_index.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias {

using metrics_internal::SetIndex;

namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
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
  list("scorers", scorers);
  f += fmt::format("|scorers_optional={}", scorers_optional);
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
    f += fmt::format("|where_expression={}:{}", r.where_expression.size(), r.where_expression);
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
// Columns from index `required` on may be absent from the source (record_stream.h).
using RecordFeed =
    std::function<void(const std::vector<std::string>& columns, std::size_t required,
                       const std::function<void(const Record&)>& on_row,
                       const std::function<void(std::size_t, std::size_t)>& on_progress)>;

constexpr std::uint32_t kNoSet = std::numeric_limits<std::uint32_t>::max();

// One scan's working state: the requested columns, the indexes over the state's levels and
// vocabulary, and the per-row buffers; add() folds one row into the state.
class RecordScanner {
 public:
  RecordScanner(const std::string& path, const LvlmConfig& config, LvlmState& state)
      : path_(path),
        config_(config),
        state_(state),
        S_(config.scores.size()),
        M_(config.keep_members ? config.member_measures().size() : 0),
        refusals_(config.refusal_patterns.empty() ? RefusalPatterns::defaults()
                                                  : RefusalPatterns(config.refusal_patterns)),
        stop_(StopWords::from_spec(config.stop_words)),
        lex_(config.lexicon ? &*config.lexicon : nullptr),
        C_(lex_ ? lex_->categories.size() : 0),
        groups_(state.groups),
        by_levels_(state.by_levels),
        lex_levels_(state.lexicon_levels),
        set_index_(state),
        lex_counts_(C_),
        member_(M_) {
    // Requested columns, without repeats.
    for (const auto& c : config.set_key) key_cols_.push_back(column(c));
    for (const auto& c : config.group) group_cols_.push_back(column(c));
    for (const auto& c : config.by) by_cols_.push_back(column(c));
    for (const auto& c : config.scores) score_cols_.push_back(column(c));
    text_col_ = config.text.empty() ? 0 : column(config.text);
    refusal_col_ = config.refusal_column.empty() ? 0 : column(config.refusal_column);
    lexby_col_ = config.lexicon_by.empty() ? 0 : column(config.lexicon_by);
    for (const RatingSpec& r : config.ratings) {
      rating_cols_.push_back(r.where_column.empty() ? 0 : column(r.where_column));
      std::vector<std::size_t> slots;
      std::optional<RowFilter> filter;
      if (!r.where_expression.empty()) {
        filter = RowFilter::parse(r.where_expression, r.where_origin);
        for (const std::string& c : filter->columns()) slots.push_back(column(c));
      }
      rating_filters_.push_back(std::move(filter));
      rating_filter_cols_.push_back(std::move(slots));
    }
    // Last, so that optional scorer columns are the tail of the requested list.
    required_ = config.scorers_optional ? columns_.size() : static_cast<std::size_t>(-1);
    for (const auto& c : config.scorers) scorer_cols_.push_back(column(c));
    vocab_dict_.rebuild(state.vocabulary);
  }

  const std::vector<std::string>& columns() const { return columns_; }
  std::size_t required() const { return required_; }

  void add(const Record& rec) {
    ++state_.rows;
    add_scorers(rec);
    if (!tuple(rec, group_cols_, key_)) {
      ++state_.rows_missing_group;
      return;
    }
    const std::uint32_t g = groups_.intern(key_);
    VLBIAS_CHECK(S_ == 0 || state_.groups.size() <= 64, InputError,
                 "'{}' line {}: more than 64 groups; MaxGap's group shares support at most 64",
                 path_, rec.line());
    if (!tuple(rec, by_cols_, key_)) {
      ++state_.rows_missing_key;
      return;
    }
    const std::uint32_t b = by_levels_.intern(key_);
    const std::uint32_t cell = cell_of(b, g);

    // Counterfactual set.
    std::uint32_t set = kNoSet;
    if (!config_.set_key.empty()) {
      if (tuple(rec, key_cols_, key_)) {
        set = set_index_.intern(state_, b, key_, S_);
      } else {
        ++state_.rows_missing_key;
      }
    }
    std::fill(member_.begin(), member_.end(), kMissing);
    add_scores(rec, g, set);
    if (!config_.text.empty()) add_text(rec, cell);
    if (M_ && set != kNoSet) {
      state_.member_set.push_back(set);
      state_.member_group.push_back(g);
      state_.member_values.insert(state_.member_values.end(), member_.begin(), member_.end());
    }
  }

 private:
  std::size_t column(const std::string& name) {
    const auto it = std::find(columns_.begin(), columns_.end(), name);
    if (it != columns_.end()) return static_cast<std::size_t>(it - columns_.begin());
    columns_.push_back(name);
    return columns_.size() - 1;
  }

  // The row's values of `cols` joined by \x1f into `out`; false when one is missing.
  static bool tuple(const Record& rec, const std::vector<std::size_t>& cols, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (rec.missing(cols[i])) return false;
      if (i > 0) out += '\x1f';
      out += rec.text(cols[i]);
    }
    return true;
  }

  // Interns a word, extending the per-word flags as the vocabulary grows.
  std::uint32_t word_id(std::string_view w) {
    const std::uint32_t id = vocab_dict_.intern(state_.vocabulary, w);
    while (word_is_stop_.size() < state_.vocabulary.size()) {
      const std::string& v = state_.vocabulary[word_is_stop_.size()];
      word_is_stop_.push_back(stop_.contains(v) ? 1 : 0);
      const auto at = lex_ ? lex_->find(v) : std::nullopt;
      word_lexicon_.push_back(at ? static_cast<std::int32_t>(*at) : -1);
    }
    return id;
  }

  std::uint32_t cell_of(std::uint32_t by, std::uint32_t group) {
    const auto [it, fresh] = state_.cell_index.emplace(
        std::make_pair(by, group), static_cast<std::uint32_t>(state_.cells.size()));
    if (fresh) {
      state_.cells.emplace_back(by, group);
      state_.word_counts.emplace_back();
      state_.lengths.emplace_back();
      state_.refused.push_back(0);
      state_.empty.push_back(0);
    }
    return it->second;
  }

  // Rows per (scorer column, value).
  void add_scorers(const Record& rec) {
    for (std::size_t i = 0; i < scorer_cols_.size(); ++i) {
      key_ = config_.scorers[i];
      key_ += '\x1f';
      key_ += rec.text(scorer_cols_[i]);
      ++state_.scorers[key_];
      VLBIAS_CHECK(state_.scorers.size() <= LvlmState::kMaxScorers, InputError,
                   "'{}' line {}: column '{}' holds more than {} distinct scorers; it does not "
                   "name what scored the rows (columns.scorer)",
                   path_, rec.line(), config_.scorers[i], LvlmState::kMaxScorers);
    }
  }

  // The score columns: MaxGap's per-set maximum (with the groups reaching it) and minimum.
  void add_scores(const Record& rec, std::uint32_t g, std::uint32_t set) {
    for (std::size_t s = 0; s < S_; ++s) {
      const double v = rec.number(score_cols_[s]);
      if (std::isnan(v)) {
        ++state_.rows_missing_score[s];
        continue;
      }
      if (M_) member_[s] = v;
      if (set == kNoSet) continue;
      SetScore& a = state_.set_scores[static_cast<std::size_t>(set) * S_ + s];
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
  }

  void add_text(const Record& rec, std::uint32_t cell) {
    const std::string_view text = rec.text(text_col_);
    // One tokenisation serves the length, PMI and lexicon measures.
    std::uint32_t words = 0, n_words = 0;
    if (config_.responses || config_.pmi || lex_) count_words(text, cell, words, n_words);
    std::size_t m = S_;  // next member measure
    if (config_.responses) {
      const bool refused =
          config_.refusal_column.empty() ? refusals_.matches(text) : truthy(rec.text(refusal_col_));
      ++state_.lengths[cell][words];
      if (refused) ++state_.refused[cell];
      if (words == 0) ++state_.empty[cell];
      if (M_) {
        member_[m] = static_cast<double>(words);
        member_[m + 1] = refused ? 1.0 : 0.0;
      }
      m += 2;
    }
    for (std::size_t r = 0; r < config_.ratings.size(); ++r, ++m) add_rating(rec, text, cell, r, m);
    if (lex_) add_lexicon(rec, cell, n_words, m);
  }

  // Tokenises the text once: `words` in all, the PMI counts of the cell, and for the lexicon
  // the words that are not stop words (`n_words`) and each category's hits (lex_counts_).
  void count_words(std::string_view text, std::uint32_t cell, std::uint32_t& words,
                   std::uint32_t& n_words) {
    std::fill(lex_counts_.begin(), lex_counts_.end(), 0);
    lex_seen_.clear();
    std::vector<std::uint64_t>& counts = state_.word_counts[cell];
    tokenize(
        text, scratch_,
        [&](std::string_view w) {
          ++words;
          if (!config_.pmi && !lex_) return;
          const std::uint32_t id = word_id(w);
          if (config_.pmi) {
            if (counts.size() <= id) counts.resize(state_.vocabulary.size(), 0);
            ++counts[id];
          }
          if (!lex_ || word_is_stop_[id]) return;
          ++n_words;
          const std::int32_t at = word_lexicon_[id];
          if (at < 0) return;
          if (config_.lexicon_distinct) {
            if (std::find(lex_seen_.begin(), lex_seen_.end(), at) != lex_seen_.end()) return;
            lex_seen_.push_back(at);
          }
          for (const std::uint32_t k : lex_->word_categories[static_cast<std::size_t>(at)]) {
            ++lex_counts_[k];
          }
        },
        path_);
  }

  // Rating r of the text (member measure m), when the row passes the rating's `where`.
  void add_rating(const Record& rec, std::string_view text, std::uint32_t cell, std::size_t r,
                  std::size_t m) {
    const RatingSpec& spec = config_.ratings[r];
    if (!spec.where_column.empty()) {
      const std::string_view w = rec.text(rating_cols_[r]);
      if (std::find(spec.where_values.begin(), spec.where_values.end(), w) ==
          spec.where_values.end()) {
        return;
      }
    }
    if (rating_filters_[r] && !rating_filters_[r]->matches(rec, rating_filter_cols_[r])) return;
    LvlmState::RatingAcc& acc = state_.ratings[r];
    ++acc.rows[cell];
    const NumericAnswer a = extract_numeric(text, spec.kind);
    if (a.exclusion == Exclusion::None) {
      ++acc.values[cell][a.value];
      if (M_) member_[m] = a.value;
      return;
    }
    ++(a.exclusion == Exclusion::NoNumber ? acc.no_number : acc.out_of_range);
    // A few excluded answers as examples: the smallest by hash, so any order of rows agrees.
    std::pair<std::uint64_t, std::string> ex{hash_bytes(text), std::string(text.substr(0, 300))};
    if (acc.examples.size() < kRatingExamples || ex < acc.examples.back()) {
      const auto at = std::lower_bound(acc.examples.begin(), acc.examples.end(), ex);
      if (at == acc.examples.end() || *at != ex) {
        acc.examples.insert(at, std::move(ex));
        if (acc.examples.size() > kRatingExamples) acc.examples.pop_back();
      }
    }
  }

  // The lexicon histograms of the cell (per lexicon_by level); member measures from m.
  void add_lexicon(const Record& rec, std::uint32_t cell, std::uint32_t n_words, std::size_t m) {
    std::uint32_t level = 0;
    if (!config_.lexicon_by.empty()) {
      level = lex_levels_.intern(std::string(rec.text(lexby_col_)));
    } else if (state_.lexicon_levels.empty()) {
      state_.lexicon_levels.push_back("");
    }
    const auto lk = std::make_pair(cell, level);
    if (n_words == 0) {
      ++state_.lexicon_no_words[lk];
      return;
    }
    auto& hist = state_.lexicon_hist[lk];
    if (hist.empty()) hist.resize(C_);
    for (std::size_t k = 0; k < C_; ++k) {
      ++hist[k][{lex_counts_[k], n_words}];
      if (M_) member_[m + k] = static_cast<double>(lex_counts_[k]) / n_words;
    }
  }

  const std::string& path_;
  const LvlmConfig& config_;
  LvlmState& state_;
  std::vector<std::string> columns_;
  std::vector<std::size_t> key_cols_, group_cols_, by_cols_, score_cols_, rating_cols_;
  std::vector<std::optional<RowFilter>> rating_filters_;  // a rating's `where` expression
  std::vector<std::vector<std::size_t>> rating_filter_cols_;
  std::vector<std::size_t> scorer_cols_;
  std::size_t required_ = 0;
  std::size_t text_col_ = 0, refusal_col_ = 0, lexby_col_ = 0;
  const std::size_t S_;  // score columns
  const std::size_t M_;  // member measures per row (0 unless keep_members)
  const RefusalPatterns refusals_;
  const StopWords stop_;
  const Lexicon* lex_;
  const std::size_t C_;  // lexicon categories
  LevelIndex groups_, by_levels_, lex_levels_;
  SetIndex set_index_;
  Dictionary vocab_dict_;
  // Per-vocabulary-word flags, extended as the vocabulary grows.
  std::vector<std::uint8_t> word_is_stop_;
  std::vector<std::int32_t> word_lexicon_;
  std::string key_, scratch_;
  std::vector<std::uint32_t> lex_counts_;
  std::vector<std::int32_t> lex_seen_;
  std::vector<double> member_;
};

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

  RecordScanner scanner(path, config, state);
  const std::size_t total_mib = static_cast<std::size_t>(file_bytes >> 20) + 1;
  std::optional<Progress> bar;
  if (progress) bar.emplace(fmt::format("scanning {} (MiB)", path), total_mib);
  std::size_t shown_mib = 0;
  feed(
      scanner.columns(), scanner.required(), [&](const Record& rec) { scanner.add(rec); },
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
      [&](const std::vector<std::string>& columns, std::size_t required,
          const std::function<void(const Record&)>& on_row,
          const std::function<void(std::size_t, std::size_t)>& on_progress) {
        for_each_record(path, columns, on_row, on_progress, required);
      },
      config, state, progress);
}

void lvlm_scan_table(const Table& table, const LvlmConfig& config, LvlmState& state) {
  scan_records(
      table.source, 0,
      [&](const std::vector<std::string>& columns, std::size_t required,
          const std::function<void(const Record&)>& on_row,
          const std::function<void(std::size_t, std::size_t)>&) {
        for_each_record(table, columns, on_row, required);
      },
      config, state, false);
}

}  // namespace vlbias
