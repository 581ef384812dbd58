#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/table_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_table_csv_test {

namespace fs = std::filesystem;
using table_test::error_of;
using table_test::TempDir;
using table_test::texts;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Table csv(const std::string& text, char delimiter = ',') {
  return parse_csv(text, "t.csv", CsvOptions{delimiter});
}

std::string csv_error(const std::string& text) {
  return error_of<InputError>([&] { csv(text); });
}

// ------------------------------------------------------------------ reading

TEST(CsvRead, InfersTypesAndKeepsLevelsInOrderOfFirstAppearance) {
  const Table t = csv("id,group,score\n1,b,0.5\n2,a,1e3\n3,b,-2\n");
  EXPECT_EQ(t.source, "t.csv");
  EXPECT_EQ(t.rows, 3u);
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.columns[0].type, ColumnType::Numeric);
  EXPECT_EQ(t.columns[1].type, ColumnType::String);
  EXPECT_EQ(t.columns[2].type, ColumnType::Numeric);
  EXPECT_THAT(t.columns[1].levels, ElementsAre("b", "a"));
  EXPECT_THAT(t.columns[1].codes, ElementsAre(0u, 1u, 0u));
  EXPECT_THAT(t.columns[2].numbers, ElementsAre(0.5, 1000.0, -2.0));
  EXPECT_THAT(t.line_of_row, ElementsAre(2u, 3u, 4u));
}

TEST(CsvRead, TextOnlyKeepsEveryCellAsWrittenAndRewritesItByteForByte) {
  const std::string text = "row,text\n0,007\n1, 3.5 \n2,\"'=1+1\"\n3,\n4,1e3\n";
  const Table t = parse_csv(text, "t.csv", CsvOptions{',', true});
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[0].type, ColumnType::String);
  EXPECT_EQ(t.columns[1].type, ColumnType::String);
  EXPECT_EQ(t.columns[1].text(0), "007");
  EXPECT_EQ(t.columns[1].text(1), " 3.5 ");
  EXPECT_EQ(t.columns[1].text(2), "=1+1");  // the formula guard is read off, as always
  EXPECT_TRUE(t.columns[1].missing(3));
  EXPECT_EQ(t.columns[1].text(4), "1e3");
  const fs::path out = fs::temp_directory_path() / "vlbias_text_only_roundtrip.csv";
  write_csv(t, out.string());
  std::ifstream in(out, std::ios::binary);
  const std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(back, text);
  fs::remove(out);
}

TEST(CsvRead, QuotedFieldsHoldDelimitersDoubledQuotesAndNewlines) {
  const Table t =
      csv("name,note\n"
          "\"Smith, J\",\"say \"\"hi\"\"\"\n"
          "\"two\nlines\",\"crlf\r\ninside\"\n"
          "plain,\"\"\n"
          "last,x\n");
  ASSERT_EQ(t.rows, 4u);
  EXPECT_THAT(texts(t, "name"), ElementsAre("Smith, J", "two\nlines", "plain", "last"));
  EXPECT_THAT(texts(t, "note"), ElementsAre("say \"hi\"", "crlf\r\ninside", "", "x"));
  EXPECT_TRUE(t.column("note").missing(2));  // "" is an empty, hence missing, cell
  // Rows are numbered by the line they start on; row 2 spans lines 3 to 5.
  EXPECT_THAT(t.line_of_row, ElementsAre(2u, 3u, 6u, 7u));
}

TEST(CsvRead, AcceptsCrlfLoneCrAndMissingFinalNewline) {
  const Table crlf = csv("a,b\r\n1,x\r\n2,y");
  EXPECT_EQ(crlf.rows, 2u);
  EXPECT_THAT(texts(crlf, "b"), ElementsAre("x", "y"));
  EXPECT_THAT(crlf.line_of_row, ElementsAre(2u, 3u));
  const Table cr = csv("a,b\r1,x\r2,y\r");
  EXPECT_THAT(texts(cr, "b"), ElementsAre("x", "y"));
  EXPECT_THAT(cr.line_of_row, ElementsAre(2u, 3u));
}

