#pragma once
// Internal to the faces stage: a dlib shape predictor file read in one pass
// (shape_predictor_file.cpp). dlib's deserialize trusts its input: a count read from the file is
// allocated before the elements are read, and a landmark or feature index out of range is read
// out of bounds when the model runs. So the file is read here, in dlib's serialization format,
// every count checked against the bytes left and every index against what it indexes, into
// plain arrays that face_detect.cpp runs as dlib's shape_predictor does: dlib never reads the
// file (reading it twice cost about a second per process, four under the sanitizers).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vlbias/faces/face_detect.h"

namespace vlbias::faces_internal {

// One split of a regression tree: go to child 2i + 1 when pixel idx1 - pixel idx2 > thresh,
// else to 2i + 2 (dlib::impl::split_feature).
struct PredictorSplit {
  unsigned long idx1 = 0, idx2 = 0;
  float thresh = 0;
};

// A regression tree: splits.size() + 1 leaves, each a shape increment of `rows` values stored
// one leaf after the other in `leaf_values` (dlib::impl::regression_tree).
struct PredictorTree {
  std::vector<PredictorSplit> splits;
  std::vector<float> leaf_values;
};

// dlib::shape_predictor's state: the mean shape (x0, y0, x1, y1, ... in the box's unit square),
// per cascade its trees, and its feature pixels, each an anchor landmark and an offset from it.
struct ShapePredictorModel {
  ShapePredictorInfo info;  // sha256 is left to the caller
  std::vector<float> initial_shape;
  std::vector<std::vector<PredictorTree>> forests;
  std::vector<std::vector<unsigned long>> anchor_idx;
  std::vector<std::vector<std::array<float, 2>>> deltas;
};

// The predictor in `bytes` (a file's whole content; `name` is the path for messages).
// UsageError naming `name` and the first thing that is not a shape predictor as dlib 19
// serializes it (format version 1): a truncated file, a count larger than the bytes left, a
// value that is not finite, an index out of range, a tree whose leaves do not match its splits,
// a landmark count other than 5 or 68 (dlib's chip alignment knows only these), bytes after the
// end. Floats decode as dlib decodes them, so the model is the one dlib would hold.
ShapePredictorModel read_shape_predictor(std::span<const std::uint8_t> bytes,
                                         const std::string& name);

// dlib's own shape_predictor, deserialized by dlib from `predictor` once, run on each of
// `boxes[i]` of `images[i]`: result[i][j] is box j's landmarks. The reference that the model read
// above, run by FaceDetector, must equal point for point (face_detect.cpp; a test compares them).
std::vector<std::vector<std::vector<FacePoint>>> dlib_reference_landmarks(
    const std::vector<RgbImage>& images, const std::vector<std::vector<FaceBox>>& boxes,
    const std::string& predictor);

// read_shape_predictor's summary alone: landmarks, cascades, trees, feature pixels.
ShapePredictorInfo check_shape_predictor(std::span<const std::uint8_t> bytes,
                                         const std::string& name);

}  // namespace vlbias::faces_internal
