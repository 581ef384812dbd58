// Issue 37, item 4: every tokenizer path is linear in the text whatever the model folder
// says. Each case is a hostile tokenizer.json on which the former per-position searches took
// minutes to hours (or ran out of memory); the ids are checked exactly, against what the
// unmodified fixture tokenizer gives or what the greedy / Viterbi rule gives by hand. No
// timing assertions: ctest's TIMEOUT is what the old code would have hit.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base64_util.h"
#include "test_util.h"
#include "text/text_tokenizer_test_util.h"
#include "vlbias/core/build_type.h"
#include "vlbias/core/error.h"
#include "vlbias/text/tokenizer.h"

namespace vlbias {
namespace {
namespace in_tokenizer_limits_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_text::copy_model;
using testing_text::fixture_tokenizer;
using testing_text::read_bytes;
using testing_text::TempDir;
using testing_text::write_bytes;
using testing_util::error_of;

class TokenizerLimits : public ::testing::Test {
 protected:
  // Fixture model `name` with its tokenizer.json changed by `edit` and `added_tokens` hostile
  // added tokens appended (testing_util::with_added_tokens), loaded from it.
  TextTokenizer edited(const std::string& name, const std::function<void(json&)>& edit,
                       int added_tokens = 0) {
    dir_ = copy_model(name, tmp_.path() / std::to_string(count_++));
    json tok = json::parse(read_bytes(dir_ / "tokenizer.json"));
    edit(tok);
    write_bytes(dir_ / "tokenizer.json",
                added_tokens > 0 ? testing_util::with_added_tokens(tok, added_tokens) : tok.dump());
    TokenizerOptions options;
    options.source = TokenizerSource::TokenizerJson;
    return TextTokenizer::from_folder(dir_, options);
  }
  fs::path tokenizer_json() const { return dir_ / "tokenizer.json"; }

