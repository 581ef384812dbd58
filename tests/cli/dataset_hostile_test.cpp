// `vlbias dataset` on folders that are not what the reader expects: one clear sentence and
// exit 2 for a wrong folder or label file, a counted (not fatal) problem for one bad name or
// row, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {
namespace in_dataset_hostile_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A real 8x8 JPEG of the miniature FairFace.
std::string jpeg() {
  return read_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/data/datasets/fairface/train/1.jpg");
}

CliResult run_dataset(const std::string& name, const fs::path& dir, const std::string& more = "") {
  return run_cli("dataset " + name + " '" + dir.string() + "' --out '" +
                 (temp_dir() / "out.csv").string() + "' --summary '" +
                 (temp_dir() / "out.json").string() + "' " + more);
}

json summary() {
  return json::parse(read_file(temp_dir() / "out.json"));
}

TEST(DatasetHostile, AnotherDatasetsFolderNamesTheLabelFileTheReaderExpected) {
  const CliResult r = run_dataset("fairface", "tests/data/datasets/utkface");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a FairFace folder"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fairface_label_train.csv does not exist"), std::string::npos) << r.err;
  const CliResult utk = run_dataset("utkface", "tests/data/datasets/geode");
  EXPECT_EQ(utk.exit_code, 2);
  EXPECT_NE(utk.err.find("is not a UTKFace folder: no image under it is named"), std::string::npos)
      << utk.err;
  const CliResult causal = run_dataset("causalface", "tests/data/datasets/utkface");
  EXPECT_EQ(causal.exit_code, 2);
  EXPECT_NE(causal.err.find("is not a CausalFace folder"), std::string::npos) << causal.err;
  const CliResult sc = run_dataset("socialcounterfactuals", "tests/data/datasets/geode");
  EXPECT_EQ(sc.exit_code, 2);
  EXPECT_NE(sc.err.find("has no metadata_*.csv"), std::string::npos) << sc.err;
}

TEST(DatasetHostile, EmptyOrWronglyHeadedLabelFilesAreOneSentenceErrors) {
  const fs::path dir = temp_dir() / "ff";
  write(dir / "fairface_label_train.csv", "");
  write(dir / "fairface_label_val.csv", "file,age,gender,race\nval/1.jpg,3-9,Male,White\n");
  const CliResult empty = run_dataset("fairface", dir);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("fairface_label_train.csv"), std::string::npos) << empty.err;

  write(dir / "fairface_label_train.csv", "image,age,sex,race\ntrain/1.jpg,3-9,Male,White\n");
  const CliResult wrong = run_dataset("fairface", dir);
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("has no column 'file': the release's header is "
                           "file,age,gender,race,service_test"),
            std::string::npos)
      << wrong.err;

  write(dir / "images_v2.csv",
        "id,country.name,region.id,topics,imageRelPath\n1,Peru,am,x,a.jpg\n");
  const CliResult dollar = run_dataset("dollarstreet", dir);
  EXPECT_EQ(dollar.exit_code, 2);
  EXPECT_NE(dollar.err.find("has no column 'income'"), std::string::npos) << dollar.err;

  write(dir / "metadata_race_gender.csv", "seed,filename,rank\n1,race_gender_chef,0\n");
  const CliResult sc = run_dataset("socialcounterfactuals", dir);
  EXPECT_EQ(sc.exit_code, 2);
  EXPECT_NE(sc.err.find("has no caption_K column"), std::string::npos) << sc.err;
}

TEST(DatasetHostile, ByteOrderMarkAndCrlfLabelFilesRead) {
  const fs::path dir = temp_dir() / "ff";
  write(dir / "fairface_label_train.csv",
        "\xEF\xBB\xBF"
        "file,age,gender,race,service_test\r\ntrain/1.jpg,20-29,Female,Black,True\r\n");
  write(dir / "fairface_label_val.csv", "file,age,gender,race,service_test\n");
  write(dir / "train/1.jpg", jpeg());
  const CliResult r = run_dataset("fairface", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "out.csv"),
            "path,split,age_bin,age_min,age_max,gender,race,service_test\n"
            "ff/train/1.jpg,train,20-29,20,29,Female,Black,True\n");
}

TEST(DatasetHostile, NonUtf8FileNamesAreCountedAsMalformedNotWritten) {
  const fs::path dir = temp_dir() / "utk";
  write(dir / "UTKFace/20_0_1_20170116174525125.jpg.chip.jpg", jpeg());
  write(dir / "UTKFace/21_0_1_2017\xff\xfe.jpg", jpeg());
  const CliResult r = run_dataset("utkface", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("rows"), 1);
  ASSERT_EQ(s.at("malformed").at("count"), 1);
  EXPECT_EQ(s.at("malformed").at("items")[0].at("where"), "UTKFace/21_0_1_2017\\xff\\xfe.jpg");
  EXPECT_EQ(s.at("malformed").at("items")[0].at("reason"), "the file name is not UTF-8");
}

