#pragma once
// Image features computed once and reused: what `metric fid|kid|prdc --model` and the
// geo-diversity audit's `features_model` read when they are given images instead of features.
//
// The features of an image set live beside it, in <parent>/.vlbias-features/<stem>.<kind>.<key>.npy
// (with the encode job's .manifest.json and .rows.csv), where <parent> is the folder holding the
// table (or the image folder), and <key> is the first 16 hex digits of SHA-256 over the model's
// weights hash, its preprocessing, the EXIF setting, the path column and the SHA-256 of every
// image's bytes in row order: change one image, the model or the preprocessing and the features
// are computed anew; rename or move nothing and they are read back. The file name is not trusted:
// an entry is read only when the manifest beside it names the same weights (SHA-256),
// preprocessing, model output, EXIF setting, input (hash and item count) and key
// ("feature_cache_key", added when the entry is written); any other entry (renamed from another
// model's, or written by an older vlbias) is computed again, with a warning naming what differs.
// When the parent folder is not writable the features are computed into a temporary folder and not
// kept (a warning says so).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/core/matrix.h"
#include "vlbias/encode/models/image_model.h"

namespace vlbias {

struct FeatureRequest {
  std::filesystem::path images;      // a table with a path column, or a folder of images
  std::string column;                // the path column ("" = path)
  std::filesystem::path image_root;  // relative paths resolve against it ("" = the table's folder)
  std::filesystem::path model;       // any model open_image_model reads
  ImageModelOptions options;
  // Refuse (InputError) instead of dropping an image that cannot be decoded: callers that align
  // features with table rows need every row.
  bool require_all = false;
  bool exif_transpose = false;  // apply each image's EXIF orientation (DecodeOptions)
};

struct ImageFeatures {
  Matrix features;                      // one row per image that could be encoded, in row order
  std::vector<std::size_t> input_rows;  // the input row of each feature row
  std::size_t items = 0;                // input rows (images listed)
  std::filesystem::path path;           // the cache file ("" when not kept)
  bool cached = false;                  // read back instead of computed
  // The model's description (ImageFeatureModel::describe: model and preprocessing), for outputs.
  nlohmann::ordered_json model;
};

// The features of request.images under request.model, from the cache when its key and manifest
// match, else computed by run_encode_job (raw, not normalised) and kept. InputError naming the
// file, line and column for a cache rows file whose input_row is not an input row.
ImageFeatures image_features(const FeatureRequest& request);

}  // namespace vlbias
