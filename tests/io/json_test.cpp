// JSON from outside (include/vlbias/io/json.h): the depth pre-scan against hand-made texts (the
// exact limit, brackets inside strings, escaped quotes and backslashes, invalid JSON), and
// parse_json / try_parse_json against nlohmann on the same texts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "vlbias/core/error.h"
#include "vlbias/io/json.h"
#include "vlbias/io/json_type.h"

namespace vlbias {
namespace {
namespace in_json_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string nested(int depth, const std::string& inside = "") {
  return std::string(static_cast<std::size_t>(depth), '[') + inside +
         std::string(static_cast<std::size_t>(depth), ']');
}

std::string parse_error(const std::string& text, int max_depth = kMaxJsonDepth) {
  try {
    parse_json(text, "'x.json'", max_depth);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonDepth, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_EQ(json_depth(""), 0);
  EXPECT_EQ(json_depth("42"), 0);
  EXPECT_EQ(json_depth("\"[[[\""), 0);
  EXPECT_EQ(json_depth("[]"), 1);
  EXPECT_EQ(json_depth("{}"), 1);
  EXPECT_EQ(json_depth(R"({"a": [1, {"b": [[]]}], "c": {}})"), 5);
  EXPECT_EQ(json_depth("[[]] [[[]]]"), 3);  // the deepest, not the last
  EXPECT_EQ(json_depth(nested(1000)), 1000);
}

TEST(JsonDepth, BracketsInsideStringsAndEscapesAreNotStructure) {
  EXPECT_EQ(json_depth(R"(["[[[{{{", "]]]"])"), 1);
  // An escaped quote does not end the string; an escaped backslash before a quote does.
  EXPECT_EQ(json_depth(R"(["a\"[[[[", 1])"), 1);
  EXPECT_EQ(json_depth(R"(["a\\", [[1]]])"), 3);
  EXPECT_EQ(json_depth(R"(["a\\\"[[", [1]])"), 2);
  EXPECT_EQ(json_depth(R"(["\u005b\u005b", "\\\\"])"), 1);
  // A key is a string too.
  EXPECT_EQ(json_depth(R"({"[[[": {"}}}": []}})"), 3);
}

TEST(JsonDepth, InvalidTextIsNeverCountedShallowerThanAParserGoes) {
  EXPECT_EQ(json_depth("]]]]"), 0);
  EXPECT_EQ(json_depth("]]][["), 2);
  EXPECT_EQ(json_depth("[[[\"unterminated [[[["), 3);
  EXPECT_EQ(json_depth(std::string(5, '[') + "\"\\"), 5);  // ends inside an escape
  EXPECT_EQ(json_depth("[[[ 1 2 3 ]]"), 3);
}

TEST(JsonDepth, StopsCountingPastTheLimit) {
  EXPECT_EQ(json_depth(nested(100'000), 256), 257);
  EXPECT_EQ(json_depth(nested(256), 256), 256);
}

TEST(ParseJson, AcceptsExactlyTheLimitAndRefusesOneMore) {
  EXPECT_EQ(kMaxJsonDepth, 256);
  EXPECT_EQ(json_depth(parse_json(nested(kMaxJsonDepth, "7"), "x").dump()), kMaxJsonDepth);
  EXPECT_THAT(
      parse_error(nested(kMaxJsonDepth + 1)),
      AllOf(HasSubstr("'x.json' is JSON nested deeper than 256 levels"), Not(HasSubstr("\n"))));
  // Objects count like arrays; brackets in strings do not.
  std::string objects = "1";
  for (int i = 0; i < kMaxJsonDepth; ++i) objects = "{\"k\": " + objects + "}";
  EXPECT_TRUE(parse_json(objects, "x").is_object());
  EXPECT_THAT(parse_error("[" + objects + "]"), HasSubstr("nested deeper than 256 levels"));
  const std::string in_string = "[\"" + std::string(100'000, '[') + "\"]";
  EXPECT_EQ(parse_json(in_string, "x")[0].get<std::string>().size(), 100'000u);
  // Another limit for another reader (safetensors headers use 16).
  EXPECT_THAT(parse_error(nested(17), 16), HasSubstr("nested deeper than 16 levels"));
  EXPECT_NO_THROW(parse_json(nested(16), "x", 16));
}

TEST(ParseJson, InvalidJsonNamesTheInputOnOneBoundedLine) {
  EXPECT_THAT(parse_error(""), HasSubstr("'x.json' is not valid JSON: "));
  EXPECT_THAT(parse_error("{\"a\": }"), HasSubstr("is not valid JSON: parse error"));
  EXPECT_THAT(parse_error("[1e999]"), HasSubstr("is not valid JSON"));
  // The parser quotes the last token read: a long, binary one is cut and escaped.
  const std::string message = parse_error("[\"" + std::string(10'000, '\x01'));
  EXPECT_THAT(message, AllOf(HasSubstr("is not valid JSON"), Not(HasSubstr("\x01"))));
  EXPECT_LT(message.size(), 400u);
}

TEST(TryParseJson, SaysWhyWithoutThrowing) {
  const ParsedJson ok = try_parse_json(R"({"a": [1, 2]})");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.value["a"][1], 2);
  const ParsedJson deep = try_parse_json(nested(150'000));
  EXPECT_FALSE(deep.ok());
  EXPECT_TRUE(deep.too_deep);
  EXPECT_EQ(deep.error, "JSON nested deeper than 256 levels");
  EXPECT_TRUE(deep.value.is_null());
  const ParsedJson bad = try_parse_json("{\"choices\": [");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.too_deep);
  EXPECT_EQ(bad.error, "not JSON");
  EXPECT_TRUE(bad.value.is_null());
  EXPECT_TRUE(try_parse_json(nested(9), 8).too_deep);
}

TEST(JsonTypeName, NamesEveryKindOfValueAsTheReadersMessagesDo) {
  EXPECT_STREQ(json_type_name(Json::object().type()), "an object");
  EXPECT_STREQ(json_type_name(Json::array().type()), "an array");
  EXPECT_STREQ(json_type_name(Json("x").type()), "a string");
  EXPECT_STREQ(json_type_name(Json(true).type()), "a boolean");
  EXPECT_STREQ(json_type_name(Json().type()), "null");
  EXPECT_STREQ(json_type_name(parse_json("7", "'x'").type()), "a non-negative integer");
  EXPECT_STREQ(json_type_name(parse_json("-7", "'x'").type()), "a negative integer");
  EXPECT_STREQ(json_type_name(parse_json("7.5", "'x'").type()), "a non-integer number");
}

}  // namespace in_json_test
}  // namespace
}  // namespace vlbias
