#pragma once
// FairFace labels (issue 41; docs/methods.md#fairface): each face chip (or image) through the
// FairFace classifier (include/vlbias/encode/models/fairface.h: torchvision's ResNet-34 with 18
// outputs, softmax per head), one LABELS.csv row per head (include/vlbias/labels/labels_table.h).
// The heads are the attributes: gender (Male, Female), age (0-2 ... 70+), and race: `race` for the
// 7-race model (White ... Middle Eastern), `race4` for the 4-race one (White, Black, Asian,
// Indian), the names the shipped CLIP prompt set `fairface` uses, so that both labellers' tables
// line up attribute by attribute and class by class for `metric agreement`.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/encode/models/fairface.h"
#include "vlbias/labels/label_job.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias {

struct FairFaceLabelOptions {
  // A table with a path column, a folder of images, or a FACES_DIR of `vlbias faces` (each
  // face's chip: the 300 px, 0.25-padding chip predict.py classifies).
  std::filesystem::path input;
  std::string column;  // the path column ("" = "path")
  std::filesystem::path image_root;
  std::filesystem::path model;  // .pt state_dict, .safetensors, or a converted folder
  FairFaceVariant variant = FairFaceVariant::Race7;
  std::filesystem::path classes;        // optional class renaming (FairFaceOptions::classes)
  std::vector<std::string> attributes;  // heads to write (by attribute name); empty: all
  double margin = 0.0;                  // abstain when top-1 - top-2 < margin
  std::filesystem::path out;            // LABELS.csv
  std::size_t batch = 16;               // chips per forward
  std::size_t max_image_pixels = 0;     // 0: Pillow's MAX_IMAGE_PIXELS
  bool exif_transpose = false;
  LabelJobOptions job;  // --resume, --chunk, --shard (include/vlbias/labels/label_job.h)
};

// The attribute name of a head in LABELS.csv: the head's, except the 4-race model's race head,
// which is `race4`.
std::string fairface_label_attribute(FairFaceVariant variant, const FairFaceHead& head);

// Checks every input (model, attributes, items, --out) before the first chip, then labels every
// readable item in input order. UsageError for an attribute that is not a head of the variant
// (naming the heads), a margin outside [0, 1], a model of another architecture
// (FairFaceClassifier); InputError for an empty table or a FACES_DIR without chips. An unreadable
// item is warned about and skipped.
LabelRunCounts run_fairface_labels(const FairFaceLabelOptions& options);

}  // namespace vlbias
