// `vlbias label`: perceived attributes per image or face into LABELS.csv (issue 41;
// include/vlbias/labels/labels_table.h). The clip labeller: zero-shot prompts of a shipped or
// given prompt set (include/vlbias/labels/clip_labels.h).
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/encode/image.h"
#include "vlbias/labels/clip_labels.h"

namespace vlbias::cli_internal {

namespace {

struct LabelArgs {
  std::string images, column, image_root, out, model, labeller = "clip", prompts = "fairface";
  std::vector<std::string> attributes;
  double margin = 0.0;
  std::size_t batch = 32, max_image_pixels = kPillowMaxImagePixels;
  bool exif_transpose = false;
};

void add_label_options(CLI::App* cmd, LabelArgs& a) {
  cmd->add_option("--images", a.images,
                  "A table with a path column, a folder of .jpg/.jpeg/.png (as `vlbias encode\n"
                  "--images`), or a FACES_DIR of `vlbias faces` (each face's chip is labelled)")
      ->required();
  cmd->add_option("--out", a.out, "LABELS.csv: one row per image (or face) and attribute")
      ->required();
  cmd->add_option("--labeller", a.labeller, "Who labels: clip (CLIP zero-shot prompts)")
      ->check(CLI::IsMember({"clip"}))
      ->capture_default_str();
  cmd->add_option("--model", a.model,
                  "A CLIP model folder (Hugging Face or open_clip layout, with its tokenizer)")
      ->required();
  cmd->add_option("--attributes", a.attributes,
                  "Attributes of the prompt set to label, comma-separated (fairface: gender,\n"
                  "race, race4, age; heim: gender; dalleval: gender, race)")
      ->delimiter(',')
      ->required();
  cmd->add_option("--prompts", a.prompts,
                  "A shipped prompt set (fairface, heim, dalleval) or a JSON file of your own\n"
                  "(docs/methods.md#clip-zero-shot-labels)")
      ->capture_default_str();
  cmd->add_option("--margin", a.margin,
                  "Abstain (label unclear) when the top two probabilities differ by less;\n"
                  "0 never abstains")
      ->capture_default_str();
  cmd->add_option("--column", a.column, "The path column of the table (default: path)");
  cmd->add_option("--image-root", a.image_root,
                  "Folder that relative paths resolve against (default: the table's folder)");
  cmd->add_option("--batch", a.batch, "Images per forward pass")->capture_default_str();
  cmd->add_option("--max-image-pixels", a.max_image_pixels,
                  "Pillow's MAX_IMAGE_PIXELS rule: images over twice this are refused, over it\n"
                  "warned")
      ->capture_default_str();
  cmd->add_flag("--exif-transpose", a.exif_transpose,
                "Rotate / flip each image by its EXIF orientation as PIL.ImageOps.exif_transpose");
}

}  // namespace

void add_label_command(CLI::App& app) {
  auto args = std::make_shared<LabelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "label",
      "Perceived attributes (gender, race, age, ...) per image or face into LABELS.csv: CLIP\n"
      "zero-shot prompt ensembles with their provenance (model, weights SHA-256, prompt set)");
  add_label_options(cmd, *args);
  cmd->callback([args] {
    const LabelArgs& a = *args;
    ClipLabelOptions o;
    o.input = a.images;
    o.column = a.column;
    o.image_root = a.image_root;
    o.model = a.model;
    o.prompts = a.prompts;
    o.attributes = a.attributes;
    o.margin = a.margin;
    o.out = a.out;
    o.batch = a.batch;
    o.max_image_pixels = a.max_image_pixels;
    o.exif_transpose = a.exif_transpose;
    const ClipLabelResult r = run_clip_labels(o);
    if (quiet()) return;
    eprint("vlbias: {} of {} {} labelled ({} unreadable, skipped), {} rows in {:.1f} s -> {}\n",
           r.labelled, r.items, r.faces ? "faces" : "images", r.failed, r.rows, r.seconds,
           o.out.string());
  });
}

}  // namespace vlbias::cli_internal
