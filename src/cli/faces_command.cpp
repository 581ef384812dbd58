// `vlbias faces`: who is in each image. Faces found by dlib's HOG detector (or given with
// --boxes), their 68 landmarks and FairFace-style aligned chips, into a folder of tables
// (include/vlbias/faces/faces_job.h); resumable and shardable as `vlbias encode`.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/core/terminal.h"
#include "vlbias/faces/faces_job.h"

namespace vlbias::cli_internal {

namespace {

struct FacesArgs {
  std::string images, column, image_root, out, boxes, shard, skin_tone = "corrected";
  std::string detector = "dlib-hog";
  std::string predictor = kDebianShapePredictor;
  unsigned upsample = 1;
  double threshold = 0.0, padding = 0.25;
  std::size_t chips = 300, chunk = 0, max_image_pixels = kPillowMaxImagePixels;
  bool no_chips = false, resume = false, exif_transpose = false, no_detect = false;
};

void add_faces_options(CLI::App* cmd, FacesArgs& a) {
  cmd->add_option("--images", a.images,
                  "A table with a path column, a Parquet table with the images inside, or a\n"
                  "folder of .jpg/.jpeg/.png (searched recursively, sorted), as `vlbias encode\n"
                  "--images` reads it")
      ->required();
  cmd->add_option("--out", a.out,
                  "The faces folder (new or empty): faces.csv, images.csv, no_faces.csv,\n"
                  "chips/, manifest.json")
      ->required();
  add_image_table_options(cmd, a.column, a.image_root);
  CLI::Option* upsample =
      cmd->add_option("--upsample", a.upsample,
                      "Double the image this many times before detection, 0 to 3 (dlib's\n"
                      "upsample_num_times): faces down to 80, 40, 20, 10 pixels are found")
          ->capture_default_str();
  CLI::Option* threshold =
      cmd->add_option("--threshold", a.threshold,
                      "dlib's adjust_threshold: higher keeps fewer, surer faces")
          ->capture_default_str();
  CLI::Option* detector =
      cmd->add_option("--detector", a.detector,
                      "The face detector: dlib-hog (dlib's HOG frontal face detector and its own\n"
                      "weights), the only one built in; for another, --boxes")
          ->check(CLI::IsMember({"dlib-hog"}))
          ->capture_default_str();
  CLI::Option* boxes =
      cmd->add_option(
             "--boxes", a.boxes,
             "Face boxes from another detector instead (a table: image, x, y, w, h[, score];\n"
             "image as --images names it); landmarks and chips come from these boxes")
          ->excludes(upsample)
          ->excludes(threshold)
          ->excludes(detector);
  cmd->add_option("--predictor", a.predictor,
                  "dlib shape predictor file (68 points, Debian's libdlib-data; or dlib's\n"
                  "5-point model, FairFace's)")
      ->capture_default_str();
  CLI::Option* chips =
      cmd->add_option("--chips", a.chips,
                      "Side of the aligned face chips in pixels, 32 to 2048 (FairFace: 300)")
          ->capture_default_str();
  cmd->add_option("--padding", a.padding,
                  "Chip padding around the face, a fraction of its size (FairFace: 0.25)")
      ->capture_default_str();
  CLI::Option* no_chips =
      cmd->add_flag("--no-chips", a.no_chips, "Write no chips (boxes and landmarks only)")
          ->excludes(chips);
  cmd->add_flag("--no-detect", a.no_detect,
                "Detect nothing: each image is one face, its box the whole image (images that\n"
                "are already face crops; HEIM's whole-image skin tone); no landmarks or chips")
      ->excludes(upsample)
      ->excludes(threshold)
      ->excludes(detector)
      ->excludes(boxes)
      ->excludes(chips)
      ->excludes(no_chips);
  cmd->add_option("--skin-tone", a.skin_tone,
                  "Skin tone per face (Monk scale and ITA, on its chip, else its box): corrected\n"
                  "(RGB mean vs RGB tones), heim (HEIM's published code: BGR mean vs RGB tones,\n"
                  "bit for bit), or none; --skin-tone alone is corrected")
      ->expected(0, 1)
      ->default_str("corrected")
      ->check(CLI::IsMember({"corrected", "heim", "none"}))
      ->capture_default_str();
  cmd->add_flag("--exif-transpose", a.exif_transpose,
                "Rotate / flip each image by its EXIF orientation as PIL.ImageOps.exif_transpose\n"
                "(boxes and landmarks are then in the rotated image); default: ignored");
  cmd->add_flag("--resume", a.resume, "Continue an interrupted run from OUT/.partial/");
  add_shard_option(cmd, a.shard, "checkpoint chunks c (--chunk images each) with c mod N = I");
  cmd->add_option("--chunk", a.chunk, "Images per checkpoint (default 64)");
  cmd->add_option("--max-image-pixels", a.max_image_pixels,
                  "Pillow's MAX_IMAGE_PIXELS rule: images over twice this are refused (also\n"
                  "once upsampled), over it warned")
      ->capture_default_str();
}

FacesJobOptions faces_job_options(const FacesArgs& a) {
  FacesJobOptions o;
  o.input = a.images;
  o.column = a.column;
  o.image_root = a.image_root;
  std::string out = a.out;
  o.shard = shard_and_out(a.shard, out, true);
  o.out = out;
  o.boxes = a.boxes;
  o.resume = a.resume;
  o.exif_transpose = a.exif_transpose;
  o.chunk = a.chunk;
  o.max_image_pixels = a.max_image_pixels;
  o.detector.predictor = a.predictor;
  o.detector.upsample = a.upsample;
  o.detector.threshold = a.threshold;
  o.detector.chip_size = a.no_chips || a.no_detect ? 0 : a.chips;
  o.whole_image = a.no_detect;
  if (a.skin_tone != "none") o.skin_tone = parse_skin_tone_mode(a.skin_tone);
  o.detector.chip_padding = a.padding;
  return o;
}

}  // namespace

void add_faces_command(CLI::App& app) {
  auto args = std::make_shared<FacesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "faces",
      "Faces in images: dlib's HOG detector (or --boxes), 68 landmarks, FairFace-style\n"
      "aligned chips and skin tone (Monk scale, ITA); a faces table, per-image counts, the\n"
      "images without a face and a manifest; resumable and shardable as encode");
  add_faces_options(cmd, *args);
  cmd->callback([args] {
    const FacesJobOptions o = faces_job_options(*args);
    const FacesJobResult r = run_faces_job(o);
    if (quiet()) return;
    eprint(
        "vlbias: {} faces in {} of {} images{} ({} without a face, {} unreadable) in {:.1f} s "
        "({:.1f} images/s){} -> {}\n",
        r.faces, r.ok - r.no_face, r.images,
        o.shard.whole() ? "" : fmt::format(" (shard {} of {})", o.shard.index, o.shard.count),
        r.no_face, r.failed, r.seconds,
        static_cast<double>(r.images - r.resumed) / std::max(r.seconds, 1e-9),
        r.resumed ? fmt::format(", {} resumed", r.resumed) : "", o.out.string());
  });
}

}  // namespace vlbias::cli_internal