TEST(CsvRead, SkipsUtf8BomAndBlankLines) {
  const Table t = csv("\xEF\xBB\xBFname,n\n\nÄrger,1\n\r\n\nZoë,2\n\n\n");
  EXPECT_EQ(t.columns[0].name, "name");
  EXPECT_THAT(texts(t, "name"), ElementsAre("Ärger", "Zoë"));
  EXPECT_THAT(t.line_of_row, ElementsAre(3u, 6u));
}

TEST(CsvRead, HeaderOnlyGivesZeroRows) {
  for (const char* text : {"a,b", "a,b\n", "a,b\r\n\r\n"}) {
    const Table t = csv(text);
    EXPECT_EQ(t.rows, 0u) << text;
    ASSERT_EQ(t.columns.size(), 2u);
    EXPECT_EQ(t.columns[1].name, "b");
    EXPECT_EQ(t.columns[1].size(), 0u);
  }
}

TEST(CsvRead, NumericInference) {
  const Table t =
      csv("int,exp,neg,plus,spaced,frac,tiny,nan,inf,minus_inf,huge,hex,comma\n"
          "7,1e3,-4,+2,\" 3 \",.5,1e-400,NaN,inf,-inf,1e400,0x10,\"1,000\"\n"
          "-12,2.5E-2,-0.25,+.5, 4,5.,2,1,1,1,1,1,1\n");
  for (const char* name : {"int", "exp", "neg", "plus", "spaced", "frac", "tiny"}) {
    EXPECT_EQ(t.column(name).type, ColumnType::Numeric) << name;
  }
  EXPECT_THAT(t.column("int").numbers, ElementsAre(7, -12));
  EXPECT_THAT(t.column("exp").numbers, ElementsAre(1000, 0.025));
  EXPECT_THAT(t.column("neg").numbers, ElementsAre(-4, -0.25));
  EXPECT_THAT(t.column("plus").numbers, ElementsAre(2, 0.5));
  EXPECT_THAT(t.column("spaced").numbers, ElementsAre(3, 4));
  EXPECT_THAT(t.column("frac").numbers, ElementsAre(0.5, 5));
  EXPECT_THAT(t.column("tiny").numbers, ElementsAre(0, 2));
  for (const char* name : {"nan", "inf", "minus_inf", "huge", "hex", "comma"}) {
    EXPECT_EQ(t.column(name).type, ColumnType::String) << name;
  }
  // Text is kept exactly as written, including the numeric-looking cells.
  EXPECT_THAT(texts(t, "nan"), ElementsAre("NaN", "1"));
  EXPECT_THAT(texts(t, "minus_inf"), ElementsAre("-inf", "1"));
  EXPECT_THAT(texts(t, "comma"), ElementsAre("1,000", "1"));
}

TEST(CsvRead, SignAndWordEdgeCasesAreText) {
  const Table t = csv("a,b,c,d,e\n+-1,1e,--2,.,+\n");
  for (const auto& c : t.columns) EXPECT_EQ(c.type, ColumnType::String) << c.name;
}

TEST(CsvRead, EmptyCellsAreMissing) {
  const Table t = csv("x,y,z\n1,,\n,b,\n3,,\n");
  const Column& x = t.column("x");
  EXPECT_EQ(x.type, ColumnType::Numeric);
  EXPECT_FALSE(x.missing(0));
  EXPECT_TRUE(x.missing(1));
  EXPECT_TRUE(std::isnan(x.numbers[1]));
  const Column& y = t.column("y");
  EXPECT_EQ(y.type, ColumnType::String);
  EXPECT_THAT(y.codes, ElementsAre(Column::kMissing, 0u, Column::kMissing));
  EXPECT_THAT(y.levels, ElementsAre("b"));
  // A column with no values at all counts as numeric (every present cell is a number).
  const Column& z = t.column("z");
  EXPECT_EQ(z.type, ColumnType::Numeric);
  for (std::size_t r = 0; r < 3; ++r) EXPECT_TRUE(z.missing(r));
}

