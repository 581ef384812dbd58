// The `vlbias score choice` job: a table's answers -> scored.jsonl and manifest.json
// (include/vlbias/score/choice_job.h).
#include "vlbias/score/choice_job.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/core/timestamp.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/run/run_lock.h"
#include "vlbias/io/table/table.h"
#include "vlbias/version.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

struct ChoiceColumns {
  std::string label = "choice_label", outcome = "choice_outcome", rule = "choice_rule",
              margin = "choice_margin", missing = "choice_p_missing", scorer = "scorer";
  std::vector<std::string> p;  // p_<choice>
};

ChoiceColumns choice_columns(const ChoiceSet& set, const Table& input) {
  ChoiceColumns c;
  for (const std::string& choice : set.choices()) c.p.push_back("p_" + choice);
  std::vector<std::string> all = {c.label, c.outcome, c.rule, c.margin, c.missing, c.scorer};
  all.insert(all.end(), c.p.begin(), c.p.end());
  for (const std::string& name : all) {
    VLBIAS_CHECK(!input.find(name).has_value(), UsageError,
                 "{}: the input already has a column '{}', which scored.jsonl adds; rename it",
                 input.source, name);
  }
  return c;
}

// The cell's top log-probabilities: a JSON array of {"token": text, "logprob": number}.
std::vector<TokenLogprob> read_top_logprobs(const std::string& cell, const Table& input,
                                            std::size_t row, const std::string& column) {
  const std::string where =
      fmt::format("{} line {}, column '{}'", input.source, input.line_of_row[row], column);
  const ParsedJson parsed = try_parse_json(cell);
  std::vector<TokenLogprob> out;
  bool ok = parsed.ok() && parsed.value.is_array();
  if (ok) {
    for (const Json& e : parsed.value) {
      if (!e.is_object() || !e.contains("token") || !e["token"].is_string() ||
          !e.contains("logprob") || !e["logprob"].is_number()) {
        ok = false;
        break;
      }
      out.push_back({e["token"].get<std::string>(), e["logprob"].get<double>()});
    }
  }
  VLBIAS_CHECK(ok, InputError,
               "{}: expected a JSON array of {{\"token\": text, \"logprob\": number}} objects "
               "(the first token's top log-probabilities)",
               where);
  return out;
}

bool api_refused(const Table& input, std::optional<std::size_t> refused_col, std::size_t row) {
  return refused_col && input.columns[*refused_col].text(row) == "true";
}

std::string joined(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ","));
}

}  // namespace

ChoiceJobResult run_choice_job(const ChoiceSet& set, const ChoiceJobOptions& o) {
  RunLock lock(o.run_dir);
  ChoiceJobResult result;
  result.scored = o.run_dir / "scored.jsonl";
  result.manifest = o.run_dir / "manifest.json";
  VLBIAS_CHECK(!fs::exists(result.scored), UsageError,
               "{} already holds scored.jsonl; choose another --out", o.run_dir.string());
  const Table input = read_table(o.input.string());
  const Column& answers = input.column(o.column);
  VLBIAS_CHECK(input.rows > 0, InputError, "{}: the table has no rows", o.input.string());
  const ChoiceColumns columns = choice_columns(set, input);
  const std::optional<std::size_t> lp_col = input.find(o.logprobs_column);
  const std::optional<std::size_t> refused_col = input.find("refused");
  for (const std::string& c : set.choices()) result.outcomes[c] = 0;
  for (const char* k : {"unclear", "refused", "unparseable"}) result.outcomes[k] = 0;

  AtomicWriter writer(result.scored);
  const std::string scorer =
      fmt::format("choice choices={} rules={}", joined(set.choices()), kChoiceRulesVersion);
  for (std::size_t r = 0; r < input.rows; ++r) {
    Json line;
    for (std::size_t c = 0; c < input.columns.size(); ++c) {
      line[input.columns[c].name] = cell_json(input, c, r);
    }
    const std::string where = fmt::format("{} line {}", input.source, input.line_of_row[r]);
    ChoiceAnswer a = parse_choice(set, answers.text(r), where);
    if (api_refused(input, refused_col, r)) a = {ChoiceOutcome::Refused, 0, "api-refusal"};
    const std::string label =
        a.outcome == ChoiceOutcome::Choice ? set.choices()[a.choice] : to_string(a.outcome);
    ++result.outcomes[label];
    line[columns.label] = label;
    line[columns.outcome] = to_string(a.outcome);
    line[columns.rule] = a.rule;
    std::optional<ChoiceProbabilities> p;
    if (lp_col && !input.columns[*lp_col].missing(r)) {
      const std::string cell = input.columns[*lp_col].text(r);
      p = choice_probabilities(set, read_top_logprobs(cell, input, r, o.logprobs_column), where);
    }
    for (std::size_t i = 0; i < columns.p.size(); ++i)
      line[columns.p[i]] = p ? Json(p->p[i]) : Json();
    if (p) {
      ++result.with_probabilities;
      std::vector<double> sorted = p->p;
      std::sort(sorted.rbegin(), sorted.rend());
      line[columns.margin] = sorted[0] - sorted[1];
      std::vector<std::string> missing;
      for (const std::size_t m : p->missing) missing.push_back(set.choices()[m]);
      line[columns.missing] = joined(missing);
    } else {
      line[columns.margin] = Json();
      line[columns.missing] = Json();
    }
    line[columns.scorer] = scorer;
    const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
    writer.write(text.data(), text.size());
  }
  writer.commit();
  result.rows = input.rows;

  Json synonyms = Json::object();
  for (std::size_t i = 0; i < set.choices().size(); ++i) {
    if (!set.synonyms(i).empty()) synonyms[set.choices()[i]] = set.synonyms(i);
  }
  const Json manifest{
      {"vlbias_version", VLBIAS_VERSION},
      {"created_utc", utc_now()},
      {"command", "score choice"},
      {"rules_version", kChoiceRulesVersion},
      {"choices", set.choices()},
      {"synonyms", synonyms},
      {"unclear", set.unclear()},
      {"input", Json{{"path", o.input.string()},
                     {"sha256", sha256_file(o.input.string())},
                     {"rows", input.rows},
                     {"column", o.column},
                     {"logprobs_column", lp_col ? Json(o.logprobs_column) : Json()}}},
      {"output", Json{{"path", "scored.jsonl"}, {"scorer", scorer}}},
      {"labels", result.outcomes},
      {"rows_with_probabilities", result.with_probabilities}};
  write_file_atomically(result.manifest, manifest.dump(2) + "\n");
  return result;
}

}  // namespace vlbias
