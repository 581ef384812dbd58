// read_dataset (src/datasets/*.cpp) on the miniature releases of
// tools/make_dataset_fixtures.py and on hostile folders; the exact tables are checked at the
// CLI (tests/cli/dataset_test.cpp). These run in the sanitizer build with test_io alone.
#include "vlbias/datasets/datasets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "vlbias/core/error.h"

namespace {
namespace in_datasets_test {

namespace fs = std::filesystem;
using vlbias::DatasetKind;
using vlbias::DatasetOptions;
using vlbias::DatasetTable;

fs::path miniature(const std::string& name) {
  return fs::path(VLBIAS_SOURCE_DIR) / "tests/data/datasets" / name;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_datasets_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Datasets, EveryReaderCountsRowsMissingUnlabelledAndMalformedOnItsMiniature) {
  struct Case {
    const char* name;
    std::size_t rows, labelled, missing, unlabelled, malformed;
  };
  const Case cases[] = {
      {"fairface", 8, 9, 1, 1, 0},     {"utkface", 7, 7, 0, 0, 3},
      {"causalface", 10, 10, 0, 0, 3}, {"geode", 5, 6, 1, 1, 0},
      {"dollarstreet", 3, 4, 1, 1, 0}, {"socialcounterfactuals", 21, 22, 1, 1, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const DatasetTable data =
        vlbias::read_dataset(vlbias::parse_dataset_kind(c.name), miniature(c.name));
    EXPECT_EQ(vlbias::dataset_name(data.kind), c.name);
    EXPECT_EQ(data.rows.size(), c.rows);
    EXPECT_EQ(data.labelled, c.labelled);
    EXPECT_EQ(data.missing.size(), c.missing);
    EXPECT_EQ(data.unlabelled.size(), c.unlabelled);
    EXPECT_EQ(data.malformed.size(), c.malformed);
    ASSERT_EQ(data.columns.size(), data.numeric.size());
    for (const auto& row : data.rows) EXPECT_EQ(row.size(), data.columns.size());
  }
}

TEST(Datasets, KeepMissingKeepsTheRowsOfAbsentImagesAndStillListsThem) {
  DatasetOptions options;
  options.keep_missing = true;
  const DatasetTable data = vlbias::read_dataset(DatasetKind::GeoDe, miniature("geode"), options);
  EXPECT_EQ(data.rows.size(), 6u);
  EXPECT_EQ(data.missing.size(), 1u);
}

TEST(Datasets, TheTablesPathsResolveFromTheFolderItIsWrittenToAndNumbersAreNumeric) {
  const DatasetTable data = vlbias::read_dataset(DatasetKind::FairFace, miniature("fairface"));
  const vlbias::Table table =
      vlbias::dataset_to_table(data, miniature("fairface"), miniature("fairface") / "tables");
  EXPECT_EQ(table.column("path").text(0), "../train/1.jpg");
  EXPECT_EQ(table.column("age_min").type, vlbias::ColumnType::Numeric);
  EXPECT_EQ(table.column("age_min").numbers[0], 50);
  EXPECT_TRUE(std::isnan(table.column("age_max").numbers[4]));  // "more than 70"
  const vlbias::DatasetCells cells = vlbias::dataset_cells(data);
  ASSERT_EQ(cells.keys.size(), 6u);
  EXPECT_EQ(cells.keys[0], (std::vector<std::string>{"East Asian", "Male"}));
  EXPECT_EQ(cells.counts[0], 2u);
}

TEST(Datasets, AFolderLinkLoopDoesNotMakeTheWalkEndless) {
  const fs::path dir = fresh_dir("loop");
  write(dir / "UTKFace/20_0_1_20170116174525125.jpg", "x");
  fs::create_directory_symlink(dir, dir / "UTKFace" / "again");
  const DatasetTable data = vlbias::read_dataset(DatasetKind::UtkFace, dir);
  EXPECT_EQ(data.rows.size(), 1u);
  fs::remove_all(dir);
}

TEST(Datasets, HostileLabelFilesAreInputErrorsOrRowsNeverACrash) {
  const std::string header = "file,age,gender,race,service_test\n";
  const std::string cases[] = {"",
                               "\xEF\xBB\xBF",
                               header,
                               "file\n",
                               header + "train/1.jpg,3-9\n",
                               header + "\"train/1.jpg,3-9,Male,White,True\n",
                               header + "train/\xff.jpg,3-9,Male,White,True\n",
                               std::string("\x00\x01\x02garbage", 10),
                               header + "train/1.jpg,,,,\n",
                               header + "train/1.jpg,99-1x,Male,White,True\n",
                               header + ",3-9,Male,White,True\n"};
  const fs::path dir = fresh_dir("hostile");
  write(dir / "fairface_label_val.csv", header);
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    write(dir / "fairface_label_train.csv", text);
    try {
      const DatasetTable data = vlbias::read_dataset(DatasetKind::FairFace, dir);
      EXPECT_EQ(data.rows.size(), 0u);
    } catch (const vlbias::InputError&) {
    }
  }
  fs::remove_all(dir);
}

TEST(Datasets, OptionsThatDoNotApplyToTheReaderAreUsageErrors) {
  DatasetOptions split;
  split.split = "val";
  EXPECT_THROW(vlbias::read_dataset(DatasetKind::UtkFace, miniature("utkface"), split),
               vlbias::UsageError);
  DatasetOptions topics;
  topics.topic_rows = true;
  EXPECT_THROW(vlbias::read_dataset(DatasetKind::GeoDe, miniature("geode"), topics),
               vlbias::UsageError);
  EXPECT_THROW(vlbias::parse_dataset_kind("FairFace"), vlbias::UsageError);
}

}  // namespace in_datasets_test
}  // namespace
