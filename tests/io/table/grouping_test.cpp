#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/table_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/core/log.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_grouping_test {

using table_test::error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Key = std::vector<std::string>;

Table csv(const std::string& text) {
  return parse_csv(text, "g.csv");
}

// Captures warnings for the duration of a test.
class WarningCapture {
 public:
  WarningCapture() {
    set_warning_sink([this](const std::string& m) { messages.push_back(m); });
  }
  ~WarningCapture() { set_warning_sink(nullptr); }
  std::vector<std::string> messages;
};

TEST(GroupBy, SingleStringColumnSortedBytewise) {
  const Table t = csv("g\nbeta\nAlpha\nalpha\nbeta\nZulu\n");
  const Grouping g = group_by(t, {"g"});
  EXPECT_THAT(g.columns, ElementsAre("g"));
  ASSERT_EQ(g.size(), 4u);
  EXPECT_THAT(g.keys, ElementsAre(Key{"Alpha"}, Key{"Zulu"}, Key{"alpha"}, Key{"beta"}));
  EXPECT_THAT(g.sizes, ElementsAre(1u, 1u, 1u, 2u));
  EXPECT_THAT(g.group_of_row, ElementsAre(3u, 0u, 2u, 3u, 1u));
  EXPECT_EQ(g.rows_with_missing_key, 0u);
  EXPECT_TRUE(g.empty_cells.empty());
  EXPECT_EQ(g.label(3), "g=beta");
}

TEST(GroupBy, NumericColumnsSortNumerically) {
  const Table t = csv("age\n10\n9\n-1\n10.0\n2.5\n0\n-0\n");
  const Grouping g = group_by(t, {"age"});
  EXPECT_THAT(g.keys, ElementsAre(Key{"-1"}, Key{"0"}, Key{"2.5"}, Key{"9"}, Key{"10"}));
  EXPECT_THAT(g.sizes, ElementsAre(1u, 2u, 1u, 1u, 2u));  // 0 and -0 are one group
  EXPECT_THAT(g.group_of_row, ElementsAre(4u, 3u, 0u, 4u, 2u, 1u, 1u));
}

TEST(GroupBy, IntersectionalGroupsEmptyCellsAndLabels) {
  const Table t =
      csv("race,gender,age\n"
          "Black,Female,20\n"
          "White,Male,30\n"
          "Black,Male,20\n"
          "Asian,Female,30\n"
          "Black,Female,30\n");
  const Grouping g = group_by(t, {"race", "gender"});
  EXPECT_THAT(g.keys, ElementsAre(Key{"Asian", "Female"}, Key{"Black", "Female"},
                                  Key{"Black", "Male"}, Key{"White", "Male"}));
  EXPECT_THAT(g.sizes, ElementsAre(1u, 2u, 1u, 1u));
  EXPECT_THAT(g.group_of_row, ElementsAre(1u, 3u, 2u, 0u, 1u));
  EXPECT_THAT(g.empty_cells, ElementsAre(Key{"Asian", "Male"}, Key{"White", "Female"}));
  EXPECT_EQ(g.label(1), "race=Black, gender=Female");

  const Grouping three = group_by(t, {"gender", "age", "race"});
  EXPECT_EQ(three.size(), 5u);
  EXPECT_EQ(three.keys[0], (Key{"Female", "20", "Black"}));
  // 2 genders x 2 ages x 3 races = 12 cells, 5 of them filled.
  EXPECT_EQ(three.empty_cells.size(), 7u);
  EXPECT_EQ(three.empty_cells[0], (Key{"Female", "20", "Asian"}));
  EXPECT_EQ(three.label(0), "gender=Female, age=20, race=Black");
}

