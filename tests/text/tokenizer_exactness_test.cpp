// Token ids against the independent references of tools/make_text_tokenizer_fixtures.py
// (transformers' Python tokenizers, the sentencepiece library, and the tokenizers'
// tokenizer.json pipelines), for every fixture model and source: hostile texts, random
// texts, 10,000-character texts, and every code point below U+20000 in context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "text/text_tokenizer_test_util.h"
#include "vlbias/core/build_type.h"
#include "vlbias/text/tokenizer.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias {
namespace {
namespace in_tokenizer_exactness_test {

using testing_text::fixture_tokenizer;
using testing_text::ids_sha256;

const nlohmann::json& expected() {
  return testing_util::fixture_json("text/expected_ids.json");
}

std::vector<std::string> fixture_keys() {
  std::vector<std::string> keys;
  for (const auto& [key, _] : expected().at("ids").items()) keys.push_back(key);
  return keys;
}

class TokenizerExactness : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerExactness, EveryFixtureTextGivesTheReferenceIds) {
  const TextTokenizer& tok = fixture_tokenizer(GetParam());
  const auto& texts = expected().at("texts");
  const auto& want = expected().at("ids").at(GetParam());
  ASSERT_EQ(texts.size(), want.size());
  std::size_t equal = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string name = texts[i].at("name");
    SCOPED_TRACE(name);
    const std::vector<std::int32_t> ids = tok.content_ids(texts[i].at("text").get<std::string>());
    if (want[i].is_array()) {
      EXPECT_EQ(ids, want[i].get<std::vector<std::int32_t>>());
      equal += ids == want[i].get<std::vector<std::int32_t>>();
    } else {
      const auto head = want[i].at("head").get<std::vector<std::int32_t>>();
      EXPECT_EQ(ids.size(), want[i].at("count").get<std::size_t>());
      EXPECT_EQ(
          std::vector<std::int32_t>(ids.begin(), ids.begin() + std::min(ids.size(), head.size())),
          head);
      EXPECT_EQ(ids_sha256(ids), want[i].at("sha256").get<std::string>());
      equal += ids_sha256(ids) == want[i].at("sha256").get<std::string>();
    }
  }
  EXPECT_EQ(equal, texts.size());
}

// Optimised builds check every block below U+20000 (about 1 s for all models);
// unoptimised (sanitizer) builds the first three blocks, Latin to Indic scripts, where
// the normalizers differ most, to keep that run short.
const char32_t kCheckedEnd = release_build() ? 0x20000 : 0x3000;

TEST_P(TokenizerExactness, EveryCodePointInContextGivesTheReferenceIds) {
  const TextTokenizer& tok = fixture_tokenizer(GetParam());
  const auto& fixture = testing_util::fixture_json("text/codepoint_ids.json");
  const char32_t block = fixture.at("block").get<char32_t>();
  const char32_t end = fixture.at("end").get<char32_t>();
  const auto& want = fixture.at("hashes").at(GetParam());
  ASSERT_EQ(want.size(), end / block);
  std::vector<std::int32_t> ids;
  for (char32_t start = 0; start < std::min(end, kCheckedEnd); start += block) {
    ids.clear();
    for (char32_t c = start; c < start + block; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      std::string one;
      unicode::append_utf8(one, c);
      const std::vector<std::int32_t> got = tok.content_ids("a" + one + " " + one + "b");
      ids.insert(ids.end(), got.begin(), got.end());
      ids.push_back(-1);
    }
    EXPECT_EQ(ids_sha256(ids).substr(0, 16), want[start / block].get<std::string>())
        << GetParam() << " differs from its reference in U+" << std::hex
        << static_cast<unsigned>(start) << "..U+" << static_cast<unsigned>(start + block - 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerExactness, ::testing::ValuesIn(fixture_keys()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace in_tokenizer_exactness_test
}  // namespace
}  // namespace vlbias
