#pragma once
// `vlbias score choice TABLE --choices "man,woman" --out RUN_DIR`: every answer of a table mapped
// onto the choices by parse_choice (choice.h), with the first token's probabilities where the
// table carries them (generate lvlm with sampling.top_logprobs writes them).
//
// RUN_DIR/scored.jsonl: every input row, in order, with
//   choice_label    the choice, or unclear, refused or unparseable (the labels table's `label`)
//   choice_outcome  choice | unclear | refused | unparseable
//   choice_rule     the rule that decided (choice.h: exact, word, refusal, negation, several,
//                   unclear, unclear+choice, empty, none; api-refusal for a row the endpoint
//                   refused: a `refused` column holding true)
//   p_<choice>      one per choice, in the order given: the renormalised first-token
//                   probability, null where the row has no top log-probabilities or none of
//                   the choices' tokens is listed
//   choice_margin   top-1 minus top-2 of those probabilities (null likewise)
//   choice_p_missing  the choices whose token was not listed (comma-joined; null likewise)
//   scorer          "choice choices=man,woman rules=1"
// Input columns named like these are a UsageError.
// RUN_DIR/manifest.json: the choices, synonyms and unclear words, the rules version, the input
//   (path, SHA-256, rows, columns read), and the count of rows per outcome and per choice.
// A run folder already holding scored.jsonl is refused (choose another --out); the folder is
// locked while written (RunLock).
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "vlbias/score/choice.h"

namespace vlbias {

struct ChoiceJobOptions {
  std::filesystem::path input;  // CSV or JSONL
  std::string column = "text";  // the answer
  // The first token's top log-probabilities: a JSON array of {"token", "logprob"} (JSONL keeps
  // an array as its JSON text); used when the table has the column, an empty cell = none.
  std::string logprobs_column = "top_logprobs";
  std::filesystem::path run_dir;
};

struct ChoiceJobResult {
  std::size_t rows = 0, with_probabilities = 0;
  std::map<std::string, std::size_t> outcomes;  // outcome -> rows
  std::filesystem::path scored, manifest;
};

// UsageError for an input column named like an added one or an existing scored.jsonl;
// InputError for a missing answer column (naming the columns there are), an input without rows
// or an unreadable top_logprobs cell (naming its line).
ChoiceJobResult run_choice_job(const ChoiceSet& set, const ChoiceJobOptions& options);

}  // namespace vlbias