TEST(CsvRead, LateTextKeepsEarlierCellsExactAndInOrder) {
  // The column reads as numbers until "x"; the earlier cells keep their text.
  const Table t = csv("v,w\n1.0,1\n2,2\n,3\nx,4\n1.0,5\n02,6\n");
  const Column& v = t.column("v");
  ASSERT_EQ(v.type, ColumnType::String);
  EXPECT_THAT(v.levels, ElementsAre("1.0", "2", "x", "02"));
  EXPECT_THAT(v.codes, ElementsAre(0u, 1u, Column::kMissing, 2u, 0u, 3u));
  EXPECT_EQ(t.column("w").type, ColumnType::Numeric);
}

TEST(CsvRead, LateTextAfterManyRows) {
  // Enough rows to size the vectors from a sample and to re-read a long prefix.
  std::string text = "k,v,s\n";
  const int n = 5000;
  for (int i = 0; i < n; ++i) {
    text += fmt::format("{},{}.0,{}\n", i, i % 7, i % 2 ? "odd" : "even");
  }
  text += "5000,late,odd\n";
  const Table t = csv(text);
  ASSERT_EQ(t.rows, static_cast<std::size_t>(n + 1));
  EXPECT_EQ(t.column("k").type, ColumnType::Numeric);
  EXPECT_EQ(t.column("k").numbers.back(), 5000);
  const Column& v = t.column("v");
  ASSERT_EQ(v.type, ColumnType::String);
  EXPECT_THAT(v.levels, ElementsAre("0.0", "1.0", "2.0", "3.0", "4.0", "5.0", "6.0", "late"));
  for (int i = 0; i < n; ++i) ASSERT_EQ(v.codes[i], static_cast<std::uint32_t>(i % 7)) << i;
  EXPECT_EQ(v.codes[n], 7u);
  EXPECT_THAT(t.column("s").levels, ElementsAre("even", "odd"));
  EXPECT_EQ(t.line_of_row.back(), static_cast<std::size_t>(n + 2));
}

TEST(CsvRead, LargeFileReleasesPagesAndRereadsThem) {
  // Over 32 MiB, so the reader drops pages behind it; the text in the last row
  // then makes it re-read the whole file for column v.
  TempDir dir;
  std::string text = "k,v\n";
  const int n = 2100000;
  text.reserve(static_cast<std::size_t>(n) * 20 + 64);
  for (int i = 0; i < n; ++i) text += fmt::format("{},{:09d}\n", i, i % 1000);
  text += "-1,end\n";
  ASSERT_GT(text.size(), std::size_t{32} << 20);
  const Table t = read_csv(dir.write("big.csv", text));
  ASSERT_EQ(t.rows, static_cast<std::size_t>(n + 1));
  const Column& v = t.column("v");
  ASSERT_EQ(v.type, ColumnType::String);
  ASSERT_EQ(v.levels.size(), 1001u);
  EXPECT_EQ(v.levels[0], "000000000");
  EXPECT_EQ(v.levels[999], "000000999");
  EXPECT_EQ(v.levels[1000], "end");
  for (const int row : {0, 1, 999, 1000, 123456, n - 1}) {
    EXPECT_EQ(v.text(row), fmt::format("{:09d}", row % 1000)) << row;
    EXPECT_EQ(t.column("k").numbers[row], row);
    EXPECT_EQ(t.line_of_row[row], static_cast<std::size_t>(row + 2));
  }
  EXPECT_EQ(v.text(n), "end");
}

TEST(CsvRead, TabDelimiterKeepsCommas) {
  const Table t = csv("a\tb\n1,5\t\"x\ty\"\n", '\t');
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_THAT(texts(t, "a"), ElementsAre("1,5"));
  EXPECT_THAT(texts(t, "b"), ElementsAre("x\ty"));
}

TEST(CsvRead, BareQuoteInsideUnquotedFieldIsLiteral) {
  const Table t = csv("item,size\nscreen,15\" wide\n");
  EXPECT_THAT(texts(t, "size"), ElementsAre("15\" wide"));
}

TEST(CsvRead, SpaceBeforeQuoteMakesAnUnquotedField) {
  const Table t = csv("a,b\n1, \"x\"\n");
  EXPECT_THAT(texts(t, "b"), ElementsAre(" \"x\""));
}

