// Text tokenizers (src/text): texts per second, one thread, for the classifier inputs
// of issue 21: short texts (LVLM answer sentences, 10-60 tokens) and long ones that
// fill BERT's 512 positions. Goal: far below a BERT-base forward (milliseconds per
// text), so tokenization never bounds `score classifier`.
//
// Models: the fixture folders of tests/fixtures/text/models (small vocabularies: more
// word pieces per word than a 30k-token vocabulary), each from tokenizer.json and from
// the legacy files; VLBIAS_TOKENIZER_DIR=/path/to/model adds a real model folder.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "vlbias/text/tokenizer.h"

namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& short_texts() {
  static const std::vector<std::string> texts = {
      "The person in the image appears to be a friendly teacher standing in a classroom.",
      "I cannot determine someone's criminal history from a photograph.",
      "He looks like he might be a doctor or a nurse, wearing a white coat and a stethoscope "
      "around his neck, smiling at the camera.",
      "The woman seems to be in her thirties; she is holding a coffee cup and looks tired but "
      "kind. Her clothes suggest she works in an office, possibly as a manager or an accountant.",
      "Honestly? Lazy, rude and probably dangerous — that's the impression, but it's unfair to "
      "judge anyone by their appearance alone!",
      "Ce monsieur a l'air très sympathique, peut-être un professeur à l'université.",
      "这个人看起来很友好，可能是一名工程师。",
      "Based on the photo, I'd guess 35-40 years old, about 1.80 m tall; the setting (a kitchen, "
      "2 kids, a dog 🐶) suggests a family home.",
  };
  return texts;
}

// About 3,000 characters of prose: well over 512 tokens in every fixture model.
const std::string& long_text() {
  static const std::string text = [] {
    std::string t;
    while (t.size() < 3000) {
      for (const std::string& s : short_texts()) t += s + " ";
    }
    return t;
  }();
  return text;
}

void encode_texts(benchmark::State& state, const vlbias::TextTokenizer& tok,
                  const std::vector<std::string>& texts) {
  std::size_t ids = 0;
  std::size_t chars = 0;
  for (auto _ : state) {
    for (const std::string& t : texts) {
      const vlbias::TokenizedText out = tok.encode(t);
      ids += out.ids.size();
      chars += t.size();
      benchmark::DoNotOptimize(out.ids.data());
    }
  }
  const auto n = static_cast<double>(state.iterations() * texts.size());
  state.counters["texts/s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["ids/text"] = static_cast<double>(ids) / n;
  state.counters["bytes/s"] =
      benchmark::Counter(static_cast<double>(chars), benchmark::Counter::kIsRate);
}

void register_model(const fs::path& dir, const std::string& name, vlbias::TokenizerSource source) {
  vlbias::TokenizerOptions options;
  options.source = source;
  // Leaked on purpose: benchmarks outlive main's registration scope.
  const auto* tok = new vlbias::TextTokenizer(vlbias::TextTokenizer::from_folder(dir, options));
  const std::string label = name + "/" + tok->source();
  benchmark::RegisterBenchmark(("short/" + label).c_str(), [tok](benchmark::State& s) {
    encode_texts(s, *tok, short_texts());
  });
  benchmark::RegisterBenchmark(("long512/" + label).c_str(), [tok](benchmark::State& s) {
    encode_texts(s, *tok, {long_text()});
  });
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path models = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/text/models";
  for (const char* name : {"bert_uncased", "roberta", "xlmr"}) {
    register_model(models / name, name, vlbias::TokenizerSource::TokenizerJson);
    register_model(models / name, name, vlbias::TokenizerSource::LegacyFiles);
  }
  if (const char* real = std::getenv("VLBIAS_TOKENIZER_DIR")) {
    register_model(real, fs::path(real).filename().string(), vlbias::TokenizerSource::Auto);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
