#pragma once
// What the files of the explain job share (include/vlbias/explain/explain.h): the trait pair,
// the groups, each row's outcome and the context every step reads.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "explain_faces.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/explain/explain.h"
#include "vlbias/io/json.h"
#include "vlbias/io/run/atomic_file.h"
#include "vlbias/io/table/table.h"

namespace vlbias::explain_internal {

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

// maps.npy written as the maps are made, so that the job holds one image's map at a time, not
// the run's (explain_outputs.cpp): np.save's header for (0, side, side) first (numpy leaves room
// for the first axis to grow to 21 digits, so the header keeps its size), each map appended as
// row `rows`, the header rewritten with the final count by commit(), which gives the file its
// name. Until then it is a temporary in MAPS_DIR, removed if the job fails; the overlays read
// their maps back with read().
struct ExplainMaps {
  ExplainMaps(const std::filesystem::path& path, std::size_t side);
  void append(const float* map);             // side x side values
  std::vector<float> read(std::size_t row);  // a row appended before
  void commit();

  AtomicWriter file;
  std::size_t side = 0, rows = 0, header_bytes = 0;
};

// maps.npy (rows of the explained images, input order: `maps`, committed here), rows.csv and the
// overlays of the top --top images of each group (counted into result.overlays)
// (explain_outputs.cpp).
void write_explain_outputs(const ExplainContext& ctx, const std::vector<ExplainRow>& rows,
                           ExplainMaps& maps, ExplainResult& result);
// cam_mass.json's content: for each of rows.csv's cam_in_face and cam_in_skin, the value per
// `by` group (n, mean, sd, percentiles, a percentile bootstrap interval of the mean with
// `bootstrap` resamples), Kruskal-Wallis across the groups and Mann-Whitney U per pair with
// Holm's adjustment; no test when fewer than two groups have a value (explain_mass.cpp).
Json explain_cam_mass(const Table& rows, const std::vector<std::string>& by, std::size_t bootstrap,
                      std::uint64_t seed);
// manifest.json, written last.
void write_explain_manifest(const ExplainContext& ctx, const ExplainResult& result);

}  // namespace vlbias::explain_internal
