// Loading vocab.json + merges.txt: hostile and malformed files give an InputError
// naming the file and the problem; a hand-made tiny vocabulary shows the BPE rank
// order and the layout rules (optional #version line, CRLF, repeated merges).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "encode/tokenizer_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_tokenizer.h"

namespace vlbias {
namespace {
namespace in_tokenizer_files_test {

using ::testing::HasSubstr;
using testing_tokenizer::fixture_dir;
using testing_tokenizer::read_text;
using testing_tokenizer::TokenizerDirTest;
using testing_tokenizer::write_text;

// bytes_to_unicode (GPT-2): the symbol of byte b, UTF-8.
std::string byte_symbol(int b) {
  const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  int cp = b;
  if (!printable) {
    cp = 256;
    for (int x = 0; x < b; ++x) {
      if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) ++cp;
    }
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

// CLIP's layout with the given merges: 512 byte symbols, merges, specials.
nlohmann::ordered_json tiny_vocab(const std::vector<std::pair<std::string, std::string>>& merges) {
  nlohmann::ordered_json v = nlohmann::ordered_json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) v[byte_symbol(b)] = id++;
  for (int b = 0; b < 256; ++b) v[byte_symbol(b) + "</w>"] = id++;
  for (const auto& [l, r] : merges) v[l + r] = id++;
  v["<|startoftext|>"] = id++;
  v["<|endoftext|>"] = id++;
  return v;
}

class ClipBpeFiles : public TokenizerDirTest {
 protected:
  ClipTokenizer load(std::string_view vocab, std::string_view merges,
                     TextCleaning cleaning = TextCleaning::OpenClip) {
    write_text(dir_ / "vocab.json", vocab);
    write_text(dir_ / "merges.txt", merges);
    return ClipTokenizer::from_files(dir_ / "vocab.json", dir_ / "merges.txt", cleaning);
  }
  void expect_error(std::string_view vocab, std::string_view merges,
                    std::initializer_list<std::string_view> needles) {
    try {
      load(vocab, merges);
      ADD_FAILURE() << "expected an InputError mentioning " << *needles.begin();
    } catch (const InputError& e) {
      for (std::string_view n : needles) EXPECT_THAT(e.what(), HasSubstr(std::string(n)));
    }
  }
  std::string good_vocab() { return read_text(fixture_dir() / "vocab.json"); }
  std::string good_merges() { return read_text(fixture_dir() / "merges.txt"); }
};

TEST_F(ClipBpeFiles, RanksDecideTheMergeOrder) {
  // "low": with (l,o) ranked first the word becomes lo + w</w>; with (o,w</w>)
  // first it becomes l + ow</w>.
  const auto a = tiny_vocab({{"l", "o"}, {"o", "w</w>"}});
  const auto id = [&a](const char* token) { return a.at(token).get<std::int32_t>(); };
  const std::int32_t sot = id("<|startoftext|>"), eot = id("<|endoftext|>");
  const ClipTokenizer t1 = load(a.dump(), "#version: 0.2\nl o\no w</w>\n");
  EXPECT_EQ(t1.encode("low"), (std::vector<std::int32_t>{sot, id("lo"), id("w</w>"), eot}));
  const ClipTokenizer t2 = load(a.dump(), "#version: 0.2\no w</w>\nl o\n");
  EXPECT_EQ(t2.encode("low"), (std::vector<std::int32_t>{sot, id("l"), id("ow</w>"), eot}));
  // A repeated merge takes its last rank (Python dict, Rust HashMap); CRLF and
  // empty lines are accepted, and the #version line is optional.
  const ClipTokenizer t3 = load(a.dump(), "l o\r\no w</w>\r\nl o\r\n\r\n");
  EXPECT_EQ(t3.encode("low"), (std::vector<std::int32_t>{sot, id("l"), id("ow</w>"), eot}));
  EXPECT_EQ(t3.vocab_size(), static_cast<std::size_t>(eot) + 1);
  // Every occurrence of the best pair merges in one step, left to right: "aaa".
  const auto b = tiny_vocab({{"a", "a"}});
  const ClipTokenizer t4 = load(b.dump(), "a a\n");
  EXPECT_EQ(t4.encode("aaa"),
            (std::vector<std::int32_t>{
                b.at("<|startoftext|>").get<std::int32_t>(), b.at("aa").get<std::int32_t>(),
                b.at("a</w>").get<std::int32_t>(), b.at("<|endoftext|>").get<std::int32_t>()}));
}

TEST_F(ClipBpeFiles, MissingAndEmptyFiles) {
  EXPECT_THROW(ClipTokenizer::from_files(dir_ / "nope.json", fixture_dir() / "merges.txt",
                                         TextCleaning::OpenClip),
               InputError);
  EXPECT_THROW(ClipTokenizer::from_files(fixture_dir() / "vocab.json", dir_ / "nope.txt",
                                         TextCleaning::OpenClip),
               InputError);
  EXPECT_THROW(
      ClipTokenizer::from_files(dir_, fixture_dir() / "merges.txt", TextCleaning::OpenClip),
      InputError);  // a directory
  expect_error("", good_merges(), {"vocab.json", "is empty"});
  expect_error(good_vocab(), "", {"merges.txt", "is empty"});
}

TEST_F(ClipBpeFiles, MalformedJson) {
  const std::string v = good_vocab();
  expect_error(v.substr(0, v.size() / 2), good_merges(), {"vocab.json", "is not valid JSON"});
  expect_error("{\"a\": 1,}", good_merges(), {"vocab.json", "is not valid JSON"});
  expect_error("[1, 2]", good_merges(), {"vocab.json", "an array at the top level"});
  expect_error("7", good_merges(), {"vocab.json", "a number at the top level"});
  expect_error("{}", good_merges(), {"vocab.json", "has no tokens"});
  expect_error("{\"a\": 1} {}", good_merges(), {"vocab.json", "is not valid JSON"});
  expect_error("{\"\xff\": 1}", good_merges(), {"vocab.json", "is not valid JSON"});
}

TEST_F(ClipBpeFiles, BadIds) {
  expect_error("{\"a\": 1.5}", good_merges(), {"token 'a'", "non-integer number 1.5"});
  expect_error("{\"a\": \"1\"}", good_merges(), {"token 'a'", "a string"});
  expect_error("{\"a\": -3}", good_merges(), {"token 'a'", "negative number -3"});
  expect_error("{\"a\": 4294967296}", good_merges(), {"token 'a'", "beyond the int32 range"});
  expect_error("{\"a\": null}", good_merges(), {"token 'a'", "null"});
  expect_error("{\"a\": [1]}", good_merges(), {"token 'a'", "an array"});
  expect_error("{\"a\": {\"b\": 1}}", good_merges(), {"token 'a'", "an object"});
  expect_error("{\"a\": 1, \"b\": 1}", good_merges(), {"the id 1 to both 'a' and 'b'"});
  expect_error("{\"a\": 1, \"a\": 2}", good_merges(), {"lists the token 'a' twice"});
}

TEST_F(ClipBpeFiles, MissingSpecialOrByteTokens) {
  auto v = tiny_vocab({});
  v.erase("<|endoftext|>");
  expect_error(v.dump(), "#version: 0.2\n",
               {"vocab.json", "lacks the special token <|endoftext|>"});
  v = tiny_vocab({});
  v.erase(byte_symbol(0) + "</w>");
  expect_error(v.dump(), "#version: 0.2\n", {"lacks the byte symbol", "of byte 0x00"});
}

TEST_F(ClipBpeFiles, BadMerges) {
  const std::string v = tiny_vocab({{"l", "o"}}).dump();
  expect_error(v, "#version: 0.2\nl o\nq z\n",
               {"merges.txt' line 3 merges 'q' and 'z', but 'qz' is not a token"});
  expect_error(v, "l o\nl \xe2\x82\n", {"merges.txt' line 2 is not valid UTF-8"});
  expect_error(v, "l o\nlo\n", {"line 2 is 'lo'; expected two symbols separated by one space"});
  expect_error(v, "l  o\n", {"line 1 is 'l  o'"});
  expect_error(v, "l o x\n", {"line 1 is 'l o x'"});
  expect_error(v, "l o\n#version: 0.2\n", {"line 2 merges '#version:' and '0.2'"});
  expect_error(v, "x\xc4\x80 o\n", {"'x\\xc4\\x80' is not a token"});
}

TEST_F(ClipBpeFiles, TruncatedFixtureFiles) {
  const std::string m = good_merges();
  // Cutting merges.txt mid-line leaves a line that is not a merge (or one whose
  // result is missing): either way a named InputError, or a valid shorter file.
  for (std::size_t cut : {m.size() / 3, m.size() / 2, m.size() - 3}) {
    try {
      (void)load(good_vocab(), m.substr(0, cut));
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("merges.txt' line"));
    }
  }
}

}  // namespace in_tokenizer_files_test
}  // namespace
}  // namespace vlbias
