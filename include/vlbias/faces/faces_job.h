#pragma once
// The job behind `vlbias faces` (src/faces/faces_job.cpp): every image of a table or folder
// through a FaceDetector, into a folder of tables, chips and a manifest; resumable and shardable
// as `vlbias encode` is (the same item listing, unreadable-image rule, chunks and shards).
//
// FACES_DIR/
//   faces.csv      one row per face, in input order then face order: input_row, image, face
//                  (0-based, per image), x, y, w, h (pixels of the image as decoded, after
//                  --exif-transpose), score (the detector's confidence, or the one given with
//                  the box; empty when none), landmarks (the predictor's points as one cell of
//                  2 N whole numbers "x0 y0 x1 y1 ...", N = 68 or 5, in the predictor's order),
//                  chip (its path under FACES_DIR, empty without chips), then with skin_tone
//                  the skin-tone columns (below), then any columns the face_columns hook adds
//   images.csv     one row per image: input_row, image, status (ok | failed), faces (empty when
//                  failed), width, height (as decoded), error (why it failed)
//   no_faces.csv   input_row, image: the images read without a face (the no-face rate is itself
//                  a measurement, reported per group downstream)
//   chips/         <input row, 6 digits>_<file stem, [A-Za-z0-9._-] only>_<face>.png
//   manifest.json  written last: detector, predictor SHA-256, options, counts, vlbias version
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/encode/image/image.h"
#include "vlbias/faces/face_detect.h"
#include "vlbias/faces/skin_tone.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/shard.h"

namespace vlbias {

// Per-face columns computed by the caller (the skin tone of a face from its chip): called
// once for every face with the decoded image and the face (box, landmarks, chip); each key
// set in `columns` becomes a faces.csv column after the fixed ones (numbers as numbers, strings
// as text, null as an empty cell). Called from several threads at once.
using FaceColumnsHook =
    std::function<void(const RgbImage& image, const DetectedFace& face, Json& columns)>;

struct FacesJobOptions {
  // A table (.csv/.tsv/.jsonl) with a path column, or a folder scanned recursively for
  // .jpg/.jpeg/.png: what `vlbias encode --images` reads (load_job_items).
  std::filesystem::path input;
  std::string column;                // default "path"
  std::filesystem::path image_root;  // relative paths resolve here, else the table's folder
  std::filesystem::path out;         // FACES_DIR: new or empty, or an interrupted run (resume)
  FaceDetectorOptions detector;
  // A detector already loaded (the predictor read once for many jobs); its options must equal
  // `detector` (UsageError otherwise). None: the job loads one from `detector`.
  std::shared_ptr<const FaceDetector> loaded_detector;
  // Precomputed boxes instead of the HOG detector: a table with columns image (as the input
  // names it: the path cell, or the path under the folder), x, y, w, h (pixels, rounded to whole
  // pixels) and optionally score. Every row must name an image of the input; an image without
  // rows has no face.
  std::filesystem::path boxes;
  bool resume = false;
  bool exif_transpose = false;  // as `vlbias encode --exif-transpose`
  // Pillow's rule (as encode): more than twice this is refused, more warns; the decoding and
  // detection of all threads together hold about 6 bytes a pixel of it (MemoryBudget).
  std::size_t max_image_pixels = kPillowMaxImagePixels;
  std::size_t chunk = 0;  // images per checkpoint (0: 64); the unit of shards
  Shard shard;
  // No detection (--no-detect): every image read is one face whose box is the whole image, with
  // no score, landmarks or chip (chip_size must be 0), and no predictor is loaded. For images
  // that are already face crops, and for HEIM's whole-image skin tone.
  bool whole_image = false;
  // Skin tone per face (include/vlbias/faces/skin_tone.h), measured on the face's chip when
  // chips are made, else on its box (clipped to the image; the whole image with whole_image).
  // Columns: skin_examined, skin_pixels (counts), skin_r, skin_g, skin_b (the mean skin colour,
  // RGB in both modes), monk (1..10), monk_l1, ita (degrees), ita_category; the last seven
  // empty when the region holds no skin pixel (unknown, never a tone).
  std::optional<SkinToneMode> skin_tone;
  FaceColumnsHook face_columns;
  Json face_columns_spec;  // what the hook computes, for the manifest and the resume check
};

struct FacesJobResult {
  std::size_t images = 0;   // images of this process (its shard)
  std::size_t ok = 0;       // read, with or without faces
  std::size_t failed = 0;   // unreadable or refused
  std::size_t no_face = 0;  // read, no face
  std::size_t faces = 0;
  std::size_t resumed = 0;  // images taken from an earlier run's checkpoints
  double seconds = 0.0;
  std::filesystem::path manifest;
};

// Runs the job. Progress lives in FACES_DIR/.partial/ (a chunk's results, written when the
// chunk is done), so a killed run loses at most one chunk; the tables and the manifest appear
// when every image is done. UsageError, before any work, for a FACES_DIR that is a file, holds
// a finished run or other files, or holds an interrupted run without `resume` (or one of other
// inputs or options with it); InputError for an unreadable input or boxes table. An image that
// cannot be read, decoded or searched is listed with its reason (images.csv, a warning) and
// the job goes on. The output does not depend on the thread count.
FacesJobResult run_faces_job(const FacesJobOptions& options);

struct FacesMergeResult {
  std::size_t shards = 0, images = 0, faces = 0, failed = 0;
  std::filesystem::path manifest;
};

// `vlbias merge OUT SHARD...` for faces shards: each SHARD is a shard's FACES_DIR (or its
// manifest.json). Checks that they are shards 0..N-1 of one job (the same input, detector and
// options; UsageError naming the shard that differs), each once, that each shard's tables are
// the ones it wrote (their SHA-256 in its manifest) and hold exactly its chunks' images; then
// writes OUT as one process writes it: the tables byte for byte and the chips copied (the
// manifest differs in its times and lists the shards under "merged_from"). OUT must be new or
// empty and apart from the shards.
FacesMergeResult merge_faces_shards(const std::filesystem::path& out,
                                    const std::vector<std::filesystem::path>& shards);

}  // namespace vlbias
