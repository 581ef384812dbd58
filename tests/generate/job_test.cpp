// The generation jobs' helpers (src/generate/job.h): base64 against RFC 4648's test vectors,
// image sniffing, API error bodies of the servers we speak to, URLs in run.json.
#include <gtest/gtest.h>

#include <string>

#include "job.h"
#include "vlbias/core/error.h"
#include "vlbias/core/rng.h"

namespace vlbias::generate_internal {
namespace {
namespace in_job_test {

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), std::optional<std::string>(plain));
  }
  // Unpadded and line-wrapped text decodes too (servers differ).
  EXPECT_EQ(base64_decode("Zm9vYg"), std::optional<std::string>("foob"));
  EXPECT_EQ(base64_decode("Zm9v\r\nYmFy\n"), std::optional<std::string>("foobar"));
  // Every byte value, every length mod 3.
  Rng rng(7, 0);
  for (std::size_t n = 0; n < 300; ++n) {
    std::string bytes(n, '\0');
    for (auto& b : bytes) b = static_cast<char>(rng.uniform_index(256));
    EXPECT_EQ(base64_decode(base64_encode(bytes)), std::optional<std::string>(bytes)) << n;
  }
}

TEST(Base64, MalformedIsRejected) {
  for (const char* bad : {"Z", "Zm9vY", "Zg=a", "Zg===", "Zm9v!", "Zm 9v\x01", "=Zg=", "Z==="}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

TEST(SniffImage, MagicBytes) {
  EXPECT_STREQ(sniff_image(std::string("\x89PNG\r\n\x1a\n....", 12))->mime, "image/png");
  EXPECT_STREQ(sniff_image("\xff\xd8\xff\xe0")->extension, "jpg");
  EXPECT_STREQ(sniff_image("GIF89a...")->mime, "image/gif");
  EXPECT_STREQ(sniff_image(std::string("RIFF\x10\x00\x00\x00WEBPVP8 ", 16))->mime, "image/webp");
  EXPECT_FALSE(sniff_image("").has_value());
  EXPECT_FALSE(sniff_image("\x89PNG").has_value());  // truncated signature
  EXPECT_FALSE(sniff_image(std::string("RIFF\x10\x00\x00\x00WAVEfmt ", 16)).has_value());
  EXPECT_FALSE(sniff_image("<html>").has_value());
}

TEST(ApiErrors, MessagesOfEachServerShape) {
  // OpenAI / Azure / Google: {"error": {"message": ...}}
  EXPECT_EQ(
      api_error_message(R"({"error":{"message":"bad image","type":"invalid_request_error"}})"),
      "bad image");
  // Ollama: {"error": "..."}
  EXPECT_EQ(api_error_message(R"({"error":"model not found"})"), "model not found");
  // vLLM: {"object": "error", "message": ...}
  EXPECT_EQ(api_error_message(R"({"object":"error","message":"too long","code":400})"), "too long");
  EXPECT_EQ(api_error_message("<html>502</html>"), "");
  EXPECT_EQ(api_error_message(R"({"error":{"message":")" + std::string(1000, 'x') + "\"}}").size(),
            300u);
}

TEST(ApiErrors, ContentPolicyCodes) {
  EXPECT_TRUE(content_policy_error(R"({"error":{"code":"content_filter","message":"x"}})"));
  EXPECT_TRUE(content_policy_error(R"({"error":{"code":"content_policy_violation"}})"));
  EXPECT_TRUE(content_policy_error(R"({"error":{"type":"moderation_blocked"}})"));
  EXPECT_FALSE(content_policy_error(R"({"error":{"code":"context_length_exceeded"}})"));
  EXPECT_FALSE(content_policy_error(R"({"error":"content_filter"})"));  // not a code field
  EXPECT_FALSE(content_policy_error("content_filter"));
}

TEST(RunJson, UrlsLoseTheirQuery) {
  EXPECT_EQ(url_for_record("https://x.test/v1/analyze?key=SECRET#frag"),
            "https://x.test/v1/analyze");
  EXPECT_EQ(url_for_record("http://127.0.0.1:8000/v1/chat/completions"),
            "http://127.0.0.1:8000/v1/chat/completions");
}

TEST(ApiKey, ReadFromTheEnvironmentOnly) {
  Endpoint e;
  const JobControl run;
  EXPECT_EQ(read_api_key(e, run), "");
  e.api_key_env = "VLBIAS_TEST_KEY_THAT_IS_NOT_SET";
  ::unsetenv(e.api_key_env.c_str());
  try {
    read_api_key(e, run);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("VLBIAS_TEST_KEY_THAT_IS_NOT_SET"), std::string::npos);
  }
  ::setenv(e.api_key_env.c_str(), "", 1);
  EXPECT_THROW(read_api_key(e, run), UsageError);
  ::setenv(e.api_key_env.c_str(), "sk-123", 1);
  EXPECT_EQ(read_api_key(e, run), "sk-123");
  ::unsetenv(e.api_key_env.c_str());
}

TEST(ApiKey, AMergeReadsNoKeyEvenWhenTheVariableIsUnset) {
  Endpoint e;
  e.api_key_env = "VLBIAS_TEST_KEY_THAT_IS_NOT_SET";
  ::unsetenv(e.api_key_env.c_str());
  JobControl merge;
  merge.merge = MergeSources{};
  EXPECT_EQ(read_api_key(e, merge), "");
}

}  // namespace in_job_test
}  // namespace
}  // namespace vlbias::generate_internal
