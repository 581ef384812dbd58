// bench_encode: times ClipModel::encode_images / encode_texts on deterministic random inputs for
// a model directory and prints one JSON line (images/s, texts/s, GFLOP/s, peak RSS), for
// bench/vs_torch_encode.py. A ViT-B/32-shaped random model:
//   /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32
//   build/bench/bench_encode --model /tmp/clip-b32 --threads 2
// --sgemm times the wrapper's sgemm on the forward's GEMM shapes instead (the ceiling).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/models/clip_model.h"
#include "vlbias/io/tensor/npy.h"

namespace {

using vlbias::bench::best_time;
using vlbias::bench::Clock;
using vlbias::bench::proc_status_mib;
using vlbias::bench::seconds_since;

constexpr const char* kUsage =
    "usage: bench_encode --model DIR [--images N] [--texts N] [--len-min L] [--len-max L] "
    "[--reps R] [--threads T] [--dump DIR]\n"
    "       bench_encode --sgemm [--threads T] [--reps R]\n";

struct Options {
  std::string model;
  std::size_t images = 64, texts = 512, len_min = 8, len_max = 15, reps = 3;
  unsigned threads = 0;
  std::string dump;
  bool sgemm = false;
};

Options parse(int argc, char** argv) {
  const vlbias::bench::Flags f(
      argc, argv,
      {"--model", "--images", "--texts", "--len-min", "--len-max", "--reps", "--threads", "--dump"},
      {"--sgemm"}, kUsage);
  Options o;
  o.model = f.text("--model");
  o.images = f.count("--images", o.images);
  o.texts = f.count("--texts", o.texts);
  o.len_min = f.count("--len-min", o.len_min);
  o.len_max = f.count("--len-max", o.len_max);
  o.reps = std::max<std::size_t>(1, f.count("--reps", o.reps));
  o.threads = static_cast<unsigned>(f.count("--threads", 0));
  o.dump = f.text("--dump");
  o.sgemm = f.has("--sgemm");
  if (!o.sgemm && o.model.empty()) vlbias::bench::Flags::fail(kUsage);
  if (o.len_min < 2 || o.len_max < o.len_min) vlbias::bench::Flags::fail(kUsage);
  return o;
}

// Multiply-adds of one tower block over `tokens` rows, attention over sequences of `len`.
double block_macs(const vlbias::ClipTowerConfig& t, double tokens, double len) {
  const double w = static_cast<double>(t.width), m = static_cast<double>(t.mlp_width);
  return tokens * (4.0 * w * w + 2.0 * w * m) + 2.0 * tokens * len * w;
}

int run_sgemm(const Options& o) {
  using vlbias::Transpose;
  // The forward's GEMMs at 64 ViT-B/32 images (3200 rows): qkv, out, fc1, fc2, patch embedding.
  const struct {
    const char* what;
    std::size_t m, n, k;
  } shapes[] = {
      {"qkv 3200x2304x768", 3200, 2304, 768},   {"out 3200x768x768", 3200, 768, 768},
      {"fc1 3200x3072x768", 3200, 3072, 768},   {"fc2 3200x768x3072", 3200, 768, 3072},
      {"patch 3136x768x3072", 3136, 768, 3072}, {"text fc1 768x2048x512", 768, 2048, 512}};
  vlbias::Rng rng(1);
  std::printf("{\"threads\": %u, \"sgemm\": [", vlbias::thread_count());
  bool first = true;
  for (const auto& s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.n * s.k), c(s.m * s.n);
    for (float& x : a) x = static_cast<float>(rng.uniform01() - 0.5);
    for (float& x : b) x = static_cast<float>(rng.uniform01() - 0.5);
    auto fn = [&] {
      vlbias::sgemm(Transpose::No, Transpose::Yes, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(),
                    s.k, 0.0f, c.data(), s.n);
    };
    fn();
    const double t = best_time(o.reps, fn);
    std::printf("%s{\"shape\": \"%s\", \"gflops\": %.1f}", first ? "" : ", ", s.what,
                2.0 * static_cast<double>(s.m * s.n * s.k) / t * 1e-9);
    first = false;
  }
  std::printf("]}\n");
  return 0;
}