 private:
  TempDir tmp_;
  int count_ = 0;
  fs::path dir_;
};

TEST_F(TokenizerLimits, WordPieceSplitsA50000CharacterWordWithAHugeMaxInputCharsPerWord) {
  const TextTokenizer tok =
      edited("bert_uncased", [](json& t) { t["model"]["max_input_chars_per_word"] = 1000000000; });
  // The vocabulary has "a" and "##a" but no longer run of a's: the greedy longest match
  // takes "a", then "##a" for each of the others.
  ASSERT_FALSE(tok.token_to_id("aa").has_value());
  ASSERT_FALSE(tok.token_to_id("##aa").has_value());
  const std::size_t n = 50000;
  std::vector<std::int32_t> want(n, *tok.token_to_id("##a"));
  want[0] = *tok.token_to_id("a");
  EXPECT_EQ(tok.content_ids(std::string(n, 'a')), want);
  // One character no piece continues with makes the whole word [UNK].
  ASSERT_FALSE(tok.token_to_id("##\xE2\x98\x83").has_value());  // U+2603
  EXPECT_EQ(tok.content_ids(std::string(n, 'a') + "\xE2\x98\x83"),
            std::vector<std::int32_t>{*tok.token_to_id("[UNK]")});
}

// Sized for the Release suite, whose timeout turns a text x tokens regression into a failure; the
// sanitised suite walks the same code at a tenth of the size (bench/ci_budget.md).
TEST_F(TokenizerLimits, AHundredThousandAddedTokensAreSplitOutOfAMegabyteText) {
  const int scale = vlbias::release_build() ? 1 : 10;
  const int kTokens = 100000 / scale;
  const TextTokenizer tok = edited(
      "bert_uncased", [](json&) {}, kTokens);
  // The text between the tokens is tokenized as the fixture tokenizer does it alone.
  const std::string chunk = "the quick brown fox jumps over the lazy dog";
  const std::vector<std::int32_t> chunk_ids =
      fixture_tokenizer("bert_uncased/tokenizer.json").content_ids(chunk);
  std::string text;
  std::vector<std::int32_t> want;
  for (int j = 0; text.size() < (1u << 20) / scale; ++j) {
    const int k = (7 * j) % kTokens;
    text += chunk + " <x" + std::to_string(k) + "> ";
    want.insert(want.end(), chunk_ids.begin(), chunk_ids.end());
    want.push_back(100 + k % 1000);
  }
  EXPECT_EQ(tok.content_ids(text), want);
}

TEST_F(TokenizerLimits, UnigramWithAHundredThousandCharacterPieceSegmentsA200000CharacterText) {
  std::size_t long_id = 0;
  const TextTokenizer tok = edited("xlmr", [&](json& t) {
    json& vocab = t["model"]["vocab"];
    long_id = vocab.size();
    vocab.push_back(json::array({std::string(100000, 'a'), 0.0}));  // the best score there is
  });
  // "▁" + 200,000 a's: the best path is "▁" and the long piece twice (every other path has
  // more pieces, each with a negative score).
  const std::vector<std::int32_t> want = {*tok.token_to_id("\xE2\x96\x81"),
                                          static_cast<std::int32_t>(long_id),
                                          static_cast<std::int32_t>(long_id)};
  EXPECT_EQ(tok.content_ids(std::string(200000, 'a')), want);
  // Texts that cannot use the piece are segmented as before.
  const std::string text = "Hello wörld, aaa bbb! 😀 我爱 " + std::string(99999, 'a');
  EXPECT_EQ(tok.content_ids(text), fixture_tokenizer("xlmr/tokenizer.json").content_ids(text));
}

// A protobuf varint at data[i], advancing i.
std::uint64_t read_varint(const std::string& data, std::size_t& i) {
  std::uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(data.at(i++));
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if (byte < 0x80) return value;
  }
}

std::string varint_bytes(std::uint64_t value) {
  std::string out;
  do {
    const auto byte = static_cast<unsigned char>(value & 0x7F);
    value >>= 7;
    out.push_back(static_cast<char>(byte | (value != 0 ? 0x80 : 0)));
  } while (value != 0);
  return out;
}

// A protobuf message with each length-delimited field `number` replaced by edit(its bytes).
std::string replace_proto_field(const std::string& message, std::uint64_t number,
                                const std::function<std::string(const std::string&)>& edit) {
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    const std::size_t start = i;
    const std::uint64_t key = read_varint(message, i);
    switch (key & 7) {
      case 0:
        (void)read_varint(message, i);
        break;
      case 1:
        i += 8;
        break;
      case 5:
        i += 4;
        break;
      case 2: {
        const std::size_t length = read_varint(message, i);
        const std::string body = message.substr(i, length);
        i += length;
        if (key >> 3 == number) {
          const std::string edited = edit(body);
          out += varint_bytes(key) + varint_bytes(edited.size()) + edited;
          continue;
        }
        break;
      }
      default:
        ADD_FAILURE() << "wire type " << (key & 7);
        return message;
    }
    out += message.substr(start, i - start);
  }
  return out;
}

// Every replacement of a charsmap blob running to the end of its strings, and 4 MiB more.
std::string stretched_charsmap(std::string blob) {
  const std::size_t trie = static_cast<unsigned char>(blob[0]) |
                           static_cast<std::size_t>(static_cast<unsigned char>(blob[1])) << 8 |
                           static_cast<std::size_t>(static_cast<unsigned char>(blob[2])) << 16;
  for (std::size_t i = 4 + trie; i < blob.size(); ++i) {
    if (blob[i] == '\0') blob[i] = 'x';
  }
  return blob + std::string(std::size_t{4} << 20, 'y');
}