TEST(CsvRead, TrailingDelimiterMeansAMissingLastCell) {
  const Table t = csv("a,b\n1,\n");
  EXPECT_TRUE(t.column("b").missing(0));
}

TEST(CsvRead, ReadCsvAndReadTableDispatchByExtension) {
  TempDir dir;
  const std::string body = "a,b\n1,x\n";
  EXPECT_EQ(read_csv(dir.write("t.csv", body)).rows, 1u);
  EXPECT_EQ(read_table(dir.write("u.CSV", body)).column("b").text(0), "x");
  const Table tsv = read_table(dir.write("t.tsv", "a\tb\n1,2\tx\n"));
  EXPECT_EQ(tsv.column("a").text(0), "1,2");
  EXPECT_EQ(read_table(dir.write("t.jsonl", "{\"a\":1}\n")).rows, 1u);
  EXPECT_EQ(read_table(dir.write("t.ndjson", "{\"a\":1}\n")).rows, 1u);
  EXPECT_EQ(read_table(dir.write("t.csv", body)).source, dir.path("t.csv"));
}

TEST(CsvRead, HeaderOnlyFileOnDisk) {
  TempDir dir;
  const Table t = read_csv(dir.write("h.csv", "a,b\n"));
  EXPECT_EQ(t.rows, 0u);
  EXPECT_EQ(t.columns.size(), 2u);
}

// ------------------------------------------------------------------- errors

TEST(CsvErrors, EmptyFile) {
  for (const char* text : {"", "\xEF\xBB\xBF", "\n\n", "\r\n"}) {
    EXPECT_THAT(csv_error(text), HasSubstr("'t.csv' is empty: expected a header row")) << text;
  }
  TempDir dir;
  const std::string path = dir.write("empty.csv", "");
  EXPECT_THAT(error_of<InputError>([&] { read_csv(path); }),
              HasSubstr("'" + path + "' is empty: expected a header row"));
}

TEST(CsvErrors, DuplicateHeaderName) {
  EXPECT_THAT(
      csv_error("id,x,id\n1,2,3\n"),
      AllOf(HasSubstr("'t.csv' line 1"), HasSubstr("'id' twice"), HasSubstr("columns 1 and 3")));
}

TEST(CsvErrors, EmptyHeaderName) {
  EXPECT_THAT(csv_error("a,,c\n1,2,3\n"),
              AllOf(HasSubstr("'t.csv' line 1"), HasSubstr("header column 2 is empty")));
  EXPECT_THAT(csv_error("a,,b,\n1,2,3,4\n"), HasSubstr("header column 2 is empty"));
  EXPECT_THAT(csv_error("\"\"\n1\n"), HasSubstr("header column 1 is empty"));
}

TEST(CsvHeader, UnnamedTailIsOptional) {
  // ViSAGe's exports: "worker_id,...,coords,," with rows that stop after coords.
  const Table t = parse_csv("a,b,,\n1,x\n2,y,3\n3,z,4,w\n", "t.csv");
  ASSERT_EQ(t.rows, 3u);
  ASSERT_EQ(t.columns.size(), 4u);
  EXPECT_EQ(t.columns[2].name, "Unnamed: 2");
  EXPECT_EQ(t.columns[3].name, "Unnamed: 3");
  EXPECT_TRUE(t.columns[2].missing(0));
  EXPECT_TRUE(t.columns[3].missing(1));
  EXPECT_EQ(t.columns[2].text(1), "3");
  EXPECT_EQ(t.columns[3].text(2), "w");
  // The named part is still required, and extra fields are still an error.
  EXPECT_THAT(csv_error("a,b,,\n1\n"), HasSubstr("line 2 has 1 field"));
  EXPECT_THAT(csv_error("a,b,,\n1,2,3,4,5\n"), HasSubstr("line 2 has 5 fields"));
  // Without an unnamed tail, a short row is an error as before.
  EXPECT_THAT(csv_error("a,b,c\n1,2\n"), HasSubstr("line 2 has 2 fields"));
}

