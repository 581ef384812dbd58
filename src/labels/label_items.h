#pragma once
// Internal to the labels stage: what every labeller labels (label_items.cpp). The images of a
// table or folder (as `vlbias encode --images` lists them), or the face chips of a FACES_DIR
// written by `vlbias faces`; decoded as `vlbias encode` decodes them, a batch at a time.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/encode/image/image.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias {
class ParquetImageColumn;
}  // namespace vlbias

namespace vlbias::labels_internal {

struct LabelItems {
  std::vector<std::string> path;                 // the file decoded ("" when the cell is empty)
  std::vector<std::string> image;                // LABELS.csv's image cell
  std::vector<std::optional<std::size_t>> face;  // LABELS.csv's face cell
  bool faces = false;
  // The images' bytes when they are the cells of a Parquet column (path[k] is "T.parquet#k").
  std::shared_ptr<const ParquetImageColumn> table_images;
};

// `input` is a FACES_DIR (a folder holding faces.csv and manifest.json: one item per face, its
// chip) or a table / folder of images (load_job_items with `column` and `image_root`).
// InputError for a FACES_DIR without faces or a face without a chip, naming faces.csv's line.
LabelItems read_label_items(const std::filesystem::path& input, const std::string& column,
                            const std::filesystem::path& image_root);

// UsageError for an empty --out, a folder, or a file in a folder that does not exist.
void check_label_out(const std::filesystem::path& out);

// The items [begin, end) that decode (in parallel; Pillow's --max-image-pixels rule, 0 = its
// default; EXIF as asked), with their item indices; each other item is named in a warning and
// counted into counts.failed.
struct DecodedLabelItems {
  std::vector<RgbImage> images;
  std::vector<std::size_t> items;
};
DecodedLabelItems decode_label_items(const LabelItems& items, std::size_t begin, std::size_t end,
                                     std::size_t max_image_pixels, bool exif_transpose,
                                     LabelRunCounts& counts);

// One LABELS.csv row per attribute of item `k` from its class probabilities (per attribute, in
// the schema's order), labelled by label_from_probabilities with `margin`.
void append_label_rows(const LabelItems& items, std::size_t k, const LabelsSchema& schema,
                       const std::vector<std::vector<double>>& probabilities, double margin,
                       std::vector<LabelRow>& rows);

}  // namespace vlbias::labels_internal
