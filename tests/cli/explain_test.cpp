// `vlbias explain` end to end on the tiny random CLIP models of the end-to-end encode fixtures
// (tests/fixtures/encode/e2e: HF and open_clip layouts, with tokenizers and preprocessing) and the
// real photographs: maps.npy and the probabilities are what the library's clip_cams gives for the
// same image (the command adds nothing), the overlays are overlay_cam's of the most confident
// images per group, unreadable images are listed and skipped, bad inputs exit 2 naming the
// problem, and the outputs do not depend on --threads. With --faces: face boxes moved into the
// model's input crop (tests/explain/face_mass_test.cpp checks the two steps by hand).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/encode/encode.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/clip_cam.h"
#include "vlbias/explain/face_mass.h"
#include "vlbias/faces/skin_tone.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

namespace {
namespace in_explain_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kSource = fs::path(VLBIAS_SOURCE_DIR);
const fs::path kE2e = kSource / "tests/fixtures/encode/e2e";
const fs::path kReal = kSource / "tests/data/images/real";

// Two trait pairs; smart/dumb has two templates, so each pole is a mean of two prompts.
const char* const kManifest =
    "text,word,dimension,valence,template\n"
    "a photo of a smart person,smart,smart/dumb,+,a photo of a {} person\n"
    "a photo of a dumb person,dumb,smart/dumb,-,a photo of a {} person\n"
    "a smart person,smart,smart/dumb,+,a {} person\n"
    "a dumb person,dumb,smart/dumb,-,a {} person\n"
    "a photo of a happy person,happy,happy/sad,+,a photo of a {} person\n"
    "a photo of a sad person,sad,happy/sad,-,a photo of a {} person\n";

// The images table: photographs with a group column, an undecodable file and a missing one.
struct Photo {
  std::string path, group;
};
const Photo kPhotos[] = {{"astronaut.png", "a"}, {"grace_hopper.jpg", "a"}, {"chelsea.png", "b"},
                         {"coffee.png", "a"},    {"BROKEN", "b"},           {"rocket.jpg", "b"},
                         {"missing.png", "a"},   {"camera.png", "a"}};

std::string manifest_file() {
  const fs::path p = temp_dir() / "pairs.csv";
  std::ofstream(p) << kManifest;
  return p.string();
}

std::string photo_table(const std::string& group_column = "g") {
  const fs::path p = temp_dir() / "photos.csv";
  std::ofstream f(p);
  f << "path," << group_column << "\n";
  for (const Photo& ph : kPhotos) {
    const fs::path path = ph.path == "BROKEN" ? kE2e / "broken.jpg" : kReal / ph.path;
    f << path.string() << "," << ph.group << "\n";
  }
  return p.string();
}

CliResult explain(const std::string& args, const std::string& global = "--quiet") {
  return run_cli(global + " explain --manifest " + shell_quote(manifest_file()) + " " + args);
}

std::string model_arg(const std::string& layout = "hf") {
  return "--model " + shell_quote((kE2e / layout).string());
}

std::string images_arg() {
  return "--images " + shell_quote(photo_table());
}

// What the library gives for one image: the pair's target from its texts encoded in one call,
// the image as the model's preprocessing makes it, clip_cams on that image alone.
struct LibraryMap {
  vlbias::ClipCams cams;
  vlbias::RgbImage overlay;
};

LibraryMap library_map(const vlbias::ClipEncoder& encoder, const fs::path& image,
                       const std::vector<std::string>& first,
                       const std::vector<std::string>& second, vlbias::CamMethod method) {
  std::vector<std::string> texts = first;
  texts.insert(texts.end(), second.begin(), second.end());
  const vlbias::Matrix e = encoder.encode_texts(texts, false);
  const vlbias::MatrixView a{e.data.data(), first.size(), e.cols};
  const vlbias::MatrixView b{e.data.data() + first.size() * e.cols, second.size(), e.cols};
  const vlbias::TraitPairTarget target =
      vlbias::make_trait_pair_target(a, b, encoder.model().config().logit_scale);
  const vlbias::RgbImage decoded = vlbias::decode_image_file(image);
  std::vector<float> pixels(encoder.pixels_per_image());
  encoder.pixels(decoded, pixels.data());
  LibraryMap m{vlbias::clip_cams(encoder.model(), pixels.data(), 1, target, method), {}};
  m.overlay = vlbias::clip_cam_overlay(vlbias::preprocess_geometry(decoded, encoder.preprocess()),
                                       m.cams.maps.data());
  return m;
}

const std::vector<std::string> kSmart = {"a photo of a smart person", "a smart person"};
const std::vector<std::string> kDumb = {"a photo of a dumb person", "a dumb person"};

TEST(CliExplain, MapsAndProbabilitiesAreTheLibrarysForEachReadableImage) {
  const fs::path out = temp_dir() / "maps";
  const CliResult r = explain(
      model_arg() + " " + images_arg() + " --pair smart/dumb --out " + shell_quote(out.string()),
      "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::NpyArray maps = vlbias::read_npy(out / "maps.npy");
  ASSERT_EQ(maps.shape(), (std::vector<std::size_t>{6, 32, 32}));
  const vlbias::Table rows = vlbias::read_table((out / "rows.csv").string());
  ASSERT_EQ(rows.rows, 8u);
  const vlbias::ClipEncoder encoder = vlbias::ClipEncoder::open(kE2e / "hf");
  std::size_t map_row = 0;
  for (std::size_t i = 0; i < rows.rows; ++i) {
    SCOPED_TRACE(kPhotos[i].path);
    EXPECT_EQ(rows.numeric("input_row")[i], static_cast<double>(i));
    if (kPhotos[i].path == "BROKEN" || kPhotos[i].path == "missing.png") {
      EXPECT_EQ(rows.column("status").text(i), "failed");
      EXPECT_NE(rows.column("error").text(i), "");
      EXPECT_TRUE(rows.column("map_row").missing(i));
      continue;
    }
    EXPECT_EQ(rows.column("status").text(i), "ok");
    EXPECT_EQ(rows.numeric("map_row", true)[i], static_cast<double>(map_row));
    const LibraryMap want =
        library_map(encoder, kReal / kPhotos[i].path, kSmart, kDumb, vlbias::CamMethod::GradCam);
    EXPECT_EQ(rows.numeric("probability", true)[i], want.cams.target[0]);
    const float* got = maps.data.data() + map_row * 32 * 32;
    EXPECT_TRUE(std::equal(want.cams.maps.begin(), want.cams.maps.end(), got));
    ++map_row;
  }
  EXPECT_NE(rows.column("error").text(6).find("missing.png"), std::string::npos);
  EXPECT_NE(r.err.find("skipped"), std::string::npos) << r.err;
  const json m = json::parse(read_file(out / "manifest.json"));
  EXPECT_EQ(m.at("pair").at("first"), json(kSmart));
  EXPECT_EQ(m.at("method"), "gradcam");
  EXPECT_EQ(m.at("counts").at("explained"), 6);
  EXPECT_EQ(m.at("model").at("weights_sha256").get<std::string>().size(), 64u);
  EXPECT_EQ(m.at("vlbias_version").get<std::string>().empty(), false);
}

TEST(CliExplain, OverlaysAreTheLibrarysForTheMostConfidentImagesOfEachGroup) {
  const fs::path out = temp_dir() / "maps";
  const CliResult r =
      explain(model_arg() + " " + images_arg() + " --pair smart/dumb --method gradcam++ " +
                  "--by g --top 2 --out " + shell_quote(out.string()),
              "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Group b has two readable images (chelsea, rocket): both, and no note; group a has four.
  EXPECT_EQ(r.err.find("fewer than --top"), std::string::npos) << r.err;
  const vlbias::Table rows = vlbias::read_table((out / "rows.csv").string());
  const std::vector<double>& p = rows.numeric("probability", true);
  std::vector<std::size_t> want;
  for (const std::string group : {"a", "b"}) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < rows.rows; ++i) {
      if (rows.column("g").text(i) == group && rows.column("status").text(i) == "ok") {
        members.push_back(i);
      }
    }
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
    want.insert(want.end(), members.begin(), members.begin() + 2);
  }
  const vlbias::ClipEncoder encoder = vlbias::ClipEncoder::open(kE2e / "hf");
  std::size_t overlays = 0;
  for (std::size_t i = 0; i < rows.rows; ++i) {
    SCOPED_TRACE(kPhotos[i].path);
    const std::string cell = rows.column("overlay").text(i);
    if (std::find(want.begin(), want.end(), i) == want.end()) {
      EXPECT_EQ(cell, "");
      continue;
    }
    const std::string stem = fs::path(kPhotos[i].path).stem().string();
    EXPECT_EQ(cell, "overlays/" + std::to_string(i) + "_" + stem + ".png");
    const LibraryMap lib = library_map(encoder, kReal / kPhotos[i].path, kSmart, kDumb,
                                       vlbias::CamMethod::GradCamPlusPlus);
    const std::vector<std::uint8_t> png = vlbias::encode_png(lib.overlay);
    EXPECT_EQ(read_file(out / cell), std::string(png.begin(), png.end()));
    ++overlays;
  }
  EXPECT_EQ(overlays, 4u);
  EXPECT_EQ(std::distance(fs::directory_iterator(out / "overlays"), fs::directory_iterator()), 4);

  // --top beyond a group's size is a note, not an error.
  const fs::path all = temp_dir() / "all";
  const CliResult more =
      explain(model_arg() + " " + images_arg() + " --pair happy/sad --by g --top 9 --out " +
                  shell_quote(all.string()),
              "");
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_NE(more.err.find("group b: 2 explained images, fewer than --top 9"), std::string::npos)
      << more.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(all / "overlays"), fs::directory_iterator()), 6);
}

