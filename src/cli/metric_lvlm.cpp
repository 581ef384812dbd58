// `vlbias metric maxgap|pmi|lexicon|ratings|responses|paired`: the LVLM
// counterfactual measures of paper 003 (Howard et al.; docs/methods.md#paper-003), each a
// streaming pass over generated answers (lvlm.h) and one section of
// lvlm_audit.h printed as JSON.
//
// Shards: --table may be given several times (the shards of one study, scanned in
// one process); --save-state FILE writes the scanned state instead of results,
// and --from-state FILE (repeatable) merges saved states and computes the
// results, which are identical to one run over all rows. The state records the
// options that shape it: every shard and the merge must use the same options.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/metrics/lvlm.h"
#include "vlbias/report/json_output.h"
#include "vlbias/stats/correlate.h"

namespace vlbias::cli_internal {

namespace {

struct LvlmArgs {
  std::vector<std::string> tables, from_states;
  std::string save_state, out;
  std::string set_key, group, by, scores, text, compare_column, baseline;
  std::string lexicon, word_column, lexicon_by, stop_words = "english", kind = "rating";
  std::string refusal_column, where, cluster, alternative = "two-sided";
  std::vector<std::string> refusal_patterns;
  bool distinct = false;
  long long min_freq = 10, top = 0, bootstrap = 1000, min_obs = 35, permutations = 9999;
  double threshold = 1.0, log_base = 0, ci = 0.95;
  std::uint64_t seed = 0;
};

using Measure = LvlmMeasure;

std::vector<std::string> optional_list(const std::string& text, const std::string& option) {
  return text.empty() ? std::vector<std::string>{} : split_list(text, option);
}

LvlmConfig make_config(const LvlmArgs& a, Measure m) {
  LvlmConfig c;
  c.group = split_list(a.group, "--group");
  c.by = optional_list(a.by, "--by");
  c.set_key = optional_list(a.set_key, "--set-key");
  c.text = a.text;
  switch (m) {
    case Measure::MaxGap:
    case Measure::Paired:
      c.scores = split_list(a.scores, "--score");
      VLBIAS_CHECK(!c.set_key.empty(), UsageError,
                   "metric {} needs --set-key (the columns naming a counterfactual set)",
                   to_string(m));
      break;
    case Measure::Pmi:
      c.pmi = true;
      break;
    case Measure::Lexicon:
      c.lexicon = read_lexicon(a.lexicon, a.word_column);
      c.lexicon_by = a.lexicon_by;
      c.lexicon_distinct = a.distinct;
      c.stop_words = a.stop_words;
      break;
    case Measure::Ratings: {
      RatingSpec r;
      r.kind = parse_numeric_kind(a.kind);
      r.name = a.kind;
      r.where_expression = a.where;
      r.where_origin = "--where";
      c.ratings.push_back(r);
      break;
    }
    case Measure::Responses:
      c.responses = true;
      c.refusal_patterns = a.refusal_patterns;
      c.refusal_column = a.refusal_column;
      if (!c.refusal_patterns.empty()) RefusalPatterns check(c.refusal_patterns);
      break;
  }
  if (m != Measure::Lexicon) c.stop_words = "none";
  if (m == Measure::Pmi || m == Measure::Lexicon || m == Measure::Ratings ||
      m == Measure::Responses) {
    VLBIAS_CHECK(!c.text.empty(), UsageError, "metric {} needs --text (the answer column)",
                 to_string(m));
  }
  return c;
}

void run_lvlm_metric(const LvlmArgs& a, Measure m) {
  VLBIAS_CHECK(a.tables.empty() != a.from_states.empty(), UsageError,
               "metric {} needs either --table (one or more shards) or --from-state (saved "
               "states), not both",
               to_string(m));
  VLBIAS_CHECK(a.save_state.empty() || a.from_states.empty(), UsageError,
               "--save-state writes the scan of --table; it cannot be combined with --from-state");
  VLBIAS_CHECK(a.bootstrap >= 0 && a.min_freq >= 1 && a.top >= 0 && a.min_obs >= 0, UsageError,
               "--bootstrap, --top and --min-obs must be >= 0 and --min-freq >= 1");
  VLBIAS_CHECK(a.ci > 0 && a.ci < 1, UsageError, "--ci must be in (0, 1); got {}", a.ci);
  const LvlmConfig config = make_config(a, m);
  Provenance p;
  p.inputs = a.tables.empty() ? a.from_states : a.tables;
  start_hashing_inputs(p);
  LvlmState state;
  if (!a.tables.empty()) {
    for (const std::string& t : a.tables) lvlm_scan(t, config, state);
  } else {
    for (const std::string& f : a.from_states) {
      LvlmState part = load_lvlm_state(f);
      VLBIAS_CHECK(part.fingerprint == config.fingerprint(), InputError,
                   "state '{}' was scanned with other options than this command's (columns, "
                   "measure, lexicon or stop words); repeat the scan's options",
                   f);
      lvlm_merge(state, part);
    }
  }
  Json out = Json::object();
  p.command = fmt::format("metric {}", to_string(m));
  p.parameters = Json{{"set_key", config.set_key},
                      {"group", config.group},
                      {"by", config.by},
                      {"scores", config.scores},
                      {"text", config.text}};
  if (!a.save_state.empty()) {
    save_lvlm_state(state, a.save_state);
    out["state"] = a.save_state;
    out["rows"] = state.rows;
    out["sets"] = state.set_keys.size();
    out["groups"] = state.groups.size();
    out["provenance"] = provenance_json(p);
    write_json(out, a.out);
    return;
  }
  canonicalize(state);
  LvlmReportOptions o;
  o.bootstrap = static_cast<std::size_t>(a.bootstrap);
  o.ci = a.ci;
  o.seed = a.seed;
  o.pmi_min_freq = static_cast<std::size_t>(a.min_freq);
  o.pmi_threshold = a.threshold;
  o.pmi_top = static_cast<std::size_t>(a.top);
  o.pmi_log_base = a.log_base;
  o.lexicon_min_obs = static_cast<std::size_t>(a.min_obs);
  o.compare_column = a.compare_column;
  o.compare_baseline = a.baseline;
  o.cluster = optional_list(a.cluster, "--cluster");
  o.paired_alternative = parse_alternative(a.alternative);
  o.paired_permutations = static_cast<std::size_t>(a.permutations);
  out.update(lvlm_measure_json(state, config, o, m));
  p.parameters["bootstrap"] = o.bootstrap;
  if (!o.cluster.empty()) p.parameters["cluster"] = o.cluster;
  if (m == Measure::Paired) p.parameters["alternative"] = a.alternative;
  p.seed = o.seed;
  out["provenance"] = provenance_json(p);
  write_json(out, a.out);
}

void add_common(CLI::App* cmd, const std::shared_ptr<LvlmArgs>& a, Measure m) {
  cmd->add_option("--table", a->tables,
                  "Generations (CSV/TSV/JSONL, streamed), one row per answer; repeat for shards");
  cmd->add_option("--from-state", a->from_states,
                  "Saved states of shards (--save-state) to merge instead of --table");
  cmd->add_option("--save-state", a->save_state,
                  "Write the scanned state (for merging shards later) instead of results");
  cmd->add_option("--group", a->group, "Comma list of group columns (intersectional)")->required();
  cmd->add_option("--by", a->by, "Comma list of columns splitting the analysis (prompt, model)");
  const bool sets = m == Measure::MaxGap || m == Measure::Paired;
  auto* key = cmd->add_option("--set-key", a->set_key,
                              "Comma list of columns naming a counterfactual set "
                              "(e.g. filename,rank,seed)");
  if (sets) key->required();
  if (!sets) cmd->add_option("--text", a->text, "Column holding the generated text")->required();
  cmd->add_option("--out", a->out, "Write the JSON here instead of stdout");
}

// --bootstrap (its help `resamples`), --ci, --seed and --cluster (its help ended by `cluster_tail`)
// of the measures over counterfactual sets.
void add_set_bootstrap_options(CLI::App* cmd, const std::shared_ptr<LvlmArgs>& a,
                               const std::string& resamples, const std::string& cluster_tail) {
  cmd->add_option("--bootstrap", a->bootstrap, resamples)
      ->check(resamples_range())
      ->capture_default_str();
  cmd->add_option("--ci", a->ci, "Confidence level")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the bootstrap")->capture_default_str();
  cmd->add_option("--cluster", a->cluster,
                  "Comma list of --set-key columns whose values group sets (e.g. filename,rank: "
                  "the image set without its seed): the bootstrap resamples these clusters, "
                  "then sets within each" +
                      cluster_tail);
}

// The subcommand `name` of `metric` running measure `m` on its arguments, with the options
// every measure takes (add_common); the caller adds the measure's own.
std::pair<CLI::App*, std::shared_ptr<LvlmArgs>> add_lvlm_measure(CLI::App& metric,
                                                                 const std::string& name,
                                                                 const std::string& description,
                                                                 Measure m) {
  auto a = std::make_shared<LvlmArgs>();
  CLI::App* cmd = metric.add_subcommand(name, description);
  add_common(cmd, a, m);
  cmd->callback([a, m] { run_lvlm_metric(*a, m); });
  return {cmd, a};
}

}  // namespace

void add_lvlm_metrics(CLI::App& metric) {
  {
    const auto [cmd, a] = add_lvlm_measure(
        metric, "maxgap",
        "MaxGap = max - min of a score within each counterfactual set (paper 003 Eq. 1), with "
        "its distribution over sets, the share of sets whose max each group holds, and "
        "bootstrap CIs over sets",
        Measure::MaxGap);
    cmd->add_option("--score", a->scores, "Comma list of score columns (toxicity, insult, ...)")
        ->required();
    add_set_bootstrap_options(cmd, a, "Bootstrap resamples over sets (0: none)", "");
  }
  {
    const auto [cmd, a] = add_lvlm_measure(
        metric, "pmi",
        "Words used disproportionately for each group: log[(f(w,g)/N_g)/(f(w,not g)/N_not_g)] "
        "(paper 003 App. D)",
        Measure::Pmi);
    cmd->add_option("--min-freq", a->min_freq, "Keep words with f(w,g) >= this")
        ->capture_default_str();
    cmd->add_option("--threshold", a->threshold, "Keep words with score > this")
        ->capture_default_str();
    cmd->add_option("--top", a->top, "Words per group (0: all kept)")->capture_default_str();
    cmd->add_option("--log-base", a->log_base, "Logarithm base: 0 = e (default), 2 or 10");
  }
  {
    const auto [cmd, a] = add_lvlm_measure(
        metric, "lexicon",
        "Stereotype-content lexicon counts per text, normalised by words after stop-word "
        "removal, averaged per group (paper 003 App. E)",
        Measure::Lexicon);
    cmd->add_option("--lexicon", a->lexicon,
                    "Lexicon CSV: word,dimension,direction or SADCAT's D_dict/D_dir columns")
        ->required();
    cmd->add_option("--word-column", a->word_column, "Word column of a SADCAT-layout lexicon");
    cmd->add_option("--lexicon-by", a->lexicon_by,
                    "Column whose levels need --min-obs texts (the paper: occupation)");
    cmd->add_option("--min-obs", a->min_obs, "Texts a --lexicon-by level needs")
        ->capture_default_str();
    cmd->add_flag("--distinct", a->distinct, "Count distinct lexicon words per text");
    cmd->add_option("--stop-words", a->stop_words, "english (built-in), none, or a file")
        ->capture_default_str();
  }
  {
    const auto [cmd, a] = add_lvlm_measure(
        metric, "ratings",
        "Numeric answers (1-10 ratings or salaries) extracted as docs/methods.md#numeric-answers "
        "says, per group, with exclusion counts and examples",
        Measure::Ratings);
    cmd->add_option("--kind", a->kind, "rating or salary")->capture_default_str();
    cmd->add_option("--where", a->where,
                    "Only the answers this row filter keeps, e.g. \"prompt == 'Salary'\" "
                    "(docs/specs.md#row-filters)");
  }
  {
    const auto [cmd, a] = add_lvlm_measure(
        metric, "responses", "Response length (words), refusal rate and empty answers per group",
        Measure::Responses);
    cmd->add_option("--refusal-pattern", a->refusal_patterns,
                    "Refusal text (case-insensitive substring); repeatable; replaces the defaults");
    cmd->add_option("--refusal-column", a->refusal_column,
                    "Column marking refusals (true/1) instead of patterns");
  }
  {
    const auto [cmd, a] = add_lvlm_measure(
        metric, "paired",
        "Paired comparison of MaxGap over matched sets between by-levels: a mitigation prompt "
        "vs the baseline, an LVLM vs its LLM (differences with bootstrap CIs, Pearson r)",
        Measure::Paired);
    cmd->add_option("--score", a->scores, "Comma list of score columns")->required();
    cmd->add_option("--compare", a->compare_column, "The by column that differs (e.g. mitigation)")
        ->required();
    cmd->add_option("--baseline", a->baseline, "Its baseline value (e.g. none)")->required();
    add_set_bootstrap_options(cmd, a, "Bootstrap resamples over matched sets",
                              ", and the paired tests swap a cluster's sets together");
    cmd->add_option("--alternative", a->alternative,
                    "Paired t and Wilcoxon of treatment - baseline: two-sided | greater | less "
                    "(less: the treatment lowers MaxGap)")
        ->capture_default_str();
    cmd->add_option("--permutations", a->permutations,
                    "Permutations of the clustered paired tests (all sign vectors when fewer)")
        ->check(resamples_range())
        ->capture_default_str();
  }
}

}  // namespace vlbias::cli_internal
