#pragma once
// `vlbias explain` (issue 40): class activation maps of a CLIP ViT for one trait pair of a prompt
// manifest, over a table or folder of images (explain_job.cpp, explain_outputs.cpp). The target is
// `vlbias metric trait-confidence --scale logit`'s (docs/methods.md#trait-confidence), with the
// model's own logit scale unless given; the maps are include/vlbias/encode/clip_cam.h's
// (docs/methods.md#clip-cam), one image at a time, so an image's map does not depend on the
// others, nor on --threads.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "explain_faces.h"
#include "vlbias/encode/clip_cam.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/job_items.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table.h"

namespace vlbias::cli_internal {

struct ExplainOptions {
  std::filesystem::path model;   // a CLIP ViT folder with its tokenizer and preprocessing
  std::filesystem::path images;  // a table with a path column, or a folder (load_job_items)
  std::string column;            // the path column ("" = "path")
  std::filesystem::path image_root;
  std::filesystem::path manifest;  // a prompt manifest (`vlbias prompts trait-pairs`)
  std::string pair;                // a dimension of the manifest with '+' and '-' poles
  CamMethod method = CamMethod::GradCam;
  std::filesystem::path out;    // MAPS_DIR, new or empty
  std::size_t top = 5;          // overlays per group
  std::vector<std::string> by;  // group columns of the images table
  double logit_scale = 0.0;     // 0: the model's exp(logit_scale)
  std::size_t max_image_pixels = 0;
  bool exif_transpose = false;
  std::filesystem::path faces;  // a `vlbias faces` folder of the same images ("" = none)
  // With faces: cam_mass.json's percentile bootstrap of each group's mean (0: no interval) and
  // the seed of its resamples.
  std::size_t bootstrap = 1000;
  std::uint64_t seed = 0;
};

struct ExplainResult {
  std::size_t images = 0, explained = 0, failed = 0, overlays = 0, groups = 0;
  double seconds = 0.0;
};

// What each input row became: its probability of the first trait and its map's row in maps.npy.
struct ExplainRow {
  std::string error;         // "" when explained
  double probability = 0.0;  // T (clip_cam.h) when explained
  std::size_t map_row = 0;   // row of maps.npy when explained
  // With --faces: the share of the map's mass inside the image's face boxes (NaN: no face, or
  // the faces run could not read the image).
  double cam_in_face = 0.0;
  // The share inside the skin-coloured pixels of the face boxes (the skin rule of
  // include/vlbias/faces/skin_tone.h on the model's input crop; NaN as cam_in_face).
  double cam_in_skin = 0.0;
};

// The output files' names in MAPS_DIR.
inline constexpr const char* kExplainMaps = "maps.npy";
inline constexpr const char* kExplainRows = "rows.csv";
inline constexpr const char* kExplainManifest = "manifest.json";
inline constexpr const char* kExplainOverlays = "overlays";
inline constexpr const char* kExplainCamMass = "cam_mass.json";
inline constexpr const char* kExplainCamInFace = "cam_in_face";
inline constexpr const char* kExplainCamInSkin = "cam_in_skin";

// Runs the command: checks every input before the first map, then writes MAPS_DIR.
ExplainResult run_explain(const ExplainOptions& options);

// ---------------------------------------------------------------- shared by the job's files

// The trait pair: the manifest texts of its poles, in manifest order.
struct ExplainPair {
  std::string name;                        // "smart/dumb"
  std::vector<std::string> first, second;  // the '+' and '-' prompts
  std::vector<std::string> unused;         // rows of the dimension with no valence
};

// The groups of --by: one per distinct tuple of values, in order of first appearance (one group
// of every image without --by).
struct ExplainGroups {
  std::vector<std::string> columns;              // --by
  std::vector<std::vector<std::string>> values;  // columns x rows: each row's cell as text
  std::vector<std::size_t> group_of_row;
  std::vector<std::string> names;  // "Black, Female"
};

struct ExplainContext {
  const ExplainOptions& o;
  const ClipEncoder& encoder;
  const JobItems& items;
  const TraitPairTarget& target;
  const ExplainPair& pair;
  const ExplainGroups& groups;
  const ExplainFaces* faces;  // null without --faces
};

// Input row `row` decoded as `vlbias encode` decodes it (Pillow's pixel rule for
// --max-image-pixels, warned about when `first_time`, and EXIF as asked); InputError otherwise.
RgbImage decode_explain_image(const ExplainContext& ctx, std::size_t row, bool first_time);

// Whether rows.csv has a column of this name (a --by column may not take it).
bool is_explain_rows_column(const std::string& name);
// The names of a table's columns, for messages.
std::vector<std::string> explain_table_columns(const Table& table);

// maps.npy (rows of the explained images, input order), rows.csv and the overlays of the top
// --top images of each group (counted into result.overlays) (explain_outputs.cpp).
void write_explain_outputs(const ExplainContext& ctx, const std::vector<ExplainRow>& rows,
                           const std::vector<float>& maps, ExplainResult& result);
// cam_mass.json's content: for each of rows.csv's cam_in_face and cam_in_skin, the value per
// `by` group (n, mean, sd, percentiles, a percentile bootstrap interval of the mean with
// `bootstrap` resamples), Kruskal-Wallis across the groups and Mann-Whitney U per pair with
// Holm's adjustment; no test when fewer than two groups have a value (explain_mass.cpp).
Json explain_cam_mass(const Table& rows, const std::vector<std::string>& by, std::size_t bootstrap,
                      std::uint64_t seed);
// manifest.json, written last.
void write_explain_manifest(const ExplainContext& ctx, const ExplainResult& result);

}  // namespace vlbias::cli_internal
