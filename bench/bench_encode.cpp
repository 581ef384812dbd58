// bench_encode: times ClipModel::encode_images / encode_texts on deterministic random inputs for
// a model directory and prints one JSON line (images/s, texts/s, GFLOP/s, peak RSS), for
// bench/vs_torch_encode.py. A ViT-B/32-shaped random model:
//   /usr/bin/python3 tools/make_clip_fixtures.py --bench-model /tmp/clip-b32
//   build/bench/bench_encode --model /tmp/clip-b32 --threads 2
// --sgemm times the wrapper's sgemm on the forward's GEMM shapes instead (the ceiling).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "vlbias/core/blas.h"
#include "vlbias/core/error.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/encode/clip_model.h"
#include "vlbias/io/npy.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// VmHWM / VmRSS from /proc/self/status, in MiB.
double proc_status_mib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) / 1024.0;
  }
  return 0.0;
}

struct Options {
  std::string model;
  std::size_t images = 64, texts = 512, len_min = 8, len_max = 15, reps = 3;
  unsigned threads = 0;
  std::string dump;
  bool sgemm = false;
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: bench_encode --model DIR [--images N] [--texts N] [--len-min L] "
               "[--len-max L] [--reps R] [--threads T] [--dump DIR]\n"
               "       bench_encode --sgemm [--threads T] [--reps R]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--model") {
      o.model = value();
    } else if (a == "--images") {
      o.images = std::stoul(value());
    } else if (a == "--texts") {
      o.texts = std::stoul(value());
    } else if (a == "--len-min") {
      o.len_min = std::stoul(value());
    } else if (a == "--len-max") {
      o.len_max = std::stoul(value());
    } else if (a == "--reps") {
      o.reps = std::max<std::size_t>(1, std::stoul(value()));
    } else if (a == "--threads") {
      o.threads = static_cast<unsigned>(std::stoul(value()));
    } else if (a == "--dump") {
      o.dump = value();
    } else if (a == "--sgemm") {
      o.sgemm = true;
    } else {
      usage();
    }
  }
  if (!o.sgemm && o.model.empty()) usage();
  if (o.len_min < 2 || o.len_max < o.len_min) usage();
  return o;
}

// Multiply-adds of one tower block over `tokens` rows, attention over sequences of `len`.
double block_macs(const vlbias::ClipTowerConfig& t, double tokens, double len) {
  const double w = static_cast<double>(t.width), m = static_cast<double>(t.mlp_width);
  return tokens * (4.0 * w * w + 2.0 * w * m) + 2.0 * tokens * len * w;
}

// Best-of-reps seconds of fn().
template <typename Fn>
double best_time(std::size_t reps, Fn fn) {
  double best = 1e300;
  for (std::size_t r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, seconds_since(t0));
  }
  return best;
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
  std::vector<std::vector<std::int32_t>> texts(o.texts);
  const auto vocab = static_cast<std::int32_t>(c.vocab_size);
  std::size_t tokens = 0;
  for (auto& t : texts) {
    const std::size_t len =
        std::min(c.context_length, o.len_min + rng.uniform_index(o.len_max - o.len_min + 1));
    t.push_back(vocab - 2);
    while (t.size() + 1 < len) {
      t.push_back(1 + static_cast<std::int32_t>(rng.uniform_index(c.vocab_size - 3)));
    }
    t.push_back(vocab - 1);
    tokens += t.size();
  }

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
    out << "{\"texts\": [";
    for (std::size_t i = 0; i < texts.size(); ++i) {
      out << (i ? ", " : "") << "[";
      for (std::size_t j = 0; j < texts[i].size(); ++j) out << (j ? "," : "") << texts[i][j];
      out << "]";
    }
    out << "]}\n";
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
