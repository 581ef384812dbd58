// Tokeniser, numeric answers, stop words, lexicons and refusals against the
// independent Python reference (tools/make_lvlm_fixtures.py) and hand-made cases.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/score/text_measures.h"

namespace vlbias {
namespace {
namespace in_text_measures_test {

using testing_util::error_of;
using testing_util::fixture_json;

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vlbias_score_test";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TEST(Tokenize, MatchesTheReferenceCases) {
  const auto& cases = fixture_json("lvlm/expected.json")["token_cases"];
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const std::vector<std::string> expected = c["tokens"].get<std::vector<std::string>>();
    EXPECT_EQ(tokenize(c["text"].get<std::string>()), expected) << c["text"];
  }
}

TEST(Tokenize, PunctuationHyphensApostrophesAndUnicode) {
  using V = std::vector<std::string>;
  EXPECT_EQ(tokenize("Inner-city, well--known 'quoted' rock'n'roll x- -y"),
            (V{"inner-city", "well", "known", "quoted", "rock'n'roll", "x", "y"}));
  EXPECT_EQ(tokenize("don\xe2\x80\x99t under_score 3.5 5-star"),
            (V{"don't", "under", "score", "3", "5", "5-star"}));
  EXPECT_EQ(tokenize("Stra\xc3\x9f"
                     "e \xce\x9f\xce\x94\xce\x9f\xce\xa3"),
            (V{"stra\xc3\x9f"
               "e",
               "\xce\xbf\xce\xb4\xce\xbf\xcf\x82"}));       // final sigma
  EXPECT_EQ(tokenize("cafe\xcc\x81"), (V{"caf\xc3\xa9"}));  // NFC composes e + U+0301
  EXPECT_TRUE(tokenize("").empty());
  EXPECT_TRUE(tokenize(" ,.;!? -- ''").empty());
  const std::string bad = "ok \xff";
  EXPECT_NE(error_of<InputError>([&] { (void)tokenize(bad); }).find("UTF-8"), std::string::npos);
}

TEST(NumericAnswers, RatingCasesMatchTheReference) {
  for (const auto& c : fixture_json("lvlm/expected.json")["rating_cases"]) {
    const NumericAnswer a = extract_numeric(c["text"].get<std::string>(), NumericKind::Rating);
    if (c["exclusion"].is_null()) {
      EXPECT_EQ(a.exclusion, Exclusion::None) << c["text"];
      EXPECT_EQ(a.value, c["value"].get<double>()) << c["text"];
    } else {
      EXPECT_EQ(to_string(a.exclusion), c["exclusion"].get<std::string>()) << c["text"];
    }
  }
}

TEST(NumericAnswers, SalaryCasesMatchTheReference) {
  for (const auto& c : fixture_json("lvlm/expected.json")["salary_cases"]) {
    const NumericAnswer a = extract_numeric(c["text"].get<std::string>(), NumericKind::Salary);
    if (c["exclusion"].is_null()) {
      EXPECT_EQ(a.exclusion, Exclusion::None) << c["text"];
      EXPECT_DOUBLE_EQ(a.value, c["value"].get<double>()) << c["text"];
    } else {
      EXPECT_EQ(to_string(a.exclusion), c["exclusion"].get<std::string>()) << c["text"];
    }
  }
}

TEST(NumericAnswers, HandWorked) {
  EXPECT_EQ(extract_numeric("I'd rate them 8 out of 10.", NumericKind::Rating).value, 8);
  EXPECT_EQ(extract_numeric("On a scale from 1 to 10: 7", NumericKind::Rating).value, 7);
  EXPECT_EQ(extract_numeric("Seven.", NumericKind::Rating).value, 7);
  EXPECT_EQ(extract_numeric("12", NumericKind::Rating).exclusion, Exclusion::OutOfRange);
  EXPECT_EQ(extract_numeric("", NumericKind::Rating).exclusion, Exclusion::NoNumber);
  EXPECT_EQ(extract_numeric("$85,000 per year", NumericKind::Salary).value, 85000);
  EXPECT_EQ(extract_numeric("85k", NumericKind::Salary).value, 85000);
  EXPECT_EQ(extract_numeric("$45/hr", NumericKind::Salary).value, 90000);
  EXPECT_EQ(extract_numeric("$12 per hour", NumericKind::Salary).value, 24000);
  EXPECT_EQ(extract_numeric("$1.2 million", NumericKind::Salary).value, 1200000);
  EXPECT_EQ(extract_numeric("$500", NumericKind::Salary).exclusion, Exclusion::OutOfRange);
  EXPECT_EQ(extract_numeric("$20,000,000", NumericKind::Salary).exclusion, Exclusion::OutOfRange);
  EXPECT_EQ(extract_numeric("competitive", NumericKind::Salary).exclusion, Exclusion::NoNumber);
  EXPECT_EQ(parse_numeric_kind("salary"), NumericKind::Salary);
  EXPECT_NE(
      error_of<UsageError>([] { (void)parse_numeric_kind("score"); }).find("rating or salary"),
      std::string::npos);
}

TEST(StopWords, BuiltinAndFiles) {
  const StopWords english = StopWords::builtin_english();
  EXPECT_EQ(english.size(), 318u);
  EXPECT_TRUE(english.contains("the"));
  EXPECT_FALSE(english.contains("doctor"));
  EXPECT_EQ(StopWords::from_spec("none").size(), 0u);
  const auto ok = write_temp("stop.txt", "# mine\nThe\n\nand\r\n");
  const StopWords mine = StopWords::from_file(ok.string());
  EXPECT_EQ(mine.size(), 2u);
  EXPECT_TRUE(mine.contains("the"));
  const auto bad = write_temp("stop_bad.txt", "the\nwell known\n");
  EXPECT_NE(error_of<InputError>([&] { (void)StopWords::from_file(bad.string()); }).find("line 2"),
            std::string::npos);
  EXPECT_NE(error_of<InputError>([] {
              (void)StopWords::from_file("/nonexistent/x");
            }).find("cannot read"),
            std::string::npos);
}

TEST(Lexicon, LongLayoutFixture) {
  const Lexicon lex =
      read_lexicon(std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/lvlm/lexicon.csv");
  EXPECT_EQ(lex.categories,
            (std::vector<std::string>{"Ability+", "Ability-", "Sociability+", "Sociability-"}));
  EXPECT_EQ(lex.skipped_multiword, 1u);
  ASSERT_TRUE(lex.find("hard-working").has_value());
  const auto reliable = lex.find("reliable");
  ASSERT_TRUE(reliable.has_value());
  EXPECT_EQ(lex.word_categories[*reliable].size(), 2u);  // Ability+ and Sociability+
  EXPECT_FALSE(lex.find("neutral").has_value());         // direction 0
  EXPECT_TRUE(std::is_sorted(lex.words.begin(), lex.words.end()));
}

TEST(Lexicon, WideSadcatLayoutAndErrors) {
  const auto wide = write_temp("wide.csv",
                               "original word,Ability_dict,Ability_dir,Warmth_dict,Warmth_dir\n"
                               "Smart,1,1,0,0\nlazy,1,-1,0,0\nkind,0,0,1,1\ncold,0,0,1,-1\n");
  const Lexicon lex = read_lexicon(wide.string());
  EXPECT_EQ(lex.categories,
            (std::vector<std::string>{"Ability+", "Ability-", "Warmth+", "Warmth-"}));
  EXPECT_TRUE(lex.find("smart").has_value());
  const auto no_dir = write_temp("nodir.csv", "word,Ability_dict\nsmart,1\n");
  EXPECT_NE(error_of<InputError>([&] { (void)read_lexicon(no_dir.string()); }).find("Ability_dir"),
            std::string::npos);
  const auto bad_dir = write_temp("baddir.csv", "word,dimension,direction\nsmart,Ability,up\n");
  EXPECT_NE(error_of<InputError>([&] { (void)read_lexicon(bad_dir.string()); }).find("direction"),
            std::string::npos);
  const auto none = write_temp("none.csv", "word,other\nsmart,1\n");
  EXPECT_NE(error_of<InputError>([&] { (void)read_lexicon(none.string()); }).find("layout"),
            std::string::npos);
  const auto empty = write_temp("empty.csv", "");
  EXPECT_FALSE(error_of<InputError>([&] { (void)read_lexicon(empty.string()); }).empty());
  const auto zeros = write_temp("zeros.csv", "word,dimension,direction\nsmart,Ability,0\n");
  EXPECT_NE(error_of<InputError>([&] { (void)read_lexicon(zeros.string()); }).find("no usable"),
            std::string::npos);
}

TEST(Refusals, PatternsAreCaseInsensitiveAndStraightenApostrophes) {
  const RefusalPatterns r = RefusalPatterns::defaults();
  EXPECT_TRUE(r.matches("I'm sorry, but I can't help with that."));
  EXPECT_TRUE(r.matches("I\xe2\x80\x99m SORRY"));
  EXPECT_TRUE(r.matches("As an AI, I do not judge people."));
  EXPECT_FALSE(r.matches("Skilled, friendly, careful, calm, tidy"));
  const RefusalPatterns mine({"No comment"});
  EXPECT_TRUE(mine.matches("no COMMENT."));
  EXPECT_FALSE(error_of<UsageError>([] { RefusalPatterns none({}); }).empty());
  EXPECT_FALSE(error_of<UsageError>([] { RefusalPatterns blank({""}); }).empty());
}

}  // namespace in_text_measures_test
}  // namespace
}  // namespace vlbias
