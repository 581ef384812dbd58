// Streaming rows (record_stream.h): CSV and JSONL cells as the Table readers see
// them, and clear errors for malformed or mismatched input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/table/record_stream.h"
#include "vlbias/io/table/table.h"

namespace vlbias {
namespace {
namespace in_record_stream_test {

using testing_util::error_of;

std::string write(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "vlbias_record_stream";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
  return (dir / name).string();
}

struct Row {
  std::vector<std::string> text;
  std::vector<bool> missing;
  std::size_t line;
};

std::vector<Row> rows_of(const std::string& path, const std::vector<std::string>& cols) {
  std::vector<Row> rows;
  for_each_record(path, cols, [&](const Record& r) {
    Row row{{}, {}, r.line()};
    for (std::size_t i = 0; i < cols.size(); ++i) {
      row.text.emplace_back(r.text(i));
      row.missing.push_back(r.missing(i));
    }
    rows.push_back(std::move(row));
  });
  return rows;
}

TEST(RecordStream, CsvCellsQuotesAndMissing) {
  const std::string p = write("a.csv",
                              "\xEF\xBB\xBFid,text,score\n1,\"a, \"\"quoted\"\" text\",0.5\n\n"
                              "2,,\r\n3,\"multi\nline\",1e-3\n");
  const auto rows = rows_of(p, {"text", "score"});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].text[0], "a, \"quoted\" text");
  EXPECT_EQ(rows[0].line, 2u);
  EXPECT_TRUE(rows[1].missing[0]);
  EXPECT_TRUE(rows[1].missing[1]);
  EXPECT_EQ(rows[2].text[0], "multi\nline");
  EXPECT_EQ(rows[2].line, 5u);
  double v = 0;
  for_each_record(p, {"score"}, [&](const Record& r) {
    if (r.line() == 5) v = r.number(0);
    if (r.line() == 4) {
      EXPECT_TRUE(std::isnan(r.number(0)));
    }
  });
  EXPECT_EQ(v, 1e-3);
}

TEST(RecordStream, JsonlTypesNestingAndAbsentKeys) {
  const std::string p =
      write("a.jsonl",
            "{\"k\": 30, \"t\": \"caf\\u00e9\", \"m\": {\"x\": 2.5}, \"b\": true}\n"
            "\n{\"k\": null, \"t\": \"\", \"m\": {\"x\": [1,2]}}\n");
  const auto rows = rows_of(p, {"k", "t", "m.x", "b"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].text[0], "30");
  EXPECT_EQ(rows[0].text[1], "caf\xc3\xa9");
  EXPECT_EQ(rows[0].text[2], "2.5");
  EXPECT_EQ(rows[0].text[3], "true");
  EXPECT_TRUE(rows[1].missing[0]);
  EXPECT_TRUE(rows[1].missing[1]);  // "" is missing
  EXPECT_EQ(rows[1].text[2], "[1,2]");
  EXPECT_TRUE(rows[1].missing[3]);
  EXPECT_EQ(rows[1].line, 3u);
}

TEST(RecordStream, OptionalTailColumnsAbsentFromAFileReadMissingInsteadOfFailing) {
  // Columns from `required` on may be absent: CSV, JSONL and a table in memory alike.
  const std::string csv = write("opt.csv", "a,scorer\n1,x\n2,\n");
  const std::string plain = write("plain.csv", "a\n1\n");
  const std::string jsonl = write("opt.jsonl", "{\"a\": 1}\n{\"a\": 2}\n");
  for (const std::string& path : {csv, plain, jsonl}) {
    SCOPED_TRACE(path);
    std::vector<std::pair<bool, std::string>> seen;
    for_each_record(
        path, {"a", "scorer"},
        [&](const Record& r) { seen.emplace_back(r.missing(1), std::string(r.text(1))); }, {},
        /*required=*/1);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen[0].first, path != csv);
    if (path == csv) {
      EXPECT_EQ(seen[0].second, "x");
    }
    EXPECT_TRUE(seen.back().first);
    // Still required before `required`: the same call with required = 2 fails on the absent.
    if (path != csv) {
      EXPECT_NE(error_of<InputError>([&] {
                  for_each_record(path, {"a", "scorer"}, [](const Record&) {});
                }).find("scorer"),
                std::string::npos);
    }
  }
  const Table t = read_table(plain);
  std::size_t rows = 0;
  for_each_record(
      t, {"a", "scorer"},
      [&](const Record& r) {
        EXPECT_TRUE(r.missing(1));
        EXPECT_EQ(r.text(0), "1");
        ++rows;
      },
      1);
  EXPECT_EQ(rows, 1u);
  EXPECT_FALSE(error_of<InputError>([&] {
                 for_each_record(t, {"a", "scorer"}, [](const Record&) {});
               }).empty());
}

TEST(RecordStream, ErrorsNameFileLineAndColumn) {
  const auto msg = [](const std::string& path, const std::vector<std::string>& cols) {
    return error_of<InputError>([&] { for_each_record(path, cols, [](const Record&) {}); });
  };
  EXPECT_NE(msg(write("h.csv", "a,b\n1,2\n"), {"c"}).find("has no column 'c'"), std::string::npos);
  EXPECT_NE(msg(write("r.csv", "a,b\n1,2\n3\n"), {"a"}).find("line 3"), std::string::npos);
  EXPECT_NE(msg(write("e.csv", ""), {"a"}).find("empty"), std::string::npos);
  EXPECT_NE(msg(write("n.csv", "a\n"), {"a"}).find("no rows"), std::string::npos);
  EXPECT_NE(msg(write("u.csv", "a\n\xff\n"), {"a"}).find("UTF-8"), std::string::npos);
  EXPECT_NE(msg(write("q.csv", "a\n\"open\n"), {"a"}).find("never closed"), std::string::npos);
  EXPECT_NE(msg(write("j.jsonl", "{\"a\":1}\n{\"a\":\n"), {"a"}).find("line 2"), std::string::npos);
  EXPECT_NE(msg(write("arr.jsonl", "[1,2]\n"), {"a"}).find("object"), std::string::npos);
  // The nesting limit of every JSON reader (json.h): 256 levels pass, 257 do not.
  const std::string deep = std::string(256, '[') + std::string(256, ']');
  EXPECT_EQ(rows_of(write("d256.jsonl", "{\"a\":" + deep.substr(1, 510) + "}\n"), {"a"}).size(),
            1u);
  EXPECT_NE(msg(write("d257.jsonl", "{\"a\":1}\n{\"a\":" + deep + "}\n"), {"a"})
                .find("line 2 is not valid JSON (nested deeper than 256 levels"),
            std::string::npos);
  EXPECT_NE(msg(write("absent.jsonl", "{\"a\":1}\n"), {"zz"}).find("'zz'"), std::string::npos);
  EXPECT_NE(msg(write("x.parquet", "PAR1"), {"a"}).find("is not a Parquet file"),
            std::string::npos);
  EXPECT_NE(msg("/nonexistent/dir/x.csv", {"a"}).find("x.csv"), std::string::npos);
  const std::string text_num = write("t.csv", "s\nhigh\n");
  EXPECT_NE(error_of<InputError>([&] {
              for_each_record(text_num, {"s"}, [](const Record& r) { (void)r.number(0); });
            }).find("line 2, column 's'"),
            std::string::npos);
}

}  // namespace in_record_stream_test
}  // namespace
}  // namespace vlbias
