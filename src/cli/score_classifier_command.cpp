// `vlbias score classifier`: a table's texts scored by a native Hugging Face sequence
// classifier (Detoxify-compatible BERT / RoBERTa / XLM-R / DistilBERT), no Python at run time.
#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/score/classifier_job.h"

namespace vlbias::cli_internal {

namespace {

struct ClassifierArgs {
  std::string model, input, text_column = "text", out, activation, prefix, shard;
  bool resume = false;
  std::size_t batch = 0, chunk = 0, max_length = 0;
};

}  // namespace

void add_score_classifier_command(CLI::App& score) {
  auto args = std::make_shared<ClassifierArgs>();
  CLI::App* cmd = score.add_subcommand(
      "classifier",
      "Score a table's texts with a Hugging Face sequence classifier (BERT, RoBERTa, XLM-R,\n"
      "DistilBERT: e.g. a Detoxify folder) run natively; writes RUN_DIR/scored.jsonl (every\n"
      "row with one lower-case column per label) and RUN_DIR/manifest.json; resumable");
  cmd->add_option("--model", args->model,
                  "Model folder: config.json, model.safetensors and the tokenizer files\n"
                  "(tokenizer.json, vocab.txt, vocab.json + merges.txt or sentencepiece)")
      ->required();
  cmd->add_option("input", args->input, "CSV or JSONL table of texts (e.g. generations.jsonl)")
      ->required();
  cmd->add_option("--text-column", args->text_column, "Column holding the text")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Run folder")->required();
  cmd->add_option("--prefix", args->prefix,
                  "Put before every added column's name (e.g. detoxify_ gives detoxify_toxic,\n"
                  "detoxify_scorer): to keep another scorer's columns beside these");
  cmd->add_flag("--resume", args->resume, "Continue an interrupted run from RUN_DIR/checkpoints/");
  add_shard_option(cmd, args->shard, "checkpoint chunks c (--chunk texts each) with c mod N = I");
  cmd->add_option("--batch", args->batch, "Texts per forward pass (default 64)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--chunk", args->chunk, "Texts per checkpoint (default 2048)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  cmd->add_option("--max-length", args->max_length,
                  "Tokens per text, special tokens included (default: the model's); longer\n"
                  "texts are cut and counted")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--activation", args->activation,
                  "sigmoid or softmax (default: sigmoid for problem_type\n"
                  "multi_label_classification, as Detoxify; softmax otherwise)");
  cmd->callback([args] {
    ClassifierJobOptions o;
    o.model_dir = args->model;
    o.input = args->input;
    o.text_column = args->text_column;
    o.prefix = args->prefix;
    std::string out = args->out;
    o.shard = shard_and_out(args->shard, out, true);
    o.run_dir = out;
    o.resume = args->resume;
    o.batch = args->batch;
    o.chunk = args->chunk;
    if (args->max_length) o.classifier.max_length = args->max_length;
    if (!args->activation.empty()) {
      o.classifier.activation = parse_score_activation(args->activation);
    }
    const ClassifierJobResult r = run_classifier_job(o);
    if (!quiet()) {
      eprint("vlbias: scored {} texts{} in {:.1f} s ({:.1f}/s){}, {} truncated -> {}\n", r.rows,
             o.shard.whole() ? "" : fmt::format(" (shard {} of {})", o.shard.index, o.shard.count),
             r.seconds, r.texts_per_second, r.resumed ? fmt::format(", {} resumed", r.resumed) : "",
             r.truncated, r.scored.string());
    }
  });
}

}  // namespace vlbias::cli_internal
