// FaceDetector: dlib's HOG frontal face detector (run by hog_scan.cpp), a shape predictor and
// dlib's face chips. With hog_scan.cpp the only files of vlbias that include dlib (its headers
// are heavy templates: compiled alone, outside the unity batches; CMakeLists.txt).
//
// The detection reproduces dlib's Python binding (hog_scan.h). Landmarks are predicted on the image
// itself (dlib.shape_predictor(img, box)), and chips are extract_image_chips(img,
// get_face_chip_details(shapes, size, padding)) for all faces of an image at once, as
// dlib.get_face_chips does (FairFace's predict.py: size 300, padding 0.25).
#include <dlib/image_processing/shape_predictor.h>
#include <dlib/image_transforms/interpolation.h>
#include <dlib/revision.h>

#include <algorithm>
#include <cmath>
#include <istream>
#include <limits>
#include <new>

#include "dlib_image_views.h"
#include "face_detector_weights.h"
#include "hog_scan.h"
#include "shape_predictor_file.h"
#include "vlbias/core/error.h"
#include "vlbias/core/sha256.h"
#include "vlbias/faces/face_detect.h"
#include "vlbias/io/mapped_file.h"

namespace vlbias {

namespace {

using faces_internal::DlibByteStreamBuf;
using faces_internal::DlibRgbChip;
using faces_internal::DlibRgbView;

std::size_t saturating_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) {
    return std::numeric_limits<std::size_t>::max();
  }
  return a * b;
}

dlib::rectangle to_dlib_rect(const FaceBox& b) {
  return dlib::rectangle(b.x, b.y, b.x + b.w - 1, b.y + b.h - 1);
}

FaceBox from_dlib_rect(const dlib::rectangle& r) {
  return FaceBox{r.left(), r.top(), static_cast<long>(r.width()), static_cast<long>(r.height())};
}

void check_detector_options(const FaceDetectorOptions& o) {
  VLBIAS_CHECK(o.upsample <= kMaxUpsample, UsageError,
               "--upsample {}: expected 0 to {} (each doubles the image's sides).", o.upsample,
               kMaxUpsample);
  VLBIAS_CHECK(std::isfinite(o.threshold) && std::fabs(o.threshold) <= 100.0, UsageError,
               "--threshold {}: expected a number from -100 to 100 (dlib's adjust_threshold).",
               o.threshold);
  VLBIAS_CHECK(o.chip_size == 0 || (o.chip_size >= kMinChipSize && o.chip_size <= kMaxChipSize),
               UsageError, "--chips {}: expected {} to {} pixels.", o.chip_size, kMinChipSize,
               kMaxChipSize);
  VLBIAS_CHECK(std::isfinite(o.chip_padding) && o.chip_padding >= 0.0 && o.chip_padding <= 10.0,
               UsageError, "--padding {}: expected 0 to 10 (a fraction of the face's size).",
               o.chip_padding);
}

}  // namespace

struct FaceDetector::Impl {
  FaceDetectorOptions options;
  ShapePredictorInfo info;
  // The predictor as read_shape_predictor read it, its mean shape and feature offsets moved
  // into the types dlib's feature extraction takes.
  faces_internal::ShapePredictorModel predictor;
  dlib::matrix<float, 0, 1> initial_shape;
  std::vector<std::vector<dlib::vector<float, 2>>> deltas;
  // dlib's HOG detector from the embedded weights, once options are checked (hog_scan.h).
  std::unique_ptr<faces_internal::HogFaceScanner> scanner;

  void take_predictor(faces_internal::ShapePredictorModel model);
  dlib::full_object_detection predict_shape(const DlibRgbView& image,
                                            const dlib::rectangle& box) const;
  std::vector<DetectedFace> faces_at(const RgbImage& image,
                                     const std::vector<dlib::rectangle>& boxes) const;
};

void FaceDetector::Impl::take_predictor(faces_internal::ShapePredictorModel model) {
  predictor = std::move(model);
  info = predictor.info;
  initial_shape.set_size(static_cast<long>(predictor.initial_shape.size()));
  for (std::size_t i = 0; i < predictor.initial_shape.size(); ++i) {
    initial_shape(static_cast<long>(i)) = predictor.initial_shape[i];
  }
  deltas.resize(predictor.deltas.size());
  for (std::size_t c = 0; c < deltas.size(); ++c) {
    for (const std::array<float, 2>& d : predictor.deltas[c]) deltas[c].emplace_back(d[0], d[1]);
  }
  // Held once, in dlib's types above.
  predictor.initial_shape = {};
  predictor.deltas = {};
}

