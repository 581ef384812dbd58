// `vlbias label --labeller clip`: the inputs checked (model, prompts, attributes, images or a
// FACES_DIR, --out), the prompts encoded once, then every readable image or face chip labelled in
// input order, batch by batch (include/vlbias/labels/clip_labels.h).
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "label_items.h"
#include "label_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/models/image_model.h"
#include "vlbias/labels/clip_labels.h"
#include "vlbias/labels/labels_table.h"

namespace vlbias {

namespace fs = std::filesystem;

namespace {

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

struct LabelRun {
  const ClipLabelOptions& o;
  const ClipEncoder& encoder;
  const ClipZeroShot& zero_shot;
  const labels_internal::LabelItems& items;
  const LabelsSchema& schema;
};

// Items [begin, end): decoded in parallel, encoded in one forward, their rows appended.
void label_batch(const LabelRun& run, std::size_t begin, std::size_t end,
                 std::vector<LabelRow>& rows, LabelRunCounts& result) {
  const labels_internal::DecodedLabelItems good = labels_internal::decode_label_items(
      run.items, begin, end, run.o.max_image_pixels, run.o.exif_transpose, result);
  if (good.images.empty()) return;
  const Matrix e = run.encoder.encode_images(good.images, false);
  for (std::size_t g = 0; g < good.images.size(); ++g) {
    labels_internal::append_label_rows(
        run.items, good.items[g], run.schema,
        clip_zero_shot_probabilities(run.zero_shot, e.row(g), e.cols), run.o.margin, rows);
    ++result.labelled;
  }
}

}  // namespace

ClipLabelResult run_clip_labels(const ClipLabelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  VLBIAS_CHECK(std::isfinite(o.margin) && o.margin >= 0.0 && o.margin <= 1.0, UsageError,
               "--margin {}: expected a probability gap in [0, 1] (0: never abstain).", o.margin);
  VLBIAS_CHECK(o.batch >= 1, UsageError, "--batch 0: expected at least one image per forward.");
  labels_internal::check_label_out(o.out);
  const LabelPromptSet set = load_label_prompt_set(o.prompts);
  const std::vector<LabelAttribute> attributes = select_label_attributes(set, o.attributes);
  const ClipEncoder encoder = open_label_model(o.model);
  const labels_internal::LabelItems items =
      labels_internal::read_label_items(o.input, o.column, o.image_root);

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

  const LabelRun run{o, encoder, zero_shot, items, schema};
  const labels_internal::LabelJobSpec spec{items, schema, provenance, o.input,
                                           o.out, o.job,  o.batch};
  ClipLabelResult result = labels_internal::run_label_job(
      spec,
      [&](std::size_t begin, std::size_t end, std::vector<LabelRow>& rows, LabelRunCounts& counts) {
        for (std::size_t b = begin; b < end; b += o.batch) {
          label_batch(run, b, std::min(end, b + o.batch), rows, counts);
        }
      });
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace vlbias
