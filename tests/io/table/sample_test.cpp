// stratified_sample (sample.h): targets, statuses and counts that the numpy fixtures of
// tests/cli/sample_test.cpp do not reach (half-way fractions, empty cells, replacement).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vlbias/core/error.h"
#include "vlbias/io/table/column_texts.h"
#include "vlbias/io/table/sample.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_sample_test {

// Cell a: 5 rows, cell b: 7 rows, one row without a key; g is "x" or "y" (a x y is empty).
Table table() {
  std::string csv = "k,g,v\n";
  for (int i = 0; i < 5; ++i) csv += "a,x," + std::to_string(i) + "\n";
  for (int i = 0; i < 7; ++i) csv += std::string("b,") + (i < 3 ? "x" : "y") + ",1\n";
  csv += ",x,9\n";
  return parse_csv(csv, "t.csv");
}

TEST(StratifiedSample, AFractionRoundsHalfToEvenAsPythonsRound) {
  SampleOptions o;
  o.by = {"k"};
  o.frac = 0.5;  // 2.5 -> 2, 3.5 -> 4
  const SampleResult r = stratified_sample(table(), o);
  ASSERT_EQ(r.cells.size(), 2u);
  EXPECT_EQ(r.cells[0].target, 2u);
  EXPECT_EQ(r.cells[1].target, 4u);
  EXPECT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(r.rows_missing_key, 1u);
  EXPECT_TRUE(std::is_sorted(r.rows.begin(), r.rows.end()));
}

TEST(StratifiedSample, EmptyCombinationsAreShortUnlessPerCellMinDropsThem) {
  SampleOptions o;
  o.by = {"k", "g"};
  o.n = 3;
  SampleResult r = stratified_sample(table(), o);
  ASSERT_EQ(r.cells.size(), 4u);  // a x, b x, b y, then the empty a y
  EXPECT_EQ(r.cells[3].key, (std::vector<std::string>{"a", "y"}));
  EXPECT_EQ(r.cells[3].status, SampleCell::Status::Empty);
  EXPECT_EQ(r.short_cells, 1u);
  o.per_cell_min = 4;  // drops a y (0 rows) and b x (3 rows)
  r = stratified_sample(table(), o);
  EXPECT_EQ(r.short_cells, 0u);
  EXPECT_EQ(r.dropped_cells, 2u);
  EXPECT_EQ(r.cells[1].status, SampleCell::Status::Dropped);
  EXPECT_EQ(r.cells[1].drawn, 0u);
  EXPECT_EQ(r.rows.size(), 6u);
}

TEST(StratifiedSample, ReplacementDrawsTheTargetFromSmallCellsAndRepeatsRows) {
  SampleOptions o;
  o.by = {"k"};
  o.n = 20;
  o.replace = true;
  const SampleResult r = stratified_sample(table(), o);
  EXPECT_EQ(r.short_cells, 0u);
  EXPECT_EQ(r.rows.size(), 40u);
  EXPECT_NE(std::adjacent_find(r.rows.begin(), r.rows.end()), r.rows.end());
  const Table t = take_rows(table(), r.rows);
  EXPECT_EQ(t.rows, 40u);
  EXPECT_EQ(t.columns.size(), 3u);
}

TEST(StratifiedSample, RejectsContradictoryOptions) {
  SampleOptions o;
  o.by = {"k"};
  EXPECT_THROW(stratified_sample(table(), o), UsageError);  // neither n nor frac
  o.n = 1;
  o.frac = 0.5;
  EXPECT_THROW(stratified_sample(table(), o), UsageError);  // both
  o.n.reset();
  o.frac = 1.5;
  EXPECT_THROW(stratified_sample(table(), o), UsageError);  // above 1 without replacement
  o.frac = 0;
  EXPECT_THROW(stratified_sample(table(), o), UsageError);
  o.replace = true;
  o.frac = 1e300;  // more rows than memory holds: refused, not attempted
  EXPECT_THROW(stratified_sample(table(), o), UsageError);
  o.frac.reset();
  o.n = std::size_t{1} << 40;
  EXPECT_THROW(stratified_sample(table(), o), UsageError);
}

TEST(SampleRows, DrawsAtMostNDistinctRowsAndEachStreamItsOwnDraw) {
  const std::vector<std::uint32_t> rows = {10, 11, 12, 13, 14, 15, 16, 17};
  EXPECT_EQ(sample_rows(rows, 20, 5).size(), rows.size());
  const std::vector<std::uint32_t> a = sample_rows(rows, 4, 5), b = sample_rows(rows, 4, 5, 1);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(sample_rows(rows, 4, 5, 0), a);  // stream 0 is the default
  EXPECT_NE(a, b);
  std::vector<std::uint32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
}

TEST(ColumnTexts, GivesEachRowsTextAndEmptyTextsForAnOptionalAbsentColumn) {
  const Table t = table();
  const std::vector<std::string> k = column_texts(t, "k");
  ASSERT_EQ(k.size(), t.rows);
  EXPECT_EQ(k.front(), "a");
  EXPECT_EQ(k.back(), "");  // the row without a key
  EXPECT_EQ(column_texts(t, "v")[1], "1");
  EXPECT_EQ(column_texts(t, "nope", true), std::vector<std::string>(t.rows));
  EXPECT_THROW(column_texts(t, "nope"), InputError);
}

}  // namespace in_sample_test
}  // namespace
}  // namespace vlbias
