// `vlbias encode`: native CLIP embeddings of images or texts; `vlbias features`: image features of
// any image model (CLIP, the FID Inception-v3, DINOv2). One job behind both (no Python at run
// time).
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/models/image_model.h"

namespace vlbias::cli_internal {

namespace {

struct EncodeArgs {
  std::string model, images, texts, column, image_root, out, crop, text_cleaning;
  std::string preprocess, output = "pool3", positions = "scale-factor", shard;
  bool raw = false, normalize = false, resume = false, fail_on_error = false,
       exif_transpose = false;
  std::size_t batch = 0, chunk = 0, max_image_pixels = kPillowMaxImagePixels, image_size = 0;
  unsigned decode_threads = 0;
};

// The options `encode` and `features` share: the job's input, output, resume and resources.
void add_job_options(CLI::App* cmd, EncodeArgs& args) {
  cmd->add_option("--column", args.column,
                  "The path / text column (default: path / text); of a Parquet --images table,\n"
                  "a column of image bytes (Hugging Face's Image struct or a binary column;\n"
                  "default: image when it is one) is read in place, items named T.parquet#ROW");
  cmd->add_option("--image-root", args.image_root,
                  "Folder that relative paths resolve against (default: the table's folder)");
  cmd->add_option("--out", args.out, "Output (.npy or .safetensors)")->required();
  cmd->add_flag("--resume", args.resume, "Continue an interrupted run from OUT.partial/");
  add_shard_option(cmd, args.shard, "checkpoint chunks c (--chunk items each) with c mod N = I");
  cmd->add_flag("--fail-on-error", args.fail_on_error,
                "Stop at the first unreadable image or text instead of recording it");
  cmd->add_option("--batch", args.batch,
                  "Items per forward pass (default 32 images for CLIP and DINOv2, 16 for the\n"
                  "Inception, 256 texts)");
  cmd->add_option("--chunk", args.chunk, "Items per checkpoint (default 256 images, 4096 texts)");
  cmd->add_option("--decode-threads", args.decode_threads,
                  "Image decoding threads running ahead of inference, 0 to 256 (default 0: half\n"
                  "the cores; never more than the images)");
  cmd->add_option("--max-image-pixels", args.max_image_pixels,
                  "Pillow's MAX_IMAGE_PIXELS rule: images over twice this are refused, over it\n"
                  "warned; all decoding threads together hold at most 6 bytes per pixel of it")
      ->capture_default_str();
  cmd->add_flag("--exif-transpose", args.exif_transpose,
                "Rotate / flip each image by its EXIF orientation as PIL.ImageOps.exif_transpose\n"
                "(Hugging Face's load_image does); default: ignored, as PIL.Image.open");
}

EncodeJobOptions job_options(const EncodeArgs& args, EncodeKind kind) {
  EncodeJobOptions o;
  o.kind = kind;
  o.model_dir = args.model;
  o.input = kind == EncodeKind::Images ? args.images : args.texts;
  o.column = args.column;
  o.image_root = args.image_root;
  std::string out = args.out;
  o.shard = shard_and_out(args.shard, out, false);
  o.out = out;
  o.resume = args.resume;
  o.fail_on_error = args.fail_on_error;
  o.batch = args.batch;
  o.chunk = args.chunk;
  o.decode_threads = args.decode_threads;
  o.max_image_pixels = args.max_image_pixels;
  o.exif_transpose = args.exif_transpose;
  if (!args.crop.empty()) o.encoder.crop_rounding = parse_crop_rounding(args.crop);
  if (!args.preprocess.empty()) {
    VLBIAS_CHECK(o.kind == EncodeKind::Images, UsageError,
                 "--preprocess applies to images; texts are tokenized.");
    ImageModelOptions m;
    set_image_preprocess(m, detect_image_model(o.model_dir), args.preprocess);
    o.fid_preprocess = m.fid;
    o.dinov2_resize = m.dinov2_resize;
  }
  o.inception_output = parse_inception_output(args.output);
  o.image_size = args.image_size;
  o.dinov2_positions = parse_dinov2_positions(args.positions);
  return o;
}

void print_encode_summary(const EncodeJobOptions& o, const EncodeJobResult& r) {
  if (quiet()) return;
  eprint("vlbias: encoded {} of {} {}{} in {:.1f} s ({:.1f}/s){} -> {} ({})\n", r.encoded, r.items,
         o.kind == EncodeKind::Images ? "images" : "texts",
         o.shard.whole() ? "" : fmt::format(" (shard {} of {})", o.shard.index, o.shard.count),
         r.seconds, static_cast<double>(r.items - r.resumed) / std::max(r.seconds, 1e-9),
         r.resumed ? fmt::format(", {} resumed", r.resumed) : "", o.out.string(),
         r.manifest.string());
}

}  // namespace

void add_image_table_options(CLI::App* cmd, std::string& column, std::string& image_root) {
  cmd->add_option("--column", column,
                  "The path column of the table (default: path), or of a Parquet table a column\n"
                  "of image bytes read in place (default: image when it is one), as `vlbias\n"
                  "encode --column` reads it");
  cmd->add_option("--image-root", image_root,
                  "Folder that relative paths resolve against (default: the table's folder)");
}

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
                                 "A table with a path column, a Parquet table (or folder of\n"
                                 "shards) with the images inside (--column), or a folder of\n"
                                 ".jpg/.jpeg/.png (searched recursively, sorted)");
  auto* texts = cmd->add_option("--texts", args->texts, "A table with a text column");
  images->excludes(texts);
  cmd->add_flag("--raw", args->raw, "Write the projected embeddings without L2 normalisation");
  cmd->add_option("--crop", args->crop,
                  "Center-crop offset rounding: floor (Hugging Face) or round (torchvision);\n"
                  "default: the model folder's convention");
  cmd->add_option("--text-cleaning", args->text_cleaning,
                  "hf (NFC, whitespace, lower) or open_clip (ftfy-style fixes, HTML unescape);\n"
                  "default: the model folder's convention");
  add_job_options(cmd, *args);
  cmd->callback([args] {
    VLBIAS_CHECK(!args->images.empty() || !args->texts.empty(), UsageError,
                 "vlbias encode needs --images or --texts.");
    EncodeJobOptions o =
        job_options(*args, args->images.empty() ? EncodeKind::Texts : EncodeKind::Images);
    o.normalize = !args->raw;
    if (!args->text_cleaning.empty()) {
      o.encoder.text_cleaning = parse_text_cleaning(args->text_cleaning);
    }
    print_encode_summary(o, run_encode_job(o));
  });
}

