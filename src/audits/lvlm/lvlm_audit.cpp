// The lvlm-counterfactual audit (include/vlbias/audits/lvlm_audit.h): scan the generations (or
// merge saved shard states), then write every requested section (src/audits/lvlm/lvlm_audit_*.cpp).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "exemplars.h"
#include "lvlm_audit_internal.h"
#include "run_output.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/audits/power_pilot.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/rng.h"
#include "vlbias/metrics/lvlm.h"

namespace vlbias {

namespace {

LvlmConfig lvlm_config(const LvlmAuditSpec& l) {
  LvlmConfig c;
  c.set_key = l.set_key;
  c.group = l.group;
  c.by = l.by;
  c.scores = l.scores;
  c.scorers = l.scorer;
  c.scorers_optional = !l.scorer_given;
  c.text = l.text;
  c.pmi = l.pmi.toggle.enabled;
  c.responses = l.responses.toggle.enabled;
  c.refusal_patterns = l.responses.refusal_patterns;
  c.refusal_column = l.responses.refusal_column;
  c.stop_words = "none";
  if (l.lexicon.toggle.enabled) {
    c.lexicon = read_lexicon(l.lexicon.file.string(), l.lexicon.word_column);
    c.lexicon_by = l.lexicon.by;
    c.lexicon_distinct = l.lexicon.distinct;
    c.stop_words = l.lexicon.stop_words;
  }
  for (const RatingSpecYaml& r : l.ratings) {
    c.ratings.push_back({r.name, parse_numeric_kind(r.kind), r.where_column, r.where_values,
                         r.where_expression, r.where_origin});
  }
  c.keep_members = l.group_tests.toggle.enabled;
  return c;
}

Json lvlm_spec_json(const AuditCommonSpec& spec, const LvlmAuditSpec& l) {
  Json generations = Json::array();
  for (const auto& g : l.generations) generations.push_back(g.string());
  Json analyses = Json::object();
  if (l.maxgap.toggle.enabled)
    analyses["maxgap"] = {{"bootstrap", l.maxgap.bootstrap}, {"ci", l.maxgap.ci}};
  if (l.maxgap.toggle.enabled && !l.maxgap.cluster.empty())
    analyses["maxgap"]["cluster"] = l.maxgap.cluster;
  if (l.pmi.toggle.enabled) {
    analyses["pmi"] = {{"min_freq", l.pmi.min_freq},
                       {"threshold", l.pmi.threshold},
                       {"top", l.pmi.top},
                       {"log_base", l.pmi.log_base == 0 ? Json("e") : Json(l.pmi.log_base)}};
  }
  if (l.lexicon.toggle.enabled) {
    analyses["lexicon"] = {{"file", l.lexicon.file.string()},
                           {"by", l.lexicon.by},
                           {"min_obs", l.lexicon.min_obs},
                           {"distinct", l.lexicon.distinct},
                           {"stop_words", l.lexicon.stop_words}};
  }
  if (l.responses.toggle.enabled) {
    analyses["responses"] = {{"refusal_patterns", l.responses.refusal_patterns},
                             {"refusal_column", l.responses.refusal_column}};
  }
  if (!l.ratings.empty()) {
    Json r = Json::array();
    for (const auto& x : l.ratings) {
      r.push_back({{"name", x.name},
                   {"kind", x.kind},
                   {"where_column", x.where_column},
                   {"where_values", x.where_values},
                   {"where", x.where_expression}});
    }
    analyses["ratings"] = r;
  }
  if (l.group_tests.toggle.enabled) {
    Json& g = analyses[kLvlmGroupTestsSection];
    g = {{"permutations", l.group_tests.permutations}};
    if (!l.group_tests.cluster.empty()) g["cluster"] = l.group_tests.cluster;
  }
  if (l.paired.toggle.enabled) {
    analyses["paired"] = {{"column", l.paired.column},
                          {"baseline", l.paired.baseline},
                          {"bootstrap", l.paired.bootstrap},
                          {"ci", l.paired.ci}};
    if (!l.paired.cluster.empty()) analyses["paired"]["cluster"] = l.paired.cluster;
    analyses["paired"]["alternative"] = stats::to_string(l.paired.alternative);
    if (!l.paired.cluster.empty()) analyses["paired"]["permutations"] = l.paired.permutations;
  }
  Json j{{"kind", "lvlm-counterfactual"},
         {"seed", spec.seed},
         {"min_group_size", spec.min_group_size},
         {"generations", generations},
         {"columns",
          {{"set_key", l.set_key},
           {"group", l.group},
           {"by", l.by},
           {"scores", l.scores},
           {"scorer", l.scorer},
           {"text", l.text}}},
         {"analyses", analyses}};
  if (spec.report_images.per_cell > 0) {
    j["columns"]["image"] = l.image;
    j["report"] = audits_internal::report_images_json(spec.report_images);
  }
  return j;
}

// The state of every row: scanned from `inputs`, or merged from saved shard states.
LvlmState scan_or_merge(const LvlmConfig& config, const std::vector<std::filesystem::path>& inputs,
                        const LvlmShardOptions& shards) {
  LvlmState state;
  if (shards.from_states.empty()) {
    for (const auto& p : inputs) lvlm_scan(p.string(), config, state, !quiet());
    return state;
  }
  for (const auto& p : shards.from_states) {
    LvlmState part = load_lvlm_state(p.string());
    VLBIAS_CHECK(part.fingerprint == config.fingerprint(), InputError,
                 "state '{}' was scanned with another spec (columns, analyses, lexicon or stop "
                 "words differ); scan every shard with this spec",
                 p.string());
    lvlm_merge(state, part);
  }
  return state;
}

// Every enabled section, in the order of the results; `state` must be canonical. The group
// tests also as their typed section in `group_tests` (for the power analysis).
std::vector<std::pair<std::string, AnalysisOutput>> lvlm_sections(const AuditCommonSpec& spec,
                                                                  const LvlmAuditSpec& l,
                                                                  const LvlmState& state,
                                                                  const LvlmConfig& config,
                                                                  LvlmGroupTests& group_tests) {
  LvlmReportOptions o;
  o.seed = spec.seed;
  o.min_group_size = spec.min_group_size;
  o.pmi_min_freq = l.pmi.min_freq;
  o.pmi_threshold = l.pmi.threshold;
  o.pmi_top = l.pmi.top;
  o.pmi_log_base = l.pmi.log_base;
  o.lexicon_min_obs = l.lexicon.min_obs;
  o.permutations = l.group_tests.permutations;
  std::vector<std::pair<std::string, AnalysisOutput>> sections;
  const std::size_t enabled = l.maxgap.toggle.enabled + l.pmi.toggle.enabled +
                              l.lexicon.toggle.enabled + l.responses.toggle.enabled +
                              !l.ratings.empty() + l.group_tests.toggle.enabled +
                              l.paired.toggle.enabled;
  Progress progress("lvlm analyses", enabled);
  const auto add = [&](const char* name, AnalysisOutput output) {
    sections.emplace_back(name, std::move(output));
    progress.advance();
  };
  if (l.maxgap.toggle.enabled) {
    o.bootstrap = l.maxgap.bootstrap;
    o.ci = l.maxgap.ci;
    o.cluster = l.maxgap.cluster;
    add("maxgap", lvlm_maxgap(state, config, o));
    o.cluster.clear();
  }
  if (l.pmi.toggle.enabled) add("pmi", lvlm_pmi(state, config, o));
  if (l.lexicon.toggle.enabled) add("lexicon", lvlm_lexicon(state, config, o));
  if (l.responses.toggle.enabled) {
    LvlmReportOptions wilson = o;
    wilson.ci = 0.95;  // the refusal rates' intervals (responses has no ci key of its own)
    add("responses", lvlm_responses(state, config, wilson));
  }
  if (!l.ratings.empty()) add("ratings", lvlm_ratings(state, config, o));
  if (l.group_tests.toggle.enabled) {
    o.cluster = l.group_tests.cluster;
    add(kLvlmGroupTestsSection, lvlm_group_tests_typed(state, config, o, group_tests));
    o.cluster.clear();
  }
  if (l.paired.toggle.enabled) {
    o.bootstrap = l.paired.bootstrap;
    o.ci = l.paired.ci;
    o.paired_alternative = l.paired.alternative;
    o.paired_permutations = l.paired.permutations;
    o.cluster = l.paired.cluster;
    o.compare_column = l.paired.column;
    o.compare_baseline = l.paired.baseline;
    add("paired", lvlm_paired(state, config, o));
  }
  progress.finish();
  return sections;
}

// The scorers the rows name: [{column, scorer (null: not recorded), rows}], and a note per
// column whose rows mix scorers (their scores are not comparable across rows).
Json scorers_json(const LvlmState& state, std::vector<std::string>& notes) {
  Json out = Json::array();
  std::map<std::string, std::vector<std::string>> named;  // column -> "scorer (n rows)"
  for (const auto& [key, rows] : state.scorers) {
    const std::size_t cut = key.find('\x1f');
    const std::string column = key.substr(0, cut);
    const std::string value = cut == std::string::npos ? std::string() : key.substr(cut + 1);
    out.push_back(
        {{"column", column}, {"scorer", value.empty() ? Json() : Json(value)}, {"rows", rows}});
    named[column].push_back(
        fmt::format("{} ({} rows)", value.empty() ? "not recorded" : value, rows));
  }
  for (const auto& [column, list] : named) {
    if (list.size() < 2) continue;
    std::string joined;
    for (const std::string& s : list) joined += (joined.empty() ? "" : "; ") + s;
    notes.push_back(fmt::format(
        "the rows' scores come from {} scorers (column '{}': {}); scores from different "
        "scorers are not comparable, so gaps between groups may reflect the scorers",
        list.size(), column, joined));
  }
  return out;
}

Json generations_json(const LvlmState& state, std::size_t shards, std::vector<std::string>& notes) {
  Json groups = Json::array();
  for (const std::string& g : state.groups) groups.push_back(split_key(g));
  return Json{{"rows", state.rows},
              {"rows_missing_group", state.rows_missing_group},
              {"rows_missing_key", state.rows_missing_key},
              {"sets", state.set_keys.size()},
              {"groups", groups},
              {"by_levels", state.by_levels.size()},
              {"vocabulary", state.vocabulary.size()},
              {"shards", shards},
              {"scorers", scorers_json(state, notes)}};
}

}  // namespace

void run_lvlm_audit(const AuditCommonSpec& spec, const LvlmAuditSpec& l,
                    const std::filesystem::path& run_dir, const LvlmShardOptions& shards) {
  VLBIAS_CHECK(shards.save_state.empty() || shards.from_states.empty(), UsageError,
               "--save-state scans generations; it cannot be combined with --from-state");
  VLBIAS_CHECK(shards.inputs.empty() || shards.from_states.empty(), UsageError,
               "--input names generations to scan; it cannot be combined with --from-state");
  const LvlmConfig config = lvlm_config(l);
  // Results go to the run folder, locked before any input is read; a shard's state does not.
  std::optional<audits_internal::RunOutput> output;
  if (shards.save_state.empty()) output.emplace(run_dir);
  Provenance provenance;
  provenance.command = "audit";
  if (!spec.spec_path.empty()) provenance.inputs.push_back(spec.spec_path.string());
  std::vector<std::filesystem::path> inputs = shards.inputs.empty() ? l.generations : shards.inputs;
  if (!shards.from_states.empty()) inputs = shards.from_states;
  for (const auto& p : inputs) provenance.inputs.push_back(p.string());
  if (l.lexicon.toggle.enabled) provenance.inputs.push_back(l.lexicon.file.string());
  start_hashing_inputs(provenance);

  LvlmState state = scan_or_merge(config, inputs, shards);
  if (!shards.save_state.empty()) {
    save_lvlm_state(state, shards.save_state.string());
    return;
  }
  canonicalize(state);

  LvlmGroupTests group_tests;
  std::vector<std::pair<std::string, AnalysisOutput>> sections =
      lvlm_sections(spec, l, state, config, group_tests);
  std::vector<std::string> notes;
  if (state.rows_missing_group > 0) {
    notes.push_back(
        fmt::format("{} rows without a group value were left out", state.rows_missing_group));
  }
  if (state.rows_missing_key > 0) {
    notes.push_back(
        fmt::format("{} rows without a by or set-key value were left out of the set measures",
                    state.rows_missing_key));
  }
  Json exemplars;  // report.images: a pass of its own over the generations
  if (spec.report_images.per_cell > 0 && shards.from_states.empty()) {
    exemplars = audits_internal::lvlm_exemplars(spec, l, inputs, notes);
  } else if (spec.report_images.per_cell > 0) {
    notes.push_back(
        "report.images: no exemplar grids, because the run merged saved states (--from-state) "
        "and the grids read the generations themselves");
  }
  Json generations = generations_json(state, inputs.size(), notes);
  Json tables;
  Json analyses = output->add_sections(sections, tables, notes);
  Json results{{"kind", to_string(spec.kind)},
               {"generations", std::move(generations)},
               {"spec", lvlm_spec_json(spec, l)},
               {"analyses", analyses},
               {"tables", tables},
               {"notes", notes}};
  // analyses.power, from this study as its own pilot (its own seed stream): the typed group
  // tests, not results.json read back.
  if (l.power.toggle.enabled) {
    const LvlmGroupTests* tested = l.group_tests.toggle.enabled ? &group_tests : nullptr;
    add_power_section(results,
                      tested ? lvlm_pilot_tests(*tested, l.power.alpha, "results.json")
                             : std::vector<PilotTest>{},
                      lvlm_unsupported_tests(tested, l.paired.toggle.enabled), l.power,
                      derive_seed(spec.seed, kPowerSeedStream));
  }
  // Last: the thumbnails are the bulk of the file.
  if (!exemplars.is_null()) results["exemplars"] = std::move(exemplars);
  output->write(std::move(results), provenance, lvlm_spec_json(spec, l), spec);
}

}  // namespace vlbias
