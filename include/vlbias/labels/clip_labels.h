#pragma once
// CLIP zero-shot labels (issue 41; docs/methods.md#clip-zero-shot-labels): per attribute, each
// class embedding is the mean of its prompts' L2-normalised text embeddings, renormalised (CLIP's
// zero-shot ImageNet prompt ensembling); an image's class probabilities are the softmax over the
// attribute's classes of s <e, u_c> (e: the L2-normalised image embedding, u_c: the class
// embedding, s: the model's exp(logit_scale)), as DALL-Eval's score_clip.py and CLIP's notebook.
// The job behind `vlbias label --labeller clip` (src/labels/clip_labels_job.cpp) writes
// LABELS.csv (include/vlbias/labels/labels_table.h).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/encode.h"
#include "vlbias/labels/label_job.h"
#include "vlbias/labels/label_prompts.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias {

// The class embeddings of the chosen attributes: texts encoded once.
struct ClipZeroShot {
  std::vector<LabelAttribute> attributes;
  // One unit row of `width` per class (attributes in order, then classes), in double: the mean
  // of float32 embeddings kept exact to the last bits the reference sees.
  std::vector<double> class_embeddings;
  std::size_t width = 0;
  double logit_scale = 0.0;
};

// Encodes every prompt of `attributes` in one call and ensembles them. UsageError for a logit
// scale that is not finite and > 0; InputError for a prompt whose embedding is zero.
ClipZeroShot make_clip_zero_shot(const ClipEncoder& encoder,
                                 const std::vector<LabelAttribute>& attributes, double logit_scale);

// The same from the prompts' embeddings (one row per prompt, in the order of the attributes'
// classes' prompts; not necessarily normalised).
ClipZeroShot make_clip_zero_shot(MatrixView prompt_embeddings,
                                 const std::vector<LabelAttribute>& attributes, double logit_scale);

// Per attribute, the class probabilities of one image embedding (not necessarily normalised;
// InputError for a zero or non-finite one or a width other than the classes').
std::vector<std::vector<double>> clip_zero_shot_probabilities(const ClipZeroShot& zero_shot,
                                                              const float* image_embedding,
                                                              std::size_t width);

struct ClipLabelOptions {
  // A table with a path column, or a folder of images (load_job_items), or a FACES_DIR written
  // by `vlbias faces` (a folder holding faces.csv and manifest.json): then each face's chip.
  std::filesystem::path input;
  std::string column;  // the path column ("" = "path")
  std::filesystem::path image_root;
  std::filesystem::path model;          // a CLIP folder with its tokenizer and preprocessing
  std::string prompts = "fairface";     // a shipped set or a JSON file (label_prompts.h)
  std::vector<std::string> attributes;  // in the prompt set
  double margin = 0.0;                  // abstain when top-1 - top-2 < margin
  std::filesystem::path out;            // LABELS.csv
  std::size_t batch = 32;               // images per forward
  std::size_t max_image_pixels = 0;     // 0: Pillow's MAX_IMAGE_PIXELS
  bool exif_transpose = false;
  LabelJobOptions job;  // --resume, --chunk, --shard (include/vlbias/labels/label_job.h)
};

using ClipLabelResult = LabelRunCounts;

// Checks every input (model, prompts, attributes, images, --out) before the first image, then
// labels every readable item in input order. UsageError for a model folder that is not a CLIP
// (naming it and what it is), unknown attributes, colliding classes, a margin outside [0, 1], an
// --out that is a folder; InputError for an empty table, a FACES_DIR without chips, a model
// without a tokenizer. An image that fails to decode is named in a warning and skipped.
ClipLabelResult run_clip_labels(const ClipLabelOptions& options);

}  // namespace vlbias
