// bench_resnet: times the FairFace classifier (FairFaceClassifier::classify: the torchvision
// ResNet forward of src/encode/models/resnet/resnet_model.cpp) on a folder of face chips, decoding
// included (PNG / JPEG decode, PIL bilinear resize to 224, normalisation, the forward, the heads'
// softmax), and prints one JSON line: images/s, GFLOP/s (2 x multiply-adds per image), the sgemm
// ceiling (the best of three 2048^3 products through vlbias::sgemm on the same threads) and the
// fraction of it reached. bench/vs_torch_resnet.py writes the chips and a full-size random
// resnet34 and times PyTorch on the same files:
//   /usr/bin/python3 bench/vs_torch_resnet.py --threads 2
//   build/bench/bench_resnet --model M.pt --chips DIR [--batch 16] [--reps 3] [--threads 2]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/parallel.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/fairface.h"

namespace {

using vlbias::bench::Clock;

constexpr const char* kUsage =
    "usage: bench_resnet --model FILE --chips DIR [--batch B] [--reps R] [--threads T]\n";

double resnet_sgemm_ceiling() {
  const std::size_t n = 2048;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  const double best = vlbias::bench::best_time(3, [&] {
    vlbias::sgemm(vlbias::Transpose::No, vlbias::Transpose::No, n, n, n, 1.0f, a.data(), n,
                  b.data(), n, 0.0f, c.data(), n);
  });
  return 2.0 * static_cast<double>(n) * n * n / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const vlbias::bench::Flags f(argc, argv, {"--model", "--chips", "--batch", "--reps", "--threads"},
                               {}, kUsage);
  const std::string model_path = f.text("--model"), chips_dir = f.text("--chips");
  if (model_path.empty() || chips_dir.empty()) vlbias::bench::Flags::fail(kUsage);
  vlbias::set_thread_count(static_cast<unsigned>(f.count("--threads", 0)));
  const std::size_t reps = std::max<std::size_t>(1, f.count("--reps", 3));
  vlbias::FairFaceOptions options;
  options.batch = std::max<std::size_t>(1, f.count("--batch", 16));
  const auto load0 = Clock::now();
  const vlbias::FairFaceClassifier model(model_path, options);
  const double load_s = vlbias::bench::seconds_since(load0);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(chips_dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  double first = 0.0;
  const double best = vlbias::bench::best_time(reps, [&] {
    std::vector<vlbias::RgbImage> chips(files.size());
    vlbias::parallel_for(files.size(), [&](std::size_t i) {
      chips[i] = vlbias::decode_image_file(files[i], vlbias::DecodeOptions{});
    });
    const vlbias::FairFaceResult r = model.classify(chips);
    first = r.probabilities[0].data[0];
  });
  const double images_s = static_cast<double>(files.size()) / best;
  const double gflops =
      2.0 * model.network().macs_per_image(vlbias::kFairFaceInputSize) * images_s / 1e9;
  const double ceiling = resnet_sgemm_ceiling();
  std::printf(
      "{\"architecture\": \"%s\", \"images\": %zu, \"batch\": %zu, \"threads\": %u, "
      "\"seconds\": %.4f, \"images_per_s\": %.2f, \"gflops\": %.1f, \"ceiling_gflops\": %.1f, "
      "\"fraction_of_ceiling\": %.3f, \"load_s\": %.3f, \"peak_rss_mib\": %.1f, "
      "\"first_probability\": %.6f}\n",
      model.network().architecture().c_str(), files.size(), options.batch, vlbias::thread_count(),
      best, images_s, gflops, ceiling, gflops / ceiling, load_s,
      vlbias::bench::proc_status_mib("VmHWM:"), first);
  return 0;
}
