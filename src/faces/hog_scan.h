#pragma once
// Internal to the faces stage: dlib's HOG frontal face detector run over an image, the one part
// of face detection that is dlib's own arithmetic on an image dlib allocates. It lives in its
// own file so that the sanitizer build can compile it without ASan and UBSan (CMakeLists.txt):
// under them dlib's scan ran about four times slower and took most of the faces tests' time,
// while the code that reads hostile input (images, boxes, predictor files) and the checks on the
// image handed in stay instrumented in face_detect.cpp (bench/ci_budget.md).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vlbias/encode/image/image.h"

namespace vlbias::faces_internal {

// A detection in the image's own pixels (dlib::rectangle's inclusive corners).
struct HogDetection {
  long left = 0, top = 0, right = 0, bottom = 0;
  double confidence = 0.0;
};

// dlib's frontal face detector, deserialized once from its serialized weights; scan() may run
// on several threads at once (each call borrows its own copy of the detector's scratch state).
class HogFaceScanner {
 public:
  explicit HogFaceScanner(std::span<const std::uint8_t> serialized_weights);
  ~HogFaceScanner();
  HogFaceScanner(HogFaceScanner&&) noexcept;
  HogFaceScanner& operator=(HogFaceScanner&&) noexcept;

  // dlib's Python binding run_detector_with_upscale1: the image doubled `upsample` times with
  // pyramid_up, the detector run with adjust_threshold `threshold`, each box mapped back with
  // pyramid_down<2>::rect_down. `image` must hold width * height * 3 bytes (checked by the
  // caller, FaceDetector::detect, in instrumented code).
  std::vector<HogDetection> scan(const RgbImage& image, unsigned upsample, double threshold) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// dlib::serialize(dlib::get_frontal_face_detector()): what the installed dlib decodes from its
// header (about 1.9 s of one core). For tests and tools/make_face_detector_data.sh's check.
std::string decode_dlib_frontal_face_detector();

}  // namespace vlbias::faces_internal
