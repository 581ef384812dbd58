// `vlbias explain`: class activation maps of a CLIP ViT for one trait pair (issue 40; paper 004,
// A.3), one map per image with the overlays of the most confident images per group
// (include/vlbias/explain/explain.h; docs/methods.md#clip-cam).
#include <cmath>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/explain/explain.h"

namespace vlbias::cli_internal {

namespace {

struct ExplainArgs {
  std::string model, images, column, image_root, manifest, pair, out, by, faces;
  std::string method = "gradcam";
  std::size_t top = 5, max_image_pixels = kPillowMaxImagePixels, bootstrap = 1000;
  std::uint64_t seed = 0;
  double logit_scale = 0.0;
  bool exif_transpose = false;
};

void add_explain_options(CLI::App* cmd, ExplainArgs& a) {
  cmd->add_option("--model", a.model,
                  "CLIP model folder with a ViT image tower, its tokenizer and preprocessing")
      ->required();
  cmd->add_option("--images", a.images,
                  "A table with a path column, a Parquet table with the images inside, or a\n"
                  "folder of .jpg/.jpeg/.png (searched recursively, sorted), as `vlbias encode\n"
                  "--images` reads it")
      ->required();
  cmd->add_option("--manifest", a.manifest,
                  "Prompt manifest with the trait pairs (`vlbias prompts trait-pairs`)")
      ->required();
  cmd->add_option("--pair", a.pair, "The trait pair, a dimension of the manifest (smart/dumb)")
      ->required();
  cmd->add_option("--out", a.out,
                  "The maps folder (new or empty): maps.npy, rows.csv, overlays/, manifest.json")
      ->required();
  cmd->add_option("--method", a.method, "gradcam | gradcam++ | occlusion")->capture_default_str();
  cmd->add_option("--top", a.top, "Overlays of the N most confident images per group")
      ->capture_default_str();
  cmd->add_option("--by", a.by,
                  "Group columns of the images table for the overlays (e.g. race,gender);\n"
                  "default: one group of all images");
  cmd->add_option("--faces", a.faces,
                  "A `vlbias faces` folder of the same images: rows.csv gets cam_in_face, the\n"
                  "share of each map's mass inside the image's face boxes, and cam_mass.json\n"
                  "compares it across the --by groups");
  cmd->add_option("--bootstrap", a.bootstrap,
                  "With --faces: resamples of cam_mass.json's interval of each group's mean\n"
                  "(0: none)")
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of those resamples")->capture_default_str();
  cmd->add_option("--logit-scale", a.logit_scale,
                  "s of the target (default: the model's exp(logit_scale), as CLIP)");
  add_image_table_options(cmd, a.column, a.image_root);
  cmd->add_flag("--exif-transpose", a.exif_transpose,
                "Rotate / flip each image by its EXIF orientation as PIL.ImageOps.exif_transpose");
  cmd->add_option("--max-image-pixels", a.max_image_pixels,
                  "Pillow's MAX_IMAGE_PIXELS rule: images over twice this are refused, over it "
                  "warned")
      ->capture_default_str();
}

ExplainOptions explain_options(const ExplainArgs& a) {
  ExplainOptions o;
  o.model = a.model;
  o.images = a.images;
  o.column = a.column;
  o.image_root = a.image_root;
  o.manifest = a.manifest;
  o.pair = a.pair;
  o.method = parse_cam_method(a.method);
  o.out = a.out;
  o.top = a.top;
  if (!a.by.empty()) o.by = split_list(a.by, "--by");
  VLBIAS_CHECK(a.logit_scale == 0.0 || (std::isfinite(a.logit_scale) && a.logit_scale > 0),
               UsageError, "--logit-scale {}: expected a finite number > 0.", a.logit_scale);
  o.logit_scale = a.logit_scale;
  o.max_image_pixels = a.max_image_pixels;
  o.exif_transpose = a.exif_transpose;
  o.faces = a.faces;
  o.bootstrap = a.bootstrap;
  o.seed = a.seed;
  return o;
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Class activation maps (GradCAM, GradCAM++, occlusion) of a CLIP ViT for one trait\n"
      "pair: a map per image, its probability of the first trait, and overlays of the most\n"
      "confident images per group");
  add_explain_options(cmd, *args);
  cmd->callback([args] {
    const ExplainOptions o = explain_options(*args);
    const ExplainResult r = run_explain(o);
    if (quiet()) return;
    eprint(
        "vlbias: {} maps ({}) of {} images ({} unreadable), {} overlays in {} group{} in "
        "{:.1f} s -> {}\n",
        r.explained, to_string(o.method), r.images, r.failed, r.overlays, r.groups,
        r.groups == 1 ? "" : "s", r.seconds, o.out.string());
  });
}

}  // namespace vlbias::cli_internal
