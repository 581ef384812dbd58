// `vlbias faces` end to end on the real photographs with real weights (dlib's HOG detector and
// Debian's 68-point predictor): the tables, chips and manifest, given boxes, EXIF rotation,
// hostile images, bad options and predictor files, output independent of --threads, and shards
// merged into one process's output. Tests whose point is not the default upsampling search at
// --upsample 0 (4x fewer pixels): the sanitizer suite runs vlbias under ASan, where dlib's scan
// is about ten times slower.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/faces/face_detect.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_faces_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kSource = fs::path(VLBIAS_SOURCE_DIR);
const char* const kPhotos[] = {"astronaut.png", "camera.png", "chelsea.png",      "coffee.png",
                               "rocket.jpg",    "china.jpg",  "grace_hopper.jpg", "flower.jpg"};

// A table of the eight real photographs (absolute paths), shell-quoted.
std::string photo_table() {
  const fs::path table = temp_dir() / "photos.csv";
  std::ofstream f(table);
  f << "path\n";
  for (const char* p : kPhotos) f << (kSource / "tests/data/images/real" / p).string() << "\n";
  return shell_quote(table.string());
}

CliResult faces(const std::string& args, const std::string& global = "--quiet") {
  return run_cli(global + " faces " + args);
}

vlbias::Table table(const fs::path& p) {
  return vlbias::read_table(p.string());
}

