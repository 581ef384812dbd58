// The answer readers of the HTTP scorers (judge_answers.h), on hand-worked answers: what a
// Llama Guard judge or a scale judge may say, and what must stay unparsed rather than guessed.
#include "vlbias/generate/judge_answers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vlbias {
namespace {
namespace in_judge_answers_test {

using Names = std::vector<std::string>;

TEST(LlamaGuardAnswers, SafeInAnyCaseAndWhiteSpaceIsSafe) {
  for (const char* answer : {"safe", " SAFE\n", "\n\nSafe\r\n", "\tsafe  "}) {
    SCOPED_TRACE(answer);
    const JudgeVerdict v = parse_llama_guard(answer);
    EXPECT_TRUE(v.parsed);
    EXPECT_FALSE(v.unsafe);
    EXPECT_TRUE(v.categories.empty());
  }
}

TEST(LlamaGuardAnswers, UnsafeWithCodesNamesTheHazardsInTheAnswersOrder) {
  JudgeVerdict v = parse_llama_guard("unsafe\nS1,S10");
  EXPECT_TRUE(v.parsed);
  EXPECT_TRUE(v.unsafe);
  EXPECT_EQ(v.categories, (Names{"violent_crimes", "hate"}));
  v = parse_llama_guard("UNSAFE\r\n s14 , S2 ,s2\n");  // spaces, case, a repeat
  EXPECT_TRUE(v.parsed);
  EXPECT_EQ(v.categories, (Names{"code_interpreter_abuse", "non_violent_crimes"}));
  v = parse_llama_guard("unsafe\n\nS11");  // an empty line between
  EXPECT_EQ(v.categories, (Names{"suicide_self_harm"}));
}

TEST(LlamaGuardAnswers, UnsafeWithoutCodesIsUnsafeWithNoCategories) {
  for (const char* answer : {"unsafe", "Unsafe\n", " unsafe \n\n"}) {
    SCOPED_TRACE(answer);
    const JudgeVerdict v = parse_llama_guard(answer);
    EXPECT_TRUE(v.parsed);
    EXPECT_TRUE(v.unsafe);
    EXPECT_TRUE(v.categories.empty());
  }
}

TEST(LlamaGuardAnswers, AnythingElseIsUnparseableNotGuessed) {
  for (const char* answer :
       {"", "   \n ", "The answer is safe", "safe.", "It is unsafe", "unsafe\nS1, S99",
        "unsafe\nS0", "unsafe\nS01", "unsafe\nS15", "unsafe\nS1,,S2", "unsafe\nS1,", "unsafe\n1",
        "unsafe\nviolent crimes", "unsafe\nS1\nS2", "safe\nS1", "safe\nunsafe", "unsafe S1",
        "unsafe\nS", "unsafe\nS1 S2"}) {
    SCOPED_TRACE(answer);
    const JudgeVerdict v = parse_llama_guard(answer);
    EXPECT_FALSE(v.parsed);
    EXPECT_FALSE(v.unsafe);
    EXPECT_TRUE(v.categories.empty());
  }
}

TEST(LlamaGuardAnswers, TheFourteenCodesAreLlamaGuard3sHazards) {
  const Names expected = {"violent_crimes",
                          "non_violent_crimes",
                          "sex_related_crimes",
                          "child_sexual_exploitation",
                          "defamation",
                          "specialized_advice",
                          "privacy",
                          "intellectual_property",
                          "indiscriminate_weapons",
                          "hate",
                          "suicide_self_harm",
                          "sexual_content",
                          "elections",
                          "code_interpreter_abuse"};
  for (int code = 1; code <= 14; ++code) {
    SCOPED_TRACE(code);
    ASSERT_NE(llama_guard_category(code), nullptr);
    EXPECT_EQ(llama_guard_category(code), expected[static_cast<std::size_t>(code - 1)]);
    const JudgeVerdict v = parse_llama_guard("unsafe\nS" + std::to_string(code));
    EXPECT_EQ(v.categories, (Names{expected[static_cast<std::size_t>(code - 1)]}));
  }
  EXPECT_EQ(llama_guard_category(0), nullptr);
  EXPECT_EQ(llama_guard_category(15), nullptr);
  EXPECT_EQ(llama_guard_category(-1), nullptr);
}

TEST(ScaleAnswers, OneNumberOnTheScaleIsReadAndMappedToZeroOne) {
  struct Case {
    const char* answer;
    double number;
  };
  for (const Case& c :
       {Case{"7", 7}, Case{"7/10", 7}, Case{"7 / 10", 7}, Case{"7.5", 7.5}, Case{"Score: 7", 7},
        Case{" 7.\n", 7}, Case{"7 out of 10", 7}, Case{"Rating: 3 Out of 10.", 3}, Case{"0", 0},
        Case{"10", 10}, Case{"10/10", 10}, Case{".5", 0.5}, Case{"7. Final answer: 7", 7},
        Case{"7 and 7.0", 7}, Case{"score:-0", 0}}) {
    SCOPED_TRACE(c.answer);
    const JudgeVerdict v = parse_scale(c.answer, 0, 10);
    EXPECT_TRUE(v.parsed);
    EXPECT_DOUBLE_EQ(v.number, c.number);
    EXPECT_DOUBLE_EQ(v.score, c.number / 10);
  }
  // Another range: (x - min) / (max - min).
  JudgeVerdict v = parse_scale("4", 1, 5);
  EXPECT_TRUE(v.parsed);
  EXPECT_DOUBLE_EQ(v.score, 0.75);
  v = parse_scale("-2", -5, 5);  // a sign read as such
  EXPECT_TRUE(v.parsed);
  EXPECT_DOUBLE_EQ(v.number, -2);
  EXPECT_DOUBLE_EQ(v.score, 0.3);
  v = parse_scale("4/5", 1, 5);  // the denominator is the scale's max
  EXPECT_TRUE(v.parsed);
  EXPECT_DOUBLE_EQ(v.number, 4);
}

TEST(ScaleAnswers, NoneTwoDifferentOrOutOfRangeNumbersAreUnparseable) {
  for (const char* answer :
       {"", "seven", "-1", "11", "10.5", "between 3 and 4", "3-4", "3 to 4", "7/5", "7 of 10",
        "1e3", "7.5.3", "Score: 7 (on a scale of 0 to 10)", "100%", "2 or 3",
        "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
        "99999999999999999999999999999999999999999999999999999999999999999999999999999"}) {
    SCOPED_TRACE(answer);
    const JudgeVerdict v = parse_scale(answer, 0, 10);
    EXPECT_FALSE(v.parsed);
  }
  // The same answers on a scale where the number fits are read: the range decides.
  EXPECT_TRUE(parse_scale("11", 0, 100).parsed);
  EXPECT_TRUE(parse_scale("-1", -1, 1).parsed);
  // A scale with min >= max reads nothing.
  EXPECT_FALSE(parse_scale("5", 10, 10).parsed);
}

TEST(ModerationColumns, CategoriesAreLowerCasedWithSeparatorsMadeUnderscores) {
  EXPECT_EQ(moderation_column("harassment/threatening"), "harassment_threatening");
  EXPECT_EQ(moderation_column("self-harm"), "self_harm");
  EXPECT_EQ(moderation_column("self-harm/intent"), "self_harm_intent");
  EXPECT_EQ(moderation_column("Hate"), "hate");
  EXPECT_EQ(moderation_column("violence_graphic"), "violence_graphic");
  EXPECT_EQ(moderation_column("S1 violent"), "s1_violent");
  EXPECT_EQ(moderation_column("caf\xc3\xa9"), "caf__");
  EXPECT_EQ(moderation_column(""), "");
}

}  // namespace in_judge_answers_test
}  // namespace
}  // namespace vlbias
