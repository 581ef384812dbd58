// bench_cam: times clip_cams (GradCAM: the forward and the last block's backward) against
// encode_images alone on deterministic random images for a model directory, and prints one JSON
// line (images/s, the backward's overhead, peak RSS), for bench/vs_torch_cam.py. A ViT-B/32-shaped
// random model:
//   /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32
//   build/bench/bench_cam --model /tmp/clip-b32 --threads 2
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/encode/models/clip_model.h"

namespace {

using vlbias::bench::best_time;
using vlbias::bench::proc_status_mib;

constexpr const char* kUsage =
    "usage: bench_cam --model DIR [--images N] [--reps R] [--threads T] "
    "[--method gradcam|gradcam++|occlusion]\n";

struct Options {
  std::string model, method = "gradcam";
  std::size_t images = 32, reps = 3;
  unsigned threads = 0;
};

Options parse(int argc, char** argv) {
  const vlbias::bench::Flags f(
      argc, argv, {"--model", "--images", "--reps", "--threads", "--method"}, {}, kUsage);
  Options o;
  o.model = f.text("--model");
  o.images = std::max<std::size_t>(1, f.count("--images", o.images));
  o.reps = std::max<std::size_t>(1, f.count("--reps", o.reps));
  o.threads = static_cast<unsigned>(f.count("--threads", 0));
  o.method = f.text("--method", o.method);
  if (o.model.empty()) vlbias::bench::Flags::fail(kUsage);
  return o;
}

int run(const Options& o) {
  vlbias::set_thread_count(o.threads);
  const vlbias::ClipModel model = vlbias::ClipModel::load(o.model);
  const vlbias::ClipConfig& c = model.config();
  const vlbias::CamMethod method = vlbias::parse_cam_method(o.method);
  // Pixels uniform with unit variance; the pair's two text embeddings random.
  vlbias::Rng rng(12345);
  const std::size_t image_floats = 3 * c.image_size * c.image_size;
  std::vector<float> pixels(o.images * image_floats);
  for (float& x : pixels) x = static_cast<float>((rng.uniform01() * 2.0 - 1.0) * 1.7320508);
  vlbias::Matrix first(1, c.embed_dim), second(1, c.embed_dim);
  for (float& x : first.data) x = static_cast<float>(rng.uniform01() - 0.5);
  for (float& x : second.data) x = static_cast<float>(rng.uniform01() - 0.5);
  const vlbias::TraitPairTarget target = vlbias::make_trait_pair_target(first, second, 100.0);
  vlbias::clip_cams(model, pixels.data(), std::min<std::size_t>(4, o.images), target, method);
  const double cam_s =
      best_time(o.reps, [&] { vlbias::clip_cams(model, pixels.data(), o.images, target, method); });
  const double encode_s = best_time(o.reps, [&] { model.encode_images(pixels.data(), o.images); });
  std::printf(
      "{\"threads\": %u, \"images\": %zu, \"method\": \"%s\", \"cam_images_per_s\": %.3f, "
      "\"encode_images_per_s\": %.3f, \"cam_over_encode\": %.3f, \"peak_rss_mib\": %.1f}\n",
      vlbias::thread_count(), o.images, vlbias::to_string(method),
      static_cast<double>(o.images) / cam_s, static_cast<double>(o.images) / encode_s,
      cam_s / encode_s, proc_status_mib("VmHWM:"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse(argc, argv));
}
