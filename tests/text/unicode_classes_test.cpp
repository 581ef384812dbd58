// The Unicode classes the text tokenizers add (include/vlbias/text/unicode_text.h): general
// category, NFD, White_Space, grapheme cluster breaks, against Python's unicodedata
// and the `regex` module for every code point (per-block hashes of
// tests/fixtures/text/unicode_classes.json), and extended grapheme clusters against
// regex's \X on random strings (graphemes.json), with hand-worked cases.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/build_type.h"
#include "vlbias/core/sha256.h"
#include "vlbias/text/unicode_text.h"

namespace vlbias {
namespace {
namespace in_unicode_classes_test {

using namespace unicode;

std::u32string u32(std::string_view utf8) {
  return decode_utf8(utf8, "test");
}

std::vector<std::size_t> clusters(std::u32string_view text) {
  std::vector<std::size_t> lengths;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = grapheme_end(text, i);
    lengths.push_back(end - i);
    i = end;
  }
  return lengths;
}

TEST(UnicodeClasses, NfdDecomposesAndOrdersMarks) {
  EXPECT_EQ(nfd(U"\u00e9"), U"e\u0301");
  EXPECT_EQ(nfd(U"\u1e69"), U"s\u0323\u0307");         // ṩ: two levels
  EXPECT_EQ(nfd(U"a\u0301\u0316"), U"a\u0316\u0301");  // below (220) before above (230)
  EXPECT_EQ(nfd(U"\uac01"), U"\u1100\u1161\u11a8");    // Hangul LVT, algorithmic
  EXPECT_EQ(nfd(U"\uf900"), U"\u8c48");                // CJK compatibility singleton
  EXPECT_EQ(nfd(U"plain ASCII"), U"plain ASCII");
}

TEST(UnicodeClasses, CategoriesAndWhiteSpaceNameTheBertClasses) {
  EXPECT_EQ(general_category(U'a'), GeneralCategory::Ll);
  EXPECT_EQ(general_category(U'\u0301'), GeneralCategory::Mn);
  EXPECT_EQ(general_category(U'\u00a0'), GeneralCategory::Zs);
  EXPECT_EQ(general_category(U'\u200b'), GeneralCategory::Cf);
  EXPECT_EQ(general_category(U'\U000E0001'), GeneralCategory::Cf);
  EXPECT_EQ(general_category(U'\u0378'), GeneralCategory::Cn);  // unassigned
  EXPECT_EQ(general_category(U'\ue000'), GeneralCategory::Co);
  EXPECT_TRUE(is_punctuation_category(general_category(U'\u3002')));  // 。
  EXPECT_FALSE(is_punctuation_category(general_category(U'$')));      // Sc
  EXPECT_TRUE(is_other_category(GeneralCategory::Cn));
  EXPECT_TRUE(is_white_space(U'\u0085'));
  EXPECT_TRUE(is_white_space(U'\u2028'));
  EXPECT_FALSE(is_white_space(U'\u001c'));  // str.isspace() says yes, White_Space no
  EXPECT_FALSE(is_white_space(U'\u200b'));
}

TEST(UnicodeClasses, GraphemeClustersFollowUax29) {
  EXPECT_EQ(clusters(U"e\u0301x"), (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(clusters(U"\r\n\n"), (std::vector<std::size_t>{2, 1}));
  // A ZWJ family is one cluster; a skin tone extends its emoji.
  EXPECT_EQ(clusters(u32("\U0001F468\u200d\U0001F469\u200d\U0001F467\U0001F44D\U0001F3FD")),
            (std::vector<std::size_t>{5, 2}));
  // Regional indicators pair up.
  EXPECT_EQ(clusters(U"\U0001F1FA\U0001F1F8\U0001F1EB"), (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(clusters(U"\u1100\u1161\u11a8\uac00"), (std::vector<std::size_t>{3, 1}));
  EXPECT_EQ(clusters(U"a\u200db"), (std::vector<std::size_t>{2, 1}));  // ZWJ joins only emoji
}

TEST(UnicodeClasses, GraphemeClustersMatchRegexOnRandomStrings) {
  const auto& cases = testing_util::fixture_json("text/graphemes.json");
  ASSERT_GT(cases.size(), 1000u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const std::u32string text = u32(cases[i].at("text").get<std::string>());
    EXPECT_EQ(clusters(text), cases[i].at("clusters").get<std::vector<std::size_t>>());
  }
}

using Property = std::function<std::vector<std::uint32_t>(char32_t)>;

const std::vector<std::pair<std::string, Property>>& properties() {
  static const std::vector<std::pair<std::string, Property>> props = {
      {"category",
       [](char32_t c) {
         return std::vector<std::uint32_t>{static_cast<std::uint32_t>(general_category(c))};
       }},
      {"nfd",
       [](char32_t c) {
         const std::u32string d = nfd(std::u32string(1, c));
         return std::vector<std::uint32_t>(d.begin(), d.end());
       }},
      {"nfd_marks",
       [](char32_t c) {
         const std::u32string d = nfd(std::u32string{c, 0x316, 0x301});
         return std::vector<std::uint32_t>(d.begin(), d.end());
       }},
      {"white_space",
       [](char32_t c) { return std::vector<std::uint32_t>{is_white_space(c) ? 1u : 0u}; }},
      {"grapheme_break",
       [](char32_t c) {
         return std::vector<std::uint32_t>{static_cast<std::uint32_t>(grapheme_break(c))};
       }},
      {"pictographic",
       [](char32_t c) {
         return std::vector<std::uint32_t>{is_extended_pictographic(c) ? 1u : 0u};
       }},
  };
  return props;
}

class UnicodeClassTables : public ::testing::TestWithParam<std::size_t> {};

// Per block: SHA-256 of each code point's output as 32-bit little-endian words,
// closed by 0xFFFFFFFF; the fixture holds the first 16 hex digits Python computed.
// Optimised builds check all 17 planes; unoptimised (sanitizer) builds the Basic
// Multilingual Plane, where the tables hold most of their entries.
const char32_t kCheckedEnd = release_build() ? 0x110000 : 0x10000;
TEST_P(UnicodeClassTables, EveryCodePointMatchesPython) {
  const auto& [name, fn] = properties().at(GetParam());
  const auto& fixture = testing_util::fixture_json("text/unicode_classes.json");
  const char32_t block = fixture.at("block").get<char32_t>();
  const auto& want = fixture.at("hashes").at(name);
  ASSERT_EQ(want.size(), 0x110000 / block);
  std::string bytes;
  for (char32_t start = 0; start < kCheckedEnd; start += block) {
    bytes.clear();
    for (char32_t c = start; c < start + block; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      for (std::uint32_t v : fn(c)) {
        for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
      }
      bytes.append(4, '\xff');
    }
    EXPECT_EQ(sha256_hex(bytes).substr(0, 16), want[start / block].get<std::string>())
        << name << " differs from Python in U+" << std::hex << static_cast<unsigned>(start)
        << "..U+" << static_cast<unsigned>(start + block - 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Unicode, UnicodeClassTables, ::testing::Range<std::size_t>(0, 6),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return properties().at(info.param).first;
                         });

}  // namespace in_unicode_classes_test
}  // namespace
}  // namespace vlbias