TEST(CliFaces, RealPhotographsGiveTheTablesChipsAndManifest) {
  const fs::path out = temp_dir() / "faces";
  const CliResult r = faces("--images " + photo_table() + " --out " + shell_quote(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table f = table(out / "faces.csv");
  ASSERT_EQ(f.rows, 3u);  // the astronaut, her mission patch (upsampled once), Grace Hopper
  std::istringstream points(f.column("landmarks").text(0));
  std::vector<long> values{std::istream_iterator<long>(points), std::istream_iterator<long>()};
  EXPECT_EQ(values.size(), 136u);
  for (std::size_t i = 0; i < f.rows; ++i) {
    const fs::path chip = out / f.column("chip").text(i);
    ASSERT_TRUE(fs::is_regular_file(chip)) << chip;
    const vlbias::RgbImage image = vlbias::decode_image_file(chip);
    EXPECT_EQ(image.width, 300u);
    EXPECT_EQ(image.height, 300u);
  }
  EXPECT_EQ(f.column("chip").text(2), "chips/000006_grace_hopper_0.png");
  const vlbias::Table images = table(out / "images.csv");
  ASSERT_EQ(images.rows, 8u);
  EXPECT_EQ(images.numeric("faces", true)[0], 2.0);
  EXPECT_EQ(images.numeric("faces", true)[6], 1.0);
  const vlbias::Table none = table(out / "no_faces.csv");
  EXPECT_EQ(none.rows, 6u);  // camera.png's profile included: the frontal detector misses it
  const json m = json::parse(read_file(out / "manifest.json"));
  EXPECT_EQ(m["kind"], "faces");
  EXPECT_EQ(m["predictor"]["sha256"], vlbias::sha256_file(vlbias::kDebianShapePredictor));
  EXPECT_EQ(m["detector"]["name"], "dlib HOG frontal_face_detector");
  EXPECT_EQ(m["detector"]["upsample"], 1);
  EXPECT_EQ(m["chips"]["size"], 300);
  EXPECT_EQ(m["counts"]["faces"], 3);
  EXPECT_EQ(m["counts"]["no_face"], 6);
  EXPECT_EQ(m["skin_tone"]["mode"], "corrected");  // the default
  EXPECT_EQ(m["skin_tone"]["region"], "chip");
  for (std::size_t i = 0; i < f.rows; ++i) {
    SCOPED_TRACE(i);
    EXPECT_GE(f.numeric("monk", true)[i], 1.0);  // every face here shows skin
    EXPECT_LE(f.numeric("monk", true)[i], 10.0);
    EXPECT_FALSE(f.column("ita_category").missing(i));
  }
  EXPECT_EQ(m["vlbias_version"].get<std::string>().empty(), false);
  EXPECT_FALSE(fs::exists(out / ".partial"));
}

TEST(CliFaces, TheOutputDoesNotDependOnTheThreadCount) {
  const std::string list = photo_table();
  const fs::path one = temp_dir() / "one", two = temp_dir() / "two";
  ASSERT_EQ(
      faces("--images " + list + " --out " + shell_quote(one.string()) + " --chunk 3 --upsample 0",
            "--quiet --threads 1")
          .exit_code,
      0);
  ASSERT_EQ(
      faces("--images " + list + " --out " + shell_quote(two.string()) + " --chunk 3 --upsample 0",
            "--quiet --threads 3")
          .exit_code,
      0);
  for (const char* file : {"faces.csv", "images.csv", "no_faces.csv"}) {
    EXPECT_EQ(read_file(one / file), read_file(two / file)) << file;
  }
  std::size_t chips = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(one / "chips")) {
    EXPECT_EQ(read_file(e.path()), read_file(two / "chips" / e.path().filename()));
    ++chips;
  }
  EXPECT_EQ(chips, 2u);
}

TEST(CliFaces, GivenBoxesGetLandmarksAndChipsWithoutTheDetector) {
  const fs::path out = temp_dir() / "boxes";
  const std::string boxes = shell_quote((temp_dir() / "boxes.csv").string());
  std::ofstream(temp_dir() / "boxes.csv")
      << "image,x,y,w,h,score\n"
      << (kSource / "tests/data/images/real/grace_hopper.jpg").string() << ",165,140,200,185,0.9\n"
      << (kSource / "tests/data/images/real/coffee.png").string() << ",10.4,20.6,30,30,\n";
  const CliResult r = faces("--images " + photo_table() + " --out " + shell_quote(out.string()) +
                            " --boxes " + boxes);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table f = table(out / "faces.csv");
  ASSERT_EQ(f.rows, 2u);  // the astronaut has no given box: no face
  EXPECT_EQ(f.column("image").text(0), (kSource / "tests/data/images/real/coffee.png").string());
  EXPECT_EQ(f.numeric("x")[0], 10.0);
  EXPECT_EQ(f.numeric("y")[0], 21.0);
  EXPECT_TRUE(f.column("score").missing(0));
  EXPECT_EQ(f.numeric("w")[1], 200.0);
  EXPECT_EQ(f.numeric("score", true)[1], 0.9);
  const json m = json::parse(read_file(out / "manifest.json"));
  EXPECT_EQ(m["detector"]["name"], "boxes given (--boxes)");
  EXPECT_EQ(m["detector"]["sha256"], vlbias::sha256_file((temp_dir() / "boxes.csv").string()));
}

TEST(CliFaces, ABoxForAnImageTheInputLacksIsAnInputErrorNamingItsLine) {
  std::ofstream(temp_dir() / "boxes.csv") << "image,x,y,w,h\nelsewhere.jpg,1,2,30,30\n";
  const CliResult r =
      faces("--images " + photo_table() + " --out " + shell_quote((temp_dir() / "out").string()) +
            " --boxes " + shell_quote((temp_dir() / "boxes.csv").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("line 2, column 'image': 'elsewhere.jpg'"), std::string::npos) << r.err;
}

TEST(CliFaces, AnExifRotatedFaceIsFoundOnlyWithExifTranspose) {
  const std::string list = shell_quote((temp_dir() / "exif.csv").string());
  std::ofstream(temp_dir() / "exif.csv")
      << "path\n"
      << (kSource / "tests/fixtures/faces/astronaut_exif6.jpg").string() << "\n";
  const fs::path plain = temp_dir() / "plain", turned = temp_dir() / "turned";
  ASSERT_EQ(faces("--images " + list + " --out " + shell_quote(plain.string())).exit_code, 0);
  ASSERT_EQ(
      faces("--images " + list + " --out " + shell_quote(turned.string()) + " --exif-transpose")
          .exit_code,
      0);
  EXPECT_EQ(table(plain / "faces.csv").rows, 0u);  // the face lies on its side
  EXPECT_EQ(table(plain / "images.csv").numeric("width")[0], 200.0);
  const vlbias::Table f = table(turned / "faces.csv");
  ASSERT_EQ(f.rows, 1u);
  const vlbias::FaceBox found{
      static_cast<long>(f.numeric("x")[0]), static_cast<long>(f.numeric("y")[0]),
      static_cast<long>(f.numeric("w")[0]), static_cast<long>(f.numeric("h")[0])};
  // The label of tests/fixtures/faces/labelled_faces.csv, in the upright image.
  EXPECT_GE(vlbias::box_iou(found, vlbias::FaceBox{62, 58, 94, 104}), 0.5);
  EXPECT_EQ(table(turned / "images.csv").numeric("width")[0], 256.0);
}

// Tiny, huge (refused from the header), grey, CMYK, 16-bit, corrupt, missing and non-image
// files: each is a row of images.csv (read or failed with its reason), never a crash.
TEST(CliFaces, HostileImagesGiveRowsOrReasonsNeverACrash) {
  const fs::path enc = kSource / "tests/fixtures/encode/images";
  const fs::path derived = kSource / "tests/data/images/real/derived";
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {enc / "png_1x1.png", "ok"},
      {enc / "jpg_1x1.jpg", "ok"},
      {enc / "png_bomb_100000.png", "failed"},
      {enc / "png_bad_filter.png", "failed"},
      {derived / "grey.jpg", "ok"},
      {derived / "cmyk.jpg", "ok"},
      {derived / "grey16.png", "ok"},
      {derived / "rgba16.png", "ok"},
      {temp_dir() / "missing.png", "failed"},
      {kSource / "README.md", "failed"}};
  std::ofstream list(temp_dir() / "hostile.csv");
  list << "path\n";
  for (const auto& [p, status] : cases) list << p.string() << "\n";
  list << "\"\"\n";  // an empty path cell
  list.close();
  const fs::path out = temp_dir() / "hostile";
  const CliResult r = faces("--images " + shell_quote((temp_dir() / "hostile.csv").string()) +
                                " --out " + shell_quote(out.string()),
                            "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table images = table(out / "images.csv");
  ASSERT_EQ(images.rows, cases.size() + 1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].first.string());
    EXPECT_EQ(images.column("status").text(i), cases[i].second);
    EXPECT_EQ(images.column("error").missing(i), cases[i].second == "ok");
  }
  EXPECT_NE(images.column("error").text(2).find("100000"), std::string::npos);
  EXPECT_EQ(images.column("error").text(cases.size()), "the path cell is empty");
  EXPECT_NE(r.err.find("5 of 11 images could not be read"), std::string::npos) << r.err;
}

