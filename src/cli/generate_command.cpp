// `vlbias generate lvlm|llm|t2i SPEC.yaml --out RUN_DIR` and the run options every driver shares
// (run_options.h): the drivers of include/vlbias/generate/generate.h, with their specs parsed in
// their stage (include/vlbias/generate/generate_yaml.h).
#include <cmath>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "commands.h"
#include "run_options.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/generate/generate.h"
#include "vlbias/generate/generate_yaml.h"
#include "vlbias/io/run/shard.h"
#include "vlbias/report/json_output.h"

namespace vlbias::cli_internal {

CLI::Validator number_range(double lo, double hi, const char* zero_means) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = std::numeric_limits<double>::quiet_NaN();
        try {
          v = std::stod(text);
        } catch (const std::exception&) {
        }
        if ((zero_means != nullptr && v == 0) || (v >= lo && v <= hi)) return "";
        return zero_means != nullptr
                   ? fmt::format("must be 0 ({}) or between {} and {}, got {}", zero_means, lo, hi,
                                 text)
                   : fmt::format("must be between {} and {}, got {}", lo, hi, text);
      },
      fmt::format("{}{}..{}", zero_means != nullptr ? "0 or " : "", lo, hi));
}

void add_run_options(CLI::App* cmd, Overrides& o) {
  cmd->add_option("--out", o.out, "The run folder (created if absent)")->required();
  cmd->add_flag("--resume", o.resume,
                "Continue the run already in --out: only requests not yet finished are sent");
  cmd->add_flag("--retry-failed", o.retry_failed,
                "With --resume: send the requests that failed again");
  cmd->add_option("--concurrency", o.concurrency, "Requests in flight (overrides the spec)")
      ->check(CLI::Range(std::size_t{1}, kMaxConcurrency));
  cmd->add_option("--max-qps", o.max_qps,
                  "Requests started per second, 0 = no limit (overrides the spec)")
      ->check(number_range(kMinQps, kMaxQps, "no limit"));
  cmd->add_option("--max-response-bytes", o.max_response_bytes,
                  "The largest reply accepted (overrides the spec; default: derived from what\n"
                  "each request asks for, see include/vlbias/generate/generate.h)")
      ->check(CLI::Range(kMinResponseBytes, kMaxResponseBytes));
  add_shard_option(cmd, o.shard,
                   "requests whose key (the image for lvlm / llm) hashes to I\n"
                   "(docs/scaling.md)");
}

void apply(Overrides& o, JobControl& control) {
  VLBIAS_CHECK(!o.retry_failed || o.resume, UsageError, "--retry-failed needs --resume");
  control.shard = shard_and_out(o.shard, o.out, true);
  control.resume = o.resume;
  control.retry_failed = o.retry_failed;
  if (o.concurrency > 0) control.concurrency = o.concurrency;
  if (o.max_qps >= 0) control.max_qps = o.max_qps;
  if (o.max_response_bytes > 0) control.max_response_bytes = o.max_response_bytes;
}

void print_summary(const JobSummary& s, const std::string& out) {
  Json j;
  j["kind"] = s.kind;
  j["run_dir"] = out;
  j["store"] = store_json(s);
  j["this_run"] = this_run_json(s);
  j["exported"] = s.exported;
  j["outputs"] = s.outputs;
  fmt::print("{}\n", j.dump(2));
}

namespace {

// `vlbias generate NAME SPEC --out RUN_DIR ...`: parse the spec, apply the overrides, run.
template <typename Job>
void add_spec_command(CLI::App* parent, const char* name, const char* help, const char* spec_help,
                      Job (*parse)(const std::string&),
                      JobSummary (*run)(const Job&, const std::filesystem::path&)) {
  auto spec = std::make_shared<std::string>();
  auto o = std::make_shared<Overrides>();
  CLI::App* cmd = parent->add_subcommand(name, help);
  cmd->add_option("spec", *spec, spec_help)->required();
  add_run_options(cmd, *o);
  cmd->callback([spec, o, parse, run] {
    Job job = parse(*spec);
    apply(*o, job.control);
    print_summary(run(job, o->out), o->out);
  });
}

}  // namespace

void add_generate_command(CLI::App& app) {
  CLI::App* gen = app.add_subcommand(
      "generate",
      "Drive a model over HTTP into a resumable run folder (store.sqlite, requests.jsonl,\n"
      "run.json and the analytics file); every key of the specs: docs/specs.md; starters:\n"
      "'vlbias spec template generate-lvlm|generate-t2i'; examples: examples/generate/");
  gen->require_subcommand(1);

  add_spec_command<LvlmJob>(
      gen, "lvlm",
      "Ask an OpenAI-compatible chat completions endpoint (vLLM, llama.cpp, Ollama, SGLang,\n"
      "hosted APIs) about every image x prompt x seed of a manifest; writes\n"
      "RUN_DIR/generations.jsonl for `vlbias audit` (kind: lvlm-counterfactual)",
      "The generate spec (YAML, kind: generate-lvlm)", parse_lvlm_spec, generate_lvlm);
  add_spec_command<LvlmJob>(
      gen, "llm",
      "The same chat completions without an image (an LLM baseline that reads the person\n"
      "described in words: prompts like \"a {race} {gender} {occupation}\"); writes\n"
      "RUN_DIR/generations.jsonl keyed like generate lvlm's by columns.id",
      "The generate spec (YAML, kind: generate-llm)", parse_llm_spec, generate_lvlm);
  add_spec_command<T2iJob>(
      gen, "t2i",
      "Generate images_per_prompt images for every prompt of a table with the Stable\n"
      "Diffusion web UI txt2img API or the OpenAI images API; writes RUN_DIR/images/ and\n"
      "RUN_DIR/manifest.csv (image, the prompt's columns, sample, seed, model, sha256)",
      "The generate spec (YAML, kind: generate-t2i)", parse_t2i_spec, generate_t2i);
}

}  // namespace vlbias::cli_internal
