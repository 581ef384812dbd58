#pragma once
// `vlbias explain --faces FACES_DIR`: the share of each map's mass inside the image's face boxes
// of a `vlbias faces` run over the same images (explain_faces.cpp).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "vlbias/encode/image/image.h"
#include "vlbias/encode/jobs/job_items.h"
#include "vlbias/explain/face_mass.h"

namespace vlbias::explain_internal {

// The boxes of FACES_DIR per input row of the images, and the decoded size the faces run saw.
struct ExplainFaces {
  std::filesystem::path dir;
  std::vector<std::vector<ExplainFaceBox>> boxes;  // per input row
  std::vector<bool> searched;                      // the faces run read the image
  std::vector<std::size_t> width, height;          // of the image as the faces run decoded it
};

// Reads FACES_DIR's faces.csv and images.csv. UsageError when the folder holds no finished faces
// run or its --exif-transpose differs from `exif_transpose` (its boxes would be in another
// image); InputError naming the file and line for a row whose input row and image are not those
// of `items` (faces of another images table), or a box that is not finite with w, h > 0.
ExplainFaces read_explain_faces(const std::filesystem::path& dir, const JobItems& items,
                                bool exif_transpose);

}  // namespace vlbias::explain_internal