int run(const Options& o) {
  vlbias::set_thread_count(o.threads);
  if (o.sgemm) return run_sgemm(o);
  const auto t_load = Clock::now();
  const vlbias::ClipModel model = vlbias::ClipModel::load(o.model);
  const double load_s = seconds_since(t_load);
  const double rss_loaded = proc_status_mib("VmRSS:");
  const vlbias::ClipConfig& c = model.config();

  // Inputs: pixels uniform with unit variance; texts [SOT, random ids, EOT] of uniform lengths.
  vlbias::Rng rng(12345);
  const std::size_t image_floats = 3 * c.image_size * c.image_size;
  std::vector<float> pixels(o.images * image_floats);
  for (float& x : pixels) x = static_cast<float>((rng.uniform01() * 2.0 - 1.0) * 1.7320508);
  const auto vocab = static_cast<std::int32_t>(c.vocab_size);
  const std::vector<std::vector<std::int32_t>> texts = vlbias::bench::random_texts(
      rng, o.texts, o.len_min, o.len_max, c.context_length, {vocab - 2}, {vocab - 1},
      [&](vlbias::Rng& r) {
        return 1 + static_cast<std::int32_t>(r.uniform_index(c.vocab_size - 3));
      });
  const std::size_t tokens = vlbias::bench::total_tokens(texts);

  // Warm-up (pool threads, page faults of the scratch buffers), then best of reps.
  model.encode_images(pixels.data(), std::min<std::size_t>(o.images, 2));
  model.encode_texts({texts.front()});
  vlbias::Matrix img, txt;
  const double t_img =
      best_time(o.reps, [&] { img = model.encode_images(pixels.data(), o.images); });
  const double t_txt = best_time(o.reps, [&] { txt = model.encode_texts(texts); });

  // Multiply-adds: patch embedding + blocks + projections (the last block counted in full).
  const double it = static_cast<double>(c.image_tokens());
  const double p = static_cast<double>(c.patch_size);
  const double img_macs = (it - 1) * 3 * p * p * static_cast<double>(c.vision.width) +
                          static_cast<double>(c.vision.layers) * block_macs(c.vision, it, it);
  double txt_macs = 0.0;
  for (const auto& t : texts) {
    const double l = static_cast<double>(t.size());
    txt_macs += static_cast<double>(c.text.layers) * block_macs(c.text, l, l);
  }
  const double images = static_cast<double>(o.images), ntexts = static_cast<double>(o.texts);
  std::printf(
      "{\"model\": \"%s\", \"threads\": %u, \"load_s\": %.3f, \"images\": %zu, "
      "\"image_s\": %.4f, \"images_per_s\": %.2f, \"image_gflops\": %.1f, \"texts\": %zu, "
      "\"mean_tokens\": %.2f, \"text_s\": %.4f, \"texts_per_s\": %.1f, \"text_gflops\": %.1f, "
      "\"rss_after_load_mib\": %.1f, \"peak_rss_mib\": %.1f}\n",
      o.model.c_str(), vlbias::thread_count(), load_s, o.images, t_img, images / t_img,
      2.0 * img_macs * images / t_img * 1e-9, o.texts, static_cast<double>(tokens) / ntexts, t_txt,
      ntexts / t_txt, 2.0 * txt_macs / t_txt * 1e-9, rss_loaded, proc_status_mib("VmHWM:"));

  if (!o.dump.empty()) {
    namespace fs = std::filesystem;
    fs::create_directories(o.dump);
    vlbias::write_npy(fs::path(o.dump) / "pixels.npy",
                      vlbias::MatrixView(pixels.data(), o.images, image_floats));
    vlbias::write_npy(fs::path(o.dump) / "image_embeddings.npy", img);
    vlbias::write_npy(fs::path(o.dump) / "text_embeddings.npy", txt);
    std::ofstream out(fs::path(o.dump) / "texts.json");
    out << "{\"texts\": ";
    vlbias::bench::write_texts_json(out, texts);
    out << "}\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const vlbias::Error& e) {
    std::fprintf(stderr, "bench_encode: %s\n", e.what());
    return e.exit_code();
  }
}