void add_features_command(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "features",
      "Image features for FID, KID, PRDC and Vendi: the FID Inception-v3 (pool3, 2048-d),\n"
      "DINOv2 (CLS, FD_DINOv2) or CLIP's image tower, not normalised unless asked; with a\n"
      "manifest and a rows file beside the output; resumable");
  cmd->add_option("--model", args->model,
                  "The FID Inception-v3's weights (a .safetensors file, or a folder with\n"
                  "model.safetensors), a DINOv2 folder (config.json + model.safetensors +\n"
                  "preprocessor_config.json) or a CLIP folder")
      ->required();
  cmd->add_option("--images", args->images,
                  "A table with a path column, a Parquet table (or folder of shards) with the\n"
                  "images inside (--column), or a folder of .jpg/.jpeg/.png (searched\n"
                  "recursively, sorted)")
      ->required();
  cmd->add_option("--preprocess", args->preprocess,
                  "Inception: pytorch-fid (default: torch's bilinear resize to 299, 2x - 1) or\n"
                  "clean-fid (Pillow's bicubic on float channels, (x - 128) / 128); DINOv2:\n"
                  "processor (default: the folder's preprocessor_config.json), dgm-eval\n"
                  "(FD_DINOv2: Pillow bicubic to 224 x 224 without crop) or dgm-eval-clean\n"
                  "(the same on float channels)");
  cmd->add_option("--output", args->output,
                  "Inception: pool3 (FID, KID, PRDC), logits or logits-unbiased (the fc layer\n"
                  "without its bias: what the Inception Score's reference code reads)")
      ->capture_default_str();
  cmd->add_option("--image-size", args->image_size,
                  "DINOv2: resize the short side to and crop N x N (default: the folder's\n"
                  "preprocessor_config.json, 224)");
  cmd->add_option("--positions", args->positions,
                  "DINOv2: position embeddings resized as facebookresearch/dinov2 and FD_DINOv2\n"
                  "(scale-factor) or as current transformers (size)")
      ->capture_default_str();
  cmd->add_flag("--normalize", args->normalize, "L2-normalise every feature row");
  cmd->add_option("--crop", args->crop,
                  "CLIP: center-crop offset rounding, floor (Hugging Face) or round (torchvision)");
  add_job_options(cmd, *args);
  cmd->callback([args] {
    EncodeJobOptions o = job_options(*args, EncodeKind::Images);
    o.normalize = args->normalize;
    print_encode_summary(o, run_encode_job(o));
  });
}

}  // namespace vlbias::cli_internal