TEST(CsvHeader, EmptyFirstNameIsPandasIndex) {
  // DataFrame.to_csv() writes its index under an empty first header (DIG-In's prompt lists).
  const Table t = parse_csv(",prompt,region\n0,bag in Africa,Africa\n1,bag,\n", "t.csv");
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.columns[0].name, "Unnamed: 0");
  EXPECT_EQ(t.numeric("Unnamed: 0")[1], 1.0);
  EXPECT_EQ(t.column("region").text(0), "Africa");
  EXPECT_TRUE(t.column("region").missing(1));
}

TEST(CsvErrors, RaggedRows) {
  EXPECT_THAT(csv_error("a,b,c\n1,2,3\n4,5,6,7\n"),
              AllOf(HasSubstr("'t.csv' line 3 has 4 fields, the header has 3")));
  EXPECT_THAT(csv_error("a,b,c\n1,2,3\n4,5\n"), HasSubstr("line 3 has 2 fields, the header has 3"));
  EXPECT_THAT(csv_error("a,b\n1,2\n3\n"), HasSubstr("line 3 has 1 field, the header has 2"));
  // The line of a row that follows a multi-line quoted field is counted right.
  EXPECT_THAT(csv_error("a,b\n\"x\ny\nz\",1\n1,2,3\n"), HasSubstr("line 5 has 3 fields"));
  // A blank line is skipped, not a ragged row; whitespace is not blank.
  EXPECT_THAT(csv_error("a,b\n1,2\n  \n"), HasSubstr("line 3 has 1 field"));
}

TEST(CsvErrors, UnterminatedQuoteNamesTheLineWhereItOpened) {
  EXPECT_THAT(
      csv_error("a,b\n1,2\n3,\"open\n4,5\n6,7\n"),
      AllOf(HasSubstr("'t.csv' line 3"), HasSubstr("never closed"), HasSubstr("column 2 ('b')")));
  EXPECT_THAT(csv_error("a,\"b\n"),
              AllOf(HasSubstr("line 1, column 2:"), HasSubstr("never closed")));
}

TEST(CsvErrors, TextAfterClosingQuote) {
  EXPECT_THAT(csv_error("a,b\n1,\"x\"y\n"),
              AllOf(HasSubstr("'t.csv' line 2, column 2 ('b')"),
                    HasSubstr("unexpected text after a closing quote")));
  EXPECT_THAT(csv_error("a,b\n\"multi\nline\" ,2\n"),
              AllOf(HasSubstr("line 3, column 1 ('a')"), HasSubstr("after a closing quote")));
  EXPECT_THAT(csv_error("\"a\"b,c\n1,2\n"), HasSubstr("line 1, column 1:"));
}

TEST(CsvErrors, InvalidUtf8NamesTheLine) {
  EXPECT_THAT(csv_error("a,b\n1,ok\n2,bad\xff\n"),
              AllOf(HasSubstr("'t.csv' line 3 is not valid UTF-8"), HasSubstr("byte 6"),
                    HasSubstr("0xff")));
  // Overlong encoding, lone continuation byte, surrogate, truncated sequence at the end.
  EXPECT_THAT(csv_error("a\n\xC0\xAF\n"), HasSubstr("line 2 is not valid UTF-8"));
  EXPECT_THAT(csv_error("a\nx\n\x80\n"), HasSubstr("line 3 is not valid UTF-8"));
  EXPECT_THAT(csv_error("a\n\xED\xA0\x80\n"), HasSubstr("line 2 is not valid UTF-8"));
  EXPECT_THAT(csv_error("a\nx\r\ny\r\n\xE2\x82"), HasSubstr("line 4 is not valid UTF-8"));
  EXPECT_THAT(csv_error("\xFE\n1\n"), HasSubstr("line 1 is not valid UTF-8"));
}

TEST(CsvErrors, InvalidUtf8FarIntoALargeFile) {
  // Past the first validation chunk, so the error comes from a later bite.
  std::string text = "a,b\n";
  for (int i = 0; i < 200000; ++i) text += fmt::format("row{},x\n", i);
  text += "bad,\xC3\x28\n";
  EXPECT_THAT(csv_error(text), HasSubstr("line 200002 is not valid UTF-8"));
}

