// The lvlm-counterfactual kind (paper 003): `vlbias audit --check` (audit.h's check_audit_inputs)
// and the kind's entry in the table of kinds (audit_kind.h). The checks repeat the run's own, with
// the same words (src/audits/audit_check.cpp says how tests/cli/audit_check_test.cpp holds them
// together).
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "audit_kind.h"
#include "lvlm_audit_internal.h"
#include "vlbias/audits/lvlm_audit.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/row_filter.h"
#include "vlbias/score/text_measures.h"

namespace vlbias::audits_internal {

namespace {

std::size_t check_lvlm_inputs(const AuditCommonSpec& /*spec*/, const LvlmAuditSpec& l) {
  // Stop words and the lexicon's split apply only with a lexicon (run_lvlm_audit's config).
  const bool lexicon = l.lexicon.toggle.enabled;
  const std::string stop_words = lexicon ? l.lexicon.stop_words : "none";
  const std::string lexicon_by = lexicon ? l.lexicon.by : "";
  // The run reads the lexicon first (into its scan configuration), then checks its inputs.
  if (lexicon) read_lexicon(l.lexicon.file.string(), l.lexicon.word_column);
  std::vector<std::filesystem::path> inputs = l.generations;
  if (lexicon) inputs.push_back(l.lexicon.file);
  const std::size_t checked = check_input_files(inputs);
  // The scan's columns, in lvlm_scan's order (its message names the first one missing).
  std::vector<std::string> columns;
  const auto add = [&](const std::string& c) {
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  };
  for (const auto* list : {&l.set_key, &l.group, &l.by, &l.scores}) {
    for (const auto& c : *list) add(c);
  }
  for (const std::string* c : {&l.text, &l.responses.refusal_column, &lexicon_by}) {
    if (!c->empty()) add(*c);
  }
  for (const RatingSpecYaml& r : l.ratings) {
    if (!r.where_column.empty()) add(r.where_column);
    if (!r.where_expression.empty()) {
      const RowFilter filter = RowFilter::parse(r.where_expression, r.where_origin);
      for (const std::string& c : filter.columns()) add(c);
    }
  }
  StopWords::from_spec(stop_words);
  // Score cells must be numbers where the scan reads them: rows with every group and by cell.
  const auto at = [&](const std::vector<std::string>& names) {
    std::vector<std::size_t> out;
    for (const auto& n : names) {
      out.push_back(
          static_cast<std::size_t>(std::find(columns.begin(), columns.end(), n) - columns.begin()));
    }
    return out;
  };
  const std::vector<std::size_t> keyed = at(l.group), by = at(l.by), scores = at(l.scores);
  for (const auto& path : l.generations) {
    for_each_record(path.string(), columns, [&](const Record& row) {
      const auto missing = [&](std::size_t i) { return row.missing(i); };
      if (std::any_of(keyed.begin(), keyed.end(), missing) ||
          std::any_of(by.begin(), by.end(), missing)) {
        return;
      }
      for (const std::size_t i : scores) row.number(i);
    });
  }
  return checked;
}

// run_audit runs the whole study without shards (the shard options are the CLI's).
void run_lvlm_kind(const AuditCommonSpec& spec, const LvlmAuditSpec& lvlm,
                   const std::filesystem::path& run_dir) {
  run_lvlm_audit(spec, lvlm, run_dir);
}

}  // namespace

const AuditKindOps kLvlmCounterfactualKind =
    kind_ops<LvlmAuditSpec, parse_lvlm_root, check_lvlm_inputs, run_lvlm_kind>(
        AuditKind::LvlmCounterfactual, "lvlm-counterfactual");

}  // namespace vlbias::audits_internal
