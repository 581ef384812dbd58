// What every labeller labels: images or the face chips of a FACES_DIR (label_items.h).
#include "label_items.h"

#include <cmath>
#include <new>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/io/parquet/parquet_images.h"
#include "vlbias/io/run/run_paths.h"
#include "vlbias/io/table/table.h"

namespace vlbias::labels_internal {

namespace fs = std::filesystem;

namespace {

bool is_faces_dir(const fs::path& input) {
  std::error_code ec;
  return fs::is_directory(input, ec) && fs::is_regular_file(input / "faces.csv", ec) &&
         fs::is_regular_file(input / "manifest.json", ec);
}

// A FACES_DIR's faces.csv: one item per face, its chip.
LabelItems read_label_faces(const fs::path& dir) {
  const Table t = read_table((dir / "faces.csv").string());
  VLBIAS_CHECK(t.rows > 0, InputError,
               "{}: has no face; expected at least one face to label (the faces run found none).",
               t.source);
  const Column& image = t.column("image");
  const Column& chip = t.column("chip");
  const std::vector<double>& face = t.numeric("face");
  LabelItems items;
  items.faces = true;
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::size_t line = t.line_of_row.empty() ? r + 2 : t.line_of_row[r];
    VLBIAS_CHECK(face[r] >= 0 && face[r] == std::floor(face[r]) && face[r] < 1e9, InputError,
                 "{}, line {}: face {} is not a face index (a whole number >= 0).", t.source, line,
                 face[r]);
    VLBIAS_CHECK(!chip.missing(r), InputError,
                 "{}, line {}: the face has no chip (a faces run with --no-chips or --no-detect); "
                 "label the images themselves (--images TABLE) or run `vlbias faces` with chips.",
                 t.source, line);
    items.path.push_back(run_input_file(dir, chip.text(r), "a face chip").string());
    items.image.push_back(image.text(r));
    items.face.push_back(static_cast<std::size_t>(face[r]));
  }
  return items;
}

// One item decoded as `vlbias encode` decodes it (Pillow's rule for --max-image-pixels).
RgbImage decode_label_item(const LabelItems& items, std::size_t k, std::size_t max_image_pixels,
                           bool exif_transpose) {
  const std::string& shown = items.image[k];
  const std::size_t max = max_image_pixels == 0 ? kPillowMaxImagePixels : max_image_pixels;
  const auto reserve = [&](std::size_t width, std::size_t height, std::size_t) {
    if (width * height > max) {
      warn(
          "{} has {} x {} pixels, more than --max-image-pixels {}; decoded anyway, as Pillow "
          "does up to twice that",
          shown, width, height, max);
    }
  };
  const DecodeOptions options{2 * max, exif_transpose};
  if (!items.table_images) return decode_image_file(items.path[k], options, reserve);
  const std::optional<std::string> cell = items.table_images->cell(k);
  VLBIAS_CHECK(cell.has_value(), InputError, "{}: the cell of column '{}' is null (no image bytes)",
               shown, items.table_images->bytes_column());
  return decode_image(std::span<const std::uint8_t>(
                          reinterpret_cast<const std::uint8_t*>(cell->data()), cell->size()),
                      items.path[k], options, reserve);
}

}  // namespace

LabelItems read_label_items(const fs::path& input, const std::string& column,
                            const fs::path& image_root) {
  if (is_faces_dir(input)) return read_label_faces(input);
  const JobItems j = load_job_items(input, column, image_root, true);
  LabelItems items;
  items.path = j.values;
  items.image = j.display;
  items.face.assign(j.values.size(), std::nullopt);
  items.table_images = j.table_images;
  return items;
}

void check_label_out(const fs::path& out) {
  VLBIAS_CHECK(!out.empty(), UsageError, "--out is empty; expected a path for LABELS.csv.");
  std::error_code ec;
  VLBIAS_CHECK(!fs::is_directory(out, ec), UsageError,
               "--out {}: is a folder; expected a file path for LABELS.csv.", out.string());
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  VLBIAS_CHECK(fs::is_directory(parent, ec), UsageError, "--out {}: the folder {} does not exist.",
               out.string(), parent.string());
}

DecodedLabelItems decode_label_items(const LabelItems& items, std::size_t begin, std::size_t end,
                                     std::size_t max_image_pixels, bool exif_transpose,
                                     LabelRunCounts& counts) {
  const std::size_t n = end - begin;
  std::vector<RgbImage> images(n);
  std::vector<std::string> errors(n);
  parallel_for(n, [&](std::size_t i) {
    const std::size_t k = begin + i;
    if (items.path[k].empty()) {
      errors[i] = "the path cell is empty";
      return;
    }
    try {
      images[i] = decode_label_item(items, k, max_image_pixels, exif_transpose);
    } catch (const Error& e) {
      errors[i] = e.what();
    } catch (const std::bad_alloc&) {
      errors[i] = "out of memory while decoding the image";
    }
  });
  DecodedLabelItems good;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = begin + i;
    if (errors[i].empty()) {
      good.images.push_back(std::move(images[i]));
      good.items.push_back(k);
      continue;
    }
    ++counts.failed;
    warn("{}{}: {}; skipped", items.image[k],
         items.face[k] ? fmt::format(" (face {})", *items.face[k]) : "", errors[i]);
  }
  return good;
}

void append_label_rows(const LabelItems& items, std::size_t k, const LabelsSchema& schema,
                       const std::vector<std::vector<double>>& probabilities, double margin,
                       std::vector<LabelRow>& rows) {
  for (std::size_t a = 0; a < probabilities.size(); ++a) {
    LabelRow row;
    row.image = items.image[k];
    row.face = items.face[k];
    row.attribute = a;
    double gap = 0.0;
    row.label = label_from_probabilities(probabilities[a], schema.classes[a], margin, gap);
    row.probabilities = probabilities[a];
    rows.push_back(std::move(row));
  }
}

}  // namespace vlbias::labels_internal