TEST(DatasetHostile, LabelPathsOutsideTheFolderAreMalformedAndImagesRelativePathsResolve) {
  const fs::path dir = temp_dir() / "geode";
  write(dir / "index.csv",
        "file_path,object,region,ip_country\n"
        "../../etc/passwd,bag,Africa,Nigeria\n"
        "/etc/passwd,bag,Africa,Nigeria\n"
        "bag/1.jpg,bag,Europe,Italy\n"
        "car/2.jpg,,Europe,Italy\n");
  write(dir / "images/bag/1.jpg", jpeg());
  const CliResult r = run_dataset("geode", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "out.csv"),
            "path,object,region,country\ngeode/images/bag/1.jpg,bag,Europe,Italy\n");
  const json s = summary();
  EXPECT_EQ(s.at("malformed").at("count"), 3);
  EXPECT_EQ(s.at("malformed").at("items")[0].at("where"), "index.csv line 2");
  EXPECT_EQ(s.at("malformed").at("items")[2].at("reason"), "object or region is empty");
}

TEST(DatasetHostile, MalformedTopicListsAreCountedPerRow) {
  const fs::path dir = temp_dir() / "ds";
  write(dir / "images_v2.csv",
        "id,country.id,country.name,region.id,topics,place,income,imageRelPath\n"
        "1,pe,Peru,am,\"['unclosed\",p,10,a/1.jpg\n"
        "2,pe,Peru,am,[],p,10,a/2.jpg\n"
        "3,pe,Peru,am,\"[\"\"a\"\", 'b']\",p,ten,a/3.jpg\n"
        "4,pe,Peru,am,\"[\"\"a\"\", 'b']\",p,10,a/4.jpg\n");
  write(dir / "a/4.jpg", jpeg());
  const CliResult r = run_dataset("dollarstreet", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("rows"), 1);
  EXPECT_EQ(s.at("malformed").at("count"), 3);
  EXPECT_EQ(s.at("malformed").at("items")[2].at("reason"), "income 'ten' is not a number");
}

// Escapes in topics are decoded as the list's own language does: JSON's (\u0000, \u00e9, \\)
// in a JSON array, Python's (\', \xe9, \U0001f642; an unknown "\d" kept whole) in a pandas
// list; a backslash is never dropped ("a\u0000b" once became "au0000b").
TEST(DatasetHostile, TopicEscapesAreDecodedAsJsonOrPythonDecodeThem) {
  const fs::path dir = temp_dir() / "ds";
  write(dir / "images_v2.csv",
        "id,country.id,country.name,region.id,topics,place,income,imageRelPath\n"
        R"(1,pe,Peru,am,"[""a\u0000b"", ""caf\u00e9"", ""back\\slash""]",p,10,a/1.jpg)"
        "\n"
        R"(2,pe,Peru,am,"['it\'s', 'caf\xe9', 'keep \d', ""x\u00e9\U0001F642""]",p,10,a/2.jpg)"
        "\n"
        R"(3,pe,Peru,am,"['cut \x4']",p,10,a/3.jpg)"
        "\n"
        R"(4,pe,Peru,am,"[""lone \ud800""]",p,10,a/4.jpg)"
        "\n");
  for (const char* image : {"a/1.jpg", "a/2.jpg", "a/3.jpg", "a/4.jpg"}) write(dir / image, jpeg());
  const CliResult r = run_dataset("dollarstreet", dir, "--topic-rows");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string one = "ds/a/1.jpg,1,Peru,pe,am,10,p,";
  const std::string two = "ds/a/2.jpg,2,Peru,pe,am,10,p,";
  EXPECT_EQ(read_file(temp_dir() / "out.csv"),
            "path,id,country,country_code,region,income,place,topic\n" + one +
                std::string("a\0b", 3) + "\n" + one + "caf\xc3\xa9\n" + one + "back\\slash\n" +
                two + "it's\n" + two + "caf\xc3\xa9\n" + two + "keep \\d\n" + two +
                "x\xc3\xa9\xf0\x9f\x99\x82\n");
  // \x with one digit, and a lone surrogate (no character; not JSON either): malformed rows.
  const json s = summary();
  ASSERT_EQ(s.at("malformed").at("count"), 2) << s.dump(1);
  EXPECT_EQ(s.at("malformed").at("items")[0].at("reason"),
            R"(topics '['cut \x4']' is not a list of topics)");
}

