// `vlbias merge OUT SHARD...`: the outputs of the shards of one job (`--shard I/N`, io/shard.h)
// put together as one process writes them. What OUT names picks the kind of job: an embedding
// file (.npy, .safetensors) merges encode / features shards; a folder merges the run folders
// of request jobs (generate, score over HTTP) or of score classifier shards.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "run_options.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/encode/encode.h"
#include "vlbias/faces/faces_job.h"
#include "vlbias/io/run/run_paths.h"
#include "vlbias/labels/label_job.h"
#include "vlbias/score/classifier_job.h"

namespace vlbias::cli_internal {

namespace {

struct MergeArgs {
  std::string out;
  std::vector<std::string> shards;
};

using Paths = std::vector<std::filesystem::path>;

void merge_embeddings(const MergeArgs& args, const Paths& shards) {
  const EncodeMergeResult r = merge_encode_shards(args.out, shards);
  if (quiet()) return;
  eprint("vlbias: merged {} shards: {} of {} items encoded{} -> {} ({})\n", r.shards, r.encoded,
         r.items, r.failed ? fmt::format(", {} failed", r.failed) : "", args.out,
         r.manifest.string());
}

void merge_classifier_runs(const MergeArgs& args, const Paths& shards) {
  const ClassifierMergeResult r = merge_classifier_shards(args.out, shards);
  if (quiet()) return;
  eprint("vlbias: merged {} shards: {} rows -> {}\n", r.shards, r.rows, r.scored.string());
}

// A run-folder shard named by one of the files its run wrote (what `ls` shows, and what a user
// types): its folder. An embedding file names an encode / features shard, whose merge writes an
// embedding file; any other file is no shard.
std::filesystem::path shard_folder(const std::string& given, const std::string& out) {
  const std::filesystem::path p(given);
  if (!std::filesystem::is_regular_file(p)) return p;
  const std::string name = p.filename().string();
  for (const char* written :
       {"manifest.json", "scored.jsonl", "run.json", "generations.jsonl", "requests.jsonl"}) {
    if (name == written)
      return p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  }
  const bool embeddings = p.extension() == ".npy" || p.extension() == ".safetensors" ||
                          name.ends_with(".manifest.json") || name.ends_with(".rows.csv");
  VLBIAS_CHECK(!embeddings, UsageError,
               "vlbias merge {}: {} is the output of an encode / features shard, whose merge "
               "writes an embedding file: give OUT as a .npy or .safetensors file.",
               out, given);
  VLBIAS_FAIL(UsageError,
              "vlbias merge {}: {} is a file, not a shard; give each shard's folder (the --out "
              "of its run, holding manifest.json or run.json).",
              out, given);
}

void merge_faces_runs(const MergeArgs& args, const Paths& shards) {
  const FacesMergeResult r = merge_faces_shards(args.out, shards);
  if (quiet()) return;
  eprint("vlbias: merged {} shards: {} faces in {} images{} -> {}\n", r.shards, r.faces, r.images,
         r.failed ? fmt::format(", {} unreadable", r.failed) : "", args.out);
}

void merge_label_runs(const MergeArgs& args, const Paths& shards) {
  const LabelsMergeResult r = merge_label_shards(args.out, shards);
  if (quiet()) return;
  eprint("vlbias: merged {} shards: {} of {} items labelled{}, {} rows -> {}\n", r.shards,
         r.labelled, r.items, r.failed ? fmt::format(" ({} unreadable)", r.failed) : "", r.rows,
         args.out);
}

// A faces shard keeps its records for the merge (src/faces/faces_job_internal.h).
bool is_faces_shard(const std::filesystem::path& shard) {
  return std::filesystem::is_regular_file(shard / "shard_records.jsonl");
}

// What the first shard folder holds says which job made it.
bool is_classifier_run(const std::string& shard) {
  const std::filesystem::path manifest = std::filesystem::path(shard) / "manifest.json";
  return std::filesystem::is_regular_file(manifest) &&
         !std::filesystem::exists(std::filesystem::path(shard) / "run.json");
}

}  // namespace

void add_merge_command(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Put the outputs of a job's shards (--shard I/N on encode, features, faces, label,\n"
      "generate and score) together as one process writes them: the embeddings and rows file, the "
      "faces\n"
      "tables and chips, scored.jsonl, generations.jsonl, the run store with every request's\n"
      "history; refuses shards of another job, a shard twice or missing, rows out of place");
  cmd->add_option("OUT", args->out,
                  "The merged output: an embedding file (.npy or .safetensors) for encode /\n"
                  "features shards, LABELS.csv (.csv) for label shards, a folder for faces,\n"
                  "generate and score shards")
      ->required();
  cmd->add_option("SHARD", args->shards,
                  "Each shard's output folder, or a file its run wrote (an encode shard's\n"
                  ".npy / .safetensors or .manifest.json; a label shard's LABELS.csv; a run's\n"
                  "manifest.json, scored.jsonl or run.json), all N of them, any order")
      ->required();
  cmd->callback([args] {
    const std::filesystem::path out(args->out);
    if (out.extension() == ".npy" || out.extension() == ".safetensors") {
      merge_embeddings(*args, Paths(args->shards.begin(), args->shards.end()));
      return;
    }
    if (out.extension() == ".csv") {
      merge_label_runs(*args, Paths(args->shards.begin(), args->shards.end()));
      return;
    }
    Paths shards;
    for (const std::string& s : args->shards) shards.push_back(shard_folder(s, args->out));
    // A run folder merge writes apart from every shard folder: OUT is none of them, holds
    // none and sits in none (an embedding merge checks its files against the shards').
    if (is_request_run(shards[0])) {
      check_out_apart_from_inputs(out, shards, "merge OUT");
      print_summary(merge_run_shards(out, shards), args->out);
      return;
    }
    if (is_faces_shard(shards[0])) {
      check_out_apart_from_inputs(out, shards, "merge OUT");
      merge_faces_runs(*args, shards);
      return;
    }
    if (is_classifier_run(shards[0].string())) {
      check_out_apart_from_inputs(out, shards, "merge OUT");
      merge_classifier_runs(*args, shards);
      return;
    }
    VLBIAS_FAIL(UsageError,
                "vlbias merge {}: OUT names what to write: an embedding file (.npy, "
                ".safetensors) for encode / features shards, or a run folder for the shards "
                "of generate, score or score classifier ({} holds neither a run store nor a "
                "manifest.json).",
                args->out, shards[0].string());
  });
}

}  // namespace vlbias::cli_internal
