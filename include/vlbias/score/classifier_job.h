#pragma once
// `vlbias score classifier`: every text of a table scored by a native sequence classifier
// (include/vlbias/score/classifier.h), resumable like `vlbias encode`.
//
// RUN_DIR/scored.jsonl: every input row, in order, with one column per label (the label
//   lower-cased, as the audits read them: toxic, severe_toxic, ...) holding the sigmoid or
//   softmax score, classifier_truncated (the text was cut to the model's length) and scorer
//   ("classifier <architecture> <model folder name> sha256:<first 16 hex digits of the
//   weights' SHA-256>", so the file names its scorer wherever it is copied; the audits show
//   it). With a prefix P every added column is P + name (P + "toxic", P + "scorer"): two
//   scorers' columns then sit side by side in one table (`vlbias metric agreement`). Empty
//   and missing texts are scored (as the special tokens alone), never dropped.
// RUN_DIR/manifest.json: the model (folder, architecture, SHA-256 of model.safetensors and
//   config.json, labels, activation, max length), the tokenizer, the input (path, SHA-256,
//   rows, column), the truncation count, the throughput (texts/s, tokens/s, threads).
// Checkpoints: RUN_DIR/checkpoints/ holds job.json (everything that shapes the output) and one
//   chunk_NNNNNN.json per finished chunk of rows; a killed run continues with --resume, and the
//   outputs are written only once every chunk is done (then the checkpoints are removed). A
//   resumed chunk's logits must be finite, as the live forward's must (InputError otherwise).
#include <cstddef>
#include <filesystem>
#include <string>

#include "vlbias/io/run/shard.h"
#include "vlbias/score/classifier.h"

namespace vlbias {

struct ClassifierJobOptions {
  std::filesystem::path model_dir;
  std::filesystem::path input;  // CSV or JSONL table
  std::string text_column = "text";
  std::string prefix;  // put before every added column's name ("" = none)
  std::filesystem::path run_dir;
  bool resume = false;
  std::size_t batch = 0;  // texts per forward pass (0: 64)
  std::size_t chunk = 0;  // rows per checkpoint (0: 2048)
  // One shard (io/shard.h): the chunks c with c mod count == index. scored.jsonl then holds
  // those rows, in order; manifest.json records the shard and the chunk, and
  // merge_classifier_shards puts the shards together.
  Shard shard;
  ClassifierOptions classifier;
};

struct ClassifierJobResult {
  std::size_t rows = 0;       // input rows (all scored)
  std::size_t resumed = 0;    // rows taken from an earlier run's checkpoints
  std::size_t truncated = 0;  // texts cut to the model's length
  double seconds = 0.0;       // this run's scoring time
  double texts_per_second = 0.0;
  std::filesystem::path scored, manifest;
};

// Runs the job. UsageError for options that contradict each other or the folder (a run
// folder holding an interrupted run without --resume, a resumed run whose model, input or
// options changed, a label column the input already has); InputError for unreadable inputs
// and bad model folders.
ClassifierJobResult run_classifier_job(const ClassifierJobOptions& options);

struct ClassifierMergeResult {
  std::size_t shards = 0, rows = 0;
  std::filesystem::path scored, manifest;
};

// `vlbias merge OUT_DIR SHARD_DIR...` for score classifier shards: checks that the shards are
// one job (the same model, tokenizer, input, columns, chunk and batch; UsageError naming the
// shard that differs), shards 0..N-1 of N each once, each holding as many rows as its chunks
// (the counts before anything is sized by them), no scored.jsonl or manifest a link or the
// same file as another shard's (check_shard_files), and each scored.jsonl the one its shard
// wrote (the SHA-256 its manifest records as "shard": "scored_sha256"; a shard without it was
// written by an older vlbias: no row edited, moved or repeated); then writes OUT_DIR/scored.jsonl
// byte for byte as one process writes it (each chunk's lines taken from its shard, in chunk order)
// and OUT_DIR/manifest.json (counts summed, the shards under "merged_from").
ClassifierMergeResult merge_classifier_shards(const std::filesystem::path& out_dir,
                                              const std::vector<std::filesystem::path>& shards);

}  // namespace vlbias
