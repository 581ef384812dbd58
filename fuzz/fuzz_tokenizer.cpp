// libFuzzer target for the CLIP tokenizer: text cleaning (ftfy subset, HTML,
// NFC, case), pre-tokenizer and BPE in both cleaning modes, and the vocab.json /
// merges.txt loaders. The first input byte selects what the rest is:
//   0, 1  text for the HuggingFace / OpenClip tokenizer (a small vocabulary
//         built here: 512 byte symbols, merges spelling some words, specials)
//   2     a vocab.json, loaded with that vocabulary's merges.txt
//   3     a merges.txt, loaded with that vocabulary's vocab.json
// Only vlbias::Error may escape; anything else (crash, hang, sanitizer report,
// other exception, broken invariant) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_tokenizer.h"

namespace {

namespace fs = std::filesystem;

void check(bool ok) {
  if (!ok) std::abort();
}

// GPT-2 bytes_to_unicode symbol of byte b, UTF-8.
std::string byte_symbol(int b) {
  const auto printable = [](int x) {
    return (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
  };
  int cp = b;
  if (!printable(b)) {
    cp = 256;
    for (int x = 0; x < b; ++x) cp += printable(x) ? 0 : 1;
  }
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

struct Files {
  fs::path dir;
  std::string vocab;
  std::string merges;
};

// A CLIP-layout vocabulary whose merges build each word left to right.
Files make_files() {
  Files f;
  f.dir = fs::temp_directory_path() / ("vlbias_fuzz_tokenizer_" + std::to_string(::getpid()));
  fs::create_directories(f.dir);
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_symbol(b));
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_symbol(b) + "</w>");
  std::set<std::string> known(tokens.begin(), tokens.end());
  f.merges = "#version: 0.2\n";
  for (std::string_view word : {"a", "photo", "of", "person", "the", "friendly", "caf\xc3\xa9",
                                "don", "'t", "'s", "!!", "people", "\xe5\x86\x99\xe7\x9c\x9f"}) {
    const std::string w(word);
    std::string left = byte_symbol(static_cast<unsigned char>(w[0]));
    if (w.size() == 1) continue;
    for (std::size_t k = 1; k < w.size(); ++k) {
      std::string right = byte_symbol(static_cast<unsigned char>(w[k]));
      if (k + 1 == w.size()) right += "</w>";
      const std::string joined = left + right;
      if (known.insert(joined).second) {
        tokens.push_back(joined);
        f.merges += left + " " + right + "\n";
      }
      left = joined;
    }
  }
  tokens.push_back("<|startoftext|>");
  tokens.push_back("<|endoftext|>");
  f.vocab = "{";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    f.vocab += (i ? ", " : "") + json_string(tokens[i]) + ": " + std::to_string(i);
  }
  f.vocab += "}";
  std::ofstream(f.dir / "vocab.json", std::ios::binary) << f.vocab;
  std::ofstream(f.dir / "merges.txt", std::ios::binary) << f.merges;
  return f;
}

const Files& files() {
  static const Files f = make_files();
  static const int cleanup = std::atexit([] {
    std::error_code ignored;
    fs::remove_all(files().dir, ignored);
  });
  (void)cleanup;
  return f;
}

const vlbias::ClipTokenizer& tokenizer(vlbias::TextCleaning cleaning) {
  static const vlbias::ClipTokenizer hf = vlbias::ClipTokenizer::from_files(
      files().dir / "vocab.json", files().dir / "merges.txt", vlbias::TextCleaning::HuggingFace);
  static const vlbias::ClipTokenizer oc = vlbias::ClipTokenizer::from_files(
      files().dir / "vocab.json", files().dir / "merges.txt", vlbias::TextCleaning::OpenClip);
  return cleaning == vlbias::TextCleaning::HuggingFace ? hf : oc;
}

void fuzz_text(const vlbias::ClipTokenizer& tok, std::string_view text) {
  std::optional<std::size_t> count;
  try {
    count = tok.token_count(text);
  } catch (const vlbias::InputError&) {
  }
  for (const std::size_t context : {std::size_t{2}, std::size_t{5}, std::size_t{77}}) {
    try {
      const std::vector<std::int32_t> ids = tok.encode(text, context);
      check(count.has_value());
      check(ids.size() >= 2 && ids.size() <= context);
      check(ids.front() == tok.start_id() && ids.back() == tok.end_id());
      check(ids.size() == std::min(*count + 2, context));
      for (std::int32_t id : ids) check(id >= 0 && static_cast<std::size_t>(id) < tok.vocab_size());
      (void)tok.clean(text);
    } catch (const vlbias::InputError&) {
      check(!count.has_value());  // only invalid UTF-8 is rejected
    }
  }
}

void fuzz_files(std::string_view vocab, std::string_view merges) {
  const fs::path v = files().dir / "fuzz_vocab.json";
  const fs::path m = files().dir / "fuzz_merges.txt";
  std::ofstream(v, std::ios::binary | std::ios::trunc).write(vocab.data(), vocab.size());
  std::ofstream(m, std::ios::binary | std::ios::trunc).write(merges.data(), merges.size());
  try {
    const auto tok = vlbias::ClipTokenizer::from_files(v, m, vlbias::TextCleaning::HuggingFace);
    check(static_cast<std::size_t>(tok.start_id()) < tok.vocab_size());
    fuzz_text(tok, "A photo of a friendly person, don't!! caf\xc3\xa9");
  } catch (const vlbias::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      fuzz_text(tokenizer(vlbias::TextCleaning::HuggingFace), rest);
      break;
    case 1:
      fuzz_text(tokenizer(vlbias::TextCleaning::OpenClip), rest);
      break;
    case 2:
      fuzz_files(rest, files().merges);
      break;
    default:
      fuzz_files(files().vocab, rest);
      break;
  }
  return 0;
}