// dlib::shape_predictor::operator()(img, rect) (dlib/image_processing/shape_predictor.h) on the
// model read once: per cascade, the feature pixels placed by the similarity transform from the
// mean shape to the current one, each tree walked (pixel idx1 - pixel idx2 > thresh: left
// child) and its leaf added; the shape mapped from the box's unit square to the image.
dlib::full_object_detection FaceDetector::Impl::predict_shape(const DlibRgbView& image,
                                                              const dlib::rectangle& box) const {
  dlib::matrix<float, 0, 1> shape = initial_shape;
  const auto rows = static_cast<std::size_t>(initial_shape.size());
  std::vector<float> pixels;
  for (std::size_t c = 0; c < predictor.forests.size(); ++c) {
    dlib::impl::extract_feature_pixel_values(image, box, shape, initial_shape,
                                             predictor.anchor_idx[c], deltas[c], pixels);
    for (const faces_internal::PredictorTree& tree : predictor.forests[c]) {
      std::size_t i = 0;
      while (i < tree.splits.size()) {
        const faces_internal::PredictorSplit& s = tree.splits[i];
        i = pixels[s.idx1] - pixels[s.idx2] > s.thresh ? 2 * i + 1 : 2 * i + 2;
      }
      const float* leaf = tree.leaf_values.data() + (i - tree.splits.size()) * rows;
      for (std::size_t r = 0; r < rows; ++r) shape(static_cast<long>(r)) += leaf[r];
    }
  }
  const dlib::point_transform_affine to_image = dlib::impl::unnormalizing_tform(box);
  std::vector<dlib::point> parts(rows / 2);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    parts[p] = to_image(dlib::impl::location(shape, p));
  }
  return dlib::full_object_detection(box, parts);
}

std::vector<DetectedFace> FaceDetector::Impl::faces_at(
    const RgbImage& image, const std::vector<dlib::rectangle>& boxes) const {
  const DlibRgbView view{&image};
  std::vector<DetectedFace> faces(boxes.size());
  std::vector<dlib::full_object_detection> shapes;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    shapes.push_back(predict_shape(view, boxes[i]));
    faces[i].box = from_dlib_rect(boxes[i]);
    faces[i].landmarks.resize(shapes.back().num_parts());
    for (unsigned long p = 0; p < shapes.back().num_parts(); ++p) {
      faces[i].landmarks[p] = FacePoint{shapes.back().part(p).x(), shapes.back().part(p).y()};
    }
  }
  if (options.chip_size == 0 || shapes.empty()) return faces;
  dlib::array<DlibRgbChip> chips;
  dlib::extract_image_chips(
      view, dlib::get_face_chip_details(shapes, options.chip_size, options.chip_padding), chips);
  for (std::size_t i = 0; i < faces.size(); ++i) faces[i].chip = std::move(chips[i].image);
  return faces;
}

FaceDetector::FaceDetector(const FaceDetectorOptions& options) {
  check_detector_options(options);
  impl_ = std::make_unique<Impl>();
  impl_->options = options;
  const std::string name = options.predictor.string();
  VLBIAS_CHECK(!name.empty(), UsageError,
               "--predictor is empty; expected a dlib shape predictor file (e.g. {}).",
               kDebianShapePredictor);
  MappedFile file;
  try {
    file = MappedFile(options.predictor, MapAccess::Sequential);
  } catch (const InputError& e) {
    VLBIAS_FAIL(UsageError,
                "Shape predictor {} cannot be read ({}); install Debian's libdlib-data for {} or "
                "give --predictor.",
                name, e.what(), kDebianShapePredictor);
  }
  impl_->take_predictor(faces_internal::read_shape_predictor(file.bytes(), name));
  impl_->info.sha256 =
      sha256_hex(std::string_view(reinterpret_cast<const char*>(file.data()), file.size()));
  // The detector's weights from the embedded serialized copy (data/faces/README.md), not from
  // dlib::get_frontal_face_detector(), which decodes its compressed copy for about 1.9 s.
  impl_->scanner = std::make_unique<faces_internal::HogFaceScanner>(
      faces_internal::builtin_frontal_face_detector());
}

FaceDetector::~FaceDetector() = default;
FaceDetector::FaceDetector(FaceDetector&&) noexcept = default;
FaceDetector& FaceDetector::operator=(FaceDetector&&) noexcept = default;

std::vector<DetectedFace> FaceDetector::detect(const RgbImage& image) const {
  VLBIAS_CHECK(
      image.width > 0 && image.height > 0 && image.pixels.size() == image.width * image.height * 3,
      InternalError, "detect: an image of {} x {} with {} bytes", image.width, image.height,
      image.pixels.size());
  const std::vector<faces_internal::HogDetection> found =
      impl_->scanner->scan(image, impl_->options.upsample, impl_->options.threshold);
  std::vector<dlib::rectangle> boxes;
  for (const faces_internal::HogDetection& d : found) {
    boxes.emplace_back(d.left, d.top, d.right, d.bottom);
  }
  std::vector<DetectedFace> faces = impl_->faces_at(image, boxes);
  for (std::size_t i = 0; i < faces.size(); ++i) faces[i].score = found[i].confidence;
  return faces;
}

