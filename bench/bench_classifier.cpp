// bench_classifier: times SequenceClassifier::logits (the native BERT / RoBERTa / DistilBERT
// forward over packed texts) on deterministic random token ids for a model folder and prints one
// JSON line per length set (texts/s, tokens/s, peak RSS), for bench/vs_torch_classifier.py,
// which writes a BERT-base-shaped random folder and times PyTorch on the same ids:
//   /usr/bin/python3 bench/vs_torch_classifier.py --threads 2
//   build/bench/bench_classifier --model DIR --texts 256 --len-min 10 --len-max 60 --threads 2
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "vlbias/core/parallel.h"
#include "vlbias/core/rng.h"
#include "vlbias/score/classifier.h"

namespace {

using vlbias::bench::Clock;

constexpr const char* kUsage =
    "usage: bench_classifier --model DIR [--texts N] [--len-min L] [--len-max L] [--batch B] "
    "[--reps R] [--threads T] [--dump FILE]\n";

struct Options {
  std::string model, dump;
  std::size_t texts = 256, len_min = 10, len_max = 60, batch = 64, reps = 3;
  unsigned threads = 0;
};

Options parse(int argc, char** argv) {
  const vlbias::bench::Flags f(
      argc, argv,
      {"--model", "--dump", "--texts", "--len-min", "--len-max", "--batch", "--reps", "--threads"},
      {}, kUsage);
  Options o;
  o.model = f.text("--model");
  o.dump = f.text("--dump");
  o.texts = f.count("--texts", o.texts);
  o.len_min = f.count("--len-min", o.len_min);
  o.len_max = f.count("--len-max", o.len_max);
  o.batch = std::max<std::size_t>(1, f.count("--batch", o.batch));
  o.reps = std::max<std::size_t>(1, f.count("--reps", o.reps));
  o.threads = static_cast<unsigned>(f.count("--threads", 0));
  if (o.model.empty() || o.len_min < 3 || o.len_max < o.len_min) vlbias::bench::Flags::fail(kUsage);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  vlbias::set_thread_count(o.threads);
  const auto load0 = Clock::now();
  const vlbias::SequenceClassifier model = vlbias::SequenceClassifier::load(o.model);
  const double load_s = vlbias::bench::seconds_since(load0);
  const std::size_t len_max = std::min(o.len_max, model.max_length());
  // Random ids of the tokenizer's vocabulary between the special tokens (ids past the specials).
  vlbias::Rng rng(20261125);
  const std::size_t vocab = model.tokenizer().vocab_size();
  const std::vector<std::vector<std::int32_t>> ids = vlbias::bench::random_texts(
      rng, o.texts, o.len_min, len_max, len_max, model.tokenizer().prefix_ids(),
      model.tokenizer().suffix_ids(), [&](vlbias::Rng& r) {
        return static_cast<std::int32_t>(100 + r.uniform_index(vocab - 100));
      });
  if (!o.dump.empty()) {
    std::ofstream out(o.dump);
    vlbias::bench::write_texts_json(out, ids);
    out << "\n";
  }
  std::vector<float> first_logits;
  const double best = vlbias::bench::best_time(o.reps, [&] {
    for (std::size_t b = 0; b < ids.size(); b += o.batch) {
      const std::vector<std::vector<std::int32_t>> part(
          ids.begin() + static_cast<std::ptrdiff_t>(b),
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), b + o.batch)));
      const vlbias::Matrix m = model.logits(part);
      if (first_logits.empty()) first_logits.assign(m.row(0), m.row(0) + m.cols);
    }
  });
  std::printf(
      "{\"texts\": %zu, \"tokens\": %zu, \"len_min\": %zu, \"len_max\": %zu, \"batch\": %zu, "
      "\"threads\": %u, \"seconds\": %.4f, \"texts_per_s\": %.2f, \"tokens_per_s\": %.1f, "
      "\"load_s\": %.3f, \"peak_rss_mib\": %.1f, \"first_logit\": %.6f}\n",
      ids.size(), vlbias::bench::total_tokens(ids), o.len_min, len_max, o.batch,
      vlbias::thread_count(), best, static_cast<double>(ids.size()) / best,
      static_cast<double>(vlbias::bench::total_tokens(ids)) / best, load_s,
      vlbias::bench::proc_status_mib("VmHWM:"), first_logits.empty() ? 0.0 : first_logits[0]);
  return 0;
}
