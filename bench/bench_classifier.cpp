// bench_classifier: times SequenceClassifier::logits (the native BERT / RoBERTa / DistilBERT
// forward over packed texts) on deterministic random token ids for a model folder and prints one
// JSON line per length set (texts/s, tokens/s, peak RSS), for bench/vs_torch_classifier.py,
// which writes a BERT-base-shaped random folder and times PyTorch on the same ids:
//   /usr/bin/python3 bench/vs_torch_classifier.py --threads 2
//   build/bench/bench_classifier --model DIR --texts 256 --len-min 10 --len-max 60 --threads 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/score/classifier.h"

namespace {

using Clock = std::chrono::steady_clock;

double proc_status_mib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) / 1024.0;
  }
  return 0.0;
}

struct Options {
  std::string model, dump;
  std::size_t texts = 256, len_min = 10, len_max = 60, batch = 64, reps = 3;
  unsigned threads = 0;
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: bench_classifier --model DIR [--texts N] [--len-min L] [--len-max L] "
               "[--batch B] [--reps R] [--threads T] [--dump FILE]\n");
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
    } else if (a == "--dump") {
      o.dump = value();
    } else if (a == "--texts") {
      o.texts = std::stoul(value());
    } else if (a == "--len-min") {
      o.len_min = std::stoul(value());
    } else if (a == "--len-max") {
      o.len_max = std::stoul(value());
    } else if (a == "--batch") {
      o.batch = std::max<std::size_t>(1, std::stoul(value()));
    } else if (a == "--reps") {
      o.reps = std::max<std::size_t>(1, std::stoul(value()));
    } else if (a == "--threads") {
      o.threads = static_cast<unsigned>(std::stoul(value()));
    } else {
      usage();
    }
  }
  if (o.model.empty() || o.len_min < 3 || o.len_max < o.len_min) usage();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  vlbias::set_thread_count(o.threads);
  const auto load0 = Clock::now();
  const vlbias::SequenceClassifier model = vlbias::SequenceClassifier::load(o.model);
  const double load_s = std::chrono::duration<double>(Clock::now() - load0).count();
  const std::size_t len_max = std::min(o.len_max, model.max_length());
  // Random ids of the tokenizer's vocabulary between the special tokens (ids past the specials).
  vlbias::Rng rng(20261125);
  const auto& prefix = model.tokenizer().prefix_ids();
  const auto& suffix = model.tokenizer().suffix_ids();
  const std::size_t vocab = model.tokenizer().vocab_size();
  std::vector<std::vector<std::int32_t>> ids(o.texts);
  std::size_t tokens = 0;
  for (auto& t : ids) {
    const std::size_t n = o.len_min + rng.uniform_index(len_max - o.len_min + 1);
    t.assign(prefix.begin(), prefix.end());
    while (t.size() + suffix.size() < n) {
      t.push_back(static_cast<std::int32_t>(100 + rng.uniform_index(vocab - 100)));
    }
    t.insert(t.end(), suffix.begin(), suffix.end());
    tokens += t.size();
  }
  if (!o.dump.empty()) {
    std::ofstream out(o.dump);
    out << "[";
    for (std::size_t i = 0; i < ids.size(); ++i) {
      out << (i ? ",\n[" : "[");
      for (std::size_t j = 0; j < ids[i].size(); ++j) out << (j ? "," : "") << ids[i][j];
      out << "]";
    }
    out << "]\n";
  }
  double best = 1e300;
  std::vector<float> first_logits;
  for (std::size_t rep = 0; rep < o.reps; ++rep) {
    const auto t0 = Clock::now();
    for (std::size_t b = 0; b < ids.size(); b += o.batch) {
      const std::vector<std::vector<std::int32_t>> part(
          ids.begin() + static_cast<std::ptrdiff_t>(b),
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), b + o.batch)));
      const vlbias::Matrix m = model.logits(part);
      if (rep == 0 && b == 0) first_logits.assign(m.row(0), m.row(0) + m.cols);
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf(
      "{\"texts\": %zu, \"tokens\": %zu, \"len_min\": %zu, \"len_max\": %zu, \"batch\": %zu, "
      "\"threads\": %u, \"seconds\": %.4f, \"texts_per_s\": %.2f, \"tokens_per_s\": %.1f, "
      "\"load_s\": %.3f, \"peak_rss_mib\": %.1f, \"first_logit\": %.6f}\n",
      ids.size(), tokens, o.len_min, len_max, o.batch, vlbias::thread_count(), best,
      static_cast<double>(ids.size()) / best, static_cast<double>(tokens) / best, load_s,
      proc_status_mib("VmHWM:"), first_logits.empty() ? 0.0 : first_logits[0]);
  return 0;
}
