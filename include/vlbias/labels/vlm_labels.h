#pragma once
// VLM labels (issue 41): a closed question's answers, mapped onto its choices by `vlbias score
// choice` (include/vlbias/score/choice_job.h), written as LABELS.csv
// (include/vlbias/labels/labels_table.h) so that a VLM's perceived attributes compare with
// CLIP's and FairFace's in `metric agreement`. One row per answer: the attribute named here, the
// label `score choice` decided (a choice, unclear, refused or unparseable: never guessed), and
// the first-token probabilities of the choices where the endpoint returned them (margin and
// p_<choice> empty otherwise).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/labels/label_job.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias {

struct VlmLabelOptions {
  std::filesystem::path answers;  // a `vlbias score choice` RUN_DIR: scored.jsonl, manifest.json
  std::string attribute;          // what the question asked about, e.g. gender
  // Or several questions' answers in one table (the yes/no questions of visual attributes): each
  // row's attribute is its `attribute_column` cell, one of `attributes` (which share the choices
  // and so the p_<choice> columns).
  std::vector<std::string> attributes;
  std::string attribute_column = "prompt";
  std::string image_column = "image";
  std::string face_column;  // "" = whole images
  std::filesystem::path out;
  // LABELS.csv's prompt_set: "" = the answers' `prompt` cell (of their first row), as `--answers`
  // writes it; `--spec` gives "<spec path> sha256:<hex of the spec file>" and leaves the
  // `answers` option (a folder under <out>.vlm/, which differs per shard) out.
  std::string prompt_set;
};

// UsageError for an empty attribute or --out as check_label_out refuses it; InputError naming the
// file for a RUN_DIR without scored.jsonl or manifest.json, a manifest without choices, a missing
// image or face column, a face cell that is not a whole number.
LabelRunCounts run_vlm_labels(const VlmLabelOptions& options);

// `--labeller vlm --spec --shard I/N` (docs/scaling.md#label-shards): the items are cut into
// chunks of `job.chunk` (0: 64) as the image labellers cut them, this shard asks about the items
// of its chunks (c mod N = I) only, and its LABELS.csv and records (<out>.shard.json) are the
// ones the image labellers' shards write, so that `vlbias merge` checks them as one job's and
// writes the one-process LABELS.csv. `answers` is the `score choice` run of this shard's
// answers; `input`, `column` and `image_root` are --images as given (the job's items).
// An item without an answer is counted as failed. UsageError as run_vlm_labels, and for a
// `<out>.partial/` left by an interrupted run (without `job.resume`).
struct VlmLabelShardOptions {
  VlmLabelOptions answers;  // answers.answers empty: the shard owns no item (nothing was asked)
  // The spec's choices and endpoint model: the schema and provenance of a shard without answers.
  std::vector<std::string> choices;
  std::string model;
  std::filesystem::path input;
  std::string column;
  std::filesystem::path image_root;
  LabelJobOptions job;
};
LabelRunCounts run_vlm_label_shard(const VlmLabelShardOptions& options);

// The items (indices into the `items` items in input order) of the chunks shard `job.shard`
// labels, in order. UsageError for a chunk over 1000000 items.
std::vector<std::size_t> label_shard_item_indices(std::size_t items, const LabelJobOptions& job);

// The image files `vlbias label` labels (a table or folder of images, or a FACES_DIR's face
// chips), for a labeller that sends them to a model (--labeller vlm --spec): per item the file,
// the image as LABELS.csv names it and the face. UsageError for a Parquet table of image bytes
// (no files: write them out with `vlbias dataset extract-images` first).
struct LabelImageFiles {
  std::vector<std::string> path;   // "" for an empty path cell
  std::vector<std::string> image;  // as LABELS.csv names it
  std::vector<std::optional<std::size_t>> face;
  bool faces = false;
};
LabelImageFiles label_image_files(const std::filesystem::path& input, const std::string& column,
                                  const std::filesystem::path& image_root);

}  // namespace vlbias