TEST(CsvErrors, InvalidUtf8AfterAFieldLongerThanTheValidationChunk) {
  // A quoted field of several MiB carries the parser past the validated bytes.
  std::string text = "a,b\n1,\"";
  for (int i = 0; i < 300000; ++i) text += "0123456789\n";
  text += "\"\n2,x\n3,\xE2\x28\xA1\n";
  EXPECT_THAT(csv_error(text), HasSubstr("line 300004 is not valid UTF-8"));
  // Likewise in a header-only file whose header is that long.
  std::string header = "\"";
  for (int i = 0; i < 300000; ++i) header += "0123456789";
  header += "\",b\xFF\n";
  EXPECT_THAT(csv_error(header), HasSubstr("line 1 is not valid UTF-8"));
}

TEST(CsvErrors, UnreadableFiles) {
  TempDir dir;
  const std::string missing = dir.path("nope.csv");
  EXPECT_THAT(error_of<InputError>([&] { read_csv(missing); }),
              AllOf(HasSubstr("'" + missing + "'"), HasSubstr("No such file or directory")));
  EXPECT_THAT(error_of<InputError>([&] { read_table(missing); }),
              HasSubstr("No such file or directory"));
  std::filesystem::create_directories(dir.path("d.csv"));
  EXPECT_THAT(error_of<UsageError>([&] { read_table(dir.path("d.csv")); }),
              HasSubstr("d.csv' is a folder"));
}

TEST(CsvErrors, UnknownExtension) {
  EXPECT_THAT(error_of<InputError>([] { read_table("data/x.xlsx"); }),
              AllOf(HasSubstr("'data/x.xlsx'"), HasSubstr("'.xlsx'"),
                    HasSubstr(".csv, .tsv, .jsonl, .ndjson or .parquet")));
  EXPECT_THAT(error_of<InputError>([] { read_table("data.d/noext"); }),
              HasSubstr("unsupported extension ''"));
}

TEST(CsvErrors, DelimiterMustNotBeAQuoteOrLineBreak) {
  EXPECT_THAT(error_of<UsageError>([] { parse_csv("a\n", "t.csv", CsvOptions{'"'}); }),
              HasSubstr("delimiter"));
}

// ----------------------------------------------------------- table access

TEST(TableAccess, FindAndColumn) {
  const Table t = csv("a,b\n1,x\n");
  EXPECT_EQ(t.find("b"), 1u);
  EXPECT_FALSE(t.find("c").has_value());
  EXPECT_EQ(&t.column("a"), &t.columns[0]);
  EXPECT_THAT(error_of<InputError>([&] { t.column("score"); }),
              AllOf(HasSubstr("'t.csv' has no column 'score'"), HasSubstr("columns are: a, b")));
}

TEST(TableAccess, WideTablesListTheFirstColumns) {
  std::string header;
  for (int c = 0; c < 25; ++c) header += fmt::format("{}c{}", c ? "," : "", c);
  const Table t = csv(header + "\n");
  EXPECT_THAT(error_of<InputError>([&] { t.column("zz"); }),
              AllOf(HasSubstr("columns are: c0, c1,"), HasSubstr(", c19, ... (5 more)")));
}

TEST(TableAccess, NumericNamesTheFirstNonNumericLine) {
  const Table t = csv("score,n\n1,1\n2,2\n\n,3\nNaN,4\n5,5\nabc,6\n");
  EXPECT_EQ(error_of<InputError>([&] { t.numeric("score"); }),
            "column 'score' in 't.csv' is not numeric: line 6 holds \"NaN\"");
  EXPECT_THAT(error_of<InputError>([&] { t.numeric("nope"); }), HasSubstr("has no column 'nope'"));
}

TEST(TableAccess, NumericMissingValues) {
  const Table t = csv("x\n1\n\"\"\n3\n");
  EXPECT_THAT(error_of<InputError>([&] { t.numeric("x"); }),
              AllOf(HasSubstr("column 'x' in 't.csv' has a missing value at line 3"),
                    HasSubstr("expected a number")));
  const auto& v = t.numeric("x", true);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 3);
}

