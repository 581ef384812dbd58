// Secrets out of stored text (include/vlbias/generate/redact.h): the key in every form a server may
// echo it in, every query value of a URL whatever its length, the length below which a key is a
// placeholder.
#include <gtest/gtest.h>

#include <string>

#include "vlbias/generate/redact.h"

namespace vlbias {
namespace {
namespace in_redact_test {

TEST(Redactor, ReplacesEveryOccurrenceOfTheKey) {
  Redactor r;
  r.add("sk-abc123XYZ");
  EXPECT_EQ(r("Incorrect API key provided: Bearer sk-abc123XYZ (sk-abc123XYZ)."),
            "Incorrect API key provided: Bearer [redacted] ([redacted]).");
  std::string text = "sk-abc123XYZsk-abc123XYZ";
  EXPECT_EQ(r.apply(text), 2u);
  EXPECT_EQ(text, "[redacted][redacted]");
  EXPECT_EQ(r("no key here, sk-abc123XY only a prefix"), "no key here, sk-abc123XY only a prefix");
  EXPECT_EQ(r(""), "");
}

TEST(Redactor, FindsTheKeyAsAJsonStringEscapesIt) {
  Redactor r;
  r.add("a/b\"c\\d-key");
  EXPECT_EQ(r(R"({"message": "bad key a/b\"c\\d-key"})"), R"({"message": "bad key [redacted]"})");
  EXPECT_EQ(r(R"({"message": "bad key a\/b\"c\\d-key"})"), R"({"message": "bad key [redacted]"})");
  EXPECT_EQ(r("bad key a/b\"c\\d-key"), "bad key [redacted]");
}

TEST(Redactor, EveryQueryValueAsSentAndDecoded) {
  Redactor r;
  r.add_url_query(
      "https://x.test/v1alpha1/comments:analyze?key=AIzaSyA%2Bq9-secret&alt=json"
      "&api-key=second+secret#fragment-not-sent");
  EXPECT_EQ(r("key=AIzaSyA%2Bq9-secret"), "key=[redacted]");
  EXPECT_EQ(r("API key not valid: AIzaSyA+q9-secret"), "API key not valid: [redacted]");
  EXPECT_EQ(r("second+secret / second secret"), "[redacted] / [redacted]");
  // Every value, however short: alt=json's too.
  EXPECT_EQ(r("alt=json"), "alt=[redacted]");
  EXPECT_EQ(r("fragment-not-sent"), "fragment-not-sent");
  Redactor none;
  none.add_url_query("http://127.0.0.1:8000/v1/chat/completions");
  EXPECT_TRUE(none.empty());
}

TEST(Redactor, QueryValuesShorterThanEightBytesAreRedactedToo) {
  Redactor r;
  r.add_url_query("https://x.test/v1?api_key=QSECRET&v=7&flag&empty=&=&");
  EXPECT_EQ(r("?api_key=QSECRET&v=7 flag"), "?api_key=[redacted]&v=[redacted] [redacted]");
  EXPECT_EQ(r("QSECRE"), "QSECRE");
  // A secret found inside an earlier replacement is left alone: "[redacted]" hides nothing.
  Redactor letters;
  letters.add_url_query("https://x.test/v1?k=long-secret-value&a=e&b=d");
  EXPECT_EQ(letters("long-secret-value; bed"), "[redacted]; b[redacted][redacted]");
  // One letter matched all over a long text: each match checks a window, not the whole text.
  std::string many(1'000'000, 'e');
  EXPECT_EQ(letters.apply(many), 1'000'000u);
}

TEST(Redactor, KeysShorterThanTheMinimumArePlaceholdersNotSecrets) {
  Redactor r;
  r.add("k");
  r.add("EMPTY");
  r.add("");
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r("a kind person, EMPTY"), "a kind person, EMPTY");
  r.add("12345678");
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r("x12345678y"), "x[redacted]y");
}

TEST(Redactor, ALongerSecretIsReplacedWholeBeforeOneInsideIt) {
  Redactor r;
  r.add("secret-part");
  r.add("the-secret-part-and-more");
  EXPECT_EQ(r("the-secret-part-and-more; secret-part"), "[redacted]; [redacted]");
}

}  // namespace in_redact_test
}  // namespace
}  // namespace vlbias
