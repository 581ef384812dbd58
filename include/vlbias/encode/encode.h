#pragma once
// Native CLIP encoding (src/encode): a model directory opened with its tokenizer
// and image preprocessing (ClipEncoder), and the resumable job behind
// `vlbias encode` (run_encode_job).
//
// Model directories (detected from the files present):
//   Hugging Face  config.json, model.safetensors, vocab.json, merges.txt,
//                 preprocessor_config.json
//   open_clip     open_clip_config.json, open_clip_model.safetensors, vocab.json,
//                 merges.txt (the preprocessing is the config's preprocess_cfg)
// The tokenizer files are needed only for texts, the preprocessing only for images.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/clip_model.h"
#include "vlbias/encode/models/clip_tokenizer.h"
#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/encode/models/inception_model.h"
#include "vlbias/io/run/shard.h"

namespace vlbias {

struct ClipEncoderOptions {
  // Overrides of what the directory implies (HF: floor crop and HF text cleaning;
  // open_clip: torchvision round crop and open_clip's ftfy-style cleaning).
  std::optional<CropRounding> crop_rounding;
  std::optional<TextCleaning> text_cleaning;
};

// "floor" | "round"; "hf" | "open_clip" (UsageError otherwise).
CropRounding parse_crop_rounding(const std::string& name);
TextCleaning parse_text_cleaning(const std::string& name);

// A CLIP model directory ready to encode. Immutable after open(); the encode
// functions are const and may be called from one thread at a time (the model
// uses the pool and BLAS threads itself).
class ClipEncoder {
 public:
  // Loads the weights (InputError naming the directory and the missing file or
  // tensor) and, when present, the tokenizer and the preprocessing.
  static ClipEncoder open(const std::filesystem::path& dir, const ClipEncoderOptions& options = {});

  const ClipModel& model() const { return model_; }
  const std::filesystem::path& dir() const { return dir_; }
  // Throws InputError naming the missing files when the directory has no tokenizer.
  const ClipTokenizer& tokenizer() const;
  const ImagePreprocess& preprocess() const { return preprocess_; }

  // Token ids of one text ([SOT ... EOT], at most the model's context length).
  std::vector<std::int32_t> tokenize(std::string_view text) const;
  // The model's pixel tensor of a decoded image (3 x S x S floats, CHW) into `out`.
  void pixels(const RgbImage& image, float* out) const;
  // Floats per image tensor: 3 * image_size^2.
  std::size_t pixels_per_image() const;

  // n texts -> n x embed_dim; n decoded images -> n x embed_dim. Projected
  // embeddings, L2-normalised when `normalize`.
  Matrix encode_texts(const std::vector<std::string>& texts, bool normalize = true) const;
  Matrix encode_images(const std::vector<RgbImage>& images, bool normalize = true) const;

  // The model config, preprocessing and tokenizer as JSON, for manifests.
  nlohmann::ordered_json describe() const;

 private:
  explicit ClipEncoder(ClipModel model) : model_(std::move(model)) {}

