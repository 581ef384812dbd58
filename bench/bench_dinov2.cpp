// bench_dinov2: times Dinov2Model::encode_images on deterministic random pixels for a model folder
// and prints one JSON line (images/s, GFLOP/s, peak RSS), for bench/vs_torch_dinov2.py. A
// ViT-L/14-shaped random model (RANDOM weights: speed only):
//   /usr/bin/python3 tools/make_dinov2_fixtures.py --bench-model /tmp/dinov2-l14 --shape l14
//   build/bench/bench_dinov2 --model /tmp/dinov2-l14 --threads 2
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/models/dinov2_model.h"
#include "vlbias/io/tensor/npy.h"

namespace {

using vlbias::bench::best_time;
using vlbias::bench::Clock;
using vlbias::bench::proc_status_mib;
using vlbias::bench::seconds_since;

constexpr const char* kUsage =
    "usage: bench_dinov2 --model DIR [--images N] [--image-size S] [--reps R] [--threads T] "
    "[--dump DIR]\n";

struct Options {
  std::string model, dump;
  std::size_t images = 16, image_size = 224, reps = 3;
  unsigned threads = 0;
};

Options parse(int argc, char** argv) {
  const vlbias::bench::Flags f(
      argc, argv, {"--model", "--images", "--image-size", "--reps", "--threads", "--dump"}, {},
      kUsage);
  Options o;
  o.model = f.text("--model");
  o.images = std::max<std::size_t>(1, f.count("--images", o.images));
  o.image_size = f.count("--image-size", o.image_size);
  o.reps = std::max<std::size_t>(1, f.count("--reps", o.reps));
  o.threads = static_cast<unsigned>(f.count("--threads", 0));
  o.dump = f.text("--dump");
  if (o.model.empty()) vlbias::bench::Flags::fail(kUsage);
  return o;
}

int run(const Options& o) {
  vlbias::set_thread_count(o.threads);
  const auto t_load = Clock::now();
  const vlbias::Dinov2Model model = vlbias::Dinov2Model::load(o.model);
  const double load_s = seconds_since(t_load);
  const vlbias::Dinov2Config& c = model.config();
  const std::size_t s = o.image_size, image_floats = 3 * s * s;
  vlbias::Rng rng(12345);
  std::vector<float> pixels(o.images * image_floats);
  for (float& x : pixels) x = static_cast<float>((rng.uniform01() * 2.0 - 1.0) * 1.7320508);
  model.encode_images(pixels.data(), 1, s, s);  // warm-up: pool, positions, page faults
  vlbias::Matrix out;
  const double t =
      best_time(o.reps, [&] { out = model.encode_images(pixels.data(), o.images, s, s); });
  // Multiply-adds per image: patch embedding, and per block q/k/v/out, the MLP and attention
  // (the last block counted in full).
  const double g = static_cast<double>(s / c.patch_size), tokens = g * g + 1;
  const double w = static_cast<double>(c.width), m = static_cast<double>(c.mlp_width);
  const double p = static_cast<double>(c.patch_size);
  const double mlp = c.swiglu ? 3.0 * w * m : 2.0 * w * m;
  const double macs =
      (tokens - 1) * 3 * p * p * w +
      static_cast<double>(c.layers) * (tokens * (4.0 * w * w + mlp) + 2.0 * tokens * tokens * w);
  const double n = static_cast<double>(o.images);
  std::printf(
      "{\"model\": \"%s\", \"threads\": %u, \"load_s\": %.3f, \"images\": %zu, \"image_size\": "
      "%zu, \"seconds\": %.4f, \"images_per_s\": %.3f, \"gflops\": %.1f, \"peak_rss_mib\": "
      "%.1f}\n",
      o.model.c_str(), vlbias::thread_count(), load_s, o.images, s, t, n / t,
      2.0 * macs * n / t * 1e-9, proc_status_mib("VmHWM:"));
  if (!o.dump.empty()) {
    namespace fs = std::filesystem;
    fs::create_directories(o.dump);
    vlbias::write_npy(fs::path(o.dump) / "pixels.npy",
                      vlbias::MatrixView(pixels.data(), o.images, image_floats));
    vlbias::write_npy(fs::path(o.dump) / "features.npy", out);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const vlbias::Error& e) {
    std::fprintf(stderr, "bench_dinov2: %s\n", e.what());
    return e.exit_code();
  }
}
