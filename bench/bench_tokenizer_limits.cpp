// The text tokenizers (src/text) on the hostile inputs of issue 37, item 4, at growing sizes:
// the time per byte must stay flat (linear in the text). Before the automata these took:
// WordPiece with max_input_chars_per_word 10^9, 2,000 / 4,000 characters 0.36 / 1.85 s (cubic:
// hours at 50,000); 100,000 added tokens x 1 MB of text, minutes; a 100,000-character Unigram
// piece x 200,000 characters, minutes.
//
//   build/bench/bench_tokenizer_limits     one JSON line per case: sizes, seconds, ns per byte
//
// Measured 2026-11-29 (Release, one thread, the 2-core machine shared with 3 builds, so
// +-2x noise): WordPiece one word of 12,500 / 50,000 / 200,000 characters 0.001 / 0.019 /
// 0.055 s; 100,000 added tokens over 128 KiB / 1 MiB of text 0.023 / 0.25 s; the
// 100,000-character Unigram piece over 50,000 / 400,000 characters 0.015 / 0.10 s; a
// 50,001-character Replace pattern over 256 KiB / 1 MiB 0.08 / 0.48 s: 100-450 ns per byte
// at every size (linear).
//
// Hostile folders are written under the system temp folder from the fixture models of
// tests/fixtures/text/models (tokenizer.json edited as tests/text/tokenizer_limits_test.cpp
// does). Single thread; the best of 3 runs per size.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vlbias/text/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path scratch() {
  return fs::temp_directory_path() / ("vlbias_bench_tokenizer_limits_" + std::to_string(getpid()));
}

// Fixture model `name` with its tokenizer.json changed by `edit`, loaded from tokenizer.json.
vlbias::TextTokenizer hostile(const std::string& name, const std::string& label,
                              const std::function<void(json&)>& edit) {
  const fs::path from = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/text/models" / name;
  const fs::path to = scratch() / label;
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) {
    fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
  }
  std::ifstream in(to / "tokenizer.json", std::ios::binary);
  json tok = json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  edit(tok);
  std::ofstream(to / "tokenizer.json", std::ios::binary | std::ios::trunc) << tok.dump();
  vlbias::TokenizerOptions options;
  options.source = vlbias::TokenizerSource::TokenizerJson;
  return vlbias::TextTokenizer::from_folder(to, options);
}

void run_case(const char* name, const vlbias::TextTokenizer& tok,
              const std::function<std::string(std::size_t)>& text_of,
              const std::vector<std::size_t>& sizes) {
  json out = {{"case", name},
              {"sizes", json::array()},
              {"seconds", json::array()},
              {"ns_per_byte", json::array()},
              {"ids", json::array()}};
  for (const std::size_t n : sizes) {
    const std::string text = text_of(n);
    double best = 1e300;
    std::size_t ids = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      ids = tok.content_ids(text).size();
      const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      best = std::min(best, dt.count());
    }
    out["sizes"].push_back(text.size());
    out["seconds"].push_back(best);
    out["ns_per_byte"].push_back(1e9 * best / static_cast<double>(text.size()));
    out["ids"].push_back(ids);
  }
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
}

json added_token(int k) {
  return {{"id", 100 + k % 1000}, {"content", "<x" + std::to_string(k) + ">"},
          {"single_word", false}, {"lstrip", false},
          {"rstrip", false},      {"normalized", false},
          {"special", true}};
}

}  // namespace

int main() {
  const auto as = [](std::size_t n) { return std::string(n, 'a'); };
  run_case("wordpiece_one_word_max_input_chars_1e9",
           hostile("bert_uncased", "wordpiece",
                   [](json& t) { t["model"]["max_input_chars_per_word"] = 1000000000; }),
           as, {12500, 25000, 50000, 100000, 200000});
  run_case("wordpiece_100000_added_tokens",
           hostile("bert_uncased", "added",
                   [](json& t) {
                     for (int k = 0; k < 100000; ++k) t["added_tokens"].push_back(added_token(k));
                   }),
           [](std::size_t n) {
             std::string text;
             for (int j = 0; text.size() < n; ++j) {
               text +=
                   "the quick brown fox jumps over the lazy dog <x" + std::to_string(7 * j) + "> ";
             }
             return text;
           },
           {1u << 17, 1u << 18, 1u << 19, 1u << 20});
  run_case("unigram_100000_character_piece",
           hostile("xlmr", "unigram",
                   [](json& t) {
                     t["model"]["vocab"].push_back(json::array({std::string(100000, 'a'), 0.0}));
                   }),
           as, {50000, 100000, 200000, 400000});
  run_case("unigram_replace_50001_character_pattern",
           hostile("xlmr", "replace",
                   [](json& t) {
                     t["normalizer"]["normalizers"].push_back(
                         {{"type", "Replace"},
                          {"pattern", {{"String", std::string(50000, 'a') + "b"}}},
                          {"content", "c"}});
                   }),
           as, {1u << 18, 1u << 19, 1u << 20});
  std::error_code ignored;
  fs::remove_all(scratch(), ignored);
  return 0;
}