TEST(GroupBy, MissingKeysGetNoGroupAndAreCounted) {
  const Table t = csv("race,gender\nBlack,Female\n,Male\nWhite,\nWhite,Male\n,\n");
  const Grouping g = group_by(t, {"race", "gender"});
  EXPECT_THAT(g.keys, ElementsAre(Key{"Black", "Female"}, Key{"White", "Male"}));
  EXPECT_THAT(g.group_of_row,
              ElementsAre(0u, Grouping::kNoGroup, Grouping::kNoGroup, 1u, Grouping::kNoGroup));
  EXPECT_EQ(g.rows_with_missing_key, 3u);
  EXPECT_THAT(g.empty_cells, ElementsAre(Key{"Black", "Male"}, Key{"White", "Female"}));
}

TEST(GroupBy, MissingNumericKeys) {
  const Table t = csv("x,y\n1,a\n,b\n2,a\n");
  const Grouping g = group_by(t, {"x"});
  EXPECT_THAT(g.group_of_row, ElementsAre(0u, Grouping::kNoGroup, 1u));
  EXPECT_EQ(g.rows_with_missing_key, 1u);
}

TEST(GroupBy, MaskSelectsRowsAndLevels) {
  const Table t = csv("g,h\na,x\nb,y\nc,x\na,\nb,x\n");
  const Grouping g = group_by(t, {"g", "h"}, {true, false, true, true, true});
  EXPECT_THAT(g.keys, ElementsAre(Key{"a", "x"}, Key{"b", "x"}, Key{"c", "x"}));
  EXPECT_THAT(g.group_of_row, ElementsAre(0u, Grouping::kNoGroup, 2u, Grouping::kNoGroup, 1u));
  // Masked-out rows are not "missing"; their levels ("y") are not observed.
  EXPECT_EQ(g.rows_with_missing_key, 1u);
  EXPECT_TRUE(g.empty_cells.empty());
  const Grouping none = group_by(t, {"g"}, std::vector<bool>(5, false));
  EXPECT_EQ(none.size(), 0u);
  EXPECT_TRUE(none.empty_cells.empty());
  EXPECT_THAT(none.group_of_row, ::testing::Each(Grouping::kNoGroup));
}

TEST(GroupBy, AllKeysMissing) {
  const Table t = csv("g,x\n,1\n,2\n");
  const Grouping g = group_by(t, {"g", "x"});
  EXPECT_EQ(g.size(), 0u);
  EXPECT_EQ(g.rows_with_missing_key, 2u);
  EXPECT_TRUE(g.empty_cells.empty());
}

TEST(GroupBy, HeaderOnlyTable) {
  const Grouping g = group_by(csv("a,b\n"), {"a", "b"});
  EXPECT_EQ(g.size(), 0u);
  EXPECT_TRUE(g.group_of_row.empty());
}

TEST(GroupBy, Errors) {
  const Table t = csv("race,gender\nx,y\n");
  EXPECT_THAT(
      error_of<InputError>([&] {
        group_by(t, {"race", "age"});
      }),
      AllOf(HasSubstr("'g.csv' has no column 'age'"), HasSubstr("columns are: race, gender")));
  EXPECT_THAT(error_of<InputError>([&] { group_by(t, {}); }),
              AllOf(HasSubstr("'g.csv'"), HasSubstr("empty list of columns")));
  EXPECT_THAT(error_of<InputError>([&] {
                group_by(t, {"race", "race"});
              }),
              HasSubstr("by column 'race' twice"));
  EXPECT_THAT(error_of<InternalError>([&] {
                group_by(t, {"race"}, {true, false});
              }),
              HasSubstr("row mask has 2 entries for 1 rows"));
}

TEST(GroupBy, HugeCrossProductWarnsInsteadOfListingCells) {
  WarningCapture capture;
  std::string text = "a,b\n";
  for (int i = 0; i < 400; ++i) text += fmt::format("a{},b{}\n", i, i);
  const Grouping g = group_by(csv(text), {"a", "b"});
  EXPECT_EQ(g.size(), 400u);
  EXPECT_TRUE(g.empty_cells.empty());
  ASSERT_EQ(capture.messages.size(), 1u);
  EXPECT_THAT(capture.messages[0], AllOf(HasSubstr("'g.csv'"), HasSubstr("160000 combinations"),
                                         HasSubstr("159600 empty cells are not listed")));
}

