// --boxes: face boxes from another detector (RetinaFace, a hand labelling), read once and
// checked whole before any image is read.
#include <cmath>

#include "faces_job_internal.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"

namespace vlbias::faces_internal {

namespace fs = std::filesystem;

namespace {

// Coordinates beyond this are no image's (and keep dlib's long arithmetic far from overflow).
constexpr double kMaxBoxCoordinate = 2147483648.0;  // 2^31

long box_cell(const Table& t, const std::vector<double>& values, std::size_t r, const char* name) {
  const double v = values[r];
  VLBIAS_CHECK(std::fabs(v) <= kMaxBoxCoordinate, InputError,
               "{}: line {}, column '{}': {} is beyond +-2^31 pixels.", t.source,
               t.line_of_row.empty() ? r + 2 : t.line_of_row[r], name, v);
  return std::lround(v);
}

}  // namespace

GivenBoxes read_given_boxes(const fs::path& path, const JobItems& items) {
  GivenBoxes given;
  given.path = path;
  const Table t = read_table(path.string());
  given.sha256 = sha256_file(path.string());
  given.rows = t.rows;
  std::unordered_map<std::string, std::size_t> row_of;
  for (std::size_t r = 0; r < items.display.size(); ++r) {
    if (!items.missing[r]) row_of.emplace(items.display[r], r);
  }
  const Column& image = t.column("image");
  const std::vector<double>& x = t.numeric("x");
  const std::vector<double>& y = t.numeric("y");
  const std::vector<double>& w = t.numeric("w");
  const std::vector<double>& h = t.numeric("h");
  const std::vector<double>* score = t.find("score") ? &t.numeric("score", true) : nullptr;
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::size_t line = t.line_of_row.empty() ? r + 2 : t.line_of_row[r];
    const std::string name = image.missing(r) ? "" : image.text(r);
    const auto found = row_of.find(name);
    VLBIAS_CHECK(found != row_of.end(), InputError,
                 "{}: line {}, column 'image': '{}' is not an image of the input (expected the "
                 "path as the input names it: its path cell, or the path under its folder).",
                 path.string(), line, name);
    const FaceBox box{box_cell(t, x, r, "x"), box_cell(t, y, r, "y"), box_cell(t, w, r, "w"),
                      box_cell(t, h, r, "h")};
    VLBIAS_CHECK(box.w >= 1 && box.h >= 1, InputError,
                 "{}: line {}: the box is {} x {} pixels; expected a width and height of at "
                 "least 1.",
                 path.string(), line, w[r], h[r]);
    std::optional<double> s;
    if (score != nullptr && !std::isnan((*score)[r])) s = (*score)[r];
    given.boxes[found->second].push_back(box);
    given.scores[found->second].push_back(s);
    given.lines[found->second].push_back(line);
  }
  return given;
}

}  // namespace vlbias::faces_internal
