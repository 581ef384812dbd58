#pragma once
// LVLM counterfactual analytics (src/metrics, docs/methods.md#lvlm-scan, Howard et al.):
// one streaming pass over generated answers accumulates everything the measures
// need into an LvlmState, which is small (bounded by the number of sets, the
// vocabulary and the distinct values, not by the number of rows), mergeable and
// saved to a file. A study split into shards (a cluster job array) scans each
// shard into a state, merges the states, and gets exactly the one-run result:
// every accumulator is a count, a max/min, or a histogram of exact values, and
// every sum is formed at the end in a fixed order (sorted keys), so neither the
// split nor the merge order changes a bit of the output.
//
// A row is one generation: set-key columns (the counterfactual set: e.g.
// filename, rank, seed), group columns (race, gender, ...), optional `by`
// columns that split the analysis (prompt, model, mitigation), score columns
// (toxicity, ...), and the generated text.
//
// What is accumulated, per by-level:
//   sets      per (by-level, set key): per score column the max, min, number of
//             scored rows and the groups holding the max (a 64-bit mask: at
//             most 64 groups); rows with a missing score are skipped and counted.
//   members   (keep_members) per row its set, group and measure values, for the
//             set-blocked group tests (memory O(rows): only the audit asks).
//   pmi       per (by-level, group) word counts (8 bytes x vocabulary x cells).
//   lexicon   per (by-level, lexicon_by level, group, category) a histogram of
//             (matches, words after stop-word removal) pairs: the normalised
//             count c / n of a text is exact at the end.
//   responses per (by-level, group) a histogram of response lengths (words),
//             refusals and empty answers.
//   ratings   per (rating spec, by-level, group) a histogram of the extracted
//             values, exclusion counts per reason, and up to 5 excluded texts
//             per spec (the ones with the smallest 64-bit hash, so the kept
//             examples do not depend on the sharding).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/io/table/table.h"
#include "vlbias/score/text_measures.h"

namespace vlbias {

// A numeric-answer measure: rows where `where_column` holds one of
// `where_values` (all rows when where_column is empty) and that the row filter
// `where_expression` keeps (row_filter.h; all rows when empty) are parsed as `kind`.
struct RatingSpec {
  std::string name;
  NumericKind kind = NumericKind::Rating;
  std::string where_column;
  std::vector<std::string> where_values;
  std::string where_expression;
  std::string where_origin = "ratings.where";  // names the expression in messages
};

struct LvlmConfig {
  std::vector<std::string> set_key;  // needed for scores and members
  std::vector<std::string> group;    // required, at least one column
  std::vector<std::string> by;       // optional split
  std::vector<std::string> scores;   // score columns (MaxGap)
  // Columns naming what scored each row (`scorer`, written by vlbias's scorers): the state
  // counts rows per distinct value, so a report says which scorer(s) its scores came from.
  // With scorers_optional a file without the column reads as "not recorded".
  std::vector<std::string> scorers;
  bool scorers_optional = false;
  std::string text;  // text column; needed by pmi, lexicon, responses, ratings
  bool pmi = false;
  bool responses = false;                     // lengths, refusals, empty answers
  std::vector<std::string> refusal_patterns;  // empty: RefusalPatterns::defaults()
  std::string refusal_column;                 // a column marking refusals ("true"/"1") instead
  std::optional<Lexicon> lexicon;
  std::string lexicon_by;              // e.g. "occupation" ("" = none)
  bool lexicon_distinct = false;       // count distinct lexicon words per text (authors' code)
  std::string stop_words = "english";  // "english", "none" or a file
  std::vector<RatingSpec> ratings;
  bool keep_members = false;