TEST(TableAccess, MessagesUseRowNumbersWithoutLineNumbers) {
  Table t;
  t.source = "<memory>";
  t.rows = 2;
  Column c;
  c.name = "x";
  c.type = ColumnType::String;
  c.levels = {"1", "oops"};
  c.codes = {0, 1};
  t.columns.push_back(c);
  EXPECT_THAT(error_of<InputError>([&] { t.numeric("x"); }), HasSubstr("row 2 holds \"oops\""));
}

TEST(TableAccess, TextColumnWithoutValues) {
  Table t;
  t.source = "<memory>";
  t.rows = 1;
  Column c;
  c.name = "x";
  c.type = ColumnType::String;
  c.codes = {Column::kMissing};
  t.columns.push_back(c);
  EXPECT_THAT(error_of<InputError>([&] { t.numeric("x", true); }),
              HasSubstr("is not numeric: it is a text column with no values"));
}

// ------------------------------------------------------------------ writing

TEST(CsvWrite, QuotesOnlyWhereNeededAndRoundTrips) {
  TempDir dir;
  const Table t =
      csv("name,score,note\n"
          "plain,1.5,\"a,b\"\n"
          "\"q\"\"uote\",-3,\"line\nbreak\"\n"
          "x,,\"cr\rhere\"\n"
          " spaced ,1e20,\n");
  const std::string path = dir.path("out.csv");
  write_csv(t, path);
  EXPECT_EQ(table_test::read_file(path),
            "name,score,note\n"
            "plain,1.5,\"a,b\"\n"
            "\"q\"\"uote\",-3,\"line\nbreak\"\n"
            "x,,\"cr\rhere\"\n"
            " spaced ,1e+20,\n");
  const Table back = read_csv(path);
  ASSERT_EQ(back.rows, t.rows);
  for (const auto& c : t.columns) {
    EXPECT_EQ(back.column(c.name).type, c.type) << c.name;
    EXPECT_EQ(texts(back, c.name), texts(t, c.name)) << c.name;
  }
}

TEST(CsvWrite, QuotesHeaderNamesAndOverwrites) {
  TempDir dir;
  const std::string path = dir.write("out.csv", "old content\n");
  const Table t = csv("\"a,b\",c\n1,2\n");
  write_csv(t, path);
  EXPECT_EQ(table_test::read_file(path), "\"a,b\",c\n1,2\n");
}

TEST(CsvWrite, MissingCellsInAOneColumnTableSurviveTheRoundTrip) {
  TempDir dir;
  const Table t = csv("x\n1\n\"\"\n3\n");
  ASSERT_EQ(t.rows, 3u);
  const std::string path = dir.path("one.csv");
  write_csv(t, path);
  EXPECT_EQ(table_test::read_file(path), "x\n1\n\"\"\n3\n");
  const Table back = read_csv(path);
  ASSERT_EQ(back.rows, 3u);
  EXPECT_TRUE(back.column("x").missing(1));
}