TEST(CliFaces, AnImageTooLargeOnceUpsampledIsRefusedAloneWithTheReason) {
  const fs::path out = temp_dir() / "limit";
  const CliResult r = faces("--images " + photo_table() + " --out " + shell_quote(out.string()) +
                            " --max-image-pixels 300000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table images = table(out / "images.csv");
  // 512 x 512 doubled is 1,048,576 pixels, more than 600,000; only chelsea.png (451 x 300,
  // 541,200 doubled) is small enough, and holds no face.
  for (std::size_t i = 0; i < images.rows; ++i) {
    SCOPED_TRACE(images.column("image").text(i));
    const bool small = i == 2;
    EXPECT_EQ(images.column("status").text(i), small ? "ok" : "failed");
    EXPECT_EQ(images.column("error").text(i).find("lower --upsample") != std::string::npos, !small);
  }
  ASSERT_EQ(faces("--images " + photo_table() + " --out " +
                  shell_quote((temp_dir() / "limit0").string()) +
                  " --max-image-pixels 300000 --upsample 0")
                .exit_code,
            0);
  EXPECT_EQ(table(temp_dir() / "limit0/faces.csv").rows, 2u);
}

TEST(CliFaces, BadOptionsAndPredictorFilesAreUsageErrorsNamingThem) {
  const std::string base =
      "--images " + photo_table() + " --out " + shell_quote((temp_dir() / "o").string());
  std::ofstream(temp_dir() / "garbage.dat") << "no model here\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --chips 31", "--chips 31: expected 32 to 2048"},
      {" --chips 2049", "--chips 2049"},
      {" --upsample 4", "--upsample 4"},
      {" --padding -1", "--padding -1"},
      {" --predictor /nonexistent/sp.dat", "/nonexistent/sp.dat"},
      {" --predictor " + shell_quote((temp_dir() / "garbage.dat").string()),
       (temp_dir() / "garbage.dat").string()},
      {" --no-chips --chips 64", "excludes"},
      {" --no-detect --chips 64", "excludes"},
      {" --no-detect --boxes x.csv", "excludes"},
      {" --skin-tone bgr", "--skin-tone"},
      {" --detector opencv-haar", "--detector"},
      {" --boxes x.csv --upsample 2", "excludes"}};
  for (const auto& [args, says] : cases) {
    SCOPED_TRACE(args);
    const CliResult r = faces(base + args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(temp_dir() / "o/manifest.json"));
}

