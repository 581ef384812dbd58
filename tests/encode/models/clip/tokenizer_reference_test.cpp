// The C++ tokenizer against the Python references of
// tools/make_tokenizer_fixtures.py (open_clip SimpleTokenizer and Hugging Face
// CLIPTokenizerFast pipelines) on the committed fixture vocabulary: every
// hand-picked and random case, ids, cleaned text and untruncated count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "encode/tokenizer_test_util.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/models/clip_tokenizer.h"

namespace vlbias {
namespace {
namespace in_tokenizer_reference_test {

using testing_tokenizer::fixture_tokenizer;
using testing_util::fixture_json;

const nlohmann::json& cases() {
  return fixture_json("encode/tokenizer/cases.json");
}

struct Mode {
  TextCleaning cleaning;
  const char* key;
};
constexpr Mode kModes[] = {{TextCleaning::HuggingFace, "huggingface"},
                           {TextCleaning::OpenClip, "openclip"}};

// Returns the number of cases checked.
int check_cases(const nlohmann::json& list) {
  int checked = 0;
  for (const auto& c : list) {
    const std::string text = c.at("text").get<std::string>();
    const std::size_t context = c.at("context_length").get<std::size_t>();
    for (const Mode& m : kModes) {
      const ClipTokenizer& tok = fixture_tokenizer(m.cleaning);
      const auto& want = c.at(m.key);
      const std::string label = c.at("name").get<std::string>() + " (" + m.key + ")";
      EXPECT_EQ(tok.encode(text, context), want.at("ids").get<std::vector<std::int32_t>>())
          << label;
      EXPECT_EQ(tok.clean(text), want.at("clean").get<std::string>()) << label;
      EXPECT_EQ(tok.token_count(text), want.at("count").get<std::size_t>()) << label;
      ++checked;
    }
  }
  return checked;
}

TEST(TokenizerReference, HandPickedCasesMatchBothPipelines) {
  EXPECT_GE(check_cases(cases().at("cases")), 2 * 65);
}

TEST(TokenizerReference, RandomStringsMatchBothPipelines) {
  EXPECT_GE(check_cases(cases().at("random")), 2 * 300);
}

TEST(TokenizerReference, VocabularyLayout) {
  const ClipTokenizer& tok = fixture_tokenizer(TextCleaning::OpenClip);
  const int merges = cases().at("num_merges").get<int>();
  // 256 byte symbols, 256 with </w>, one per merge, then the two specials.
  EXPECT_EQ(tok.start_id(), 512 + merges);
  EXPECT_EQ(tok.end_id(), 513 + merges);
  EXPECT_EQ(tok.vocab_size(), static_cast<std::size_t>(514 + merges));
  EXPECT_EQ(tok.cleaning(), TextCleaning::OpenClip);
  EXPECT_EQ(ClipTokenizer::unicode_version(), "unicodedata 14.0.0, regex 15.0.0");
}

TEST(TokenizerReference, EmptyAndWhitespaceGiveOnlySpecials) {
  for (const Mode& m : kModes) {
    const ClipTokenizer& tok = fixture_tokenizer(m.cleaning);
    const std::vector<std::int32_t> specials{tok.start_id(), tok.end_id()};
    EXPECT_EQ(tok.encode(""), specials);
    EXPECT_EQ(tok.encode(" \t\r\n\u3000"), specials);
    EXPECT_EQ(tok.clean(" \t "), "");
  }
}

TEST(TokenizerReference, TruncationKeepsEndTokenLast) {
  const std::string text = cases().at("cases")[0].at("text").get<std::string>();  // 7 ids
  for (const Mode& m : kModes) {
    const ClipTokenizer& tok = fixture_tokenizer(m.cleaning);
    const std::vector<std::int32_t> full = tok.encode(text, 77);
    ASSERT_EQ(full.size(), 9u);
    for (std::size_t cl = 2; cl <= 10; ++cl) {
      const std::vector<std::int32_t> ids = tok.encode(text, cl);
      ASSERT_EQ(ids.size(), std::min<std::size_t>(cl, 9)) << cl;
      EXPECT_EQ(ids.front(), tok.start_id());
      EXPECT_EQ(ids.back(), tok.end_id());
      EXPECT_TRUE(std::equal(ids.begin(), ids.end() - 1, full.begin())) << cl;
    }
  }
}

TEST(TokenizerReference, RejectsTooShortContextAndBadUtf8) {
  const ClipTokenizer& tok = fixture_tokenizer(TextCleaning::HuggingFace);
  EXPECT_THROW(tok.encode("a", 1), UsageError);
  EXPECT_THROW(tok.encode("a", 0), UsageError);
  try {
    tok.encode("ab\xff", 77);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("byte 2 (0xFF)"));
  }
  EXPECT_THROW(tok.clean("\xc3"), InputError);
  EXPECT_THROW(tok.token_count("\xed\xa0\x80"), InputError);  // a surrogate
}

// encode() is called from several threads by the encoder: concurrent calls on one
// tokenizer give the single-threaded answers.
TEST(TokenizerReference, ConcurrentEncodeIsConsistent) {
  const auto& list = cases().at("random");
  for (const Mode& m : kModes) {
    const ClipTokenizer& tok = fixture_tokenizer(m.cleaning);
    std::vector<std::vector<std::int32_t>> want;
    for (const auto& c : list) want.push_back(tok.encode(c.at("text").get<std::string>()));
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 3; ++rep) {
          for (std::size_t i = t; i < list.size(); i += 2) {
            if (tok.encode(list[i].at("text").get<std::string>()) != want[i]) ++mismatches[t];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << t;
  }
}

}  // namespace in_tokenizer_reference_test
}  // namespace
}  // namespace vlbias
