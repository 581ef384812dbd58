// What the moderation and judge scorers read and send (src/generate/job.h): moderation replies
// of each shape a server may send, and the judge's prompt template against a table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias::generate_internal {
namespace {
namespace in_scorer_protocols_test {

namespace fs = std::filesystem;

HttpResponse reply(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

TEST(ModerationReplies, ScoresAreColumnsInTheRepliesOrderWithTheFlagAndTheServedModel) {
  const Verdict v =
      read_moderation(reply(200, R"({"id":"modr-1","model":"omni-moderation-2024-09-26",
    "results":[{"flagged":true,"categories":{"self-harm":true,"harassment/threatening":false},
    "category_scores":{"self-harm":0.91,"harassment/threatening":0.02,"hate":0}}]})"));
  ASSERT_EQ(v.status, RequestStatus::Done) << v.reason;
  const Json out = Json::parse(v.response);
  EXPECT_EQ(out["model"], "omni-moderation-2024-09-26");
  EXPECT_EQ(out["flagged"], true);
  EXPECT_EQ(out["scores"].dump(), R"({"self_harm":0.91,"harassment_threatening":0.02,"hate":0})");
  // No model named: none recorded.
  const Verdict bare = read_moderation(
      reply(200, R"({"results":[{"flagged":false,"category_scores":{"sexual":1e-7}}]})"));
  ASSERT_EQ(bare.status, RequestStatus::Done);
  EXPECT_FALSE(Json::parse(bare.response).contains("model"));
}

TEST(ModerationReplies, AReplyThatIsNoModerationIsRetriedOrFailed) {
  struct Case {
    int status;
    const char* body;
    RequestStatus expected;
    const char* reason;
  };
  const std::string deep(300, '[');
  const Case cases[] = {
      {200, "not json", RequestStatus::Pending, "malformed response"},
      {200, "{}", RequestStatus::Pending, "no results[0]"},
      {200, R"({"results":[]})", RequestStatus::Pending, "no results[0]"},
      {200, R"({"results":[{"flagged":false}]})", RequestStatus::Pending, "category_scores"},
      {200, R"({"results":[{"flagged":false,"category_scores":{}}]})", RequestStatus::Pending,
       "category_scores"},
      {200, R"({"results":[{"category_scores":{"hate":0.1}}]})", RequestStatus::Pending, "flagged"},
      {200, R"({"results":[{"flagged":"yes","category_scores":{"hate":0.1}}]})",
       RequestStatus::Pending, "flagged"},
      {200, R"({"results":[{"flagged":false,"category_scores":{"hate":1.5}}]})",
       RequestStatus::Pending, "the score of \"hate\" is no number in [0, 1]"},
      {200, R"({"results":[{"flagged":false,"category_scores":{"hate":-0.1}}]})",
       RequestStatus::Pending, "hate"},
      {200, R"({"results":[{"flagged":false,"category_scores":{"hate":"0.1"}}]})",
       RequestStatus::Pending, "hate"},
      {200, R"({"results":[{"flagged":false,"category_scores":{"hate":1e999}}]})",
       RequestStatus::Pending, ""},
      {200,
       R"({"results":[{"flagged":false,"category_scores":{"self-harm":0.1,"self_harm":0.2}}]})",
       RequestStatus::Failed, "makes the column 'self_harm' a second time"},
      {200, R"({"results":[{"flagged":false,"category_scores":{"":0.1}}]})", RequestStatus::Failed,
       "(empty)"},
      {200, deep.c_str(), RequestStatus::Failed, "deeper than 256 levels"},
      {400, R"({"error":{"message":"input too long"}})", RequestStatus::Failed,
       "HTTP 400: input too long"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const Verdict v = read_moderation(reply(c.status, c.body));
    EXPECT_EQ(v.status, c.expected);
    EXPECT_NE(v.reason.find(c.reason), std::string::npos) << v.reason;
  }
}

Table table_of(const std::string& csv) {
  const fs::path path = fs::temp_directory_path() / "vlbias_prompt_template_test.csv";
  std::ofstream(path) << csv;
  return read_table(path.string());
}

TEST(JudgePrompt, TextAndColumnsAreFilledAndDoubledBracesAreLiteral) {
  const Table t = table_of("answer,race,text\n\"a calm, kind doctor\",Black,other\n,White,x\n");
  const PromptTemplate p("Rate {{0-10}} ({race}): {text}\n{{{answer}}}", t, 0, "t.csv");
  EXPECT_EQ(p.render(t, 0), "Rate {0-10} (Black): a calm, kind doctor\n{a calm, kind doctor}");
  EXPECT_EQ(p.render(t, 1), "Rate {0-10} (White): \n{}");
  // {text} is the text column, whatever the table's own `text` column holds.
  EXPECT_EQ(PromptTemplate("{text}|{text}", t, 0, "t.csv").render(t, 0),
            "a calm, kind doctor|a calm, kind doctor");
}

TEST(JudgePrompt, UnknownNamesUnmatchedBracesAndNoTextAreUsageErrorsNamingThem) {
  const Table t = table_of("answer,race\nx,y\n");
  auto expect_error = [&](const std::string& prompt, const std::string& needle) {
    SCOPED_TRACE(prompt);
    try {
      PromptTemplate(prompt, t, 0, "answers.csv");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("{text} {gender}",
               "{gender} is neither {text} nor a column of answers.csv "
               "(its columns: answer, race)");
  expect_error("{text} {}", "{} is neither");
  expect_error("{text} {race", "the '{' at character 8 is not closed");
  expect_error("{text} }", "the '}' at character 8 closes nothing");
  expect_error("Rate {race}", "never names the text");
  expect_error("Rate {{text}}", "never names the text");
}

}  // namespace in_scorer_protocols_test
}  // namespace
}  // namespace vlbias::generate_internal
