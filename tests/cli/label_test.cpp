// `vlbias label --labeller clip` end to end. Parity: on the tiny random CLIP models of the encode
// end-to-end fixtures (tests/fixtures/encode/e2e, HF and open_clip layouts), LABELS.csv's
// probabilities, margins and labels (abstentions included) equal the float64 PyTorch computation
// of tools/make_label_clip_fixtures.py within 1e-5, with its provenance on every row; images that
// fail to decode are named and skipped. A FACES_DIR made by `vlbias faces` on real photographs is
// labelled face by face, each chip as it is when given as an image. Bad inputs exit 2 naming the
// problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/core/sha256.h"
#include "vlbias/encode/image/image.h"
#include "vlbias/encode/models/fairface.h"
#include "vlbias/io/table/table.h"

namespace {
namespace in_label_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::Table;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kSource = fs::path(VLBIAS_SOURCE_DIR);
const fs::path kE2e = kSource / "tests/fixtures/encode/e2e";
const fs::path kFixtures = kSource / "tests/fixtures/labels";
const fs::path kReal = kSource / "tests/data/images/real";

std::string q(const fs::path& p) {
  return shell_quote(p.string());
}

CliResult label(const std::string& args) {
  return run_cli("--quiet label " + args);
}

json expected_json() {
  return json::parse(read_file(kFixtures / "expected.json"));
}

// A number cell of `t` (NaN when empty).
double cell(const Table& t, const std::string& column, std::size_t row) {
  const vlbias::Column& c = t.column(column);
  return c.missing(row) ? std::nan("") : std::stod(c.text(row));
}

void expect_fixture_parity(const std::string& model) {
  SCOPED_TRACE(model);
  const fs::path out = temp_dir() / ("labels_" + model + ".csv");
  const CliResult r =
      run_cli("label --images " + q(kE2e / "images.csv") + " --model " + q(kE2e / model) +
              " --prompts " + q(kFixtures / "prompts.json") + " --attributes tone,mood --margin " +
              expected_json()["margin"].dump() + " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The truncated JPEG and the missing file: named, skipped; the four good images labelled.
  EXPECT_NE(r.err.find("broken.jpg"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.png"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 of 6 images labelled (2 unreadable, skipped), 8 rows"), std::string::npos)
      << r.err;
  const Table got = vlbias::read_table(out.string());
  const Table want = vlbias::read_table((kFixtures / ("expected_" + model + ".csv")).string());
  ASSERT_EQ(got.rows, want.rows);
  std::vector<std::string> header;
  for (const vlbias::Column& c : got.columns) header.push_back(c.name);
  EXPECT_EQ(header,
            (std::vector<std::string>{"image", "face", "attribute", "label", "margin", "p_warm",
                                      "p_cold", "p_grey", "p_happy", "p_sad", "labeller", "model",
                                      "weights_sha256", "prompt_set", "options"}));
  const std::string weights = vlbias::sha256_file(
      (kE2e / model / (model == "hf" ? "model.safetensors" : "open_clip_model.safetensors"))
          .string());
  const std::string prompt_set = (kFixtures / "prompts.json").string() + " sha256:" +
                                 vlbias::sha256_file((kFixtures / "prompts.json").string());
  const double scale = expected_json()["logit_scale"][model].get<double>();
  double worst = 0.0;
  std::size_t unclear = 0;
  for (std::size_t i = 0; i < got.rows; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got.column("image").text(i), want.column("image").text(i));
    EXPECT_TRUE(got.column("face").missing(i));
    EXPECT_EQ(got.column("attribute").text(i), want.column("attribute").text(i));
    EXPECT_EQ(got.column("label").text(i), want.column("label").text(i));
    unclear += got.column("label").text(i) == "unclear";
    for (const std::string c : {"margin", "p_warm", "p_cold", "p_grey", "p_happy", "p_sad"}) {
      const double g = cell(got, c, i), w = cell(want, c, i);
      EXPECT_EQ(std::isnan(g), std::isnan(w)) << c;
      if (std::isnan(w)) continue;
      worst = std::max(worst, std::abs(g - w));
      EXPECT_NEAR(g, w, 1e-5) << c;
    }
    EXPECT_EQ(got.column("labeller").text(i), "clip");
    EXPECT_EQ(got.column("model").text(i), (kE2e / model).string());
    EXPECT_EQ(got.column("weights_sha256").text(i), weights);
    EXPECT_EQ(got.column("prompt_set").text(i), prompt_set);
    const std::string options = got.column("options").text(i);
    ASSERT_EQ(options.rfind("logit_scale=", 0), 0u) << options;
    EXPECT_NEAR(std::stod(options.substr(12)), scale, 1e-5 * scale) << options;
    EXPECT_NE(options.find(";margin=" + expected_json()["margin"].dump()), std::string::npos);
  }
  EXPECT_GT(unclear, 0u);  // the margin abstains on some rows, not all
  EXPECT_LT(unclear, got.rows);
  std::cout << "[ parity ] " << model << ": largest |ours - PyTorch float64| = " << worst << "\n";
}

TEST(CliLabel, ClipProbabilitiesEqualTheFloat64PyTorchReferenceWithProvenance) {
  expect_fixture_parity("hf");
  expect_fixture_parity("open_clip");
}

// `vlbias faces` on two photographs with faces, then their FACES_DIR labelled.
TEST(CliLabel, AFacesDirIsLabelledFaceByFaceAsItsChipsAreAsImages) {
  const fs::path photos = temp_dir() / "photos.csv";
  std::ofstream(photos) << "path\n"
                        << (kReal / "grace_hopper.jpg").string() << "\n"
                        << (kReal / "astronaut.png").string() << "\n";
  const fs::path faces = temp_dir() / "faces";
  const CliResult f = run_cli("--quiet faces --images " + q(photos) + " --out " + q(faces));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const Table face_rows = vlbias::read_table((faces / "faces.csv").string());
  ASSERT_GE(face_rows.rows, 2u);
  const std::string common = " --model " + q(kE2e / "hf") + " --attributes gender,age";
  const fs::path out = temp_dir() / "faces_labels.csv";
  const CliResult r = label("--images " + q(faces) + " --out " + q(out) + common);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The same chips as an images table.
  const fs::path chips = temp_dir() / "chips.csv";
  {
    std::ofstream c(chips);
    c << "path\n";
    for (std::size_t i = 0; i < face_rows.rows; ++i) {
      c << (faces / face_rows.column("chip").text(i)).string() << "\n";
    }
  }
  const fs::path out_chips = temp_dir() / "chip_labels.csv";
  const CliResult rc = label("--images " + q(chips) + " --out " + q(out_chips) + common);
  ASSERT_EQ(rc.exit_code, 0) << rc.err;
  const Table got = vlbias::read_table(out.string());
  const Table as_images = vlbias::read_table(out_chips.string());
  ASSERT_EQ(got.rows, 2 * face_rows.rows);
  ASSERT_EQ(as_images.rows, got.rows);
  for (std::size_t i = 0; i < got.rows; ++i) {
    SCOPED_TRACE(i);
    const std::size_t face = i / 2;
    EXPECT_EQ(got.column("image").text(i), face_rows.column("image").text(face));
    EXPECT_EQ(got.column("face").text(i), face_rows.column("face").text(face));
    EXPECT_EQ(got.column("attribute").text(i), i % 2 == 0 ? "gender" : "age");
    EXPECT_TRUE(as_images.column("face").missing(i));
    EXPECT_EQ(got.column("label").text(i), as_images.column("label").text(i));
    for (const std::string c : {"p_Male", "p_Female", "p_0-2", "p_70+"}) {
      const double g = cell(got, c, i), w = cell(as_images, c, i);
      EXPECT_EQ(std::isnan(g), std::isnan(w)) << c;
      if (!std::isnan(w)) {
        EXPECT_NEAR(g, w, 1e-6) << c;
      }
    }
    EXPECT_EQ(got.column("prompt_set").text(i), "fairface");
    EXPECT_EQ(got.column("options").text(i).substr(got.column("options").text(i).find(";")),
              ";margin=0");
  }
}

// Exit code 2 and the message's key phrase.
void expect_usage(const std::string& args, const std::string& phrase) {
  SCOPED_TRACE(args);
  const CliResult r = label(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(phrase), std::string::npos) << r.err;
}

TEST(CliLabel, BadInputsExitTwoNamingTheFileOrOption) {
  const std::string images = " --images " + q(kE2e / "images.csv");
  const std::string model = " --model " + q(kE2e / "hf");
  const std::string out = " --out " + q(temp_dir() / "labels.csv");
  const std::string fixture = " --prompts " + q(kFixtures / "prompts.json");
  // An attribute the set has no prompts for, an unknown one, colliding classes.
  expect_usage(images + model + out + fixture + " --attributes gender",
               "--attributes gender: the prompt set " + (kFixtures / "prompts.json").string());
  expect_usage(images + model + out + " --attributes gender,skin",
               "--attributes skin: the prompt set fairface has no prompts for it");
  expect_usage(images + model + out + " --attributes race,race4",
               "the class \"White\" of race4 is also a class of race");
  expect_usage(images + model + out + " --prompts nonesuch --attributes gender",
               "--prompts nonesuch: is neither a shipped prompt set");
  // A model folder of another architecture, and no model at all.
  expect_usage(images + out + " --attributes gender --model " +
                   q(kSource / "tests/fixtures/encode/dinov2/gelu_p4"),
               "is a dinov2 model; the clip labeller needs a CLIP model");
  expect_usage(images + out + " --attributes gender --model " + q(temp_dir()), temp_dir().string());
  // An open_clip folder whose image tower is a ModifiedResNet (vision_cfg.layers a list).
  const fs::path resnet = temp_dir() / "resnet";
  fs::create_directories(resnet);
  for (const char* f : {"open_clip_model.safetensors", "vocab.json", "merges.txt"}) {
    fs::copy_file(kE2e / "open_clip" / f, resnet / f, fs::copy_options::overwrite_existing);
  }
  json config = json::parse(read_file(kE2e / "open_clip" / "open_clip_config.json"));
  config["model_cfg"]["vision_cfg"]["layers"] = {1, 1, 1, 1};
  std::ofstream(resnet / "open_clip_config.json") << config.dump();
  expect_usage(images + out + " --attributes gender --model " + q(resnet),
               "ModifiedResNet vision towers are not supported (ViT only)");
  // An empty table, a margin outside [0, 1], --out a folder.
  const fs::path empty = temp_dir() / "empty.csv";
  std::ofstream(empty) << "path\n";
  expect_usage(" --images " + q(empty) + model + out + " --attributes gender", empty.string());
  expect_usage(images + model + out + " --attributes gender --margin 1.5", "--margin 1.5");
  expect_usage(images + model + " --attributes gender --out " + q(temp_dir()), "is a folder");
  // A prompt file with a template missing its slot.
  const fs::path bad = temp_dir() / "bad.json";
  std::ofstream(bad) << R"({"attributes": [{"name": "x", "templates": ["no slot"],)"
                     << R"( "classes": [{"name": "a"}, {"name": "b"}]}]})";
  expect_usage(images + model + out + " --attributes x --prompts " + q(bad), "exactly once");
  EXPECT_FALSE(fs::exists(temp_dir() / "labels.csv"));
}

TEST(CliLabel, AFacesDirWithoutChipsIsRefusedNamingItsFacesTable) {
  const fs::path photos = temp_dir() / "photos.csv";
  std::ofstream(photos) << "path\n" << (kReal / "grace_hopper.jpg").string() << "\n";
  const fs::path faces = temp_dir() / "faces";
  const CliResult f =
      run_cli("--quiet faces --no-chips --images " + q(photos) + " --out " + q(faces));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  expect_usage(" --images " + q(faces) + " --model " + q(kE2e / "hf") +
                   " --attributes gender --out " + q(temp_dir() / "l.csv"),
               (faces / "faces.csv").string() + ", line 2: the face has no chip");
}

// --labeller fairface: one row per head and image, its probabilities the library classifier's
// (include/vlbias/encode/models/fairface.h, itself checked against torchvision) on the same decoded
// images, the label their argmax, the provenance of the .pt file; the 4-race model's race head is
// the attribute race4. The fixture models are width-reduced ResNets of FairFace's layout
// (tools/make_fairface_fixtures.py).
const fs::path kFairFace = kSource / "tests/fixtures/encode/fairface";

TEST(CliLabel, FairFaceProbabilitiesAreTheClassifiersWithProvenance) {
  const std::vector<fs::path> photos = {kReal / "grace_hopper.jpg", kReal / "astronaut.png"};
  const fs::path table = temp_dir() / "photos.csv";
  std::ofstream(table) << "path\n" << photos[0].string() << "\n" << photos[1].string() << "\n";
  const fs::path model = kFairFace / "resnet34_w8.pt";
  const fs::path out = temp_dir() / "fairface.csv";
  const CliResult r = label("--labeller fairface --model " + q(model) + " --images " + q(table) +
                            " --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::FairFaceClassifier classifier(model);
  const vlbias::FairFaceResult want = classifier.classify(
      {vlbias::decode_image_file(photos[0]), vlbias::decode_image_file(photos[1])});
  const Table got = vlbias::read_table(out.string());
  const auto& heads = classifier.heads();
  ASSERT_EQ(got.rows, photos.size() * heads.size());
  for (std::size_t i = 0; i < got.rows; ++i) {
    const std::size_t image = i / heads.size(), h = i % heads.size();
    SCOPED_TRACE(got.column("image").text(i) + " " + heads[h].attribute);
    EXPECT_EQ(got.column("image").text(i), photos[image].string());
    EXPECT_TRUE(got.column("face").missing(i));
    EXPECT_EQ(got.column("attribute").text(i), heads[h].attribute);
    std::size_t best = 0;
    for (std::size_t c = 0; c < heads[h].classes.size(); ++c) {
      const double p = want.probabilities[h].at(image, c);
      EXPECT_NEAR(cell(got, "p_" + heads[h].classes[c], i), p, 1e-6) << heads[h].classes[c];
      if (p > want.probabilities[h].at(image, best)) best = c;
    }
    EXPECT_EQ(got.column("label").text(i), heads[h].classes[best]);
    EXPECT_EQ(got.column("labeller").text(i), "fairface");
    EXPECT_EQ(got.column("weights_sha256").text(i), vlbias::sha256_file(model.string()));
    EXPECT_EQ(got.column("options").text(i), "margin=0;variant=race7");
  }
  // The 4-race model, its race head alone.
  const fs::path out4 = temp_dir() / "fairface4.csv";
  const CliResult r4 =
      label("--labeller fairface --variant race4 --attributes race4 --model " +
            q(kFairFace / "race4_resnet18_w16.pt") + " --images " + q(table) + " --out " + q(out4));
  ASSERT_EQ(r4.exit_code, 0) << r4.err;
  const Table got4 = vlbias::read_table(out4.string());
  ASSERT_EQ(got4.rows, 2u);
  EXPECT_EQ(got4.column("attribute").text(0), "race4");
  std::vector<std::string> header;
  for (const vlbias::Column& c : got4.columns) header.push_back(c.name);
  EXPECT_EQ(std::vector<std::string>(header.begin() + 5, header.begin() + 9),
            (std::vector<std::string>{"p_White", "p_Black", "p_Asian", "p_Indian"}));
  // Options of the other labeller, and heads the model lacks, are usage errors.
  const std::string ff = "--labeller fairface --model " + q(model) + " --images " + q(table) +
                         " --out " + q(temp_dir() / "x.csv");
  expect_usage(ff + " --attributes hair", "not a head of the FairFace race7 model");
  expect_usage(ff + " --prompts heim", "--prompts is for --labeller clip");
  expect_usage("--model " + q(kE2e / "hf") + " --attributes gender --variant race4 --images " +
                   q(table) + " --out " + q(temp_dir() / "y.csv"),
               "--variant and --classes are for --labeller fairface");
  expect_usage("--labeller fairface --model " + q(kE2e / "hf") + " --images " + q(table) +
                   " --out " + q(temp_dir() / "z.csv"),
               "");
}

// README's chain: faces -> label (CLIP) and label (FairFace) on the same chips -> the two tables
// stacked -> metric agreement with one unit per face and attribute and one rater per labeller.
TEST(CliLabel, ClipAndFairFaceLabelsOfOneFacesDirGoIntoMetricAgreement) {
  const fs::path photos = temp_dir() / "photos.csv";
  std::ofstream(photos) << "path\n"
                        << (kReal / "grace_hopper.jpg").string() << "\n"
                        << (kReal / "astronaut.png").string() << "\n";
  const fs::path faces = temp_dir() / "faces";
  ASSERT_EQ(run_cli("--quiet faces --images " + q(photos) + " --out " + q(faces)).exit_code, 0);
  const fs::path clip = temp_dir() / "clip.csv", fairface = temp_dir() / "fairface.csv";
  ASSERT_EQ(label("--images " + q(faces) + " --model " + q(kE2e / "hf") +
                  " --attributes gender --out " + q(clip))
                .exit_code,
            0);
  ASSERT_EQ(label("--labeller fairface --attributes gender --images " + q(faces) + " --model " +
                  q(kFairFace / "resnet34_w8.pt") + " --out " + q(fairface))
                .exit_code,
            0);
  const std::string a = read_file(clip), b = read_file(fairface);
  ASSERT_EQ(a.substr(0, a.find('\n')), b.substr(0, b.find('\n')));  // one header
  const fs::path both = temp_dir() / "both.csv";
  std::ofstream(both) << a << b.substr(b.find('\n') + 1);
  const fs::path agreement = temp_dir() / "agreement.json";
  const CliResult r = run_cli("--quiet metric agreement --table " + q(both) +
                              " --rating label --unit image,face,attribute --rater labeller"
                              " --bootstrap 50 --out " +
                              q(agreement));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table faces_table = vlbias::read_table((faces / "faces.csv").string());
  const json j = json::parse(read_file(agreement));
  EXPECT_NE(j.dump().find("\"units\":" + std::to_string(faces_table.rows)), std::string::npos)
      << j.dump().substr(0, 600);
}

// --labeller vlm: the answers of a closed question, mapped by `score choice`, as LABELS.csv: the
// label `score choice` decided (never guessed), no probabilities without top log-probabilities,
// the model and prompt of the answers as provenance; its header equals the CLIP labeller's for
// the same attribute and classes, so the tables stack for `metric agreement`.
TEST(CliLabel, VlmAnswersMappedByScoreChoiceBecomeLabels) {
  const fs::path answers = temp_dir() / "answers.csv";
  std::ofstream(answers) << "image,face,text,model,prompt\n"
                         << "a.png,0,A man.,llava,gender_q\n"
                         << "a.png,1,woman,llava,gender_q\n"
                         << "b.png,0,I can't tell.,llava,gender_q\n"
                         << "b.png,1,not a man,llava,gender_q\n";
  const fs::path run = temp_dir() / "choice";
  const CliResult c =
      run_cli("--quiet score choice " + q(answers) +
              " --choices Male,Female --synonyms Male=man,Female=woman --out " + q(run));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const fs::path out = temp_dir() / "vlm.csv";
  const CliResult r = label("--labeller vlm --answers " + q(run) +
                            " --attributes gender --face-column face --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Table got = vlbias::read_table(out.string());
  ASSERT_EQ(got.rows, 4u);
  const std::vector<std::string> want = {"Male", "Female", "refused", "unparseable"};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got.column("label").text(i), want[i]);
    EXPECT_EQ(got.column("face").text(i), i % 2 == 0 ? "0" : "1");
    EXPECT_EQ(got.column("attribute").text(i), "gender");
    EXPECT_TRUE(got.column("p_Male").missing(i));
    EXPECT_TRUE(got.column("margin").missing(i));
    EXPECT_EQ(got.column("labeller").text(i), "vlm");
    EXPECT_EQ(got.column("model").text(i), "llava");
    EXPECT_EQ(got.column("prompt_set").text(i), "gender_q");
  }
  const std::string text = read_file(out);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "image,face,attribute,label,margin,p_Male,p_Female,labeller,model,weights_sha256,"
            "prompt_set,options");
  // Its inputs are the answers, and one attribute.
  expect_usage("--labeller vlm --answers " + q(run) + " --attributes gender,age --out " +
                   q(temp_dir() / "x.csv"),
               "one --attributes");
  expect_usage("--labeller vlm --attributes gender --out " + q(temp_dir() / "x.csv"), "--answers");
  expect_usage("--answers " + q(run) + " --attributes gender --model " + q(kE2e / "hf") +
                   " --images " + q(answers) + " --out " + q(temp_dir() / "x.csv"),
               "--answers");
}

}  // namespace in_label_test
}  // namespace
