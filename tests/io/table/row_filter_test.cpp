// The row filter language (row_filter.h): hand-worked results on a small table, every error
// with its position and caret, and hostile input (deep nesting, long input).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/row_filter.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_row_filter_test {

// Rows (CSV lines 2-7): age is Numeric; bin is String with numbers in some rows; `skin tone`
// has a space in its name.
const char* kCsv =
    "id,age,gender,bin,skin tone,note\n"
    "1,25,female,20,light,\n"
    "2,61,male,60-69,dark,x\n"
    "3,,female,30,,\"a \"\"q\"\"\"\n"
    "4,40,Male,100,dark,y\n"
    "5,19.5,male,9,light,café\n"
    "6,30,female,30.0,medium,\n";

const Table& table() {
  static const Table t = parse_csv(kCsv, "t.csv");
  return t;
}

// Ids of the rows that pass.
std::vector<int> ids(const std::string& expression) {
  const std::vector<bool> pass = RowFilter::parse(expression, "test").evaluate(table());
  std::vector<int> out;
  for (std::size_t r = 0; r < pass.size(); ++r) {
    if (pass[r]) out.push_back(static_cast<int>(r) + 1);
  }
  return out;
}

std::string error_of(const std::string& expression) {
  try {
    ids(expression);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RowFilter, ComparesNumbersNumericallyAndMissingCellsNeverMatch) {
  EXPECT_EQ(ids("age >= 20 and age <= 60"), (std::vector<int>{1, 4, 6}));
  EXPECT_EQ(ids("age < 20"), (std::vector<int>{5}));
  EXPECT_EQ(ids("age > 19.4 and age < 19.6"), (std::vector<int>{5}));
  EXPECT_EQ(ids("age == 3e1"), (std::vector<int>{6}));
  // Row 3's age is missing: every comparison is false, != included; `is empty` finds it.
  EXPECT_EQ(ids("age != 25"), (std::vector<int>{2, 4, 5, 6}));
  EXPECT_EQ(ids("age is empty"), (std::vector<int>{3}));
  EXPECT_EQ(ids("age is not empty and age > 60"), (std::vector<int>{2}));
  EXPECT_EQ(ids("not (age == 25)"), (std::vector<int>{2, 3, 4, 5, 6}));
  EXPECT_EQ(ids("age == -1 or age > +60"), (std::vector<int>{2}));
}

TEST(RowFilter, ComparesTextByBytesAndTextThatReadsAsANumberAsANumber) {
  EXPECT_EQ(ids("gender == \"female\""), (std::vector<int>{1, 3, 6}));
  EXPECT_EQ(ids("gender == 'male'"), (std::vector<int>{2, 5}));  // "Male" differs
  EXPECT_EQ(ids("gender < 'f'"), (std::vector<int>{4}));         // 'M' < 'f' in bytes
  // bin holds "30" and "30.0": equal as numbers; "100" > "30" as numbers, "60-69" is text.
  EXPECT_EQ(ids("bin == 30"), (std::vector<int>{3, 6}));
  EXPECT_EQ(ids("bin == '60-69'"), (std::vector<int>{2}));
  EXPECT_EQ(ids("bin in (30, '60-69')"), (std::vector<int>{2, 3, 6}));
  EXPECT_EQ(ids("bin not in (30, '60-69')"), (std::vector<int>{1, 4, 5}));
  // Text on both sides orders by bytes: "9" > "60-69".
  EXPECT_EQ(ids("bin > '60-69'"), (std::vector<int>{5}));
  EXPECT_EQ(ids("note == 'a \"q\"' or note == \"caf\\u00e9\""), (std::vector<int>{3, 5}));
  EXPECT_EQ(ids("note == \"a \\\"q\\\"\""), (std::vector<int>{3}));
  EXPECT_EQ(ids("note is empty"), (std::vector<int>{1, 6}));
  // A Numeric column compared with text compares its shortest text.
  EXPECT_EQ(ids("age == '19.5'"), (std::vector<int>{5}));
  EXPECT_EQ(ids("age != 'x'"), (std::vector<int>{1, 2, 4, 5, 6}));
}

TEST(RowFilter, ColumnsWithSpacesInBackticksKeywordsAnyCaseAndPrecedence) {
  EXPECT_EQ(ids("`skin tone` == 'dark'"), (std::vector<int>{2, 4}));
  EXPECT_EQ(ids("`skin tone` IS EMPTY"), (std::vector<int>{3}));
  // and binds tighter than or; not tighter than and.
  EXPECT_EQ(ids("gender == 'male' or gender == 'female' and age > 26"),
            (std::vector<int>{2, 5, 6}));
  EXPECT_EQ(ids("(gender == 'male' or gender == 'female') and age > 26"), (std::vector<int>{2, 6}));
  EXPECT_EQ(ids("not gender == 'female' and age < 50"), (std::vector<int>{4, 5}));
  EXPECT_EQ(ids("not not (id == 1)"), (std::vector<int>{1}));
  EXPECT_EQ(ids("id == age or id > 5"), (std::vector<int>{6}));  // two columns
  EXPECT_EQ(ids("  id\n<=\t2  "), (std::vector<int>{1, 2}));
  const RowFilter f = RowFilter::parse("age > 1 and `skin tone` == 'x' or age < 0", "t");
  EXPECT_EQ(f.columns(), (std::vector<std::string>{"age", "skin tone"}));
}

TEST(RowFilter, StreamedRecordsGiveTheSameRowsAsTheTable) {
  for (const char* e : {"age >= 20 and age <= 60", "bin in (30, '60-69')", "note is empty",
                        "not (gender == 'male') or `skin tone` != 'dark'"}) {
    SCOPED_TRACE(e);
    const RowFilter f = RowFilter::parse(e, "t");
    std::vector<std::size_t> slots(f.columns().size());
    for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = i;
    std::vector<int> streamed;
    int id = 0;
    for_each_record(table(), f.columns(), [&](const Record& r) {
      ++id;
      if (f.matches(r, slots)) streamed.push_back(id);
    });
    EXPECT_EQ(streamed, ids(e));
  }
}

TEST(RowFilter, OrderingANumberWithTextIsAnErrorNamingRowColumnAndValue) {
  EXPECT_EQ(error_of("bin >= 20"),
            "test: 't.csv' line 3, column 'bin' holds \"60-69\", which is not a number, but "
            "'>=' at character 5 compares it with a number (compare as text by quoting both "
            "sides, or filter such rows out first)");
  EXPECT_NE(error_of("20 < 'abc'").find("the text \"abc\" at character 6 is not a number"),
            std::string::npos);
  // A Numeric column's cell with quoted text compares as text, as the streamed rows do.
  EXPECT_EQ(ids("age < 'abc'"), (std::vector<int>{1, 2, 4, 5, 6}));
  // Equality of a number and text is false, not an error.
  EXPECT_EQ(ids("bin == 60"), std::vector<int>{});
}

TEST(RowFilter, AColumnTheTableLacksIsNamedWithTheColumnsItHas) {
  EXPECT_EQ(error_of("age > 3 and gendr == 'f'"),
            "test: the row filter names column 'gendr' (character 13), which 't.csv' does not "
            "have (its columns: id, age, gender, bin, skin tone, note); text values are quoted "
            "(\"text\"), column names with spaces or keywords are written in backticks:\n"
            "  age > 3 and gendr == 'f'\n"
            "              ^");
  EXPECT_NE(error_of("gender == female").find("names column 'female' (character 11)"),
            std::string::npos);
}

TEST(RowFilter, SyntaxErrorsNameThePositionWithACaret) {
  struct Case {
    std::string expression, message;
  };
  const std::vector<Case> cases = {
      {"", "the expression is empty at character 1"},
      {"age >", "expected a column or a value after the operator at character 6"},
      {"age = 3", "'=' is not an operator (write '==') at character 5"},
      {"age > 3 and", "expected a column or a value at character 12"},
      {"(age > 3", "'(' is never closed at character 1"},
      {"(age > 3 age", "expected ')' at character 10"},
      {"age > 3)", "')' without a matching '(' at character 8"},
      {"age > 3 age", "expected 'and', 'or' or the end at character 9"},
      {"age", "expected a comparison (== != < <= > >=, in, not in, is empty) at character 4"},
      {"age in 3", "expected '(' to open the list at character 8"},
      {"age in ()", "an empty list at character 9"},
      {"age in (1 2)", "expected ',' or ')' in the list at character 11"},
      {"age in (gender)", "expected a quoted text or a number in the list at character 9"},
      {"age not 3", "expected 'in' after 'not' at character 9"},
      {"age is full", "expected 'empty' after 'is' at character 8"},
      {"age > 'x", "unterminated text (no closing quote) at character 7"},
      {"age > 'x\\", "unterminated text (no closing quote) at character 7"},
      {"age > 'a\\qb'", "unknown escape"},
      {"age > '\\u12'", "\\u needs four hexadecimal digits at character 8"},
      {"age > '\\ud800'", "\\u escape of NUL or a surrogate"},
      {"`age > 3", "unterminated column name (no closing `) at character 1"},
      {"`` > 3", "empty column name `` at character 1"},
      {"age > 3x", "a number runs into letters"},
      {"age > 1.2.3", "\"1.2.3\" is not a finite decimal number at character 7"},
      {"age > 1e999", "\"1e999\" is not a finite decimal number"},
      {"age ; 3", "unexpected character \";\" at character 5"},
      {"and > 3", "expected a column or a value at character 1"},
      {"age > \xff", "invalid UTF-8 at character 7"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expression);
    try {
      RowFilter::parse(c.expression, "--where");
      ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("--where: ", 0), 0u) << m;
      EXPECT_NE(m.find(c.message), std::string::npos) << m;
      EXPECT_NE(m.find("of the row filter:\n  "), std::string::npos) << m;
    }
  }
}

