// bench_calls: the C++ side of bench/bench_python.py. Times one engine call on arrays read
// from .npy files (median of the repeats, after one warm-up), the same call the Python
// binding makes, so the binding's overhead is the difference.
//
//   bench_calls prdc|fid|kid|vendi|scweat REPEATS A.npy [B.npy [C.npy]]
//   bench_calls clip_texts|clip_images REPEATS MODEL_DIR N [IMAGE]   (N texts / N copies of IMAGE,
//                                                                     decoded each call)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vlbias/encode/encode.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/io/tensor/npy.h"
#include "vlbias/metrics/association.h"
#include "vlbias/metrics/distribution_metrics.h"
#include "vlbias/metrics/prdc.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: bench_calls prdc|fid|kid|vendi|scweat REPEATS A.npy [B.npy [C.npy]]\n");
    return 2;
  }
  const std::string what = argv[1];
  const int repeats = std::stoi(argv[2]);
  std::vector<vlbias::Matrix> m;
  std::function<void()> call;
  std::optional<vlbias::ClipEncoder> clip;
  std::vector<std::string> texts;
  if (what == "clip_texts" || what == "clip_images") {
    clip.emplace(vlbias::ClipEncoder::open(argv[3]));
    const std::size_t n = std::stoul(argv[4]);
    if (what == "clip_texts") {
      for (std::size_t i = 0; i < n; ++i)
        texts.push_back("a photo of a person number " + std::to_string(i));
      call = [&] { clip->encode_texts(texts); };
    } else {
      const std::string image = argv[5];
      call = [&, n, image] {
        std::vector<vlbias::RgbImage> images;
        for (std::size_t i = 0; i < n; ++i) images.push_back(vlbias::decode_image_file(image));
        clip->encode_images(images);
      };
    }
  } else {
    for (int i = 3; i < argc; ++i) m.push_back(vlbias::read_npy_matrix(argv[i]));
  }
  if (call) {
  } else if (what == "prdc") {
    vlbias::PrdcOptions o;
    o.k = 3;
    call = [&, o] { vlbias::prdc(m.at(0), m.at(1), o); };
  } else if (what == "fid") {
    call = [&] { vlbias::fid(m.at(0), m.at(1)); };
  } else if (what == "kid") {
    vlbias::KidOptions o;
    call = [&, o] { vlbias::kid(m.at(0), m.at(1), o); };
  } else if (what == "vendi") {
    call = [&] { vlbias::vendi(m.at(0), 1.0); };
  } else if (what == "scweat") {
    vlbias::ScweatOptions o;
    o.permutations = 10000;
    call = [&, o] { vlbias::sc_weat(m.at(0), m.at(1), m.at(2), o); };
  } else {
    std::fprintf(stderr, "bench_calls: unknown call %s\n", what.c_str());
    return 2;
  }
  call();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("%.6f\n", t[t.size() / 2]);
  return 0;
}
