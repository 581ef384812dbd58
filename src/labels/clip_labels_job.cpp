// `vlbias label --labeller clip`: the inputs checked (model, prompts, attributes, images or a
// FACES_DIR, --out), the prompts encoded once, then every readable image or face chip labelled in
// input order, batch by batch (include/vlbias/labels/clip_labels.h).
#include <chrono>
#include <cmath>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image_model.h"
#include "vlbias/encode/job_items.h"
#include "vlbias/io/run_paths.h"
#include "vlbias/io/table.h"
#include "vlbias/labels/clip_labels.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

// What is labelled: images of a table or folder, or the face chips of a FACES_DIR.
struct LabelItems {
  std::vector<std::string> path;                 // the file decoded ("" when the cell is empty)
  std::vector<std::string> image;                // LABELS.csv's image cell
  std::vector<std::optional<std::size_t>> face;  // LABELS.csv's face cell
  bool faces = false;
};

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

LabelItems read_label_items(const ClipLabelOptions& o) {
  if (is_faces_dir(o.input)) return read_label_faces(o.input);
  const JobItems j = load_job_items(o.input, o.column, o.image_root, true);
  LabelItems items;
  items.path = j.values;
  items.image = j.display;
  items.face.assign(j.values.size(), std::nullopt);
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

ClipEncoder open_label_model(const fs::path& model) {
  const ImageModelKind kind = detect_image_model(model);
  VLBIAS_CHECK(kind == ImageModelKind::Clip, UsageError,
               "--model {}: is a {} model; the clip labeller needs a CLIP model (config.json of a "
               "CLIP model with model.safetensors, or open_clip_config.json).",
               model.string(), image_model_kind_name(kind));
  ClipEncoder encoder = ClipEncoder::open(model);
  encoder.tokenizer();  // InputError naming the missing tokenizer files, before any image
  return encoder;
}

// One item decoded as `vlbias encode` decodes it (Pillow's rule for --max-image-pixels).
RgbImage decode_label_item(const ClipLabelOptions& o, const std::string& path,
                           const std::string& shown) {
  const std::size_t max = o.max_image_pixels == 0 ? kPillowMaxImagePixels : o.max_image_pixels;
  const auto reserve = [&](std::size_t width, std::size_t height, std::size_t) {
    if (width * height > max) {
      warn(
          "{} has {} x {} pixels, more than --max-image-pixels {}; decoded anyway, as Pillow "
          "does up to twice that",
          shown, width, height, max);
    }
  };
  return decode_image_file(path, DecodeOptions{2 * max, o.exif_transpose}, reserve);
}

struct LabelRun {
  const ClipLabelOptions& o;
  const ClipEncoder& encoder;
  const ClipZeroShot& zero_shot;
  const LabelItems& items;
  const LabelsSchema& schema;
};

// Items [begin, end): decoded in parallel, encoded in one forward, their rows appended.
void label_batch(const LabelRun& run, std::size_t begin, std::size_t end,
                 std::vector<LabelRow>& rows, ClipLabelResult& result) {
  const std::size_t n = end - begin;
  std::vector<RgbImage> images(n);
  std::vector<std::string> errors(n);
  parallel_for(n, [&](std::size_t i) {
    const std::size_t k = begin + i;
    if (run.items.path[k].empty()) {
      errors[i] = "the path cell is empty";
      return;
    }
    try {
      images[i] = decode_label_item(run.o, run.items.path[k], run.items.image[k]);
    } catch (const Error& e) {
      errors[i] = e.what();
    } catch (const std::bad_alloc&) {
      errors[i] = "out of memory while decoding the image";
    }
  });
  std::vector<RgbImage> good;
  std::vector<std::size_t> good_items;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = begin + i;
    if (errors[i].empty()) {
      good.push_back(std::move(images[i]));
      good_items.push_back(k);
      continue;
    }
    ++result.failed;
    warn("{}{}: {}; skipped", run.items.image[k],
         run.items.face[k] ? fmt::format(" (face {})", *run.items.face[k]) : "", errors[i]);
  }
  if (good.empty()) return;
  const Matrix e = run.encoder.encode_images(good, false);
  for (std::size_t g = 0; g < good.size(); ++g) {
    const std::vector<std::vector<double>> p =
        clip_zero_shot_probabilities(run.zero_shot, e.row(g), e.cols);
    for (std::size_t a = 0; a < p.size(); ++a) {
      LabelRow row;
      row.image = run.items.image[good_items[g]];
      row.face = run.items.face[good_items[g]];
      row.attribute = a;
      double gap = 0.0;
      row.label = label_from_probabilities(p[a], run.schema.classes[a], run.o.margin, gap);
      row.probabilities = p[a];
      rows.push_back(std::move(row));
    }
    ++result.labelled;
  }
}

}  // namespace

ClipLabelResult run_clip_labels(const ClipLabelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  VLBIAS_CHECK(std::isfinite(o.margin) && o.margin >= 0.0 && o.margin <= 1.0, UsageError,
               "--margin {}: expected a probability gap in [0, 1] (0: never abstain).", o.margin);
  VLBIAS_CHECK(o.batch >= 1, UsageError, "--batch 0: expected at least one image per forward.");
  check_label_out(o.out);
  const LabelPromptSet set = load_label_prompt_set(o.prompts);
  const std::vector<LabelAttribute> attributes = select_label_attributes(set, o.attributes);
  const ClipEncoder encoder = open_label_model(o.model);
  const LabelItems items = read_label_items(o);

  const float scale = encoder.model().config().logit_scale;
  const ClipZeroShot zero_shot = make_clip_zero_shot(encoder, attributes, scale);
  LabelsSchema schema;
  for (const LabelAttribute& a : attributes) {
    schema.attributes.push_back(a.name);
    schema.classes.emplace_back();
    for (const LabelClass& c : a.classes) schema.classes.back().push_back(c.name);
  }
  LabelsProvenance provenance;
  provenance.labeller = "clip";
  provenance.model = o.model.string();
  provenance.weights_sha256 = sha256_file(encoder.model().weights_path().string());
  provenance.prompt_set = set.id;
  provenance.options["margin"] = fmt::format("{}", o.margin);
  provenance.options["logit_scale"] = fmt::format("{}", scale);
  if (o.exif_transpose) provenance.options["exif_transpose"] = "true";

  ClipLabelResult result;
  result.items = items.path.size();
  result.faces = items.faces;
  std::vector<LabelRow> rows;
  const LabelRun run{o, encoder, zero_shot, items, schema};
  for (std::size_t begin = 0; begin < items.path.size(); begin += o.batch) {
    label_batch(run, begin, std::min(items.path.size(), begin + o.batch), rows, result);
  }
  result.rows = rows.size();
  write_labels_table(o.out, schema, provenance, rows);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace vlbias
