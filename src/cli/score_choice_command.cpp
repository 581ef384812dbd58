// `vlbias score choice TABLE --choices "man,woman" --out RUN_DIR`: closed-set answers mapped onto
// choices (include/vlbias/score/choice_job.h; docs/methods.md#closed-set-answers).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/score/choice_job.h"

namespace vlbias::cli_internal {

namespace {

struct ChoiceArgs {
  std::string input, choices, synonyms, unclear = "unclear", out;
  ChoiceJobOptions job;
};

}  // namespace

void add_score_choice_command(CLI::App& score) {
  auto args = std::make_shared<ChoiceArgs>();
  CLI::App* cmd = score.add_subcommand(
      "choice",
      "Map each answer of a table (e.g. generate lvlm's generations.jsonl for \"Does the person\n"
      "look like a man or a woman?\") onto one of the choices, unclear, refused or unparseable,\n"
      "by a documented rule table that never guesses (docs/methods.md#closed-set-answers), with\n"
      "the first token's probabilities renormalised over the choices where the table has its\n"
      "top log-probabilities; writes RUN_DIR/scored.jsonl and RUN_DIR/manifest.json");
  cmd->add_option("input", args->input, "CSV or JSONL table of answers")->required();
  cmd->add_option("--choices", args->choices,
                  "Comma-separated choices, e.g. \"man,woman\" or \"yes,no\" (two or more)")
      ->required();
  cmd->add_option("--synonyms", args->synonyms,
                  "Other words for a choice: \"man=male|gentleman,woman=female|lady\"");
  cmd->add_option("--unclear", args->unclear,
                  "Comma-separated words that mean the answer is unclear")
      ->capture_default_str();
  cmd->add_option("--column,--text-column", args->job.column, "Column holding the answer")
      ->capture_default_str();
  cmd->add_option("--logprobs-column", args->job.logprobs_column,
                  "Column holding the first token's top log-probabilities (used when present;\n"
                  "generate lvlm writes it with sampling.top_logprobs)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Run folder")->required();
  cmd->callback([args] {
    const ChoiceSet set(split_list(args->choices, "--choices"),
                        args->synonyms.empty() ? std::map<std::string, std::vector<std::string>>{}
                                               : parse_synonyms(args->synonyms, "--synonyms"),
                        split_list(args->unclear, "--unclear"));
    args->job.input = args->input;
    args->job.run_dir = args->out;
    const ChoiceJobResult r = run_choice_job(set, args->job);
    if (!quiet()) {
      std::string counts;
      for (const auto& [label, n] : r.outcomes) counts += fmt::format(" {}={}", label, n);
      eprint("vlbias: {} answers,{}; {} with probabilities -> {}\n", r.rows, counts,
             r.with_probabilities, r.scored.string());
    }
  });
}

}  // namespace vlbias::cli_internal
