// `vlbias score perspective|moderation|judge ... --out RUN_DIR`: the HTTP scorers of
// include/vlbias/generate/generate.h, with the run options of the generate commands
// (run_options.h); `score classifier` and `score choice` are registered here too
// (score_classifier_command.cpp, score_choice_command.cpp, score_image_head_command.cpp).
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "run_options.h"
#include "vlbias/generate/generate.h"
#include "vlbias/generate/generate_yaml.h"

namespace vlbias::cli_internal {

namespace {

// --timeout and --max-attempts of the scorers whose endpoint is given on the command line.
void add_endpoint_limits(CLI::App* cmd, Endpoint& endpoint, int& max_attempts) {
  cmd->add_option("--timeout", endpoint.timeout_s, "Seconds per attempt")
      ->capture_default_str()
      ->check(number_range(kMinTimeoutS, kMaxTimeoutS));
  cmd->add_option("--max-attempts", max_attempts, "Attempts per text, the first included")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxAttempts));
}

void add_perspective_command(CLI::App& score) {
  auto input = std::make_shared<std::string>();
  auto o = std::make_shared<Overrides>();
  auto job = std::make_shared<PerspectiveJob>();
  auto attributes = std::make_shared<std::string>("TOXICITY");
  auto languages = std::make_shared<std::string>();
  auto max_attempts = std::make_shared<int>(6);
  job->endpoint.api_key_env = "PERSPECTIVE_API_KEY";
  job->endpoint.timeout_s = 60;
  CLI::App* p = score.add_subcommand(
      "perspective",
      "Score a table's texts with the Perspective API (comments:analyze), 1 request per\n"
      "second by default (its public quota); writes RUN_DIR/scored.jsonl: every row with one\n"
      "column per attribute (toxicity, insult, ...) and the scorer, for `vlbias audit`");
  p->add_option("input", *input, "CSV or JSONL table of texts (e.g. generations.jsonl)")
      ->required();
  p->add_option("--text-column", job->text_column, "Column holding the text")
      ->capture_default_str();
  p->add_option("--attributes", *attributes,
                "Comma-separated attributes: TOXICITY, SEVERE_TOXICITY, IDENTITY_ATTACK, INSULT,\n"
                "PROFANITY, THREAT, SEXUALLY_EXPLICIT, FLIRTATION, ...")
      ->capture_default_str();
  p->add_option("--languages", *languages, "Comma-separated language codes (default: detected)");
  p->add_option("--url", job->endpoint.url, "The comments:analyze URL (default: Google's)");
  p->add_option("--key-env", job->endpoint.api_key_env, "Environment variable holding the API key")
      ->capture_default_str();
  add_endpoint_limits(p, job->endpoint, *max_attempts);
  add_run_options(p, *o);
  p->callback([input, o, job, attributes, languages, max_attempts] {
    job->input = *input;
    job->attributes = split_list(*attributes, "--attributes");
    if (!languages->empty()) job->languages = split_list(*languages, "--languages");
    job->control.concurrency = 4;
    job->control.max_qps = 1;
    job->control.retry.max_attempts = *max_attempts;
    apply(*o, job->control);
    print_summary(score_perspective(*job, o->out), o->out);
  });
}

void add_moderation_command(CLI::App& score) {
  auto input = std::make_shared<std::string>();
  auto o = std::make_shared<Overrides>();
  auto job = std::make_shared<ModerationJob>();
  auto max_attempts = std::make_shared<int>(6);
  job->endpoint.timeout_s = 60;
  CLI::App* m = score.add_subcommand(
      "moderation",
      "Score a table's texts with an OpenAI-compatible moderation endpoint (/v1/moderations);\n"
      "writes RUN_DIR/scored.jsonl: every row with one column per category score\n"
      "(harassment, self_harm, ...), flagged, moderation_error and the scorer");
  m->add_option("input", *input, "CSV or JSONL table of texts (e.g. generations.jsonl)")
      ->required();
  m->add_option("--endpoint", job->endpoint.url,
                "The moderations URL, e.g. https://api.openai.com/v1/moderations")
      ->required();
  m->add_option("--model", job->endpoint.model,
                "Sent as \"model\" (e.g. omni-moderation-latest; default: not sent)");
  m->add_option("--text-column", job->text_column, "Column holding the text")
      ->capture_default_str();
  m->add_option("--api-key-env", job->endpoint.api_key_env,
                "Environment variable holding the API key (default: no key)");
  add_endpoint_limits(m, job->endpoint, *max_attempts);
  add_run_options(m, *o);
  m->callback([input, o, job, max_attempts] {
    job->input = *input;
    job->control.retry.max_attempts = *max_attempts;
    apply(*o, job->control);
    print_summary(score_moderation(*job, o->out), o->out);
  });
}

void add_judge_command(CLI::App& score) {
  auto input = std::make_shared<std::string>();
  auto spec = std::make_shared<std::string>();
  auto o = std::make_shared<Overrides>();
  CLI::App* j = score.add_subcommand(
      "judge",
      "Score a table's texts with an LLM judge over OpenAI-compatible chat completions\n"
      "(vLLM, llama.cpp, Ollama): a prompt template, and a parser for the answer (Llama\n"
      "Guard's safe/unsafe + S codes, or a number on a scale); writes RUN_DIR/scored.jsonl.\n"
      "Spec keys: docs/specs.md (kind score-judge; 'vlbias spec template score-judge')");
  j->add_option("input", *input, "CSV or JSONL table of texts (e.g. generations.jsonl)")
      ->required();
  j->add_option("spec", *spec, "The judge spec (YAML, kind: score-judge)")->required();
  add_run_options(j, *o);
  j->callback([input, spec, o] {
    JudgeJob job = parse_judge_spec(*spec);
    job.input = *input;
    apply(*o, job.control);
    print_summary(score_judge(job, o->out), o->out);
  });
}

}  // namespace

void add_score_command(CLI::App& app) {
  CLI::App* score = app.add_subcommand(
      "score",
      "Score texts with a native classifier or over HTTP (Perspective, a moderation endpoint,\n"
      "an LLM judge), or map closed-set answers onto choices");
  score->require_subcommand(1);
  add_score_classifier_command(*score);
  add_score_choice_command(*score);
  add_score_image_head_command(*score);
  add_perspective_command(*score);
  add_moderation_command(*score);
  add_judge_command(*score);
}

}  // namespace vlbias::cli_internal