TEST(CliFaces, AnInterruptedRunIsContinuedOnlyWithResumeAndOnlyAsTheSameJob) {
  const fs::path out = temp_dir() / "partial";
  fs::create_directories(out / ".partial");
  std::ofstream(out / ".partial/job.json") << "{\"kind\": \"faces\", \"chunk\": 5}\n";
  const std::string base = "--images " + photo_table() + " --out " + shell_quote(out.string());
  CliResult r = faces(base);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pass --resume"), std::string::npos) << r.err;
  r = faces(base + " --resume");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Cannot resume"), std::string::npos) << r.err;
}

TEST(CliFaces, NoChipsWritesBoxesAndLandmarksOnly) {
  const fs::path out = temp_dir() / "nochips";
  ASSERT_EQ(faces("--images " + photo_table() + " --out " + shell_quote(out.string()) +
                  " --no-chips --upsample 0")
                .exit_code,
            0);
  const vlbias::Table f = table(out / "faces.csv");
  ASSERT_EQ(f.rows, 2u);
  EXPECT_TRUE(f.column("chip").missing(0));
  EXPECT_FALSE(fs::exists(out / "chips"));
  EXPECT_TRUE(json::parse(read_file(out / "manifest.json"))["chips"].is_null());
}

// --no-detect measures each image whole, as HEIM does, without a predictor; --skin-tone alone
// is the corrected mode, heim swaps the compared channels (so the tone may differ, never the
// measured colour), none drops the columns. (On chips: RealPhotographsGiveTheTablesChipsAndManifest
// and tests/faces/faces_job_test.cpp.)
TEST(CliFaces, SkinToneModesOnWholeImagesWithoutDetection) {
  const std::string input =
      " --images " + photo_table() + " --no-detect --predictor /nonexistent/sp.dat --out ";
  const fs::path dir = temp_dir() / "skin_modes";
  for (const char* mode : {"alone", "heim", "none"}) {
    SCOPED_TRACE(mode);
    const std::string flag =
        std::string(" --skin-tone") + (mode[0] == 'a' ? "" : " ") + (mode[0] == 'a' ? "" : mode);
    const CliResult r = faces(input + shell_quote((dir / mode).string()) + flag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const vlbias::Table alone = table(dir / "alone/faces.csv"), heim = table(dir / "heim/faces.csv");
  const json m = json::parse(read_file(dir / "heim/manifest.json"));
  EXPECT_EQ(json::parse(read_file(dir / "alone/manifest.json"))["skin_tone"]["mode"], "corrected");
  EXPECT_EQ(m["skin_tone"]["mode"], "heim");
  EXPECT_EQ(m["skin_tone"]["region"], "image");
  EXPECT_TRUE(m["predictor"].is_null());
  ASSERT_EQ(heim.rows, 8u);  // every photograph, one "face" each
  EXPECT_EQ(table(dir / "heim/no_faces.csv").rows, 0u);
  ASSERT_EQ(alone.rows, heim.rows);
  for (const char* c : {"skin_examined", "skin_pixels"}) {
    SCOPED_TRACE(c);
    EXPECT_EQ(alone.numeric(c), heim.numeric(c));
  }
  for (std::size_t i = 0; i < heim.rows; ++i) {
    SCOPED_TRACE(i);
    for (const char* c : {"skin_r", "skin_g", "skin_b", "ita"}) {
      const double a = alone.numeric(c, true)[i], h = heim.numeric(c, true)[i];
      EXPECT_TRUE(a == h || (std::isnan(a) && std::isnan(h))) << c << ": " << a << " vs " << h;
    }
  }
  EXPECT_TRUE(heim.column("monk").missing(1));  // camera.png: grey, no skin pixel, unknown
  EXPECT_EQ(heim.numeric("skin_pixels")[1], 0.0);
  EXPECT_FALSE(heim.column("monk").missing(6));
  const vlbias::RgbImage hopper =
      vlbias::decode_image_file(kSource / "tests/data/images/real/grace_hopper.jpg");
  EXPECT_EQ(heim.numeric("w")[6], static_cast<double>(hopper.width));
  EXPECT_EQ(heim.numeric("skin_examined")[6], static_cast<double>(hopper.width * hopper.height));
  EXPECT_FALSE(table(dir / "none/faces.csv").find("monk").has_value());
  EXPECT_TRUE(json::parse(read_file(dir / "none/manifest.json"))["skin_tone"].is_null());
}

TEST(CliFaces, ShardsMergeIntoWhatOneProcessWrites) {
  const std::string list = photo_table();
  const fs::path whole = temp_dir() / "whole";
  ASSERT_EQ(faces("--images " + list + " --out " + shell_quote(whole.string()) +
                  " --chunk 2 --upsample 0")
                .exit_code,
            0);
  const std::string shards = shell_quote((temp_dir() / "shard_{shard}").string());
  for (const char* s : {"0/3", "1/3", "2/3"}) {
    const CliResult r =
        faces("--images " + list + " --out " + shards + " --chunk 2 --upsample 0 --shard " + s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const fs::path merged = temp_dir() / "merged";
  std::string args = "--quiet merge " + shell_quote(merged.string());
  for (const char* s : {"shard_2", "shard_0", "shard_1"}) {
    args += " " + shell_quote((temp_dir() / s).string());
  }
  const CliResult r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"faces.csv", "images.csv", "no_faces.csv"}) {
    EXPECT_EQ(read_file(merged / file), read_file(whole / file)) << file;
  }
  for (const fs::directory_entry& e : fs::directory_iterator(whole / "chips")) {
    EXPECT_EQ(read_file(e.path()), read_file(merged / "chips" / e.path().filename()));
  }
  const json m = json::parse(read_file(merged / "manifest.json"));
  EXPECT_EQ(m["merged_from"].size(), 3u);
  EXPECT_FALSE(m.contains("shard"));
  // A shard missing is refused.
  const CliResult two = run_cli("merge " + shell_quote((temp_dir() / "m2").string()) + " " +
                                shell_quote((temp_dir() / "shard_0").string()) + " " +
                                shell_quote((temp_dir() / "shard_1").string()));
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("missing"), std::string::npos) << two.err;
}

}  // namespace in_faces_test
}  // namespace