  // Canonical text of everything that shapes the state; two states merge only
  // when their fingerprints are equal.
  std::string fingerprint() const;
  // The row measures kept per member, in order: scores, then (responses)
  // "length" and "refused", then one per rating spec, then lexicon categories.
  std::vector<std::string> member_measures() const;
};

// Per-set accumulator of one score column.
struct SetScore {
  double max = 0, min = 0;
  std::uint32_t n = 0;           // scored rows
  std::uint64_t max_groups = 0;  // bit g: group g holds the max
};

struct LvlmState {
  std::string fingerprint;
  std::size_t rows = 0;
  std::size_t rows_missing_group = 0;           // skipped: a group cell is missing
  std::size_t rows_missing_key = 0;             // set key or by cell missing (set measures skipped)
  std::vector<std::size_t> rows_missing_score;  // per score column
  // Rows per (scorer column, value) joined by '\x1f' (value "" = not recorded); at most
  // kMaxScorers distinct keys (more means the column does not name scorers).
  std::map<std::string, std::uint64_t> scorers;
  static constexpr std::size_t kMaxScorers = 256;

  // Levels, in order of first appearance (their text tuples joined by '\x1f').
  std::vector<std::string> groups;
  std::vector<std::string> by_levels;

  // Sets: the set-key tuple and by-level of each; scores are stride S.
  std::vector<std::string> set_keys;
  std::vector<std::uint32_t> set_by;  // by-level id of each set
  std::vector<SetScore> set_scores;   // set * S + s

  // Members (keep_members): one entry per row with a set.
  std::vector<std::uint32_t> member_set, member_group;
  std::vector<double> member_values;  // row * M + m, NaN where undefined

  // Cells: (by-level, group) pairs, and for the lexicon (by, lexicon_by, group).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> cell_index;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> cells;

  // PMI: vocabulary and counts per cell.
  std::vector<std::string> vocabulary;
  std::vector<std::vector<std::uint64_t>> word_counts;  // [cell][word]

  // Responses per cell: length histogram, refusals, empties.
  std::vector<std::map<std::uint32_t, std::uint64_t>> lengths;
  std::vector<std::uint64_t> refused, empty;

  // Lexicon: lexicon_by levels; per (cell, lexicon_by level) key a histogram per
  // category of (matches, words) -> texts; texts without words counted.
  std::vector<std::string> lexicon_levels;
  std::map<std::pair<std::uint32_t, std::uint32_t>,
           std::vector<std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>>>
      lexicon_hist;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> lexicon_no_words;

  // Ratings per spec: per cell a histogram of values; exclusions per reason.
  struct RatingAcc {
    std::map<std::uint32_t, std::map<double, std::uint64_t>> values;  // cell -> value -> count
    std::map<std::uint32_t, std::uint64_t> rows;                      // cell -> rows asked
    std::uint64_t no_number = 0, out_of_range = 0;
    std::vector<std::pair<std::uint64_t, std::string>> examples;  // (hash, text), sorted
  };
  std::vector<RatingAcc> ratings;
};

// Scans one file (CSV/TSV/JSONL, streamed) into `state` (which may already hold
// other shards of the same config). `progress` draws a bar when not quiet.
void lvlm_scan(const std::string& path, const LvlmConfig& config, LvlmState& state,
               bool progress = true);
// The same scan over a table in memory (e.g. built from Python arrays): the same rows in the
// same order give the same state as the file would.
void lvlm_scan_table(const Table& table, const LvlmConfig& config, LvlmState& state);
// Adds `other` into `into`: InputError when the fingerprints differ.
void lvlm_merge(LvlmState& into, const LvlmState& other);
// Binary state files ("VLBIASLV" + version + fingerprint + sections). Reading
// checks every length against the file size: a truncated or hostile file is an
// InputError naming the file and what was expected, never a crash.
void save_lvlm_state(const LvlmState& state, const std::string& path);
LvlmState load_lvlm_state(const std::string& path);
// The canonical form: levels, sets and vocabulary renumbered in sorted order.
// Every result is computed from a canonical state, so shards merged in any order
// give the same bits.
void canonicalize(LvlmState& state);

// Joins / splits level tuples.
std::string join_key(const std::vector<std::string>& parts);
std::vector<std::string> split_key(const std::string& key);

}  // namespace vlbias
