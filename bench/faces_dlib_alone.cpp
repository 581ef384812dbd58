// dlib's face detection alone, the baseline of bench/vs_dlib_faces.py: what dlib's own
// face_detection_ex.cpp does (load_image, pyramid_up, the HOG detector) on every image, spread
// over THREADS threads with a detector each, timed from the decoded images to the boxes.
// Prints one JSON line. Not part of the CMake build (the script compiles it with g++ -O3):
//
//   faces_dlib_alone THREADS UPSAMPLE IMAGE...
#include <dlib/image_io.h>
#include <dlib/image_processing/frontal_face_detector.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <time.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: faces_dlib_alone THREADS UPSAMPLE IMAGE...\n");
    return 2;
  }
  const unsigned threads = static_cast<unsigned>(std::atoi(argv[1]));
  const unsigned upsample = static_cast<unsigned>(std::atoi(argv[2]));
  std::vector<dlib::array2d<dlib::rgb_pixel>> images(static_cast<std::size_t>(argc - 3));
  for (std::size_t i = 0; i < images.size(); ++i) dlib::load_image(images[i], argv[i + 3]);

  const dlib::frontal_face_detector prototype = dlib::get_frontal_face_detector();
  std::atomic<std::size_t> next{0}, faces{0};
  const auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const double cpu_start = cpu_now();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      dlib::frontal_face_detector detector = prototype;
      dlib::pyramid_down<2> pyr;
      for (std::size_t i; (i = next++) < images.size();) {
        dlib::array2d<dlib::rgb_pixel> doubled;
        dlib::assign_image(doubled, images[i]);
        for (unsigned k = 0; k < upsample; ++k) dlib::pyramid_up(doubled, pyr);
        faces += detector(doubled).size();
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"images\": %zu, \"faces\": %zu, \"seconds\": %.4f, \"cpu_seconds\": %.4f}\n",
              images.size(), faces.load(), seconds, cpu_now() - cpu_start);
  return 0;
}
