#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/table_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_join_test {

using table_test::error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Table csv(const std::string& text, const std::string& name) {
  return parse_csv(text, name);
}

TEST(JoinRows, ByRowIsTheIdentity) {
  const Table t = csv("a\nx\ny\nz\n", "t.csv");
  EXPECT_THAT(join_rows(t, 3), ElementsAre(0u, 1u, 2u));
}

TEST(JoinRows, ByRowCountMismatch) {
  const Table t = csv("a\nx\ny\nz\n", "t.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(t, 4); }),
              AllOf(HasSubstr("'t.csv' has 3 rows but the embedding matrix has 4 rows"),
                    HasSubstr("join on an id column")));
}

TEST(JoinRows, ByStringId) {
  const Table t = csv("id,g\nimg3,a\nimg1,b\nimg3,c\n", "t.csv");
  const Table index = csv("id\nimg1\nimg2\nimg3\n", "index.csv");
  EXPECT_THAT(join_rows(t, 3, "id", &index), ElementsAre(2u, 0u, 2u));
}

TEST(JoinRows, ByNumericId) {
  const Table t = csv("id\n30\n10\n20.0\n", "t.csv");
  const Table index = csv("id,file\n10,a\n20,b\n30,c\n", "index.jsonl");
  EXPECT_THAT(join_rows(t, 3, "id", &index), ElementsAre(2u, 0u, 1u));
}

TEST(JoinRows, NumericTableIdsAgainstStringIndexCompareAsText) {
  const Table t = csv("id\n7\n12\n", "t.csv");
  const Table index = csv("id\n12\nx7\n7\n", "index.csv");
  EXPECT_EQ(t.column("id").type, ColumnType::Numeric);
  EXPECT_EQ(index.column("id").type, ColumnType::String);
  EXPECT_THAT(join_rows(t, 3, "id", &index), ElementsAre(2u, 0u));
  // The other way round: "12" and "7" match, "x7" does not.
  EXPECT_THAT(error_of<InputError>([&] { join_rows(index, 2, "id", &t); }),
              HasSubstr("1 row of 'index.csv' has an id in column 'id' that index 't.csv' "
                        "lacks: \"x7\" (line 3)"));
}

TEST(JoinRows, DuplicateIdsInIndex) {
  const Table t = csv("id\na\n", "t.csv");
  const Table index = csv("id\na\nb\na\n", "index.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(t, 3, "id", &index); }),
              AllOf(HasSubstr("index 'index.csv' lists id \"a\""), HasSubstr("twice"),
                    HasSubstr("line 2 and line 4")));
  const Table numeric_index = csv("id\n1\n2\n1.0\n", "n.csv");
  const Table numeric_t = csv("id\n1\n", "t.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(numeric_t, 3, "id", &numeric_index); }),
              AllOf(HasSubstr("lists id 1 of column 'id' twice"), HasSubstr("line 2 and line 4")));
}

TEST(JoinRows, AbsentIdsAreNamedFirstFew) {
  const Table index = csv("id\na\nb\n", "index.csv");
  const Table one = csv("id\na\nzz\n", "t.csv");
  EXPECT_EQ(error_of<InputError>([&] { join_rows(one, 2, "id", &index); }),
            "1 row of 't.csv' has an id in column 'id' that index 'index.csv' lacks: \"zz\" "
            "(line 3); expected every id to appear in the index");
  const Table many = csv("id\nq1\na\nq2\nq3\nq4\nq5\nq6\nq7\n", "t.csv");
  const std::string message = error_of<InputError>([&] { join_rows(many, 2, "id", &index); });
  EXPECT_THAT(message, AllOf(HasSubstr("7 rows of 't.csv' have an id"),
                             HasSubstr("\"q1\" (line 2), \"q2\" (line 4)"),
                             HasSubstr("\"q5\" (line 7), ..."), Not(HasSubstr("q6"))));
  const Table numbers = csv("id\n1\n5\n", "t.csv");
  const Table numeric_index = csv("id\n1\n2\n", "n.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(numbers, 2, "id", &numeric_index); }),
              HasSubstr("lacks: 5 (line 3)"));
}

TEST(JoinRows, MissingIdCells) {
  const Table index = csv("id,x\na,1\n,2\n", "index.csv");
  const Table t = csv("id\na\n", "t.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(t, 2, "id", &index); }),
              HasSubstr("index 'index.csv' has no id in column 'id' at line 3"));
  const Table good_index = csv("id\na\nb\n", "index.csv");
  const Table gap = csv("id,x\na,1\n,2\n", "t.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(gap, 2, "id", &good_index); }),
              HasSubstr("'t.csv' has no id in column 'id' at line 3"));
}

TEST(JoinRows, IndexSizeAndColumnErrors) {
  const Table t = csv("id\na\n", "t.csv");
  const Table index = csv("id\na\nb\n", "index.csv");
  EXPECT_THAT(error_of<InputError>([&] { join_rows(t, 3, "id", &index); }),
              HasSubstr("index 'index.csv' has 2 rows but the embedding matrix has 3 rows"));
  EXPECT_THAT(error_of<InputError>([&] { join_rows(t, 2, "key", &index); }),
              HasSubstr("'t.csv' has no column 'key'; columns are: id"));
  EXPECT_THAT(error_of<UsageError>([&] { join_rows(t, 2, "id", nullptr); }),
              HasSubstr("needs an index table"));
}

}  // namespace in_join_test
}  // namespace
}  // namespace vlbias
