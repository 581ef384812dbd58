#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/table_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_table_jsonl_test {

using table_test::error_of;
using table_test::TempDir;
using table_test::texts;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Table jsonl(const std::string& text) {
  return parse_jsonl(text, "t.jsonl");
}

std::vector<std::string> names(const Table& t) {
  std::vector<std::string> out;
  for (const auto& c : t.columns) out.push_back(c.name);
  return out;
}

std::string jsonl_error(const std::string& text) {
  return error_of<InputError>([&] { jsonl(text); });
}

TEST(JsonlRead, FlattensNestedObjectsInOrderOfFirstAppearance) {
  const Table t = jsonl(
      "{\"id\": 1, \"person\": {\"race\": \"Black\", \"age\": {\"years\": 30}}}\n"
      "{\"id\": 2, \"person\": {\"race\": \"White\"}, \"extra\": \"e\"}\n");
  EXPECT_EQ(t.source, "t.jsonl");
  EXPECT_EQ(t.rows, 2u);
  EXPECT_THAT(names(t), ElementsAre("id", "person.race", "person.age.years", "extra"));
  EXPECT_EQ(t.column("id").type, ColumnType::Numeric);
  EXPECT_THAT(t.column("id").numbers, ElementsAre(1, 2));
  EXPECT_THAT(texts(t, "person.race"), ElementsAre("Black", "White"));
  EXPECT_EQ(t.column("person.age.years").numbers[0], 30);
  EXPECT_TRUE(t.column("person.age.years").missing(1));
  EXPECT_TRUE(t.column("extra").missing(0));
  EXPECT_EQ(t.column("extra").text(1), "e");
  EXPECT_THAT(t.line_of_row, ElementsAre(1u, 2u));
}

TEST(JsonlRead, ArraysBooleansNullsAndEmptyStrings) {
  const Table t = jsonl(
      "{\"tags\": [1, 2.50, {\"x\" : \"y\"}], \"ok\": true, \"n\": null, \"s\": \"\", \"e\": {}}\n"
      "{\"tags\": [], \"ok\": false, \"n\": 4, \"s\": \"v\"}\n");
  EXPECT_THAT(names(t), ElementsAre("tags", "ok", "n", "s"));  // {} has no leaves
  EXPECT_EQ(t.column("tags").type, ColumnType::String);
  EXPECT_THAT(texts(t, "tags"), ElementsAre("[1,2.5,{\"x\":\"y\"}]", "[]"));
  EXPECT_THAT(texts(t, "ok"), ElementsAre("true", "false"));
  EXPECT_EQ(t.column("n").type, ColumnType::Numeric);
  EXPECT_TRUE(t.column("n").missing(0));
  EXPECT_EQ(t.column("n").numbers[1], 4);
  EXPECT_TRUE(t.column("s").missing(0));
  EXPECT_EQ(t.column("s").text(1), "v");
}

TEST(JsonlRead, MixedNumbersAndStringsMakeAStringColumn) {
  const Table t = jsonl(
      "{\"age\": 30}\n{\"age\": 2.5}\n{\"age\": null}\n{\"age\": \"unknown\"}\n{\"age\": 30}\n"
      "{\"age\": -1e3}\n{\"age\": 18446744073709551615}\n");
  const Column& age = t.column("age");
  ASSERT_EQ(age.type, ColumnType::String);
  EXPECT_THAT(age.levels, ElementsAre("30", "2.5", "unknown", "-1000", "1.8446744073709552e+19"));
  EXPECT_THAT(age.codes, ElementsAre(0u, 1u, Column::kMissing, 2u, 0u, 3u, 4u));
}

TEST(JsonlRead, NumericLookingStringsStayText) {
  const Table t = jsonl("{\"x\": \"3\"}\n{\"x\": \"4\"}\n");
  EXPECT_EQ(t.column("x").type, ColumnType::String);
  EXPECT_EQ(error_of<InputError>([&] { t.numeric("x"); }),
            "column 'x' in 't.jsonl' is not numeric: line 1 holds \"3\" as text, not as a number");
}

TEST(JsonlRead, NumericErrorsNameTheLine) {
  const Table t = jsonl("{\"s\": 1}\n\n{\"s\": \"high\"}\n{\"s\": 2}\n{\"m\": 1}\n");
  EXPECT_EQ(error_of<InputError>([&] { t.numeric("s"); }),
            "column 's' in 't.jsonl' is not numeric: line 3 holds a string (\"high\") where line "
            "1 holds a number; expected a JSON number (or null) in every row");
  EXPECT_THAT(error_of<InputError>([&] { t.numeric("m"); }),
              HasSubstr("has a missing value at line 1"));
}

