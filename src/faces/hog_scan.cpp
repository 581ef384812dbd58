// dlib's HOG frontal face detector over our images (hog_scan.h): compiled alone, outside the
// unity batches and, in the sanitizer build, without the sanitizers (CMakeLists.txt).
#include "hog_scan.h"

#include <dlib/image_processing/frontal_face_detector.h>

#include <istream>
#include <mutex>
#include <sstream>

#include "dlib_image_views.h"

namespace vlbias::faces_internal {

struct HogFaceScanner::Impl {
  dlib::frontal_face_detector prototype;
  // dlib's detector keeps scratch state (its HOG pyramid): each call borrows a copy.
  mutable std::mutex mutex;
  mutable std::vector<std::unique_ptr<dlib::frontal_face_detector>> idle;

  std::unique_ptr<dlib::frontal_face_detector> borrow() const {
    std::lock_guard<std::mutex> lock(mutex);
    if (idle.empty()) return std::make_unique<dlib::frontal_face_detector>(prototype);
    std::unique_ptr<dlib::frontal_face_detector> d = std::move(idle.back());
    idle.pop_back();
    return d;
  }
  void give_back(std::unique_ptr<dlib::frontal_face_detector> d) const {
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_back(std::move(d));
  }
};

HogFaceScanner::HogFaceScanner(std::span<const std::uint8_t> serialized_weights)
    : impl_(std::make_unique<Impl>()) {
  DlibByteStreamBuf weights(serialized_weights);
  std::istream in(&weights);
  dlib::deserialize(impl_->prototype, in);
}

HogFaceScanner::~HogFaceScanner() = default;
HogFaceScanner::HogFaceScanner(HogFaceScanner&&) noexcept = default;
HogFaceScanner& HogFaceScanner::operator=(HogFaceScanner&&) noexcept = default;

std::vector<HogDetection> HogFaceScanner::scan(const RgbImage& image, unsigned upsample,
                                               double threshold) const {
  std::vector<dlib::rect_detection> found;
  std::unique_ptr<dlib::frontal_face_detector> detector = impl_->borrow();
  struct Return {  // the copy goes back to the idle list whatever happens
    const Impl& impl;
    std::unique_ptr<dlib::frontal_face_detector>& d;
    ~Return() { impl.give_back(std::move(d)); }
  } back{*impl_, detector};
  dlib::pyramid_down<2> pyr;
  if (upsample == 0) {
    (*detector)(DlibRgbView{&image}, found, threshold);
  } else {
    dlib::array2d<dlib::rgb_pixel> doubled;
    dlib::pyramid_up(DlibRgbView{&image}, doubled, pyr);
    for (unsigned level = 1; level < upsample; ++level) dlib::pyramid_up(doubled, pyr);
    (*detector)(doubled, found, threshold);
    for (dlib::rect_detection& d : found) d.rect = pyr.rect_down(d.rect, upsample);
  }
  std::vector<HogDetection> out;
  out.reserve(found.size());
  for (const dlib::rect_detection& d : found) {
    out.push_back(HogDetection{d.rect.left(), d.rect.top(), d.rect.right(), d.rect.bottom(),
                               d.detection_confidence});
  }
  return out;
}

std::string decode_dlib_frontal_face_detector() {
  std::ostringstream out;
  dlib::serialize(dlib::get_frontal_face_detector(), out);
  return std::move(out).str();
}

}  // namespace vlbias::faces_internal
