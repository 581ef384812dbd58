#pragma once
// `vlbias explain --faces FACES_DIR`: the share of each map's mass inside the image's face boxes
// of a `vlbias faces` run over the same images (explain_faces.cpp).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "vlbias/encode/image.h"
#include "vlbias/encode/job_items.h"

namespace vlbias::cli_internal {

// A face box in pixels: [x, x + w) x [y, y + h).
struct ExplainFaceBox {
  double x = 0, y = 0, w = 0, h = 0;
};

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

// A box of a width x height image in the coordinates of the model's input crop: the shortest
// side resized to p.shortest_edge (shortest_edge_size's scale on each axis), then the centre crop
// (HF: floor((H - h) / 2); torchvision: round-half-even((H - h) / 2.0); an image smaller than the
// crop is placed at ceil((h - H) / 2), torchvision floor) as preprocess_geometry does.
ExplainFaceBox face_box_in_crop(const ExplainFaceBox& box, std::size_t width, std::size_t height,
                                const ImagePreprocess& p);

// The share of a map's mass inside the union of `boxes` (map coordinates): sum of the values of
// the pixels whose centre (x + 0.5, y + 0.5) lies in a box, over the sum of all values (sums in
// double). With `skin` (width x height bytes), only the pixels of the boxes whose skin byte is
// non-zero count as inside. NaN when the map sums to 0.
double cam_mass_in_boxes(const float* map, std::size_t width, std::size_t height,
                         const std::vector<ExplainFaceBox>& boxes,
                         const std::uint8_t* skin = nullptr);

}  // namespace vlbias::cli_internal
