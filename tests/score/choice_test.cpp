// Closed-set answers mapped onto choices (include/vlbias/score/choice.h): the golden table of
// answers (tests/fixtures/score/choice_golden.csv, written by hand: every row's expected label
// follows the rule table in docs/methods.md#closed-set-answers), the first token's
// probabilities against hand-worked examples, and the choice sets refused.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/score/choice.h"

namespace vlbias {
namespace {
namespace in_choice_test {

using testing_util::error_of;
using Synonyms = std::map<std::string, std::vector<std::string>>;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string label_of(const ChoiceSet& set, const ChoiceAnswer& a) {
  return a.outcome == ChoiceOutcome::Choice ? set.choices()[a.choice] : to_string(a.outcome);
}

TEST(ChoiceGolden, EveryAnswerOfTheGoldenTableGetsItsExpectedLabel) {
  const Table t =
      read_csv(std::string(VLBIAS_SOURCE_DIR) + "/tests/fixtures/score/choice_golden.csv",
               CsvOptions{.delimiter = ',', .text_only = true});
  ASSERT_GE(t.rows, 200u);
  std::map<std::string, std::size_t> per_label;
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < t.rows; ++r) {
    const std::string answer = t.column("answer").text(r);
    const std::string synonyms = t.column("synonyms").text(r);
    const std::string unclear = t.column("unclear").text(r);
    const ChoiceSet set(
        split_commas(t.column("choices").text(r)),
        synonyms.empty() ? Synonyms{} : parse_synonyms(synonyms, "synonyms"),
        unclear.empty() ? std::vector<std::string>{"unclear"} : split_commas(unclear));
    const ChoiceAnswer a = parse_choice(set, answer);
    const std::string got = label_of(set, a);
    const std::string expected = t.column("expected").text(r);
    if (got != expected) ++wrong;
    EXPECT_EQ(got, expected) << "line " << t.line_of_row[r] << ": the answer '" << answer
                             << "' with choices " << t.column("choices").text(r) << " (rule "
                             << a.rule << ")";
    ++per_label[a.outcome == ChoiceOutcome::Choice ? "choice" : expected];
  }
  // The table covers every outcome.
  for (const char* k : {"choice", "unclear", "refused", "unparseable"}) {
    EXPECT_GE(per_label[k], 5u) << k;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(ChoiceRules, EachAnswerNamesTheRuleThatDecidedIt) {
  const ChoiceSet set({"man", "woman"}, {}, {"unclear"});
  EXPECT_STREQ(parse_choice(set, "Man.").rule, "exact");
  EXPECT_STREQ(parse_choice(set, "I think a man").rule, "word");
  EXPECT_STREQ(parse_choice(set, "").rule, "empty");
  EXPECT_STREQ(parse_choice(set, "I can't tell").rule, "refusal");
  EXPECT_STREQ(parse_choice(set, "unclear").rule, "unclear");
  EXPECT_STREQ(parse_choice(set, "not a man").rule, "negation");
  EXPECT_STREQ(parse_choice(set, "a man or a woman").rule, "several");
  EXPECT_STREQ(parse_choice(set, "unclear, a man?").rule, "unclear+choice");
  EXPECT_STREQ(parse_choice(set, "a person").rule, "none");
  // A longer form of one choice hides the shorter form of another inside it.
  const ChoiceSet asian({"Asian", "East Asian"}, {}, {"unclear"});
  EXPECT_EQ(label_of(asian, parse_choice(asian, "the person is East Asian")), "East Asian");
  EXPECT_EQ(label_of(asian, parse_choice(asian, "Asian")), "Asian");
}

TEST(ChoiceRules, InvalidUtf8IsAnInputErrorNamingTheAnswer) {
  const ChoiceSet set({"yes", "no"}, {}, {"unclear"});
  const std::string msg = error_of<InputError>(
      [&] { parse_choice(set, std::string("ye\xff", 3), "table.csv line 4"); });
  EXPECT_NE(msg.find("table.csv line 4"), std::string::npos) << msg;
}

// Hand-worked: choices yes,no; the first token's top list
//   " Yes" ln 0.6, "Yes" ln 0.1, " No" ln 0.2, "The" ln 0.05, "no" ln 0.02
// yes = 0.6 + 0.1 = 0.7 (case and leading-space variants merged), no = 0.2 + 0.02 = 0.22,
// "The" belongs to no choice; renormalised over the choices: yes = 0.7 / 0.92 = 0.76086957,
// no = 0.22 / 0.92 = 0.23913043.
TEST(ChoiceProbabilitiesTest, TheFirstTokensMassIsRenormalisedOverTheChoices) {
  const ChoiceSet set({"yes", "no"}, {}, {"unclear"});
  const auto p = choice_probabilities(set, {{" Yes", std::log(0.6)},
                                            {"Yes", std::log(0.1)},
                                            {" No", std::log(0.2)},
                                            {"The", std::log(0.05)},
                                            {"no", std::log(0.02)}});
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->p.size(), 2u);
  EXPECT_NEAR(p->p[0], 0.7 / 0.92, 1e-12);
  EXPECT_NEAR(p->p[1], 0.22 / 0.92, 1e-12);
  EXPECT_TRUE(p->missing.empty());
  // The tokenizers' space marks: U+0120 (byte-level BPE) and U+2581 (SentencePiece).
  const auto marks = choice_probabilities(
      set, {{"\xC4\xA0Yes", std::log(0.3)}, {"\xE2\x96\x81no", std::log(0.1)}});
  ASSERT_TRUE(marks.has_value());
  EXPECT_NEAR(marks->p[0], 0.75, 1e-12);
  EXPECT_NEAR(marks->p[1], 0.25, 1e-12);
}

// A synonym's first word counts for its choice: male = " Male" 0.5 + " man" 0.1, female =
// " female" 0.2: 0.6 / 0.8 = 0.75 and 0.25.
TEST(ChoiceProbabilitiesTest, SynonymsCountForTheirChoice) {
  const ChoiceSet set({"male", "female"}, Synonyms{{"male", {"man"}}}, {"unclear"});
  const auto p = choice_probabilities(
      set, {{" Male", std::log(0.5)}, {" man", std::log(0.1)}, {" female", std::log(0.2)}});
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(p->p[0], 0.75, 1e-12);
  EXPECT_NEAR(p->p[1], 0.25, 1e-12);
}

TEST(ChoiceProbabilitiesTest, AnAbsentChoiceGetsZeroAndIsNamedAndNoChoiceGivesNone) {
  const ChoiceSet set({"man", "woman"}, {}, {"unclear"});
  const auto p =
      choice_probabilities(set, {{" man", std::log(0.5)}, {" The", std::log(0.3)}, {"A", -2.3}});
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->p[0], 1.0);
  EXPECT_DOUBLE_EQ(p->p[1], 0.0);
  EXPECT_EQ(p->missing, std::vector<std::size_t>{1});
  EXPECT_FALSE(choice_probabilities(set, {{" The", -0.1}, {" A", -2.0}}).has_value());
  EXPECT_FALSE(choice_probabilities(set, {}).has_value());
  // A first word shared by two choices' forms counts for neither.
  const ChoiceSet east({"East Asian", "East African"}, {}, {"unclear"});
  EXPECT_FALSE(choice_probabilities(east, {{" East", -0.1}}).has_value());
}

TEST(ChoiceProbabilitiesTest, ALogprobAboveZeroOrNotFiniteIsAnInputError) {
  const ChoiceSet set({"yes", "no"}, {}, {"unclear"});
  EXPECT_NE(error_of<InputError>([&] {
              choice_probabilities(set, {{"yes", 0.5}}, "answers.jsonl line 3");
            }).find("answers.jsonl line 3"),
            std::string::npos);
  error_of<InputError>([&] { choice_probabilities(set, {{"no", std::nan("")}}); });
}

TEST(ChoiceSetTest, BadChoiceSetsAreUsageErrorsNamingTheOption) {
  const auto fails = [](std::vector<std::string> choices, Synonyms synonyms,
                        std::vector<std::string> unclear) {
    return error_of<UsageError>([&] { ChoiceSet(choices, synonyms, unclear, "--choices"); });
  };
  EXPECT_NE(fails({}, {}, {"unclear"}).find("two or more"), std::string::npos);
  EXPECT_NE(fails({"man"}, {}, {"unclear"}).find("two or more"), std::string::npos);
  EXPECT_NE(fails({"man", "Man"}, {}, {"unclear"}).find("must differ"), std::string::npos);
  EXPECT_NE(fails({"man", "the man"}, {}, {"unclear"}).find("must differ"), std::string::npos);
  EXPECT_NE(fails({"man", "woman"}, {{"man", {"Woman"}}}, {"unclear"}).find("synonym of man"),
            std::string::npos);
  EXPECT_NE(fails({"man", "woman"}, {{"person", {"human"}}}, {"unclear"}).find("not one of"),
            std::string::npos);
  EXPECT_NE(fails({"man", "..."}, {}, {"unclear"}).find("holds no word"), std::string::npos);
  EXPECT_NE(fails({"yes", "no"}, {}, {"No"}).find("unclear word"), std::string::npos);
  const std::string msg = fails({"man", "woman"}, {}, {""});
  EXPECT_NE(msg.find("--choices"), std::string::npos) << msg;
}

TEST(ChoiceSetTest, SynonymListsAreParsedAndBadOnesRefused) {
  const Synonyms s = parse_synonyms("man=male|gentleman, woman = female", "--synonyms");
  EXPECT_EQ(s.at("man"), (std::vector<std::string>{"male", "gentleman"}));
  EXPECT_EQ(s.at("woman"), (std::vector<std::string>{"female"}));
  for (const char* bad : {"man", "=male", "man=", "man=male||gent", "man=male,"}) {
    const std::string msg = error_of<UsageError>([&] { parse_synonyms(bad, "--synonyms"); });
    EXPECT_NE(msg.find("--synonyms"), std::string::npos) << bad << ": " << msg;
  }
}

}  // namespace in_choice_test
}  // namespace
}  // namespace vlbias
