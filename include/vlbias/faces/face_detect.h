#pragma once
// Faces in an image (src/faces/face_detect.cpp, dlib 19): boxes from dlib's HOG frontal face
// detector (dlib's weights, embedded from data/faces/dlib_frontal_face_detector.dat) or given by
// the caller (another detector's, e.g. RetinaFace's), landmarks from a dlib shape predictor file,
// and FairFace-style aligned chips.
//
// FairFace's predict.py aligns with dlib's 5-point predictor: dlib.get_face_chips(img, shapes,
// size=300, padding=0.25). Debian ships only the 68-point predictor
// (/usr/share/dlib/shape_predictor_68_face_landmarks.dat, package libdlib-data), for which
// dlib's get_face_chip_details fits the similarity transform to 33 of the 68 points (nose, eyes,
// the upper lip; jaw, brows and lower lip ignored) against its mean face, where the 5-point
// model fits the four eye corners and the base of the nose. Both map a face onto the same
// template, so the chips agree to a few pixels; a 5-point file, when given, is used as FairFace
// uses it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/encode/image/image.h"
#include "vlbias/io/json.h"

namespace vlbias {

// The predictor Debian's libdlib-data installs (68 points, iBUG 300-W markup).
inline constexpr const char* kDebianShapePredictor =
    "/usr/share/dlib/shape_predictor_68_face_landmarks.dat";
// --chips: the side of an aligned chip in pixels.
inline constexpr std::size_t kMinChipSize = 32;
inline constexpr std::size_t kMaxChipSize = 2048;
// --upsample: each step doubles the image's sides before detection (4x the pixels), so the
// detector, whose window is 80 x 80, finds faces down to 40, 20, 10 pixels.
inline constexpr unsigned kMaxUpsample = 3;

// A box in image pixels: left, top, width, height (dlib's rectangle(l, t, r, b) has
// width = r - l + 1).
struct FaceBox {
  long x = 0, y = 0, w = 0, h = 0;
};

struct FacePoint {
  long x = 0, y = 0;
};

struct DetectedFace {
  FaceBox box;
  // dlib's detection confidence (the HOG filter's score minus its threshold; > 0 passes at
  // threshold 0), or the score given with the box; none for a given box without one.
  std::optional<double> score;
  // The predictor's points in its own order: for the 68-point model the iBUG 300-W markup
  // (0-16 jaw, 17-26 brows, 27-35 nose, 36-41 and 42-47 the eyes, 48-67 the mouth).
  std::vector<FacePoint> landmarks;
  RgbImage chip;  // chip_size x chip_size, aligned; empty when chips are off
};

struct FaceDetectorOptions {
  std::filesystem::path predictor = kDebianShapePredictor;
  // Times the image is doubled before detection (dlib's pyramid_up, as dlib's Python
  // detector(img, upsample) and the C++ face_detection_ex do); boxes are mapped back.
  unsigned upsample = 1;
  // dlib's adjust_threshold: added to each filter's threshold (higher: fewer, surer faces).
  double threshold = 0.0;
  std::size_t chip_size = 300;  // 0: no chips
  double chip_padding = 0.25;   // FairFace's
};

// What a shape predictor file holds (checked before dlib reads it).
struct ShapePredictorInfo {
  std::size_t parts = 0;     // landmarks per face (5 or 68)
  std::size_t cascades = 0;  // regression stages
  std::size_t trees = 0;     // in all stages
  std::size_t feature_pixels = 0;
  std::string sha256;
};

// The detector and the predictor, loaded once. detect() and locate() may be called from any
// number of threads at once (each call borrows one of a few detector copies: dlib's detector
// keeps scratch state).
class FaceDetector {
 public:
  // Loads the predictor file (UsageError naming it when it is missing, unreadable or not a
  // dlib shape predictor of 5 or 68 points) and checks the options (UsageError naming the
  // option: upsample 0 to kMaxUpsample, a finite threshold, chips 0 or kMinChipSize to
  // kMaxChipSize, padding 0 to 10).
  explicit FaceDetector(const FaceDetectorOptions& options);
  ~FaceDetector();
  FaceDetector(FaceDetector&&) noexcept;
  FaceDetector& operator=(FaceDetector&&) noexcept;
  FaceDetector(const FaceDetector&) = delete;
  FaceDetector& operator=(const FaceDetector&) = delete;

  // Faces found by the HOG detector, in dlib's order (highest confidence first), each with
  // its landmarks and chip. The image is read in place (dlib sees RgbImage's pixels through
  // its generic image interface); with upsampling the doubled copies are dlib's.
  std::vector<DetectedFace> detect(const RgbImage& image) const;
  // Landmarks and chips for given boxes (in their order; scores carried over). A box must
  // have a positive width and height and overlap the image (InputError naming `source` and
  // the box otherwise).
  std::vector<DetectedFace> locate(const RgbImage& image, const std::vector<FaceBox>& boxes,
                                   const std::vector<std::optional<double>>& scores,
                                   const std::string& source) const;

  // An upper bound on the bytes detect() allocates for a width x height image (the doubled
  // copies and dlib's HOG pyramid), saturating.
  std::size_t detection_bytes(std::size_t width, std::size_t height) const;
  // The upsampled image's pixels (saturating): what the pixel limit is checked against.
  std::size_t detection_pixels(std::size_t width, std::size_t height) const;

  const FaceDetectorOptions& options() const;
  const ShapePredictorInfo& predictor() const;
  // The detector, the predictor (path, SHA-256, points) and the chips, for manifests.
  Json describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Intersection over union of two boxes (0 when either is empty).
double box_iou(const FaceBox& a, const FaceBox& b);

}  // namespace vlbias