TEST(CliExplain, OutputsDoNotDependOnTheThreadCount) {
  std::string maps, rows;
  std::vector<std::string> overlays;
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(threads);
    const fs::path out = temp_dir() / (std::string("t") + threads);
    const CliResult r = explain(model_arg("open_clip") + " " + images_arg() +
                                    " --pair smart/dumb --method occlusion --top 3 --out " +
                                    shell_quote(out.string()),
                                std::string("--quiet --threads ") + threads);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(out / "overlays")) {
      files.push_back(e.path().filename().string() + ":" + read_file(e.path()));
    }
    std::sort(files.begin(), files.end());
    if (maps.empty()) {
      maps = read_file(out / "maps.npy");
      rows = read_file(out / "rows.csv");
      overlays = files;
      EXPECT_EQ(overlays.size(), 3u);
    } else {
      EXPECT_TRUE(read_file(out / "maps.npy") == maps);
      EXPECT_EQ(read_file(out / "rows.csv"), rows);
      EXPECT_TRUE(files == overlays);
    }
  }
}

TEST(CliExplain, BadInputsExitWithTheUsageCodeNamingTheProblem) {
  const std::string out = " --out " + shell_quote((temp_dir() / "bad").string());
  const std::string args = images_arg() + out;
  struct Case {
    std::string args, message;
  };
  const fs::path blank = temp_dir() / "blank.csv";
  std::ofstream(blank) << "path,g\n" << (kReal / "chelsea.png").string() << ",\n";
  // An open_clip folder whose image tower is a ModifiedResNet (vision_cfg.layers a list).
  const fs::path resnet = temp_dir() / "resnet";
  fs::create_directories(resnet);
  for (const char* f : {"open_clip_model.safetensors", "vocab.json", "merges.txt"}) {
    fs::copy_file(kE2e / "open_clip" / f, resnet / f, fs::copy_options::overwrite_existing);
  }
  json config = json::parse(read_file(kE2e / "open_clip" / "open_clip_config.json"));
  config["model_cfg"]["vision_cfg"]["layers"] = {1, 1, 1, 1};
  std::ofstream(resnet / "open_clip_config.json") << config.dump();
  const Case cases[] = {
      {model_arg() + " " + args + " --pair brave/timid",
       "--pair brave/timid: " + manifest_file() + " has no trait pair of that name"},
      {"--model " + shell_quote((kSource / "tests/fixtures/encode/dinov2/gelu_p4").string()) + " " +
           args + " --pair smart/dumb",
       "is a dinov2 model; explain needs a CLIP model with a ViT image tower"},
      {"--model " + shell_quote(resnet.string()) + " " + args + " --pair smart/dumb",
       "ModifiedResNet vision towers are not supported (ViT only)"},
      {model_arg() + " " + args + " --pair smart/dumb --top 0", "--top 0: expected at least 1"},
      {model_arg() + " " + args + " --pair smart/dumb --by race",
       "has no column 'race'; its columns: path, g"},
      {model_arg() + " --images " + shell_quote(blank.string()) + out + " --pair smart/dumb --by g",
       "the --by column 'g' is empty; every image needs a group"},
      {model_arg() + " --images " + shell_quote(kReal.string()) + out + " --pair smart/dumb --by g",
       "group columns need a table of images"},
      {model_arg() + " " + args + " --pair smart/dumb --method lime", "lime"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = explain(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(temp_dir() / "bad" / "maps.npy"));
  }
}

// A faces folder written by hand for three photographs: one box over the whole astronaut, one
// over chelsea's left half, coffee searched without a face.
fs::path hand_made_faces(const std::vector<fs::path>& photos) {
  const fs::path dir = temp_dir() / "faces";
  fs::create_directories(dir);
  std::ofstream(dir / "manifest.json") << "{\"kind\": \"faces\", \"exif_transpose\": false}\n";
  std::ofstream images(dir / "images.csv");
  std::ofstream faces(dir / "faces.csv");
  images << "input_row,image,status,faces,width,height,error\n";
  faces << "input_row,image,face,x,y,w,h\n";
  for (std::size_t i = 0; i < photos.size(); ++i) {
    const vlbias::RgbImage im = vlbias::decode_image_file(photos[i]);
    images << i << "," << photos[i].string() << ",ok," << (i < 2) << "," << im.width << ","
           << im.height << ",\n";
    if (i == 0)
      faces << "0," << photos[i].string() << ",0,0,0," << im.width << "," << im.height << "\n";
    if (i == 1) {
      faces << "1," << photos[i].string() << ",0,0,0," << im.width / 2 << "," << im.height << "\n";
    }
  }
  return dir;
}

TEST(CliExplain, FacesGiveEachMapsShareInsideTheFaceBoxes) {
  const std::vector<fs::path> photos = {kReal / "astronaut.png", kReal / "chelsea.png",
                                        kReal / "coffee.png"};
  const fs::path table = temp_dir() / "three.csv";
  {
    std::ofstream f(table);
    f << "path\n";
    for (const fs::path& p : photos) f << p.string() << "\n";
  }
  const fs::path faces = hand_made_faces(photos);
  const fs::path out = temp_dir() / "maps";
  const CliResult r = explain(model_arg() + " --images " + shell_quote(table.string()) +
                              " --pair smart/dumb --faces " + shell_quote(faces.string()) +
                              " --out " + shell_quote(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table rows = vlbias::read_table((out / "rows.csv").string());
  const std::vector<double>& share = rows.numeric("cam_in_face", true);
  EXPECT_DOUBLE_EQ(share[0], 1.0);
  const vlbias::ClipEncoder encoder = vlbias::ClipEncoder::open(kE2e / "hf");
  const LibraryMap chelsea =
      library_map(encoder, photos[1], kSmart, kDumb, vlbias::CamMethod::GradCam);
  const vlbias::RgbImage im = vlbias::decode_image_file(photos[1]);
  const vlbias::ExplainFaceBox left = vlbias::face_box_in_crop(
      {0, 0, static_cast<double>(im.width / 2), static_cast<double>(im.height)}, im.width,
      im.height, encoder.preprocess());
  EXPECT_EQ(share[1], vlbias::cam_mass_in_boxes(chelsea.cams.maps.data(), 32, 32, {left}));
  EXPECT_GT(share[1], 0.0);
  EXPECT_LT(share[1], 1.0);
  EXPECT_TRUE(rows.column("cam_in_face").missing(2));  // no face: no share
  // The share in the skin pixels of the box: the skin rule on the model's input crop.
  const std::vector<double>& skin_share = rows.numeric("cam_in_skin", true);
  const std::vector<std::uint8_t> skin =
      vlbias::skin_pixel_mask(vlbias::preprocess_geometry(im, encoder.preprocess()), "chelsea");
  EXPECT_EQ(skin_share[1],
            vlbias::cam_mass_in_boxes(chelsea.cams.maps.data(), 32, 32, {left}, skin.data()));
  EXPECT_LE(skin_share[0], share[0]);
  EXPECT_LE(skin_share[1], share[1]);
  EXPECT_TRUE(rows.column("cam_in_skin").missing(2));

  // Faces of another images table are refused, naming the row.
  const fs::path other = temp_dir() / "other.csv";
  std::ofstream(other) << "path\n" << photos[2].string() << "\n" << photos[0].string() << "\n";
  const CliResult bad = explain(model_arg() + " --images " + shell_quote(other.string()) +
                                " --pair smart/dumb --faces " + shell_quote(faces.string()) +
                                " --out " + shell_quote((temp_dir() / "bad").string()));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("are not a row of --images"), std::string::npos) << bad.err;
}

// cam_mass.json: per group the mean share with its bootstrap interval, Kruskal-Wallis across
// the groups and the pair's Mann-Whitney U test, on rows.csv's cam_in_face. Each photograph gets
// a box over the left (i + 2) / 9 of it, so the shares differ; the means and H are recomputed
// here from rows.csv (H from the ranks, no ties; p = erfc(sqrt(H / 2)) for 1 degree of freedom).
TEST(CliExplain, CamMassComparesTheFaceShareAcrossGroups) {
  const std::vector<std::pair<std::string, std::string>> photos = {
      {"astronaut.png", "a"}, {"grace_hopper.jpg", "a"}, {"chelsea.png", "b"},
      {"coffee.png", "a"},    {"rocket.jpg", "b"},       {"camera.png", "b"}};
  const fs::path table = temp_dir() / "grouped.csv", faces = temp_dir() / "faces";
  fs::create_directories(faces);
  std::ofstream(faces / "manifest.json") << "{\"kind\": \"faces\", \"exif_transpose\": false}\n";
  {
    std::ofstream t(table), images(faces / "images.csv"), boxes(faces / "faces.csv");
    t << "path,g\n";
    images << "input_row,image,status,faces,width,height,error\n";
    boxes << "input_row,image,face,x,y,w,h\n";
    for (std::size_t i = 0; i < photos.size(); ++i) {
      const fs::path p = kReal / photos[i].first;
      const vlbias::RgbImage im = vlbias::decode_image_file(p);
      t << p.string() << "," << photos[i].second << "\n";
      images << i << "," << p.string() << ",ok,1," << im.width << "," << im.height << ",\n";
      boxes << i << "," << p.string() << ",0,0,0," << im.width * (i + 2) / 9 << "," << im.height
            << "\n";
    }
  }
  const fs::path out = temp_dir() / "maps";
  const CliResult r = explain(model_arg() + " --images " + shell_quote(table.string()) +
                              " --pair smart/dumb --by g --faces " + shell_quote(faces.string()) +
                              " --bootstrap 200 --seed 3 --out " + shell_quote(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table rows = vlbias::read_table((out / "rows.csv").string());
  const std::vector<double>& share = rows.numeric("cam_in_face", true);
  std::vector<std::pair<double, int>> ranked;  // (share, group 0 = a, 1 = b)
  double sum[2] = {0, 0};
  std::size_t n[2] = {0, 0};
  for (std::size_t i = 0; i < photos.size(); ++i) {
    const int g = photos[i].second == "a" ? 0 : 1;
    ranked.emplace_back(share[i], g);
    sum[g] += share[i];
    ++n[g];
  }
  const json all = json::parse(read_file(out / "cam_mass.json"));
  EXPECT_EQ(all["bootstrap"], 200);
  ASSERT_TRUE(all["cam_in_skin"]["test"].is_object());
  const json& mass = all["cam_in_face"];
  ASSERT_EQ(mass["groups"].size(), 2u);
  for (int g = 0; g < 2; ++g) {
    const json& group = mass["groups"][g];
    SCOPED_TRACE(group.dump());
    EXPECT_EQ(group["key"]["g"], g == 0 ? "a" : "b");
    EXPECT_EQ(group["n"], n[g]);
    EXPECT_NEAR(group["mean"].get<double>(), sum[g] / n[g], 1e-12);
    EXPECT_EQ(group["mean_ci"]["resamples"], 200);
    EXPECT_LE(group["mean_ci"]["lower"].get<double>(), group["mean"].get<double>());
    EXPECT_GE(group["mean_ci"]["upper"].get<double>(), group["mean"].get<double>());
  }
  std::sort(ranked.begin(), ranked.end());
  double rank_sum[2] = {0, 0};
  for (std::size_t k = 0; k < ranked.size(); ++k) {
    if (k > 0) {
      ASSERT_NE(ranked[k].first, ranked[k - 1].first) << "a tie: H needs its correction";
    }
    rank_sum[ranked[k].second] += static_cast<double>(k + 1);
  }
  const double big_n = static_cast<double>(ranked.size());
  const double h = 12.0 / (big_n * (big_n + 1)) *
                       (rank_sum[0] * rank_sum[0] / n[0] + rank_sum[1] * rank_sum[1] / n[1]) -
                   3 * (big_n + 1);
  const json& kruskal = mass["test"]["comparisons"][0];
  EXPECT_EQ(kruskal["test"], "kruskal");
  EXPECT_NEAR(kruskal["statistic"].get<double>(), h, 1e-12);
  EXPECT_NEAR(kruskal["p_value"].get<double>(), std::erfc(std::sqrt(h / 2)), 1e-12);
  ASSERT_EQ(mass["pairwise"]["comparisons"].size(), 1u);
  const json& pair = mass["pairwise"]["comparisons"][0];
  EXPECT_EQ(pair["test"], "mannwhitney");
  EXPECT_EQ(pair["p_holm"], pair["p_value"]);  // one pair: Holm leaves it as it is
  const json manifest = json::parse(read_file(out / "manifest.json"));
  EXPECT_EQ(manifest["files"]["cam_mass"], "cam_mass.json");
  EXPECT_EQ(manifest["options"]["bootstrap"], 200);
}

}  // namespace in_explain_test
}  // namespace