// OWASP's CSV-injection guidance: a text cell that a spreadsheet would run as a formula is
// written quoted with a single quote in front; numbers and one-character texts are not.
TEST(CsvWrite, FormulaLikeTextGetsASingleQuoteAndReadsBackUnchanged) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""},
      {"+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\""},
      {"-2+3", "\"'-2+3\""},
      {"@SUM(A1:A9)", "\"'@SUM(A1:A9)\""},
      {"\t=1", "\"'\t=1\""},
      {"\r=1", "\"'\r=1\""},
      {"'=1", "\"''=1\""},  // a leading quote of its own survives the round trip
      {"''-x", "\"'''-x\""},
      {"-", "-"},  // one character: no formula fits
      {"+", "+"},
      {"-1", "-1"},  // numbers stay numbers, also in a text column
      {"-0.5", "-0.5"},
      {"+2", "+2"},
      {"-1e-3", "-1e-3"},
      {"'quoted'", "'quoted'"},
      {"a=b", "a=b"},
      {"x,=y", "\"x,=y\""},
      {"", ""},
  };
  for (const auto& [text, written] : cases) {
    SCOPED_TRACE(text);
    std::string out;
    append_csv_cell(out, text);
    EXPECT_EQ(out, written);
  }
  TempDir dir;
  Table t;
  t.rows = cases.size();
  std::vector<std::string> labels;
  std::vector<double> values;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    labels.push_back(cases[i].first.empty() ? "z" : cases[i].first);
    values.push_back(-0.25 * static_cast<double>(i));
  }
  add_string_column(t, "=label", labels);
  add_numeric_column(t, "score", values);
  const std::string path = dir.path("guarded.csv");
  write_csv(t, path);
  const std::string text = table_test::read_file(path);
  EXPECT_EQ(text.substr(0, text.find('\n')), "\"'=label\",score");
  EXPECT_NE(text.find("\"'@SUM(A1:A9)\",-0.75\n"), std::string::npos) << text;
  const Table back = read_csv(path);
  ASSERT_EQ(back.rows, t.rows);
  EXPECT_EQ(texts(back, "=label"), labels);
  EXPECT_EQ(back.numeric("score"), values);
}

TEST(CsvRead, GuardedQuotedFieldsLoseTheirQuoteOthersKeepIt) {
  const Table t = csv("a,b\n\"'=1\",'=1\n\"'x\",\"''@y\"\n\"'-\"\"q\"\"\",z\n");
  EXPECT_THAT(texts(t, "a"), ElementsAre("=1", "'x", "-\"q\""));
  EXPECT_THAT(texts(t, "b"), ElementsAre("'=1", "'@y", "z"));
}

TEST(CsvWrite, UnwritablePathIsAnInputError) {
  TempDir dir;
  const Table t = csv("a\n1\n");
  const std::string path = dir.path("no/such/dir/out.csv");
  EXPECT_THAT(error_of<InputError>([&] { write_csv(t, path); }),
              AllOf(HasSubstr("cannot write"), HasSubstr("No such file or directory")));
}

// ------------------------------------------------------------- real data

TEST(CsvSeegull, UsStatesStereotypes) {
  const std::string path =
      std::string(VLBIAS_SOURCE_DIR) + "/data/seegull/stereotypes_us_states.csv";
  const Table t = read_table(path);
  EXPECT_EQ(t.rows, 468u);
  ASSERT_EQ(t.columns.size(), 9u);
  EXPECT_EQ(t.columns[0].name, "identity");
  EXPECT_EQ(t.columns[8].name, "offensiveness_score");
  for (const char* name : {"identity", "attribute", "Annotation1", "Annotation2", "Annotation3"}) {
    EXPECT_EQ(t.column(name).type, ColumnType::String) << name;
  }
  for (const char* name :
       {"region_stereo", "region_nonstereo", "region_unsure", "offensiveness_score"}) {
    EXPECT_EQ(t.column(name).type, ColumnType::Numeric) << name;
  }
  EXPECT_EQ(t.column("identity").levels.size(), 55u);
  EXPECT_EQ(t.column("attribute").levels.size(), 224u);
  // The file uses CRLF line ends and quotes one identity that starts with a comma.
  EXPECT_EQ(t.column("identity").text(0), "New Yorker");
  EXPECT_EQ(t.column("identity").text(310), ",New Hampshirite");
  EXPECT_EQ(t.line_of_row[310], 312u);
  EXPECT_NEAR(t.numeric("offensiveness_score")[0], 1.666666667, 1e-12);
  // "NA" marks unannotated rows: the annotation columns are text, and asking
  // for them as numbers names the first such row.
  EXPECT_EQ(error_of<InputError>([&] { t.numeric("Annotation1"); }),
            "column 'Annotation1' in '" + path + "' is not numeric: line 4 holds \"NA\"");
  std::size_t na = 0;
  const Column& a1 = t.column("Annotation1");
  for (std::size_t r = 0; r < t.rows; ++r) na += a1.text(r) == "NA";
  EXPECT_EQ(na, 178u);
}

}  // namespace in_table_csv_test
}  // namespace
}  // namespace vlbias