TEST(DatasetHostile, CheckImagesDropsAndListsFilesThatDoNotDecode) {
  const fs::path dir = temp_dir() / "utk";
  write(dir / "20_0_1_20170116174525125.jpg", jpeg());
  write(dir / "21_1_2_20170116174525125.jpg", jpeg().substr(0, 40));
  write(dir / "22_1_2_20170116174525125.jpg", "not an image at all");
  const CliResult r = run_dataset("utkface", dir, "--check-images");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary();
  EXPECT_EQ(s.at("rows"), 1);
  EXPECT_EQ(s.at("unreadable").at("count"), 2);
  EXPECT_EQ(s.at("unreadable").at("items")[0].at("where"), "21_1_2_20170116174525125.jpg");
  const CliResult unchecked = run_dataset("utkface", dir);
  ASSERT_EQ(unchecked.exit_code, 0) << unchecked.err;
  EXPECT_EQ(summary().at("rows"), 3);
  EXPECT_TRUE(summary().at("unreadable").is_null());
}

// A label is shown in the summary's cells, a malformed row's reason quotes its cell and an
// error quotes an option: each reaches the terminal with ESC and BEL escaped (printable_text),
// so a label cannot retitle the terminal (OSC 0) or clear the screen (CSI 2J).
TEST(DatasetHostile, ControlCharactersOfALabelReachStderrEscaped) {
  const std::string title = "Black\x1b]0;pwned\x07\x1b[2J";
  const std::string shown = "Black\\x1b]0;pwned\\x07\\x1b[2J";
  const fs::path dir = temp_dir() / "ff";
  write(dir / "fairface_label_train.csv",
        "file,age,gender,race,service_test\ntrain/1.jpg,20-29,Female," + title + ",True\n");
  write(dir / "fairface_label_val.csv", "file,age,gender,race,service_test\n");
  write(dir / "train/1.jpg", jpeg());
  const CliResult cells = run_dataset("fairface", dir);
  ASSERT_EQ(cells.exit_code, 0) << cells.err;
  EXPECT_NE(cells.err.find("race=" + shown), std::string::npos) << cells.err;
  EXPECT_EQ(cells.err.find_first_of("\x1b\x07"), std::string::npos) << cells.err;
  // The table keeps the label as it is: only what is shown on the terminal is escaped.
  EXPECT_NE(read_file(temp_dir() / "out.csv").find(title), std::string::npos);

  const fs::path ds = temp_dir() / "ds";
  write(ds / "images_v2.csv",
        "id,country.id,country.name,region.id,topics,place,income,imageRelPath\n"
        "1,pe,Peru,am,kitchens,p," +
            title + ",a/1.jpg\n2,pe,Peru,am,kitchens,p,10,a/2.jpg\n");
  write(ds / "a/2.jpg", jpeg());
  const CliResult malformed = run_dataset("dollarstreet", ds);
  ASSERT_EQ(malformed.exit_code, 0) << malformed.err;
  EXPECT_NE(malformed.err.find("income '" + shown + "' is not a number"), std::string::npos)
      << malformed.err;
  EXPECT_EQ(malformed.err.find_first_of("\x1b\x07"), std::string::npos) << malformed.err;

  const CliResult error = run_dataset("fairface", dir, "--split '" + title + "'");
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_NE(error.err.find("--split '" + shown + "' is not train, val or all"), std::string::npos)
      << error.err;
  EXPECT_EQ(error.err.find_first_of("\x1b\x07"), std::string::npos) << error.err;
}

TEST(DatasetHostile, WrongNamesOptionsAndPathsAreUsageErrors) {
  const std::string ff = "tests/data/datasets/fairface";
  const CliResult unknown = run_dataset("imagenet", ff);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown dataset 'imagenet': expected one of fairface, utkface"),
            std::string::npos)
      << unknown.err;
  const CliResult split = run_dataset("geode", "tests/data/datasets/geode", "--split val");
  EXPECT_EQ(split.exit_code, 2);
  EXPECT_NE(split.err.find("--split applies to fairface only"), std::string::npos) << split.err;
  const CliResult bad_split = run_dataset("fairface", ff, "--split test");
  EXPECT_EQ(bad_split.exit_code, 2);
  EXPECT_NE(bad_split.err.find("--split 'test' is not train, val or all"), std::string::npos);
  const CliResult labels = run_dataset("utkface", ff, "--labels x.csv");
  EXPECT_EQ(labels.exit_code, 2);
  const CliResult file = run_dataset("fairface", ff + "/fairface_label_train.csv");
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_NE(file.err.find("is not a folder"), std::string::npos) << file.err;
  const CliResult out =
      run_cli("dataset fairface " + ff + " --out '" + (temp_dir() / "out.tsv").string() + "'");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.err.find("must end in .csv"), std::string::npos) << out.err;
}

}  // namespace in_dataset_hostile_test
}  // namespace