TEST(GroupBy, FullCrossProductNeedsNoWarning) {
  WarningCapture capture;
  std::string text = "a,b\n";
  for (int i = 0; i < 400; ++i) {
    for (int j = 0; j < 300; ++j) text += fmt::format("{},{}\n", i, j);
  }
  const Grouping g = group_by(csv(text), {"a", "b"});
  EXPECT_EQ(g.size(), 120000u);
  EXPECT_TRUE(capture.messages.empty());
}

// A naive grouping (std::map over text keys) to check the fast one against.
struct Naive {
  std::map<std::vector<std::pair<double, std::string>>, std::vector<std::size_t>> groups;
  std::size_t missing = 0;
};

Naive naive_group(const Table& t, const std::vector<std::string>& cols) {
  Naive n;
  for (std::size_t r = 0; r < t.rows; ++r) {
    std::vector<std::pair<double, std::string>> key;
    bool missing = false;
    for (const auto& name : cols) {
      const Column& c = t.column(name);
      if (c.missing(r)) missing = true;
      if (c.type == ColumnType::Numeric) {
        key.emplace_back(c.numbers[r], "");
      } else {
        key.emplace_back(0.0, c.text(r));
      }
    }
    if (missing) {
      ++n.missing;
    } else {
      n.groups[key].push_back(r);
    }
  }
  return n;
}

void expect_matches_naive(const Table& t, const std::vector<std::string>& cols) {
  const Grouping g = group_by(t, cols);
  const Naive n = naive_group(t, cols);
  ASSERT_EQ(g.size(), n.groups.size());
  EXPECT_EQ(g.rows_with_missing_key, n.missing);
  std::size_t gi = 0;
  for (const auto& [key, rows] : n.groups) {
    ASSERT_EQ(g.sizes[gi], rows.size()) << gi;
    for (const std::size_t r : rows) ASSERT_EQ(g.group_of_row[r], gi) << r;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      ASSERT_EQ(g.keys[gi][c], t.column(cols[c]).text(rows[0]));
    }
    ++gi;
  }
}

TEST(GroupBy, MatchesNaiveGroupingOnRandomData) {
  std::mt19937 rng(7);
  std::string text = "s,n,t,u\n";
  const char* words[] = {"x", "y", "Z", "yy", "", "a b"};
  for (int i = 0; i < 20000; ++i) {
    text += words[rng() % 6];
    text += ",";
    const int v = static_cast<int>(rng() % 9) - 4;
    if (v != 4) text += std::to_string(v * 1.5);
    const unsigned t = rng() % 30;
    text += fmt::format(",t{},{}\n", t, rng() % 1000);
  }
  const Table t = csv(text);
  ASSERT_EQ(t.column("n").type, ColumnType::Numeric);
  WarningCapture capture;  // u x t x n x s has too many cells to list
  expect_matches_naive(t, {"s"});
  expect_matches_naive(t, {"n", "s"});
  expect_matches_naive(t, {"s", "n", "t"});
  expect_matches_naive(t, {"u", "t", "n", "s"});
}

TEST(GroupBy, ManyHighCardinalityColumnsStillSortCorrectly) {
  // Six columns of ~3000 levels each: the radix product overflows 64 bits, so
  // keys are renumbered part-way through.
  std::mt19937 rng(11);
  std::string text = "c1,c2,c3,c4,c5,c6\n";
  for (int i = 0; i < 3000; ++i) {
    for (int c = 0; c < 6; ++c) {
      text += fmt::format("{}{}{}", c > 0 ? "," : "", c % 2 == 1 ? "w" : "", rng() % 3000);
    }
    text += "\n";
  }
  WarningCapture capture;
  const Table t = csv(text);
  expect_matches_naive(t, {"c1", "c2", "c3", "c4", "c5", "c6"});
  expect_matches_naive(t, {"c6", "c1"});
}

}  // namespace in_grouping_test
}  // namespace
}  // namespace vlbias
