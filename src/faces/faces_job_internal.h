#pragma once
// Internal to the faces job (faces_job.cpp, faces_checkpoint.cpp, faces_tables.cpp,
// face_boxes.cpp, faces_merge.cpp): what one image gives, how it is kept in a checkpoint and
// how the tables are written from it.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/faces/face_detect.h"
#include "vlbias/faces/faces_job.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table/table.h"

namespace vlbias::faces_internal {

// One face as the tables show it.
struct FaceRecord {
  FaceBox box;
  std::optional<double> score;
  std::vector<FacePoint> landmarks;
  std::string chip;               // path under FACES_DIR ("" without chips)
  Json columns = Json::object();  // the face_columns hook's
};

// What became of one image.
struct ImageFaces {
  std::size_t row = 0;  // input row
  std::string sha256;   // of the file's bytes ("" when it could not be read)
  std::size_t width = 0, height = 0;
  std::string error;  // "" when it was read
  std::vector<FaceRecord> faces;
};

// Checkpoint and merge form of one image (every field; numbers exact).
Json image_faces_json(const ImageFaces& image);
// Back from image_faces_json; UsageError naming `where` when it is not one.
ImageFaces image_faces_from_json(const Json& j, const std::string& where);

// "chips/<row, 6 digits>_<stem>_<face>.png": the stem of the path as given, reduced to
// [A-Za-z0-9._-] (others become '_') and 40 bytes; "image" when nothing is left. The input row
// makes the name unique.
std::string chip_name(std::size_t row, const std::string& shown, std::size_t face);

// The three tables from the images of a job in input order (`images` sorted by row).
struct FacesTables {
  Table faces, images, no_faces;
};
FacesTables faces_tables(const std::vector<ImageFaces>& images,
                         const std::vector<std::string>& shown);

// The names of the files a run writes in FACES_DIR.
inline constexpr const char* kFacesCsv = "faces.csv";
inline constexpr const char* kImagesCsv = "images.csv";
inline constexpr const char* kNoFacesCsv = "no_faces.csv";
inline constexpr const char* kFacesManifest = "manifest.json";
inline constexpr const char* kChipsFolder = "chips";
inline constexpr const char* kFacesPartial = ".partial";
// A shard's records (image_faces_json per line, with "image": the path as given), what a merge
// rebuilds the tables from.
inline constexpr const char* kShardRecords = "shard_records.jsonl";

// FACES_DIR (or a merge's OUT) must be new, empty, or hold an interrupted run (.partial/ and
// its chips): UsageError naming what is in the way.
void check_faces_out(const std::filesystem::path& out);

void write_shard_records(const std::filesystem::path& path, const std::vector<ImageFaces>& images,
                         const std::vector<std::string>& shown);

// Writes the tables into `dir`, then removes every file of dir/chips/ that faces.csv does not
// name (chips of an image redone with fewer faces); returns the SHA-256 of each table file as
// written ({"faces.csv": ..., ...}), what a merge checks a shard by.
Json write_faces_tables(const std::filesystem::path& dir, const FacesTables& tables,
                        const std::vector<ImageFaces>& images);

// The boxes given with --boxes, by input row.
struct GivenBoxes {
  std::filesystem::path path;
  std::string sha256;
  std::unordered_map<std::size_t, std::vector<FaceBox>> boxes;  // input row -> its boxes
  std::unordered_map<std::size_t, std::vector<std::optional<double>>> scores;
  std::unordered_map<std::size_t, std::vector<std::size_t>> lines;  // the table's line numbers
  std::size_t rows = 0;
};
// Reads the boxes table for `items` (InputError naming the file, line and column of the first
// bad cell: a missing or non-numeric coordinate, a width or height below 1 pixel, a value
// beyond +-2^31, an image the input does not hold).
GivenBoxes read_given_boxes(const std::filesystem::path& path, const JobItems& items);

// The checkpoint folder FACES_DIR/.partial/: job.json, then chunk_<c>.json per finished chunk.
struct FacesCheckpoint {
  std::filesystem::path partial;
  std::size_t chunk = 0, chunks = 0, n = 0;
  Shard shard;

  bool owns(std::size_t c) const { return shard_of_chunk(c, shard.count) == shard.index; }
  std::size_t chunk_end(std::size_t c) const { return std::min(n, (c + 1) * chunk); }
  std::size_t owned_items() const;
};

// Starts the checkpoint folder with `job`, or checks that the interrupted run in it is this job
// (UsageError naming the key that differs).
void open_faces_checkpoint(const FacesCheckpoint& cp, const Json& job, bool resume);
// The owned chunks an earlier run finished, less those holding an image changed since (their
// checkpoint is removed, with a warning naming the images).
std::vector<bool> finished_faces_chunks(const FacesCheckpoint& cp, const JobItems& items);
void write_faces_chunk(const FacesCheckpoint& cp, std::size_t c,
                       const std::vector<ImageFaces>& images);
// Every owned chunk's images, in input order.
std::vector<ImageFaces> read_faces_chunks(const FacesCheckpoint& cp);

}  // namespace vlbias::faces_internal