  std::filesystem::path dir_;
  ClipModel model_;
  std::optional<ClipTokenizer> tokenizer_;
  std::string tokenizer_missing_;  // why there is no tokenizer
  ImagePreprocess preprocess_;
  std::string preprocess_source_;  // the file it came from, or "defaults"
  std::filesystem::path vocab_path_, merges_path_;
};

// ---------------------------------------------------------------- the job

enum class EncodeKind { Images, Texts };

struct EncodeJobOptions {
  EncodeKind kind = EncodeKind::Images;
  std::filesystem::path model_dir;
  // Images: a table (.csv/.tsv/.jsonl) with a path column, or a directory
  // scanned recursively for .jpg/.jpeg/.png (rows in byte order of the relative
  // path). Texts: a table with a text column.
  std::filesystem::path input;
  std::string column;  // default "path" (images) / "text" (texts)
  // Relative image paths resolve against this, else against the table's folder.
  std::filesystem::path image_root;
  // Output .npy or .safetensors (tensor "embeddings"). Beside it: <stem>.manifest.json
  // and <stem>.rows.csv (output row -> input row and item).
  std::filesystem::path out;
  bool normalize = true;
  // Continue an interrupted run from <out>.partial/ (same model, input and options).
  bool resume = false;
  // Abort at the first item that cannot be encoded instead of recording it.
  bool fail_on_error = false;
  std::size_t batch = 0;        // items per forward pass (0: 32 images / 256 texts)
  std::size_t chunk = 0;        // items per checkpoint (0: 256 images / 4096 texts)
  unsigned decode_threads = 0;  // image decoding workers (0: half the pool, at least 1; at most
                                // kMaxThreads, UsageError above; never more than the images)
  // Pillow's rule with N = PIL.Image.MAX_IMAGE_PIXELS: an image of more than 2 N pixels is
  // refused (recorded as failed, as DecompressionBombError), more than N warns. The decoding
  // workers together hold at most 6 N bytes of decode and resize buffers (an image needing
  // more is decoded alone), whatever decode_threads is. 1 to kMaxImagePixelsOption.
  std::size_t max_image_pixels = kPillowMaxImagePixels;
  // Apply each image's EXIF orientation as PIL.ImageOps.exif_transpose does (Hugging Face's
  // load_image does); off: ignored, as PIL.Image.open. See DecodeOptions::exif_transpose.
  bool exif_transpose = false;
  // One shard of the job (io/shard.h): the checkpoint chunks c with c mod count == index. The
  // output then holds only those rows (its rows file keeps their input rows) and its manifest
  // records the shard, the chunk and the batch; merge_encode_shards puts the shards together.
  Shard shard;
  ClipEncoderOptions encoder;
  // Images: the FID Inception's preprocessing, and DINOv2's input side (0: its processor's).
  FidPreprocess fid_preprocess = FidPreprocess::PytorchFid;
  InceptionOutput inception_output = InceptionOutput::Pool3;
  std::size_t image_size = 0;
  Dinov2Positions dinov2_positions = Dinov2Positions::ScaleFactor;
  Dinov2Resize dinov2_resize = Dinov2Resize::Processor;
};

// Largest --max-image-pixels accepted: 2^30 (images up to 2^31 pixels, 6 GiB as RGB).
inline constexpr std::size_t kMaxImagePixelsOption = std::size_t{1} << 30;

struct EncodeJobResult {
  std::size_t items = 0;    // input rows
  std::size_t encoded = 0;  // output rows
  std::size_t failed = 0;   // items recorded as failed (not in the output)
  std::size_t resumed = 0;  // items taken from an earlier run's checkpoints
  double seconds = 0.0;
  std::filesystem::path manifest, rows;
};

// Runs the job. The output, manifest and rows file appear (atomically) only when
// every item has been processed; until then progress lives in <out>.partial/ in
// chunks, so a killed run loses at most one chunk. Throws UsageError, before any
// work, when --out or a file beside it is a directory or not writable, when
// <out>.partial/ exists without `resume`, or holds a run of another model, input
// or options; InputError for unreadable inputs and, with fail_on_error, for the
// first bad item. A bad image or text otherwise is recorded (manifest "failed")
// with its error and left out of the output, with a warning. A resume hashes the
// images of finished chunks again and encodes the chunks of changed ones anew,
// naming them in a warning and in the manifest ("changed_since_checkpoint").
EncodeJobResult run_encode_job(const EncodeJobOptions& options);

// ---------------------------------------------------------------- merging shards

struct EncodeMergeResult {
  std::size_t shards = 0, items = 0, encoded = 0, failed = 0;
  std::filesystem::path manifest, rows;
};

// `vlbias merge OUT SHARD...` for encode / features shards: each SHARD is a shard's output
// folder (holding one *.manifest.json), its manifest, or its output or rows file (whose
// manifest beside it is read). Checks that the shards are one job (the same model, input,
// options, chunk and batch; UsageError naming the shard that differs), that they are shards
// 0..N-1 of N each once, that their rows are exactly their chunks of the input (none twice,
// none missing; the counts before anything is sized by them), that no shard file is a link or
// the same file as another's (check_shard_files), and that each shard's output and rows file
// are the ones it wrote and its rows sit at the input rows of their items (the SHA-256 records
// of its manifest's "shard"; a shard without them was written by an older vlbias); then writes OUT
// (.npy or .safetensors) with its .rows.csv and .manifest.json as one process with the same --chunk
// and --batch writes them: the embeddings and rows file byte for byte (the manifest differs in its
// times and lists the shards under "merged_from"). InputError for a shard whose files are missing
// or malformed.
EncodeMergeResult merge_encode_shards(const std::filesystem::path& out,
                                      const std::vector<std::filesystem::path>& shards);

}  // namespace vlbias
