#pragma once
// Class activation maps of a CLIP ViT for one trait pair of a prompt manifest, over a table or
// folder of images (issue 40): `vlbias explain` and the trait-pairs audit's analyses.explain run
// this job. The target is `vlbias metric trait-confidence --scale logit`'s
// (docs/methods.md#trait-confidence), with the model's own logit scale unless given; the maps
// are include/vlbias/encode/models/clip_cam.h's (docs/methods.md#clip-cam), one image at a time, so
// an image's map depends neither on the others nor on the thread count.
//
// Outputs (MAPS_DIR, new or empty): maps.npy (n x H x W float32 in [0, 1], one map per explained
// image in input order), rows.csv (one row per input row), overlays/ (the --top most confident
// images of each group, jet over the model's input crop), cam_mass.json (with faces) and
// manifest.json, written last (README.md, "Why the model is confident").
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/encode/models/clip_cam.h"

namespace vlbias {

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

// The output files' names in MAPS_DIR.
inline constexpr const char* kExplainMaps = "maps.npy";
inline constexpr const char* kExplainRows = "rows.csv";
inline constexpr const char* kExplainManifest = "manifest.json";
inline constexpr const char* kExplainOverlays = "overlays";
inline constexpr const char* kExplainCamMass = "cam_mass.json";
inline constexpr const char* kExplainCamInFace = "cam_in_face";
inline constexpr const char* kExplainCamInSkin = "cam_in_skin";

// Runs the job: checks every input before the first map, then writes MAPS_DIR.
ExplainResult run_explain(const ExplainOptions& options);

}  // namespace vlbias