// A number among strings used to be reported as the text (it read "line 1 holds "1" as text",
// naming a row that holds a JSON number): both rows and their JSON types are named.
TEST(JsonlRead, MixedNumbersAndTextNameBothRowsAndTypes) {
  const Table digits = jsonl("{\"x\": 1}\n{\"x\": \"2\"}\n{\"x\": 3}\n");
  EXPECT_EQ(error_of<InputError>([&] { digits.numeric("x"); }),
            "column 'x' in 't.jsonl' is not numeric: line 2 holds a string (\"2\") where line 1 "
            "holds a number; expected a JSON number (or null) in every row");
  const Table later = jsonl("{\"x\": null}\n{\"x\": true}\n{\"x\": [1]}\n{\"x\": 4.5}\n");
  EXPECT_THAT(error_of<InputError>([&] { later.numeric("x"); }),
              HasSubstr("line 2 holds a boolean (\"true\") where line 4 holds a number"));
  const Table arrays = jsonl("{\"x\": 0}\n{\"x\": [1, 2]}\n");
  EXPECT_THAT(error_of<InputError>([&] { arrays.numeric("x"); }),
              HasSubstr("line 2 holds an array (\"[1,2]\") where line 1 holds a number"));
}

TEST(JsonlRead, SkipsBlankLinesAndHandlesCrlfBomAndNoFinalNewline) {
  const Table t = jsonl("\xEF\xBB\xBF{\"a\": 1}\r\n\r\n   \n\t\n{\"a\": 2}\r\n{\"a\": 3}");
  EXPECT_THAT(t.column("a").numbers, ElementsAre(1, 2, 3));
  EXPECT_THAT(t.line_of_row, ElementsAre(1u, 5u, 6u));
}

TEST(JsonlRead, UnicodeAndEscapes) {
  const Table t = jsonl("{\"name\": \"Zo\\u00eb \\\"Z\\\"\", \"city\": \"Köln\"}\n");
  EXPECT_EQ(t.column("name").text(0), "Zoë \"Z\"");
  EXPECT_EQ(t.column("city").text(0), "Köln");
}

TEST(JsonlRead, EmptyObjectsCountAsRows) {
  const Table t = jsonl("{}\n{\"a\": \"x\"}\n{}\n");
  EXPECT_EQ(t.rows, 3u);
  EXPECT_THAT(t.column("a").codes, ElementsAre(Column::kMissing, 0u, Column::kMissing));
}

TEST(JsonlRead, ManyRowsWithVaryingKeyOrder) {
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    if (i % 3 == 0) {
      text += fmt::format("{{\"b\": \"g{}\", \"a\": {}}}\n", i % 5, i);
    } else {
      text += fmt::format("{{\"a\": {}, \"b\": \"g{}\"}}\n", i, i % 5);
    }
  }
  const Table t = jsonl(text);
  EXPECT_THAT(names(t), ElementsAre("b", "a"));
  ASSERT_EQ(t.rows, 3000u);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(t.column("a").numbers[i], i);
    ASSERT_EQ(t.column("b").text(i), fmt::format("g{}", i % 5));
  }
}

TEST(JsonlRead, ReadFromFile) {
  TempDir dir;
  const std::string path = dir.write("t.jsonl", "{\"a\": 1, \"b\": {\"c\": \"x\"}}\n");
  const Table t = read_jsonl(path);
  EXPECT_EQ(t.source, path);
  EXPECT_EQ(t.column("b.c").text(0), "x");
  const std::string missing = dir.path("none.jsonl");
  EXPECT_THAT(error_of<InputError>([&] { read_jsonl(missing); }),
              AllOf(HasSubstr(missing), HasSubstr("No such file or directory")));
}

