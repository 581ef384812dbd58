#pragma once
// Internal to the faces stage: the checks a dlib shape predictor file passes before dlib reads it
// (shape_predictor_file.cpp). dlib's deserialize trusts its input: a count read from the file is
// allocated before the elements are read, and a landmark or feature index out of range is read
// out of bounds when the model runs. So the file is walked once here, in dlib's serialization
// format, every count checked against the bytes left and every index against what it indexes;
// only a file that passes reaches dlib.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "vlbias/faces/face_detect.h"

namespace vlbias::faces_internal {

// The predictor in `bytes` (a file's whole content; `name` is the path for messages): its
// number of landmarks (5 or 68: dlib's chip alignment knows only these), cascades and trees.
// UsageError naming `name` and the first thing that is not a shape predictor as dlib 19
// serializes it (format version 1): a truncated file, a count larger than the bytes left, a
// value that is not finite, an index out of range, a tree whose leaves do not match its splits,
// bytes after the end.
ShapePredictorInfo check_shape_predictor(std::span<const std::uint8_t> bytes,
                                         const std::string& name);

}  // namespace vlbias::faces_internal
