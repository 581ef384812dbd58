// End-to-end tests of `vlbias dataset NAME DIR --out T.csv`: each reader on the miniature
// release folders of tools/make_dataset_fixtures.py (tests/data/datasets/), copied next to
// the table's folder so that the written paths ("../fairface/train/1.jpg") are fixed; the
// expected tables are worked out by hand from the fixture files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace {
namespace in_dataset_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

struct DatasetRun {
  CliResult cli;
  std::string table;  // the CSV written
  json summary;
};

// Copies tests/data/datasets/<name> to <temp>/<name> and reads it into <temp>/tables/.
DatasetRun read_miniature(const std::string& name, const std::string& options = "") {
  const fs::path root = temp_dir();
  fs::copy(fs::path(VLBIAS_SOURCE_DIR) / "tests/data/datasets" / name, root / name,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  fs::create_directories(root / "tables");
  DatasetRun run;
  const fs::path out = root / "tables" / (name + ".csv");
  const fs::path summary = root / "tables" / (name + ".json");
  run.cli = run_cli("dataset " + name + " '" + (root / name).string() + "' --out '" + out.string() +
                    "' --summary '" + summary.string() + "' " + options);
  if (run.cli.exit_code == 0) {
    run.table = read_file(out);
    run.summary = json::parse(read_file(summary));
  }
  return run;
}

std::string wheres(const json& issues) {
  std::string out;
  for (const json& i : issues.at("items")) out += i.at("where").get<std::string>() + "\n";
  return out;
}

TEST(DatasetCommand, FairFaceWritesBothSplitsWithAgeBoundsAndListsMissingAndUnlabelled) {
  const DatasetRun run = read_miniature("fairface");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_EQ(run.table,
            "path,split,age_bin,age_min,age_max,gender,race,service_test\n"
            "../fairface/train/1.jpg,train,50-59,50,59,Male,East Asian,True\n"
            "../fairface/train/2.jpg,train,30-39,30,39,Female,Indian,False\n"
            "../fairface/train/3.jpg,train,3-9,3,9,Female,Black,False\n"
            "../fairface/train/4.jpg,train,20-29,20,29,Female,Indian,True\n"
            "../fairface/train/5.jpg,train,more than 70,70,,Male,Latino_Hispanic,True\n"
            "../fairface/val/1.jpg,val,3-9,3,9,Male,East Asian,False\n"
            "../fairface/val/2.jpg,val,50-59,50,59,Female,Southeast Asian,False\n"
            "../fairface/val/3.jpg,val,30-39,30,39,Male,Middle Eastern,True\n");
  const json& s = run.summary;
  EXPECT_EQ(s.at("rows"), 8);
  EXPECT_EQ(s.at("labelled"), 9);
  EXPECT_EQ(s.at("label_files"), json({"fairface_label_train.csv", "fairface_label_val.csv"}));
  EXPECT_EQ(wheres(s.at("missing")), "train/6.jpg\n");
  EXPECT_EQ(wheres(s.at("unlabelled")), "train/7.jpg\n");  // and not the "._1.jpg" fork
  EXPECT_EQ(s.at("malformed").at("count"), 0);
  EXPECT_EQ(s.at("cells").size(), 6u);
  EXPECT_EQ(s.at("cells")[1],
            json({{"cell", {{"race", "Indian"}, {"gender", "Female"}}}, {"n", 2}}));
  EXPECT_NE(run.cli.err.find("wrote 8 rows"), std::string::npos) << run.cli.err;
  EXPECT_NE(run.cli.err.find("listed but missing: 1 (first: train/6.jpg"), std::string::npos);
}

TEST(DatasetCommand, FairFaceSplitValReadsOnlyTheValidationLabels) {
  const DatasetRun run = read_miniature("fairface", "--split val");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_EQ(run.summary.at("rows"), 3);
  EXPECT_EQ(run.summary.at("label_files"), json({"fairface_label_val.csv"}));
  EXPECT_EQ(run.summary.at("unlabelled").at("count"), 0);  // train/ is not looked at
}

TEST(DatasetCommand, UtkFaceMapsTheCodesToNamesAndCountsTheReleasesMalformedNames) {
  const DatasetRun run = read_miniature("utkface");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_EQ(run.table,
            "path,age,gender,race,datetime\n"
            "../utkface/UTKFace/1_0_0_20161219140623097.jpg.chip.jpg,1,male,White,"
            "2016-12-19 14:06:23.097\n"
            "../utkface/UTKFace/26_1_3_20170119180355418.jpg.chip.jpg,26,female,Indian,"
            "2017-01-19 18:03:55.418\n"
            "../utkface/UTKFace/35_0_1_20170117194532155.jpg.chip.jpg,35,male,Black,"
            "2017-01-17 19:45:32.155\n"
            "../utkface/UTKFace/80_1_2_20170110182418355.jpg.chip.jpg,80,female,Asian,"
            "2017-01-10 18:24:18.355\n"
            "../utkface/UTKFace/9_1_4_20161220222856346.jpg.chip.jpg,9,female,Others,"
            "2016-12-20 22:28:56.346\n"
            "../utkface/crop_part1/40_0_0_20170104204742093.jpg.chip.jpg,40,male,White,"
            "2017-01-04 20:47:42.093\n"
            "../utkface/part1/100_1_0_20170110183726390.jpg,100,female,White,"
            "2017-01-10 18:37:26.390\n");
  const json& bad = run.summary.at("malformed");
  EXPECT_EQ(wheres(bad),
            "UTKFace/39_1_20170116174525125.jpg.chip.jpg\n"
            "UTKFace/61_1_20170109142408075.jpg.chip.jpg\n"
            "UTKFace/61_1_20170109150557335.jpg.chip.jpg\n");
  EXPECT_EQ(bad.at("items")[0].at("reason"),
            "3 fields instead of the 4 of age_gender_race_datetime");
  EXPECT_EQ(run.summary.at("labelled"), 7);
}

TEST(DatasetCommand, CausalFaceReadsFactorLevelVariantAndBackgroundFromThePaths) {
  const DatasetRun run = read_miniature("causalface");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  const std::string d = "../causalface/final_picked_";
  EXPECT_EQ(
      run.table,
      "path,seed,race,gender,factor,level,variant,background\n" + d +
          "age/seed_42/asian_female_age_0.8_o2.png,42,asian,female,age,0.8,o2,original\n" + d +
          "age/seed_42/asian_female_age_0.8_o2_rm_bg.png,42,asian,female,age,0.8,o2,"
          "removed\n" +
          d + "age/seed_42/asian_female_age_4.4_o2.png,42,asian,female,age,4.4,o2,original\n" + d +
          "age/seed_42/white_male_age_2.0_o2.png,42,white,male,age,2,o2,original\n" + d +
          "lighting/seed_7/black_male_l_-1.png,7,black,male,lighting,-1,,original\n" + d +
          "lighting/seed_7/black_male_lighting_3_o2_rm_bg.png,7,black,male,lighting,3,o2,"
          "removed\n" +
          d + "pose/seed_7/white_female_y_-1.5.png,7,white,female,pose,-1.5,,original\n" + d +
          "pose/seed_7/white_female_y_0.0.png,7,white,female,pose,0,,original\n" + d +
          "smiling/seed_7/asian_male_smiling_-2.5_o2.png,7,asian,male,smiling,-2.5,o2,"
          "original\n" +
          d +
          "smiling/seed_7/asian_male_smiling_-2.5_o2_corrected.png,7,asian,male,smiling,"
          "-2.5,o2_corrected,original\n");
  const json& bad = run.summary.at("malformed");
  EXPECT_EQ(wheres(bad),
            "final_picked_age/overview.png\n"
            "final_picked_age/seed_42/latino_female_age_0.8_o2.png\n"
            "final_picked_pose/seed_7/white_female_age_0.8_o2.png\n");
  EXPECT_EQ(bad.at("items")[2].at("reason"), "a age image in the folder final_picked_pose");
}

TEST(DatasetCommand, GeoDeReadsIndexCsvAndListsMissingAndUnlistedImages) {
  const DatasetRun run = read_miniature("geode");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_EQ(run.table,
            "path,object,region,country\n"
            "../geode/images/bag/bag_0001.jpg,bag,Africa,Nigeria\n"
            "../geode/images/bag/bag_0002.jpg,bag,Europe,Italy\n"
            "../geode/images/car/car_0001.jpg,car,Africa,Nigeria\n"
            "../geode/images/stove/stove_0001.jpg,stove,WestAsia,\n"
            "../geode/images/stove/stove_0002.jpg,stove,Africa,Kenya\n");
  EXPECT_EQ(wheres(run.summary.at("missing")), "images/car/car_0002.jpg\n");
  EXPECT_EQ(wheres(run.summary.at("unlabelled")), "images/bag/bag_0003.jpg\n");
  EXPECT_EQ(run.summary.at("cell_columns"), json({"object", "region"}));
  EXPECT_EQ(run.summary.at("cells").size(), 5u);
}

TEST(DatasetCommand, DollarStreetJoinsTopicsOrWritesOneRowPerTopic) {
  const std::string a = "../dollarstreet/assets/";
  const std::string burundi = a +
                              "5d4be1d3cf0b3a0f3f362c4b/5d4be1d3cf0b3a0f3f362c4b.jpg,"
                              "5d4be1d3cf0b3a0f3f362c4b,Burundi,bi,af,27.84,"
                              "5d4be1cdcf0b3a0f3f362a0b,";
  const std::string india = a +
                            "5d4bde0acf0b3a0f3f3359fa/5d4bde0acf0b3a0f3f3359fa.jpg,"
                            "5d4bde0acf0b3a0f3f3359fa,India,in,as,1013.4,"
                            "5d4bddf3cf0b3a0f3f3354c9,";
  const std::string us = a +
                         "5d4bf37acf0b3a0f3f399b06/5d4bf37acf0b3a0f3f399b06.jpg,"
                         "5d4bf37acf0b3a0f3f399b06,United States,us,am,8710,"
                         "5d4bf370cf0b3a0f3f399a5d,";
  const DatasetRun run = read_miniature("dollarstreet");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_EQ(run.table, "path,id,country,country_code,region,income,place,topics\n" + burundi +
                           "kitchens|stoves\n" + india + "toys|children's rooms\n" + us +
                           "family snapshots\n");
  EXPECT_EQ(wheres(run.summary.at("missing")),
            "assets/5d4bf2b8cf0b3a0f3f395eb2/5d4bf2b8cf0b3a0f3f395eb2.jpg\n");
  EXPECT_EQ(wheres(run.summary.at("unlabelled")),
            "assets/5d4bf1cbcf0b3a0f3f393f83/5d4bf1cbcf0b3a0f3f393f83.jpg\n");

  const DatasetRun rows = read_miniature("dollarstreet", "--topic-rows");
  ASSERT_EQ(rows.cli.exit_code, 0) << rows.cli.err;
  EXPECT_EQ(rows.table, "path,id,country,country_code,region,income,place,topic\n" + burundi +
                            "kitchens\n" + burundi + "stoves\n" + india + "toys\n" + india +
                            "children's rooms\n" + us + "family snapshots\n");
  EXPECT_EQ(rows.summary.at("missing").at("count"), 1);  // once, not once per topic
  EXPECT_EQ(rows.summary.at("cell_columns"), json({"topic", "region"}));
}

TEST(DatasetCommand, SocialCounterfactualsWritesOneRowPerImageWithTheSetAndItsAttributes) {
  const DatasetRun run = read_miniature("socialcounterfactuals");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  std::string want =
      "path,set,subset,occupation,race,gender,physical_trait,attributes,caption_index,"
      "caption,rank,image_seed\n";
  const char* traits[] = {"skinny", "young", "obese", "tattooed", "old"};
  const char* trait_ks[] = {"10", "11", "12", "13", "20", "21", "24", "25", "26", "27"};
  for (int i = 0; i < 10; ++i) {
    const std::string trait = traits[i / 2];
    const std::string gender = i % 2 ? "female" : "male";
    const std::string article = trait == "obese" || trait == "old" ? "an " : "a ";
    want += std::string("../socialcounterfactuals/0000001/3918439167_") + trait_ks[i] +
            ".jpg,physical_gender_carpenter/3918439167,physical-gender,carpenter,," + gender + "," +
            trait + "," + trait + " " + gender + "," + trait_ks[i] + "," + article + trait + " " +
            gender + " Carpenter,0,3918439167\n";
  }
  const char* races[] = {"White", "Black", "Indian", "Asian", "Middle Eastern", "Latino"};
  for (int k = 0; k < 12; ++k) {
    if (k == 5) continue;  // absent on disk
    const std::string race = races[k / 2];
    const std::string gender = k % 2 ? "female" : "male";
    const std::string article = race == "Indian" || race == "Asian" ? "an " : "a ";
    want += "../socialcounterfactuals/0000000/3761796350_" + std::to_string(k) +
            ".jpg,a_picture_of_race_gender_plumber/3761796350,race-gender,plumber," + race + "," +
            gender + ",," + race + " " + gender + "," + std::to_string(k) + ",A picture of " +
            article + race + " " + gender + " plumber,0,3761796350\n";
  }
  EXPECT_EQ(run.table, want);
  const json& s = run.summary;
  EXPECT_EQ(s.at("sets"), 2);
  EXPECT_EQ(s.at("incomplete_sets"), 1);
  EXPECT_EQ(s.at("labelled"), 22);
  EXPECT_EQ(wheres(s.at("missing")), "a_picture_of_race_gender_plumber/3761796350_5.jpg\n");
  EXPECT_EQ(wheres(s.at("unlabelled")), "0000001/12345_3.jpg\n");
  EXPECT_EQ(s.at("label_files"),
            json({"metadata_physical_gender.csv", "metadata_race_gender.csv"}));
}

}  // namespace in_dataset_test
}  // namespace
