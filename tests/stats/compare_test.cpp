// compare_groups (the engine of `vlbias compare`) at group and cell counts where per-group or
// per-cell work over the whole table never finishes. Not timing tests: before the fix (issue
// 19, item 5) the work here was about 10^12 key comparisons (a million groups) and 10^11 row
// visits plus 11 GB of row masks (300,000 cells), hours of CPU, which ctest's TIMEOUT for this
// executable (tests/CMakeLists.txt) turns into a failure; the fix makes it a few passes over
// the rows. The values checked are exact.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"
#include "vlbias/core/build_type.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"
#include "vlbias/stats/compare.h"

namespace vlbias {
namespace {
namespace in_compare_test {

// rows rows: id = "id<row>" (one group per row), half = row % 2, value = row.
Table id_table(std::size_t rows) {
  Table t;
  t.source = "<memory>";
  t.rows = rows;
  std::vector<std::string> ids(rows), halves(rows);
  std::vector<double> values(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    ids[r] = "id" + std::to_string(r);
    halves[r] = r % 2 == 0 ? "even" : "odd";
    values[r] = static_cast<double>(r);
  }
  add_string_column(t, "id", ids);
  add_string_column(t, "half", halves);
  add_numeric_column(t, "value", std::move(values));
  return t;
}

// The scale tests are sized for the Release suite, whose timeout turns a quadratic regression
// into a failure; the sanitised suite walks the same code at a tenth of the size
// (bench/ci_budget.md).
TEST(CompareAtScale, ByIdWithinHalvesListsTheOtherHalfAsAbsentForAMillionGroups) {
  const std::size_t kRows = vlbias::release_build() ? 1'000'000 : 100'000;
  const Table table = id_table(kRows);
  CompareOptions o;
  o.value = "value";
  o.by = {"id"};
  o.within = {"half"};
  const CompareReport report = compare_groups(table, o);
  ASSERT_EQ(report.comparisons.size(), 2u);
  EXPECT_EQ(report.rows_used, kRows);
  for (std::size_t c = 0; c < 2; ++c) {
    const Comparison& cmp = report.comparisons[c];
    SCOPED_TRACE(cmp.within.at(0));
    const std::size_t parity = cmp.within.at(0) == "even" ? 0 : 1;
    ASSERT_EQ(cmp.groups.size(), kRows / 2);
    ASSERT_EQ(cmp.absent_groups.size(), kRows / 2);
    // Groups are in key order (text order of the ids): every absent group has the other
    // parity, and none is also compared.
    std::size_t wrong = 0;
    for (const auto& key : cmp.absent_groups) {
      const std::size_t id = std::stoul(key.at(0).substr(2));
      wrong += id % 2 == parity ? 1 : 0;
    }
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(cmp.absent_groups.front(), std::vector<std::string>{parity == 0 ? "id1" : "id0"});
    EXPECT_EQ(cmp.groups.front().key, std::vector<std::string>{parity == 0 ? "id0" : "id1"});
  }
}

// The other axis: a --within column with a cell per row. Grouping the whole table again per
// cell (and a row mask per cell: cells x rows bits) was quadratic in the cells.
TEST(CompareAtScale, WithinACellPerRowComparesEachCellForThreeHundredThousandCells) {
  const std::size_t kRows = vlbias::release_build() ? 300'000 : 30'000;
  const Table table = id_table(kRows);
  CompareOptions o;
  o.value = "value";
  o.by = {"half"};
  o.within = {"id"};
  const CompareReport report = compare_groups(table, o);
  ASSERT_EQ(report.comparisons.size(), kRows);
  std::size_t wrong = 0;
  for (const Comparison& cmp : report.comparisons) {
    const std::size_t id = std::stoul(cmp.within.at(0).substr(2));
    const std::string half = id % 2 == 0 ? "even" : "odd";
    const bool ok = cmp.groups.size() == 1 && cmp.groups[0].key.at(0) == half &&
                    cmp.groups[0].mean == static_cast<double>(id) &&
                    cmp.absent_groups.size() == 1 && cmp.absent_groups[0].at(0) != half;
    wrong += ok ? 0 : 1;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(CompareAtScale, AbsentGroupsOfSmallCellsAreThoseWithoutRowsThere) {
  // The cell "b" has no row of group "x"; "x" is absent there only.
  Table t;
  t.source = "<memory>";
  t.rows = 5;
  add_string_column(t, "g", {"x", "y", "y", "z", "x"});
  add_string_column(t, "w", {"a", "a", "b", "b", "a"});
  add_numeric_column(t, "v", {1, 2, 3, 4, 5});
  CompareOptions o;
  o.value = "v";
  o.by = {"g"};
  o.within = {"w"};
  const CompareReport report = compare_groups(t, o);
  ASSERT_EQ(report.comparisons.size(), 2u);
  EXPECT_EQ(report.comparisons[0].absent_groups, (std::vector<std::vector<std::string>>{{"z"}}));
  EXPECT_EQ(report.comparisons[1].absent_groups, (std::vector<std::vector<std::string>>{{"x"}}));
}

// issue 19: `bootstrap: 1e12` allocated 8 TB of replicates ("out of memory", exit 1); every
// resampling procedure refuses more than kMaxResamples before allocating, naming the range.
TEST(ResampleLimit, BootstrapBeyondTheMaximumIsAUsageErrorNamingTheRange) {
  const std::vector<double> x = {1, 2, 3, 4};
  EXPECT_NO_THROW(stats::bootstrap_mean_ci(x, 10, 0.95, 1));
  const std::string message = testing_util::error_of<UsageError>(
      [&] { stats::bootstrap_mean_ci(x, 1'000'000'000'000, 0.95, 1); });
  EXPECT_NE(message.find("expected 0 to 1000000"), std::string::npos) << message;
  Table t;
  t.source = "<memory>";
  t.rows = 4;
  add_string_column(t, "group", {"a", "a", "b", "b"});
  add_numeric_column(t, "value", x);
  DescribeOptions o;
  o.value = "value";
  o.by = {"group"};
  o.bootstrap = stats::kMaxResamples + 1;
  EXPECT_THROW(describe_groups(t, o), UsageError);
}

}  // namespace in_compare_test
}  // namespace
}  // namespace vlbias
