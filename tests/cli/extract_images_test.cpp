// `vlbias dataset extract-images T.parquet --column image --out DIR` on the Parquet fixtures of
// tools/make_parquet_fixtures.mjs: hf_images.parquet holds Hugging Face's Image feature
// (struct<bytes, path>) with three real images of tests/fixtures/encode/images, stored paths
// that are kept, absent, unsafe and repeated, a null image and bytes of each sniffed format.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/cli_util.h"

namespace {
namespace in_extract_images_test {

namespace fs = std::filesystem;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kSource = VLBIAS_SOURCE_DIR;

std::string fixture(const std::string& name) {
  return shell_quote((kSource / "tests/fixtures/io/parquet" / name).string());
}

std::string image(const std::string& name) {
  return read_file(kSource / "tests/fixtures/encode/images" / name);
}

CliResult extract(const std::string& table, const fs::path& out, const std::string& more = "") {
  return run_cli("dataset extract-images " + table + " --out " + shell_quote(out.string()) + " " +
                 more);
}

TEST(ExtractImages, WritesEachRowsBytesUnderASafeNameAndAnImageTable) {
  const fs::path out = temp_dir() / "images";
  const CliResult r = extract(fixture("hf_images.parquet"), out, "--column image");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Stored paths kept when safe; '../escape.jpg', '/abs/x.gif', '' and null named by row with
  // the sniffed extension; the repeated 'photos/a.jpg' beside the first with its row.
  EXPECT_EQ(read_file(out / "images.csv"),
            "path,row,id,gender,age\n"
            "photos/a.jpg,0,0,female,31\n"
            "1.png,1,1,male,45\n"
            "2.jpg,2,2,female,\n"
            "photos/a-3.jpg,3,3,male,22\n"
            "5.gif,5,5,,18\n"
            "6.webp,6,6,male,70\n"
            "7.bin,7,7,female,33\n");
  EXPECT_EQ(read_file(out / "photos/a.jpg"), image("jpg_420.jpg"));
  EXPECT_EQ(read_file(out / "1.png"), image("png_rgb8.png"));
  EXPECT_EQ(read_file(out / "2.jpg"), image("jpg_grey.jpg"));
  EXPECT_EQ(read_file(out / "photos/a-3.jpg"), image("png_rgb8.png"));
  EXPECT_EQ(read_file(out / "7.bin"), "plain text");
  EXPECT_FALSE(fs::exists(out.parent_path() / "escape.jpg"));
  EXPECT_FALSE(fs::exists(out / "4.bin"));  // the null image: no file, no row
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) files += e.is_regular_file();
  EXPECT_EQ(files, 8u);  // 7 images and images.csv: no temporary left
  EXPECT_NE(r.err.find("wrote 7 images of 8 rows"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("without image bytes (no file, not in the table): 1"), std::string::npos);
  EXPECT_NE(r.err.find("named by row instead: 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(written as .bin): 1"), std::string::npos) << r.err;

  // Again into the same folder: the same files, replaced.
  const CliResult again = extract(fixture("hf_images.parquet"), out);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(read_file(out / "photos/a.jpg"), image("jpg_420.jpg"));
}

TEST(ExtractImages, ReadsAPlainBinaryColumnAndAStructsBytesField) {
  const fs::path out = temp_dir() / "raw";
  const CliResult r = extract(fixture("types_snappy_v1.parquet"), out, "--column raw");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_file(out / "images.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "path,row,id,flag,int32,int64,int8,int16,uint64,float32,float64,label,dec9,dec18,"
            "dec30,day,stamp,uid");
  EXPECT_NE(csv.find("\n0.bin,0,0,"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\n2.bin,"), std::string::npos) << csv;  // row 2's cell is null
  EXPECT_EQ(read_file(out / "0.bin"), std::string("\x00\xFF", 2) + "0");

  const fs::path field = temp_dir() / "field";
  const CliResult f = extract(fixture("hf_images.parquet"), field, "--column image.bytes");
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(read_file(field / "photos/a.jpg"), image("jpg_420.jpg"));
}

TEST(ExtractImages, AColumnWithoutImageBytesIsOneSentence) {
  const CliResult text = extract(fixture("hf_images.parquet"), temp_dir() / "a", "--column gender");
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.err.find("column 'gender' holds BYTE_ARRAY (STRING), not image bytes: give a "
                          "binary column or a struct with a binary 'bytes' field"),
            std::string::npos)
      << text.err;
  const CliResult absent = extract(fixture("hf_images.parquet"), temp_dir() / "b", "--column x");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_NE(absent.err.find("has no column 'x' (its columns: id, image.bytes, image.path, gender, "
                            "age)"),
            std::string::npos)
      << absent.err;
  EXPECT_FALSE(fs::exists(temp_dir() / "a"));  // refused before the folder is made
}

TEST(ExtractImages, NeverWritesThroughALinkInTheOutputFolder) {
  const fs::path out = temp_dir() / "linked";
  const fs::path elsewhere = temp_dir() / "elsewhere";
  fs::create_directories(out);
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, out / "photos");
  const CliResult r = extract(fixture("hf_images.parquet"), out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(elsewhere));

  fs::create_directory_symlink(elsewhere, temp_dir() / "out_link");
  const CliResult top = extract(fixture("hf_images.parquet"), temp_dir() / "out_link");
  EXPECT_EQ(top.exit_code, 2);
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST(ExtractImages, TheDatasetCommandStillNeedsItsArguments) {
  const CliResult r = run_cli("dataset fairface");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs NAME DIR --out T.csv"), std::string::npos) << r.err;
}

}  // namespace in_extract_images_test
}  // namespace
