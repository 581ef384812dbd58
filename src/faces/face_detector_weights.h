#pragma once
// Internal to the faces stage: dlib's HOG frontal face detector as dlib::serialize writes it,
// embedded from data/faces/dlib_frontal_face_detector.dat (data/faces/README.md); the same bytes
// decoded from the copy compiled into dlib's header: hog_scan.h.
#include <cstdint>
#include <span>

namespace vlbias::faces_internal {

// The embedded bytes (generated/builtin_face_detector.cpp); static storage.
std::span<const std::uint8_t> builtin_frontal_face_detector();

}  // namespace vlbias::faces_internal
