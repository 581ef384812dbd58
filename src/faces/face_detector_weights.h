#pragma once
// Internal to the faces stage: dlib's HOG frontal face detector as dlib::serialize writes it,
// embedded from data/faces/dlib_frontal_face_detector.dat (data/faces/README.md), and the same
// bytes decoded from the copy compiled into dlib's header, for the test that they agree.
#include <cstdint>
#include <span>
#include <string>

namespace vlbias::faces_internal {

// The embedded bytes (generated/builtin_face_detector.cpp); static storage.
std::span<const std::uint8_t> builtin_frontal_face_detector();

// dlib::serialize(dlib::get_frontal_face_detector()): what the installed dlib decodes from its
// header (about 1.9 s of one core). For tests and tools/make_face_detector_data.sh's check.
std::string decode_dlib_frontal_face_detector();

}  // namespace vlbias::faces_internal
