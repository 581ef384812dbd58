// The faces job (run_faces_job) through the library: a run stopped after some chunks resumes
// to what one clean run writes, an image changed meanwhile is read again, the per-face columns
// hook (where skin tone plugs in) adds faces.csv columns, and chip names are stable and unique.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "faces_job_internal.h"
#include "test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/faces/faces_job.h"
#include "vlbias/faces/skin_tone.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_faces_job_test {

namespace fs = std::filesystem;
using vlbias::FacesJobOptions;
using vlbias::faces_internal::chip_name;

const fs::path kReal = fs::path(VLBIAS_SOURCE_DIR) / "tests/data/images/real";

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("vlbias_faces_job_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string text_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A folder of images: copies of real photographs under names of their own.
fs::path image_folder(const fs::path& dir, const std::vector<std::string>& photos) {
  const fs::path images = dir / "images";
  fs::create_directories(images);
  for (std::size_t i = 0; i < photos.size(); ++i) {
    fs::copy_file(kReal / photos[i], images / (std::to_string(i) + "_" + photos[i]));
  }
  return images;
}

// One detector for every job of this file: the predictor's 100 MB are read once (about 1 s,
// 4 s under the sanitizers) rather than per job.
std::shared_ptr<const vlbias::FaceDetector> shared_detector() {
  static const auto detector = [] {
    vlbias::FaceDetectorOptions d;
    d.upsample = 0;  // the job's logic does not depend on it, and 4x fewer pixels
    return std::make_shared<const vlbias::FaceDetector>(d);
  }();
  return detector;
}

FacesJobOptions job(const fs::path& images, const fs::path& out) {
  FacesJobOptions o;
  o.input = images;
  o.out = out;
  o.chunk = 1;
  o.detector = shared_detector()->options();
  o.loaded_detector = shared_detector();
  return o;
}

const std::vector<std::string> kPhotos = {"astronaut.png", "coffee.png", "grace_hopper.jpg",
                                          "chelsea.png"};

TEST(FacesJob, ARunStoppedAfterTwoChunksResumesToWhatOneCleanRunWrites) {
  const fs::path dir = fresh_dir("resume");
  const fs::path images = image_folder(dir, kPhotos);
  vlbias::run_faces_job(job(images, dir / "clean"));

  FacesJobOptions stopped = job(images, dir / "resumed");
  // The third image's face stops the job (chunks of one image are done in order).
  stopped.face_columns = [](const vlbias::RgbImage&, const vlbias::DetectedFace& face,
                            vlbias::Json&) {
    if (face.box.w > 150) throw vlbias::InternalError("stopped for the test");
  };
  EXPECT_THROW(vlbias::run_faces_job(stopped), vlbias::InternalError);
  EXPECT_TRUE(fs::exists(dir / "resumed/.partial/chunk_000000.json"));
  EXPECT_TRUE(fs::exists(dir / "resumed/.partial/chunk_000001.json"));
  EXPECT_FALSE(fs::exists(dir / "resumed/manifest.json"));

  FacesJobOptions again = job(images, dir / "resumed");
  EXPECT_THROW(vlbias::run_faces_job(again), vlbias::UsageError);  // needs --resume
  again.resume = true;
  const vlbias::FacesJobResult r = vlbias::run_faces_job(again);
  EXPECT_EQ(r.resumed, 2u);
  EXPECT_EQ(r.images, 4u);
  EXPECT_EQ(r.faces, 2u);
  for (const char* file : {"faces.csv", "images.csv", "no_faces.csv"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(text_of(dir / "resumed" / file), text_of(dir / "clean" / file));
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir / "clean/chips")) {
    EXPECT_EQ(text_of(e.path()), text_of(dir / "resumed/chips" / e.path().filename()));
  }
  EXPECT_FALSE(fs::exists(dir / "resumed/.partial"));
  fs::remove_all(dir);
}

TEST(FacesJob, AnImageChangedBeforeTheResumeIsReadAgainAndItsOldChipsGo) {
  const fs::path dir = fresh_dir("changed");
  const fs::path images = image_folder(dir, kPhotos);
  FacesJobOptions stopped = job(images, dir / "out");
  stopped.face_columns = [](const vlbias::RgbImage&, const vlbias::DetectedFace& face,
                            vlbias::Json&) {
    if (face.box.w > 150) throw vlbias::InternalError("stopped for the test");
  };
  EXPECT_THROW(vlbias::run_faces_job(stopped), vlbias::InternalError);
  ASSERT_TRUE(fs::exists(dir / "out/chips/000000_0_astronaut_0.png"));
  // The astronaut's file now holds the cat: no face where one was.
  fs::copy_file(kReal / "chelsea.png", images / "0_astronaut.png",
                fs::copy_options::overwrite_existing);
  FacesJobOptions again = job(images, dir / "out");
  again.resume = true;
  const vlbias::FacesJobResult r = vlbias::run_faces_job(again);
  EXPECT_EQ(r.resumed, 1u);  // the coffee's chunk only
  EXPECT_EQ(r.faces, 1u);
  EXPECT_EQ(r.no_face, 3u);
  EXPECT_FALSE(fs::exists(dir / "out/chips/000000_0_astronaut_0.png"));
  EXPECT_TRUE(fs::exists(dir / "out/chips/000002_2_grace_hopper_0.png"));
  fs::remove_all(dir);
}

TEST(FacesJob, TheFaceColumnsHookAddsColumnsAfterTheFixedOnes) {
  const fs::path dir = fresh_dir("hook");
  const fs::path images = image_folder(dir, {"grace_hopper.jpg", "astronaut.png"});
  FacesJobOptions o = job(images, dir / "out");
  o.face_columns = [](const vlbias::RgbImage& image, const vlbias::DetectedFace& face,
                      vlbias::Json& columns) {
    columns["chip_side"] = face.chip.width;
    columns["wide"] = face.box.w * 2 > static_cast<long>(image.width) ? "yes" : "no";
    columns["note"] = nullptr;
  };
  o.face_columns_spec = vlbias::Json{{"test", 1}};
  vlbias::run_faces_job(o);
  const std::string faces = text_of(dir / "out/faces.csv");
  EXPECT_EQ(faces.substr(0, faces.find('\n')),
            "input_row,image,face,x,y,w,h,score,landmarks,chip,chip_side,wide,note");
  EXPECT_NE(faces.find(",300,no,\n"), std::string::npos) << faces;
  const std::string manifest = text_of(dir / "out/manifest.json");
  EXPECT_NE(manifest.find("\"face_columns\": {\n    \"test\": 1"), std::string::npos) << manifest;
  fs::remove_all(dir);
}

// Each skin-tone column of faces.csv row `row` against what measure_skin_tone gives on `region`.
void expect_skin_columns(const vlbias::Table& t, std::size_t row, const vlbias::RgbImage& region,
                         vlbias::SkinToneMode mode) {
  const vlbias::SkinTone want = vlbias::measure_skin_tone(region, "reference", {mode, {}});
  ASSERT_TRUE(want.known());
  EXPECT_EQ(t.numeric("skin_examined")[row], static_cast<double>(want.examined_pixels));
  EXPECT_EQ(t.numeric("skin_pixels")[row], static_cast<double>(want.skin_pixels));
  EXPECT_DOUBLE_EQ(t.numeric("skin_r")[row], (*want.mean_rgb)[0]);
  EXPECT_DOUBLE_EQ(t.numeric("skin_g")[row], (*want.mean_rgb)[1]);
  EXPECT_DOUBLE_EQ(t.numeric("skin_b")[row], (*want.mean_rgb)[2]);
  EXPECT_EQ(t.numeric("monk")[row], static_cast<double>(*want.monk));
  EXPECT_DOUBLE_EQ(t.numeric("monk_l1")[row], *want.monk_l1);
  EXPECT_DOUBLE_EQ(t.numeric("ita")[row], *want.ita_degrees);
  EXPECT_EQ(t.column("ita_category").text(row), vlbias::to_string(*want.ita_category));
}

TEST(FacesJob, SkinToneColumnsAreMeasuredOnEachFacesChip) {
  const fs::path dir = fresh_dir("skin");
  const fs::path images = image_folder(dir, {"grace_hopper.jpg", "astronaut.png"});
  FacesJobOptions o = job(images, dir / "out");
  o.skin_tone = vlbias::SkinToneMode::Heim;
  vlbias::run_faces_job(o);
  const vlbias::Table t = vlbias::read_table((dir / "out/faces.csv").string());
  ASSERT_EQ(t.rows, 2u);
  EXPECT_EQ(t.columns[10].name, "skin_examined");
  for (std::size_t row = 0; row < t.rows; ++row) {
    SCOPED_TRACE(t.column("image").text(row));
    const vlbias::RgbImage chip =
        vlbias::decode_image_file(dir / "out" / t.column("chip").text(row));
    EXPECT_EQ(chip.width, 300u);
    expect_skin_columns(t, row, chip, vlbias::SkinToneMode::Heim);
  }
  const std::string manifest = text_of(dir / "out/manifest.json");
  EXPECT_NE(manifest.find("\"mode\": \"heim\",\n    \"region\": \"chip\""), std::string::npos)
      << manifest;
  fs::remove_all(dir);
}

TEST(FacesJob, WithoutDetectionEachImageIsOneFaceMeasuredWhole) {
  const fs::path dir = fresh_dir("whole");
  const fs::path images = image_folder(dir, {"chelsea.png", "grace_hopper.jpg"});
  FacesJobOptions o = job(images, dir / "out");
  o.whole_image = true;
  o.loaded_detector = nullptr;
  o.detector.predictor = dir / "no such predictor";            // not loaded without detection
  EXPECT_THROW(vlbias::run_faces_job(o), vlbias::UsageError);  // chips are on
  o.detector.chip_size = 0;
  o.skin_tone = vlbias::SkinToneMode::Corrected;
  const vlbias::FacesJobResult r = vlbias::run_faces_job(o);
  EXPECT_EQ(r.faces, 2u);
  EXPECT_EQ(r.no_face, 0u);
  const vlbias::Table t = vlbias::read_table((dir / "out/faces.csv").string());
  ASSERT_EQ(t.rows, 2u);
  for (std::size_t row = 0; row < t.rows; ++row) {
    SCOPED_TRACE(t.column("image").text(row));
    const vlbias::RgbImage image = vlbias::decode_image_file(images / t.column("image").text(row));
    EXPECT_EQ(t.numeric("x")[row], 0.0);
    EXPECT_EQ(t.numeric("y")[row], 0.0);
    EXPECT_EQ(t.numeric("w")[row], static_cast<double>(image.width));
    EXPECT_EQ(t.numeric("h")[row], static_cast<double>(image.height));
    EXPECT_TRUE(t.column("landmarks").missing(row));
    EXPECT_TRUE(t.column("chip").missing(row));
    expect_skin_columns(t, row, image, vlbias::SkinToneMode::Corrected);
  }
  EXPECT_FALSE(fs::exists(dir / "out/chips"));
  fs::remove_all(dir);
}

TEST(FacesJob, ALoadedDetectorWithOtherOptionsThanTheJobsIsRefused) {
  const fs::path dir = fresh_dir("loaded");
  FacesJobOptions o = job(image_folder(dir, {"coffee.png"}), dir / "out");
  o.detector.upsample = 1;
  const std::string message =
      vlbias::testing_util::error_of<vlbias::UsageError>([&] { vlbias::run_faces_job(o); });
  EXPECT_NE(message.find("options differ"), std::string::npos) << message;
  fs::remove_all(dir);
}

TEST(FacesJob, ChipNamesAreTheInputRowTheCleanedStemAndTheFace) {
  EXPECT_EQ(chip_name(7, "people/Ana María.jpg", 2), "chips/000007_Ana_Mar__a_2.png");
  EXPECT_EQ(chip_name(1234567, "a/b/c.png", 0), "chips/1234567_c_0.png");
  EXPECT_EQ(chip_name(3, "", 0), "chips/000003_image_0.png");
  EXPECT_EQ(chip_name(3, "../../etc/passwd", 1), "chips/000003_passwd_1.png");
  EXPECT_EQ(chip_name(3, std::string(100, 'x') + ".png", 1).size(),
            std::string("chips/000003_").size() + 40 + std::string("_1.png").size());
}

TEST(FacesJob, AnOutFolderHoldingOtherFilesOrAFinishedRunIsRefused) {
  const fs::path dir = fresh_dir("refused");
  const fs::path images = image_folder(dir, {"coffee.png"});
  fs::create_directories(dir / "busy");
  std::ofstream(dir / "busy/notes.txt") << "mine\n";
  EXPECT_THROW(vlbias::run_faces_job(job(images, dir / "busy")), vlbias::UsageError);
  vlbias::run_faces_job(job(images, dir / "done"));
  EXPECT_THROW(vlbias::run_faces_job(job(images, dir / "done")), vlbias::UsageError);
  std::ofstream(dir / "file") << "x";
  EXPECT_THROW(vlbias::run_faces_job(job(images, dir / "file")), vlbias::UsageError);
  EXPECT_EQ(text_of(dir / "busy/notes.txt"), "mine\n");
  fs::remove_all(dir);
}

}  // namespace in_faces_job_test
}  // namespace
