#!/usr/bin/env bash
# Writes data/faces/dlib_frontal_face_detector.dat: dlib's HOG frontal face detector as
# dlib::serialize writes it, decoded once from the compressed copy compiled into dlib's header
# (dlib::get_frontal_face_detector, Debian's libdlib-dev). vlbias embeds this file and
# deserializes it in milliseconds instead of decoding the header's copy (about 1.9 s of one core
# in every process). tests/faces/face_detect_test.cpp checks that the file is still exactly what
# the installed dlib decodes.
#   bash tools/make_face_detector_data.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/serialize.cpp" <<'CPP'
#include <dlib/image_processing/frontal_face_detector.h>
#include <fstream>
int main(int, char** argv) {
  std::ofstream out(argv[1], std::ios::binary);
  dlib::serialize(dlib::get_frontal_face_detector(), out);
  return out ? 0 : 1;
}
CPP
g++ -O1 -std=c++17 "$work/serialize.cpp" -o "$work/serialize" -ldlib -lopenblas
"$work/serialize" data/faces/dlib_frontal_face_detector.dat
sha256sum data/faces/dlib_frontal_face_detector.dat
