#pragma once
// Exemplar image grids of a report (report: {images: N, image_budget: BYTES}; audit_types.h's
// ReportImagesSpec), shared by the kinds that have them: geo-diversity (per region x object),
// visual-stereotypes (per identity x prompt set) and lvlm-counterfactual (per group). Each kind
// lists its images and the cells they fall in; exemplars_json draws each cell's grid and
// embeds the thumbnails as JPEG data URIs in results.json's "exemplars" block, so that
// report.html (and a later `vlbias report RUN_DIR`) shows them from the run folder alone
// (src/report/exemplars_page.cpp draws the block).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vlbias/audits/audit_types.h"
#include "vlbias/io/table/table.h"
#include "vlbias/report/json_output.h"

namespace vlbias::audits_internal {

// The images a kind can show: the path as its table wrote it ("" = none) and the file it names
// (resolved against the table's folder).
struct ExemplarImages {
  std::vector<std::string> path;
  std::vector<std::filesystem::path> file;
  // Per image, the score whose extreme images each grid adds after its sample (NaN = not
  // scored); empty = no score.
  std::vector<double> score;
};

// What the score is, for results.json and the page: `key` names it on each image ("clipscore"),
// `label` in words ("CLIPScore"), `about` says what it measures; `highest` picks the highest
// scores (else the lowest).
struct ExemplarScore {
  std::string key, label, about;
  bool highest = false;
  // The grids show only the extreme-scored images, no random sample (the explain overlays: the
  // most confident images of each group).
  bool only_extremes = false;
};

// One grid: its labels in order ({"region", "Africa"}, {"object", "ball"}) and its images
// (indices into ExemplarImages, in the kind's order).
struct ExemplarCell {
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::uint32_t> rows;
};

// The spec's report block for results.json's spec: {images, image_budget, image_root}.
Json report_images_json(const ReportImagesSpec& r);

// The file an image path names: "" for "", else the path against r.root (report.image_root)
// or, without one, against the folder of `table`, the file that named it (an absolute path
// stays as it is).
std::filesystem::path exemplar_file(const ReportImagesSpec& r, const std::filesystem::path& table,
                                    const std::string& path);

// The images `table` (read from the file `table_file`) names in its column `column`, each file
// by exemplar_file; none, with a note naming the table and `key` (the spec key of the column,
// "pull.image"), when the table has no such column.
std::optional<ExemplarImages> table_images(const Table& table, const std::string& column,
                                           const std::filesystem::path& table_file,
                                           const ReportImagesSpec& r, const std::string& key,
                                           std::vector<std::string>& notes);

// Up to n of `rows` with a finite score, the lowest (or with `highest`, the highest) first;
// ties: the earlier row first.
std::vector<std::uint32_t> extreme_scored(const std::vector<std::uint32_t>& rows,
                                          const std::vector<double>& scores, std::size_t n,
                                          bool highest);

// The picks of each cell, as (row, why): up to r.per_cell drawn by sample_rows
// (vlbias/io/table/sample.h) with derive_seed(seed, cell index) in draw order (none when
// score->only_extremes), then, with a score, the cell's up to r.per_cell extreme-scored rows not
// already drawn (an image in both is listed once, with both reasons).
std::vector<std::vector<std::pair<std::uint32_t, std::string>>> pick_exemplars(
    const std::vector<ExemplarCell>& cells, const ExemplarImages& images, const ReportImagesSpec& r,
    std::uint64_t seed, const ExemplarScore* score);

// results.json's "exemplars" block: every cell's picks (pick_exemplars) with its labels; the
// thumbnails (96 px on the long side, JPEG quality 80) are embedded round by round (every cell's
// first pick, then every cell's second, ...) while the block's total stays within r.budget. An
// image that cannot be read, or has no path, is listed with why, and named in `notes`, never an
// error. `seed` is the kind's own stream (derive_seed(spec seed, stream)); `score` may be null.
Json exemplars_json(const std::vector<ExemplarCell>& cells, const ExemplarImages& images,
                    const ReportImagesSpec& r, std::uint64_t seed, const ExemplarScore* score,
                    std::vector<std::string>& notes);

}  // namespace vlbias::audits_internal