TEST(RowFilter, TheCaretCountsCodePointsAndLongExpressionsAreCut) {
  try {
    RowFilter::parse("`é` == 'ü' =", "f");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("\n  `é` == 'ü' =\n             ^"), std::string::npos)
        << e.what();
  }
  try {
    RowFilter::parse(std::string(100, ' ') + "a > 1 " + std::string(100, ' ') + "b", "f");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("at character 207"), std::string::npos) << m;
    EXPECT_NE(m.find("  ..."), std::string::npos) << m;
    EXPECT_LT(m.size(), 400u) << m;
  }
}

TEST(RowFilter, NestingIsLimitedSoHostileInputCannotExhaustTheStack) {
  std::string ok = std::string(RowFilter::kMaxNesting - 1, '(') + "id == 1" +
                   std::string(RowFilter::kMaxNesting - 1, ')');
  EXPECT_EQ(ids(ok), std::vector<int>{1});
  for (const std::string& deep : {std::string(100000, '(') + "id == 1", [] {
                                    std::string s;
                                    for (int i = 0; i < 100000; ++i) s += "not ";
                                    return s + "id == 1";
                                  }()}) {
    try {
      RowFilter::parse(deep, "f");
      ADD_FAILURE();
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("nesting deeper than 64 levels"), std::string::npos);
    }
  }
  // A long flat chain is fine (and/or chains are not nested).
  std::string chain = "id == 0";
  for (int i = 1; i < 20000; ++i) chain += " or id == " + std::to_string(i);
  EXPECT_EQ(ids(chain).size(), 6u);
}

}  // namespace in_row_filter_test
}  // namespace
}  // namespace vlbias
