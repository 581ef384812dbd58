// `vlbias explain --faces FACES_DIR`: face boxes of a faces run, moved into the model's input crop,
// and the share of a map's mass inside them (src/explain/explain_faces.h).
#include "explain_faces.h"

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "vlbias/core/error.h"
#include "vlbias/io/file_text.h"
#include "vlbias/io/json.h"
#include "vlbias/io/table/table.h"

namespace vlbias::explain_internal {

namespace fs = std::filesystem;

namespace {

// Python's round((have - want) / 2.0) for a whole difference (torchvision's CenterCrop).
std::size_t explain_half_round_even(std::size_t d) {
  const std::size_t q = d / 2;
  if (d % 2 == 0) return q;
  return q % 2 == 0 ? q : q + 1;
}

// Where the crop starts in the resized image along one axis (negative: the image is padded).
double explain_crop_start(std::size_t have, std::size_t want, CropRounding rounding) {
  if (have >= want) {
    const std::size_t src =
        rounding == CropRounding::Floor ? (have - want) / 2 : explain_half_round_even(have - want);
    return static_cast<double>(src);
  }
  const std::size_t dst =
      rounding == CropRounding::Floor ? (want - have + 1) / 2 : (want - have) / 2;
  return -static_cast<double>(dst);
}

std::size_t faces_table_line(const Table& t, std::size_t row) {
  return t.line_of_row.empty() ? row + 2 : t.line_of_row[row];
}

// The input row a faces table row names, checked against the images explained.
std::size_t faces_input_row(const Table& t, std::size_t row, const JobItems& items) {
  const double r = t.numeric("input_row")[row];
  const std::string image = t.column("image").text(row);
  const bool same = r >= 0 && r < static_cast<double>(items.display.size()) && r == std::floor(r) &&
                    items.display[static_cast<std::size_t>(r)] == image;
  VLBIAS_CHECK(same, InputError,
               "{}, line {}: input row {} and image '{}' are not a row of --images; run "
               "`vlbias faces` on the same images table.",
               t.source, faces_table_line(t, row), r, image);
  return static_cast<std::size_t>(r);
}

}  // namespace

ExplainFaces read_explain_faces(const fs::path& dir, const JobItems& items, bool exif_transpose) {
  const fs::path manifest_path = dir / "manifest.json";
  VLBIAS_CHECK(fs::is_regular_file(manifest_path), UsageError,
               "--faces {}: holds no finished faces run (no manifest.json); run `vlbias faces` "
               "first.",
               dir.string());
  const Json manifest =
      parse_json(read_file_text(manifest_path, "a faces manifest"), manifest_path.string());
  VLBIAS_CHECK(manifest.value("exif_transpose", false) == exif_transpose, UsageError,
               "--faces {}: the faces run was made {} --exif-transpose and this run {} it; the "
               "boxes would be in another orientation of the images.",
               dir.string(), exif_transpose ? "without" : "with",
               exif_transpose ? "uses" : "does not use");
  ExplainFaces f;
  f.dir = dir;
  const std::size_t n = items.display.size();
  f.boxes.assign(n, {});
  f.searched.assign(n, false);
  f.width.assign(n, 0);
  f.height.assign(n, 0);
  const Table images = read_table((dir / "images.csv").string());
  for (std::size_t i = 0; i < images.rows; ++i) {
    const std::size_t r = faces_input_row(images, i, items);
    if (images.column("status").text(i) != "ok") continue;
    f.searched[r] = true;
    f.width[r] = static_cast<std::size_t>(images.numeric("width", true)[i]);
    f.height[r] = static_cast<std::size_t>(images.numeric("height", true)[i]);
  }
  const Table faces = read_table((dir / "faces.csv").string());
  for (std::size_t i = 0; i < faces.rows; ++i) {
    const std::size_t r = faces_input_row(faces, i, items);
    const ExplainFaceBox b{faces.numeric("x")[i], faces.numeric("y")[i], faces.numeric("w")[i],
                           faces.numeric("h")[i]};
    VLBIAS_CHECK(std::isfinite(b.x) && std::isfinite(b.y) && b.w > 0 && b.h > 0 &&
                     std::isfinite(b.w) && std::isfinite(b.h),
                 InputError, "{}, line {}: the box ({}, {}, {}, {}) is not x, y, w > 0, h > 0.",
                 faces.source, faces_table_line(faces, i), b.x, b.y, b.w, b.h);
    f.boxes[r].push_back(b);
  }
  return f;
}

}  // namespace vlbias::explain_internal

namespace vlbias {

using explain_internal::explain_crop_start;

ExplainFaceBox face_box_in_crop(const ExplainFaceBox& box, std::size_t width, std::size_t height,
                                const ImagePreprocess& p) {
  std::size_t rw = width, rh = height;
  if (p.do_resize) std::tie(rw, rh) = shortest_edge_size(width, height, p.shortest_edge);
  const double sx = static_cast<double>(rw) / static_cast<double>(width);
  const double sy = static_cast<double>(rh) / static_cast<double>(height);
  double x0 = 0, y0 = 0;
  if (p.do_center_crop) {
    x0 = explain_crop_start(rw, p.crop_width, p.crop_rounding);
    y0 = explain_crop_start(rh, p.crop_height, p.crop_rounding);
  }
  return ExplainFaceBox{box.x * sx - x0, box.y * sy - y0, box.w * sx, box.h * sy};
}

double cam_mass_in_boxes(const float* map, std::size_t width, std::size_t height,
                         const std::vector<ExplainFaceBox>& boxes, const std::uint8_t* skin) {
  double total = 0, inside = 0;
  for (std::size_t y = 0; y < height; ++y) {
    const double cy = static_cast<double>(y) + 0.5;
    for (std::size_t x = 0; x < width; ++x) {
      const double cx = static_cast<double>(x) + 0.5;
      const double v = map[y * width + x];
      total += v;
      if (skin != nullptr && skin[y * width + x] == 0) continue;
      for (const ExplainFaceBox& b : boxes) {
        if (cx >= b.x && cx < b.x + b.w && cy >= b.y && cy < b.y + b.h) {
          inside += v;
          break;
        }
      }
    }
  }
  return total > 0 ? inside / total : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace vlbias