TEST_F(TokenizerLimits, ACharsmapStretchedToMegabytesIsRefusedNamingTheFile) {
  // Each replacement made to run to the end of the strings (its '\0' replaced) and 4 MiB
  // appended: every rule of the charsmap now writes over 4 MiB.
  const TextTokenizer tok = edited("xlmr", [](json& t) {
    json& step = t["normalizer"]["normalizers"][0];
    ASSERT_EQ(step["type"], "Precompiled");
    step["precompiled_charsmap"] = testing_util::base64_encode(
        stretched_charsmap(testing_util::base64_decode(step["precompiled_charsmap"])));
  });
  // Text no rule applies to is unchanged.
  EXPECT_EQ(tok.content_ids("hello world"),
            fixture_tokenizer("xlmr/tokenizer.json").content_ids("hello world"));
  std::string fullwidth;
  for (int k = 0; k < 1000; ++k) fullwidth += "\xEF\xBC\xA1";  // U+FF21 -> "A" by NFKC
  const std::string e = error_of<InputError>([&] { (void)tok.content_ids(fullwidth); });
  EXPECT_NE(e.find(tokenizer_json().string()), std::string::npos) << e;
  EXPECT_NE(e.find("precompiled_charsmap turns 3000 units of text into more than 96064"),
            std::string::npos)
      << e;
}

TEST_F(TokenizerLimits, ASentencePieceModelWithAStretchedCharsmapIsRefusedNamingTheFile) {
  TempDir tmp;
  const fs::path dir = copy_model("xlmr", tmp.path());
  // ModelProto.normalizer_spec (field 3) . precompiled_charsmap (field 2).
  const std::string model = replace_proto_field(
      read_bytes(dir / "sentencepiece.bpe.model"), 3,
      [](const std::string& spec) { return replace_proto_field(spec, 2, stretched_charsmap); });
  write_bytes(dir / "sentencepiece.bpe.model", model);
  TokenizerOptions options;
  options.source = TokenizerSource::LegacyFiles;
  const TextTokenizer tok = TextTokenizer::from_folder(dir, options);
  EXPECT_EQ(tok.content_ids("hello world"),
            fixture_tokenizer("xlmr/legacy").content_ids("hello world"));
  std::string fullwidth;
  for (int k = 0; k < 1000; ++k) fullwidth += "\xEF\xBC\xA1";  // U+FF21
  const std::string e = error_of<InputError>([&] { (void)tok.content_ids(fullwidth); });
  EXPECT_NE(e.find("the precompiled_charsmap of '" + (dir / "sentencepiece.bpe.model").string() +
                   "' turns 3000 units of text into more than 96064"),
            std::string::npos)
      << e;
}

TEST_F(TokenizerLimits, ReplaceNormalizersAreLinearAndTheirGrowthIsBounded) {
  // A 50,001-character pattern that never occurs in a megabyte of a's (the comparison at
  // every position cost text x pattern), then a pattern whose content is 100,000 characters.
  const TextTokenizer tok = edited("xlmr", [](json& t) {
    t["normalizer"]["normalizers"].push_back(
        {{"type", "Replace"},
         {"pattern", {{"String", std::string(50000, 'a') + "b"}}},
         {"content", "c"}});
  });
  const std::string as(1u << 20, 'a');
  EXPECT_EQ(tok.content_ids(as), fixture_tokenizer("xlmr/tokenizer.json").content_ids(as));
  // Occurrences next to each other are replaced one after the other, not overlapping.
  const TextTokenizer swap = edited("xlmr", [](json& t) {
    t["normalizer"]["normalizers"].push_back(
        {{"type", "Replace"}, {"pattern", {{"String", "aba"}}}, {"content", "c"}});
  });
  EXPECT_EQ(swap.content_ids("ababab abaaba"),
            fixture_tokenizer("xlmr/tokenizer.json").content_ids("cbab cc"));
  const TextTokenizer grow = edited("xlmr", [](json& t) {
    t["normalizer"]["normalizers"].push_back({{"type", "Replace"},
                                              {"pattern", {{"String", "q"}}},
                                              {"content", std::string(100000, 'z')}});
  });
  const std::string e =
      error_of<InputError>([&] { (void)grow.content_ids(std::string(1000, 'q')); });
  EXPECT_NE(e.find(tokenizer_json().string()), std::string::npos) << e;
  EXPECT_NE(e.find("normalizer Replace turns 1000 units of text into more than 32064"),
            std::string::npos)
      << e;
}

}  // namespace in_tokenizer_limits_test
}  // namespace
}  // namespace vlbias