std::vector<DetectedFace> FaceDetector::locate(const RgbImage& image,
                                               const std::vector<FaceBox>& boxes,
                                               const std::vector<std::optional<double>>& scores,
                                               const std::string& source) const {
  VLBIAS_CHECK(scores.size() == boxes.size(), InternalError, "locate: {} boxes, {} scores",
               boxes.size(), scores.size());
  const dlib::rectangle whole(0, 0, static_cast<long>(image.width) - 1,
                              static_cast<long>(image.height) - 1);
  std::vector<dlib::rectangle> rects;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const FaceBox& b = boxes[i];
    VLBIAS_CHECK(b.w > 0 && b.h > 0, InputError,
                 "{}: box {} ({}, {}, {} x {}) has no area; expected a positive width and height.",
                 source, i, b.x, b.y, b.w, b.h);
    rects.push_back(to_dlib_rect(b));
    VLBIAS_CHECK(!whole.intersect(rects.back()).is_empty(), InputError,
                 "{}: box {} ({}, {}, {} x {}) lies outside the {} x {} image.", source, i, b.x,
                 b.y, b.w, b.h, image.width, image.height);
  }
  std::vector<DetectedFace> faces = impl_->faces_at(image, rects);
  for (std::size_t i = 0; i < faces.size(); ++i) faces[i].score = scores[i];
  return faces;
}

std::size_t FaceDetector::detection_pixels(std::size_t width, std::size_t height) const {
  return saturating_mul(saturating_mul(width, height),
                        std::size_t{1} << (2 * impl_->options.upsample));
}

// The doubled image (3 bytes a pixel, and the half-size copy pyramid_up keeps), dlib's HOG
// pyramid (pyramid_down<6>: levels of (5/6)^2 the pixels each, 1 / (1 - 25/36) = 3.3 x the
// pixels in all; per level an RGB copy and 31 float features per 8 x 8 cell, ~5 bytes a
// pixel): 24 bytes a detection pixel is above the sum.
std::size_t FaceDetector::detection_bytes(std::size_t width, std::size_t height) const {
  return saturating_mul(detection_pixels(width, height), 24);
}

const FaceDetectorOptions& FaceDetector::options() const {
  return impl_->options;
}
const ShapePredictorInfo& FaceDetector::predictor() const {
  return impl_->info;
}

Json FaceDetector::describe() const {
  const FaceDetectorOptions& o = impl_->options;
  const ShapePredictorInfo& p = impl_->info;
  const std::span<const std::uint8_t> weights = faces_internal::builtin_frontal_face_detector();
  Json chips = nullptr;
  if (o.chip_size > 0) {
    chips = Json{{"size", o.chip_size},
                 {"padding", o.chip_padding},
                 {"alignment", fmt::format("dlib get_face_chip_details on the {}-point landmarks, "
                                           "extract_image_chips (bilinear)",
                                           p.parts)},
                 {"format", "png"}};
  }
  return Json{
      {"detector",
       Json{{"name", "dlib HOG frontal_face_detector"},
            {"dlib_version",
             fmt::format("{}.{}.{}", DLIB_MAJOR_VERSION, DLIB_MINOR_VERSION, DLIB_PATCH_VERSION)},
            {"weights",
             "dlib's get_frontal_face_detector(), serialized and embedded "
             "(data/faces/dlib_frontal_face_detector.dat)"},
            {"weights_sha256", sha256_hex(std::string_view(
                                   reinterpret_cast<const char*>(weights.data()), weights.size()))},
            {"upsample", o.upsample},
            {"adjust_threshold", o.threshold}}},
      {"predictor", Json{{"path", o.predictor.string()},
                         {"sha256", p.sha256},
                         {"points", p.parts},
                         {"cascades", p.cascades},
                         {"trees", p.trees}}},
      {"chips", chips}};
}

double box_iou(const FaceBox& a, const FaceBox& b) {
  if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0) return 0.0;
  const double ix = std::max(0L, std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x));
  const double iy = std::max(0L, std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y));
  const double inter = ix * iy;
  const double uni = static_cast<double>(a.w) * a.h + static_cast<double>(b.w) * b.h - inter;
  return inter / uni;
}

}  // namespace vlbias

namespace vlbias::faces_internal {

std::vector<std::vector<std::vector<FacePoint>>> dlib_reference_landmarks(
    const std::vector<RgbImage>& images, const std::vector<std::vector<FaceBox>>& boxes,
    const std::string& predictor) {
  VLBIAS_CHECK(images.size() == boxes.size(), InternalError, "{} images, {} box lists",
               images.size(), boxes.size());
  const MappedFile file(predictor, MapAccess::Sequential);
  check_shape_predictor(file.bytes(), predictor);  // dlib trusts the file: ours checks it first
  DlibByteStreamBuf buffer(file.bytes());
  std::istream in(&buffer);
  dlib::shape_predictor sp;
  dlib::deserialize(sp, in);
  std::vector<std::vector<std::vector<FacePoint>>> out(images.size());
  for (std::size_t i = 0; i < images.size(); ++i) {
    for (const FaceBox& b : boxes[i]) {
      const dlib::full_object_detection shape =
          sp(DlibRgbView{&images[i]}, dlib::rectangle(b.x, b.y, b.x + b.w - 1, b.y + b.h - 1));
      std::vector<FacePoint>& points = out[i].emplace_back();
      for (unsigned long p = 0; p < shape.num_parts(); ++p) {
        points.push_back(FacePoint{shape.part(p).x(), shape.part(p).y()});
      }
    }
  }
  return out;
}

}  // namespace vlbias::faces_internal