TEST(JsonlRead, LargeFile) {
  // Over 32 MiB, so the reader drops pages behind it as it goes.
  TempDir dir;
  std::string text;
  const int n = 1200000;
  text.reserve(static_cast<std::size_t>(n) * 32);
  for (int i = 0; i < n; ++i) text += fmt::format("{{\"a\": {}, \"b\": \"x{:07d}\"}}\n", i, i % 10);
  ASSERT_GT(text.size(), std::size_t{32} << 20);
  const Table t = read_jsonl(dir.write("big.jsonl", text));
  ASSERT_EQ(t.rows, static_cast<std::size_t>(n));
  EXPECT_EQ(t.column("a").numbers[n - 1], n - 1);
  EXPECT_EQ(t.column("b").levels.size(), 10u);
  EXPECT_EQ(t.column("b").text(n - 1), "x0000009");
  EXPECT_EQ(t.line_of_row[n - 1], static_cast<std::size_t>(n));
}

TEST(JsonlErrors, MalformedJsonNamesTheLine) {
  EXPECT_THAT(jsonl_error("{\"a\": 1}\n{\"a\": }\n"),
              AllOf(HasSubstr("'t.jsonl' line 2 is not valid JSON"),
                    HasSubstr("expected one JSON object per line")));
  EXPECT_THAT(jsonl_error("{\"a\": 1}\n\n{\"a\": 1"), HasSubstr("line 3 is not valid JSON"));
  // Two objects on one line, or one object over two lines, are not JSON Lines.
  EXPECT_THAT(jsonl_error("{\"a\": 1} {\"a\": 2}\n"), HasSubstr("line 1 is not valid JSON"));
  EXPECT_THAT(jsonl_error("{\"a\":\n1}\n"), HasSubstr("line 1 is not valid JSON"));
  EXPECT_THAT(jsonl_error("{\"a\": 1e999}\n"), HasSubstr("line 1 is not valid JSON"));
}

TEST(JsonlErrors, NestingDeeperThanEveryJsonReadersLimitNamesTheLine) {
  // kMaxJsonDepth (json.h) levels, the object of the line included, are read; one more is not.
  auto row = [](int depth) {
    return "{\"a\": " + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}\n";
  };
  TempDir dir;
  EXPECT_EQ(read_jsonl(dir.write("ok.jsonl", row(256))).rows, 1u);
  EXPECT_THAT(jsonl_error("{\"a\": 1}\n" + row(257)),
              HasSubstr("'t.jsonl' line 2 is not valid JSON (nested deeper than 256 levels of "
                        "arrays and objects)"));
}

TEST(JsonlErrors, LineThatIsNotAnObject) {
  EXPECT_THAT(jsonl_error("{\"a\": 1}\n[1, 2]\n"),
              AllOf(HasSubstr("'t.jsonl' line 2 holds an array, not an object")));
  EXPECT_THAT(jsonl_error("42\n"), HasSubstr("line 1 holds a number, not an object"));
  EXPECT_THAT(jsonl_error("\"s\"\n"), HasSubstr("line 1 holds a string"));
  EXPECT_THAT(jsonl_error("null\n"), HasSubstr("line 1 holds null"));
}

TEST(JsonlErrors, EmptyInput) {
  for (const char* text : {"", "\n", "  \n\r\n\t\n", "\xEF\xBB\xBF"}) {
    EXPECT_THAT(jsonl_error(text), HasSubstr("'t.jsonl' contains no JSON objects")) << text;
  }
}

TEST(JsonlErrors, DuplicateKeys) {
  EXPECT_THAT(jsonl_error("{\"a\": 1}\n{\"a\": 1, \"a\": 2}\n"),
              AllOf(HasSubstr("'t.jsonl' line 2 has the key 'a' twice")));
  // Flattening can collide too.
  EXPECT_THAT(jsonl_error("{\"a.b\": 1, \"a\": {\"b\": 2}}\n"), HasSubstr("key 'a.b' twice"));
  EXPECT_THAT(jsonl_error("{\"a\": null, \"a\": null}\n"), HasSubstr("key 'a' twice"));
}

TEST(JsonlErrors, EmptyKeys) {
  EXPECT_THAT(jsonl_error("{\"a\": 1}\n{\"\": 2}\n"),
              HasSubstr("'t.jsonl' line 2 has an empty key; expected every key to be named"));
  EXPECT_THAT(jsonl_error("{\"a\": {\"b\": {\"\": 1}}}\n"),
              HasSubstr("line 1 has an empty key inside 'a.b'"));
}

TEST(JsonlErrors, InvalidUtf8) {
  EXPECT_THAT(jsonl_error("{\"a\": \"x\"}\n{\"a\": \"\xff\"}\n"),
              HasSubstr("'t.jsonl' line 2 is not valid UTF-8"));
}

}  // namespace in_table_jsonl_test
}  // namespace
}  // namespace vlbias
