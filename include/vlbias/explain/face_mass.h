#pragma once
// Where a class activation map's mass lies: the share inside an image's face boxes, moved into
// the model's input crop (issue 40, item 4; docs/methods.md#clip-cam). Maps are row-major
// float32 width x height arrays in the crop's pixels, as maps.npy holds them
// (include/vlbias/explain/explain.h); boxes are in pixels of the same grid.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vlbias/encode/image/image.h"

namespace vlbias {

// A face box in pixels: [x, x + w) x [y, y + h).
struct ExplainFaceBox {
  double x = 0, y = 0, w = 0, h = 0;
};

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

}  // namespace vlbias
