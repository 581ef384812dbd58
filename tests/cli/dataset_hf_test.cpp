// `vlbias dataset fairface|socialcounterfactuals DIR` on the Hugging Face Parquet layouts
// (tests/fixtures/io/parquet/hf_fairface/, hf_socialcounterfactuals/, written by
// tools/make_parquet_fixtures.mjs with real images of tests/fixtures/encode/images): the images
// extracted beside the table, the rows as the folder readers write them; expected tables worked
// out by hand from the fixture script.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {
namespace in_dataset_hf_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kParquet = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/io/parquet";

std::string image(const std::string& name) {
  return read_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/images" / name);
}

CliResult read_hf(const std::string& name, const fs::path& dir, const std::string& more = "") {
  fs::create_directories(temp_dir() / "tables");
  return run_cli("dataset " + name + " " + shell_quote(dir.string()) + " --out " +
                 shell_quote((temp_dir() / "tables/t.csv").string()) + " --summary " +
                 shell_quote((temp_dir() / "tables/t.json").string()) + " " + more);
}

json summary() {
  return json::parse(read_file(temp_dir() / "tables/t.json"));
}

TEST(DatasetHf, FairFaceShardsMapClassCodesAndExtractTheImagesBesideTheTable) {
  const CliResult r = read_hf("fairface", kParquet / "hf_fairface");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "tables/t.csv"),
            "path,split,age_bin,age_min,age_max,gender,race,service_test\n"
            "t_images/0.25/train-00000-of-00001/0.jpg,train,50-59,50,59,Male,East Asian,True\n"
            "t_images/0.25/train-00000-of-00001/1.png,train,10-19,10,19,Female,Black,False\n"
            "t_images/0.25/validation-00000-of-00001/val_1.jpg,val,more than 70,70,,Female,"
            "Southeast Asian,False\n");
  const fs::path images = temp_dir() / "tables/t_images/0.25";
  EXPECT_EQ(read_file(images / "train-00000-of-00001/0.jpg"), image("jpg_420.jpg"));
  EXPECT_EQ(read_file(images / "train-00000-of-00001/1.png"), image("png_rgb8.png"));
  EXPECT_EQ(read_file(images / "validation-00000-of-00001/val_1.jpg"), image("jpg_1x1.jpg"));
  const json s = summary();
  EXPECT_EQ(s.at("rows"), 3);
  EXPECT_EQ(s.at("label_files"),
            json({"0.25/train-00000-of-00001.parquet", "0.25/validation-00000-of-00001.parquet"}));
  EXPECT_EQ(s.at("malformed").at("items")[0].at("where"),
            "0.25/train-00000-of-00001.parquet row 2");  // age code 9 of 9 classes
  EXPECT_EQ(s.at("missing").at("count"), 1);             // the null image
}

TEST(DatasetHf, FairFaceClassNamesComeFromTheShardsMetadataWhenItHasThem) {
  // Codes 6, 0, 0 under another upload's orders (genders and races sorted), as its
  // "huggingface" schema metadata names them.
  const CliResult r = read_hf("fairface", kParquet / "hf_fairface_metadata");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "tables/t.csv"),
            "path,split,age_bin,age_min,age_max,gender,race,service_test\n"
            "t_images/train-00000-of-00001/0.jpg,train,50-59,50,59,Female,Black,True\n");
}

TEST(DatasetHf, FairFaceSplitAndImagesOutAndOneConfigurationOnly) {
  const fs::path out = temp_dir() / "extracted";
  const CliResult r = read_hf("fairface", kParquet / "hf_fairface/0.25",
                              "--split val --images-out " + shell_quote(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "tables/t.csv"),
            "path,split,age_bin,age_min,age_max,gender,race,service_test\n"
            "../extracted/validation-00000-of-00001/val_1.jpg,val,more than 70,70,,Female,"
            "Southeast Asian,False\n");
  EXPECT_FALSE(fs::exists(out / "train-00000-of-00001"));

  const fs::path two = temp_dir() / "two";
  for (const char* config : {"0.25", "1.25"}) {
    fs::create_directories(two / config);
    fs::copy(kParquet / "hf_fairface/0.25", two / config);
  }
  const CliResult both = read_hf("fairface", two);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("several configurations (0.25, 1.25); give the folder of one"),
            std::string::npos)
      << both.err;
}

TEST(DatasetHf, SocialCounterfactualsShardsGiveTheFolderReadersColumns) {
  const CliResult r = read_hf("socialcounterfactuals", kParquet / "hf_socialcounterfactuals");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "tables/t.csv"),
            "path,set,subset,occupation,race,gender,physical_trait,attributes,caption_index,"
            "caption,rank,image_seed\n"
            "t_images/data/train-00000-of-00002-aaaa/12_0.jpg,race_gender_a_picture_of_plumber_12,"
            "race-gender,plumber,Middle Eastern,female,,Middle Eastern female,,"
            "A picture of a Middle Eastern female plumber,,\n"
            "t_images/data/train-00000-of-00002-aaaa/12_1.jpg,race_gender_a_picture_of_plumber_12,"
            "race-gender,plumber,White,male,,White male,,A picture of a White male plumber,,\n"
            "t_images/data/train-00001-of-00002-bbbb/7_0.jpg,physical_race_a_picture_of_doctor_7,"
            "physical-race,doctor,Black,,skinny,skinny Black,,A picture of a skinny Black doctor,"
            ",\n");
  EXPECT_EQ(read_file(temp_dir() / "tables/t_images/data/train-00001-of-00002-bbbb/7_0.jpg"),
            image("jpg_grey.jpg"));
  const json s = summary();
  EXPECT_EQ(s.at("sets"), 2);
  EXPECT_EQ(s.at("malformed").at("items")[0].at("where"),
            "data/train-00001-of-00002-bbbb.parquet row 1");  // a1_type 'age'

  const CliResult labels =
      read_hf("socialcounterfactuals", kParquet / "hf_socialcounterfactuals", "--labels x.csv");
  EXPECT_EQ(labels.exit_code, 2);
  EXPECT_NE(labels.err.find("has its labels in the Parquet shards"), std::string::npos)
      << labels.err;
}

}  // namespace in_dataset_hf_test
}  // namespace
