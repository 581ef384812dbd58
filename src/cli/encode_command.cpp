// `vlbias encode`: native CLIP embeddings of images or texts (no Python at run time).
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/encode/encode.h"

namespace vlbias::cli_internal {

namespace {

struct EncodeArgs {
  std::string model, images, texts, column, image_root, out, crop, text_cleaning;
  bool raw = false, resume = false, fail_on_error = false, exif_transpose = false;
  std::size_t batch = 0, chunk = 0, max_image_pixels = kPillowMaxImagePixels;
  unsigned decode_threads = 0;
};

}  // namespace

void add_encode_command(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "encode",
      "CLIP embeddings of images or texts from a Hugging Face or open_clip model folder,\n"
      "L2-normalised, with a manifest and a rows file beside the output; resumable");
  cmd->add_option("--model", args->model,
                  "Model folder: config.json + model.safetensors (Hugging Face) or\n"
                  "open_clip_config.json + open_clip_model.safetensors; vocab.json + merges.txt")
      ->required();
  auto* images = cmd->add_option("--images", args->images,
                                 "A table with a path column, or a folder of .jpg/.jpeg/.png "
                                 "(searched recursively, sorted)");
  auto* texts = cmd->add_option("--texts", args->texts, "A table with a text column");
  images->excludes(texts);
  cmd->add_option("--column", args->column, "The path / text column (default: path / text)");
  cmd->add_option("--image-root", args->image_root,
                  "Folder that relative paths resolve against (default: the table's folder)");
  cmd->add_option("--out", args->out, "Output embeddings (.npy or .safetensors)")->required();
  cmd->add_flag("--raw", args->raw, "Write the projected embeddings without L2 normalisation");
  cmd->add_flag("--resume", args->resume, "Continue an interrupted run from OUT.partial/");
  cmd->add_flag("--fail-on-error", args->fail_on_error,
                "Stop at the first unreadable image or text instead of recording it");
  cmd->add_option("--crop", args->crop,
                  "Center-crop offset rounding: floor (Hugging Face) or round (torchvision);\n"
                  "default: the model folder's convention");
  cmd->add_option("--text-cleaning", args->text_cleaning,
                  "hf (NFC, whitespace, lower) or open_clip (ftfy-style fixes, HTML unescape);\n"
                  "default: the model folder's convention");
  cmd->add_option("--batch", args->batch, "Items per forward pass (default 32 images, 256 texts)");
  cmd->add_option("--chunk", args->chunk, "Items per checkpoint (default 256 images, 4096 texts)");
  cmd->add_option("--decode-threads", args->decode_threads,
                  "Image decoding threads running ahead of inference (default: half the cores)");
  cmd->add_option("--max-image-pixels", args->max_image_pixels,
                  "Pillow's MAX_IMAGE_PIXELS rule: images over twice this are refused, over it\n"
                  "warned; all decoding threads together hold at most 6 bytes per pixel of it")
      ->capture_default_str();
  cmd->add_flag("--exif-transpose", args->exif_transpose,
                "Rotate / flip each image by its EXIF orientation as PIL.ImageOps.exif_transpose\n"
                "(Hugging Face's load_image does); default: ignored, as PIL.Image.open");
  cmd->callback([args] {
    VLBIAS_CHECK(!args->images.empty() || !args->texts.empty(), UsageError,
                 "vlbias encode needs --images or --texts.");
    EncodeJobOptions o;
    o.kind = args->images.empty() ? EncodeKind::Texts : EncodeKind::Images;
    o.model_dir = args->model;
    o.input = o.kind == EncodeKind::Images ? args->images : args->texts;
    o.column = args->column;
    o.image_root = args->image_root;
    o.out = args->out;
    o.normalize = !args->raw;
    o.resume = args->resume;
    o.fail_on_error = args->fail_on_error;
    o.batch = args->batch;
    o.chunk = args->chunk;
    o.decode_threads = args->decode_threads;
    o.max_image_pixels = args->max_image_pixels;
    o.exif_transpose = args->exif_transpose;
    if (!args->crop.empty()) o.encoder.crop_rounding = parse_crop_rounding(args->crop);
    if (!args->text_cleaning.empty()) {
      o.encoder.text_cleaning = parse_text_cleaning(args->text_cleaning);
    }
    const EncodeJobResult r = run_encode_job(o);
    if (!quiet()) {
      fmt::print(stderr, "vlbias: encoded {} of {} {} in {:.1f} s ({:.1f}/s){} -> {} ({})\n",
                 r.encoded, r.items, o.kind == EncodeKind::Images ? "images" : "texts", r.seconds,
                 static_cast<double>(r.items - r.resumed) / std::max(r.seconds, 1e-9),
                 r.resumed ? fmt::format(", {} resumed", r.resumed) : "", args->out,
                 r.manifest.string());
    }
  });
}

}  // namespace vlbias::cli_internal
