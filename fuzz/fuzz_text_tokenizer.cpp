// libFuzzer target for the text tokenizers (src/text): texts through every fixture
// tokenizer, and each file they read replaced by the input. The first input byte
// selects what the rest is:
//   0  a text, tokenized by the 11 fixture tokenizers of tests/fixtures/text/models
//   1  tokenizer.json          2  vocab.txt           3  vocab.json
//   4  merges.txt              5  sentencepiece.bpe.model
//   6  tokenizer_config.json   7  a precompiled charsmap blob, used on fixed texts
// Files are written into a copy of a fixture folder, which is then loaded and used.
// Only vlbias::InputError may escape a load, and only InputError (invalid UTF-8, a
// corrupt charsmap) an encode; anything else (crash, hang, sanitizer report, other
// exception, broken invariant) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "charsmap.h"
#include "vlbias/core/error.h"
#include "vlbias/text/tokenizer.h"

namespace {

namespace fs = std::filesystem;

void check(bool ok) {
  if (!ok) std::abort();
}

fs::path models() {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/text/models";
}

const std::vector<vlbias::TextTokenizer>& fixture_tokenizers() {
  static const std::vector<vlbias::TextTokenizer> all = [] {
    std::vector<vlbias::TextTokenizer> out;
    for (const char* name : {"bert_uncased", "distilbert_cased", "roberta", "xlmr", "xlmr_bytes"}) {
      for (auto source :
           {vlbias::TokenizerSource::LegacyFiles, vlbias::TokenizerSource::TokenizerJson}) {
        vlbias::TokenizerOptions options;
        options.source = source;
        out.push_back(vlbias::TextTokenizer::from_folder(models() / name, options));
      }
    }
    vlbias::TokenizerOptions options;
    options.source = vlbias::TokenizerSource::TokenizerJson;
    out.push_back(vlbias::TextTokenizer::from_folder(models() / "xlmr_old_json", options));
    return out;
  }();
  return all;
}

void fuzz_text(const vlbias::TextTokenizer& tok, std::string_view text) {
  std::vector<std::int32_t> content;
  try {
    content = tok.content_ids(text);
  } catch (const vlbias::InputError&) {
    return;  // invalid UTF-8 (or a corrupt charsmap in a fuzzed model)
  }
  for (std::int32_t id : content) {
    check(id >= 0 && static_cast<std::size_t>(id) < tok.vocab_size());
  }
  const std::size_t specials = tok.prefix_ids().size() + tok.suffix_ids().size();
  for (const std::size_t max_length : {specials + 1, specials + 7, std::size_t{512}}) {
    const vlbias::TokenizedText t = tok.encode(text, max_length);
    check(t.content_length == content.size());
    check(t.truncated == (content.size() + specials > max_length));
    check(t.ids.size() == std::min(content.size() + specials, max_length));
    check(std::equal(t.ids.begin() + static_cast<std::ptrdiff_t>(tok.prefix_ids().size()),
                     t.ids.end() - static_cast<std::ptrdiff_t>(tok.suffix_ids().size()),
                     content.begin()));
  }
}

const fs::path& scratch() {
  static const fs::path dir =
      fs::temp_directory_path() / ("vlbias_fuzz_text_" + std::to_string(::getpid()));
  static const int cleanup = std::atexit([] {
    std::error_code ignored;
    fs::remove_all(scratch(), ignored);
  });
  (void)cleanup;
  return dir;
}

// A copy of fixture `model` (made once) with `file` replaced by `bytes` while it is
// loaded from `source` and used; the original file is put back afterwards.
void fuzz_file(const char* model, const char* file, std::string_view bytes,
               vlbias::TokenizerSource source) {
  const fs::path dir = scratch() / model;
  if (!fs::exists(dir)) {
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(models() / model)) {
      fs::copy_file(e.path(), dir / e.path().filename());
    }
  }
  const auto write = [&](std::string_view content) {
    std::ofstream(dir / file, std::ios::binary | std::ios::trunc)
        .write(content.data(), static_cast<std::streamsize>(content.size()));
  };
  write(bytes);
  vlbias::TokenizerOptions options;
  options.source = source;
  try {
    const vlbias::TextTokenizer tok = vlbias::TextTokenizer::from_folder(dir, options);
    for (std::string_view text : {"Hello, wörld! [CLS] <mask> 😀 我爱", "", "  a  b  "}) {
      fuzz_text(tok, text);
    }
  } catch (const vlbias::InputError&) {
  } catch (const vlbias::UsageError&) {
    // A fuzzed config.json or tokenizer_config.json may leave no maximum length.
  }
  std::error_code ec;
  if (fs::exists(models() / model / file)) {
    fs::copy_file(models() / model / file, dir / file, fs::copy_options::overwrite_existing, ec);
  } else {
    fs::remove(dir / file, ec);
  }
}

void fuzz_charsmap(std::string_view blob) {
  try {
    const auto map = vlbias::text_internal::PrecompiledCharsmap::parse(blob, "fuzzed charsmap");
    for (std::u32string_view text :
         {std::u32string_view(U"Ａb\u0301c \u00e9 \U0001F468\u200d\U0001F469"),
          std::u32string_view(U"\u1100\u1161\u11a8 x\r\n")}) {
      (void)map.normalize_graphemes(text, 4 * text.size());
    }
    (void)map.longest_prefix(
        "\xef\xbc\xa1"
        "bc");
  } catch (const vlbias::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  using vlbias::TokenizerSource;
  switch (data[0] % 8) {
    case 0:
      for (const auto& tok : fixture_tokenizers()) fuzz_text(tok, rest);
      break;
    case 1:
      fuzz_file(data[0] & 8 ? "xlmr_bytes" : "bert_uncased", "tokenizer.json", rest,
                TokenizerSource::TokenizerJson);
      break;
    case 2:
      fuzz_file("bert_uncased", "vocab.txt", rest, TokenizerSource::LegacyFiles);
      break;
    case 3:
      fuzz_file("roberta", "vocab.json", rest, TokenizerSource::LegacyFiles);
      break;
    case 4:
      fuzz_file("roberta", "merges.txt", rest, TokenizerSource::LegacyFiles);
      break;
    case 5:
      fuzz_file("xlmr_bytes", "sentencepiece.bpe.model", rest, TokenizerSource::LegacyFiles);
      break;
    case 6:
      fuzz_file(data[0] & 8 ? "roberta" : "bert_uncased", "tokenizer_config.json", rest,
                TokenizerSource::LegacyFiles);
      break;
    default:
      fuzz_charsmap(rest);
      break;
  }
  return 0;
}
