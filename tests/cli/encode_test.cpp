// `vlbias encode` end to end: image files and texts through the tiny random CLIP
// models of tools/make_encode_fixtures.py, against the embeddings its independent
// PyTorch + Pillow pipeline wrote; manifests, failures, resume.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/io/tensor/npy.h"

namespace {
namespace in_encode_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::Matrix;
using vlbias::read_npy_matrix;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::run_killed_at_checkpoint;
using vlbias::cli_util::temp_dir;

const std::string kDir = "tests/fixtures/encode/e2e/";
const fs::path kAbs = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/e2e";

// Max abs diff <= 1e-5 and rtol 1e-4 (issue 4 parity bar), row by row.
void expect_rows_match(const Matrix& got, const Matrix& want, const std::string& what) {
  ASSERT_EQ(got.rows, want.rows) << what;
  ASSERT_EQ(got.cols, want.cols) << what;
  double worst = 0.0;
  for (std::size_t i = 0; i < got.rows; ++i) {
    for (std::size_t j = 0; j < got.cols; ++j) {
      const double d = std::fabs(static_cast<double>(got.at(i, j)) - want.at(i, j));
      worst = std::max(worst, d);
      ASSERT_LE(d, 1e-5 + 1e-4 * std::fabs(want.at(i, j))) << what << " row " << i << " col " << j;
    }
  }
  ::testing::Test::RecordProperty(what + "_max_abs_diff", std::to_string(worst));
}

json manifest_of(const fs::path& out) {
  return json::parse(read_file(out.parent_path() / (out.stem().string() + ".manifest.json")));
}

TEST(CliEncode, HuggingFaceImagesFromTableMatchPytorchAndRecordTheBrokenOne) {
  const fs::path out = temp_dir() / "images.npy";
  const CliResult r = run_cli("encode --model " + kDir + "hf --images " + kDir +
                              "images.csv --out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("broken.jpg"), std::string::npos) << r.err;  // the warning
  expect_rows_match(read_npy_matrix(out), read_npy_matrix(kAbs / "hf_images.npy"), "hf images");
  const json m = manifest_of(out);
  EXPECT_TRUE(m["complete"].get<bool>());
  EXPECT_EQ(m["kind"], "images");
  EXPECT_EQ(m["model"]["layout"], "huggingface");
  EXPECT_EQ(m["model"]["weights_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(m["preprocessing"]["center_crop"]["rounding"], "floor");
  ASSERT_EQ(m["failed"].size(), 2u);  // the truncated JPEG and the missing file
  const std::string rows = read_file(out.parent_path() / "images.rows.csv");
  EXPECT_EQ(rows.substr(0, rows.find('\n')), "row,input_row,path");
  EXPECT_EQ(m["output"]["rows"].get<std::size_t>() + 2, m["input"]["items"].get<std::size_t>());
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
}

TEST(CliEncode, ImageFolderIsEncodedInSortedPathOrder) {
  const fs::path out = temp_dir() / "folder.npy";
  const CliResult r = run_cli("encode --model " + kDir + "hf --images " + kDir + "images --out '" +
                              out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_rows_match(read_npy_matrix(out), read_npy_matrix(kAbs / "hf_images_folder.npy"),
                    "hf folder");
  const std::string rows = read_file(out.parent_path() / "folder.rows.csv");
  const json want = json::parse(read_file(kAbs / "expected.json"));
  std::size_t at = rows.find('\n') + 1;
  for (const json& name : want["folder_order"]) {
    const std::size_t end = rows.find('\n', at);
    EXPECT_NE(rows.substr(at, end - at).find(name.get<std::string>()), std::string::npos) << rows;
    at = end + 1;
  }
}

TEST(CliEncode, TextsMatchPytorchForBothLayouts) {
  for (const std::string layout : {"hf", "open_clip"}) {
    const fs::path out = temp_dir() / (layout + "_texts.npy");
    const CliResult r = run_cli("encode --model " + kDir + layout + " --texts " + kDir +
                                "texts.csv --out '" + out.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_rows_match(read_npy_matrix(out), read_npy_matrix(kAbs / (layout + "_texts.npy")),
                      layout + " texts");
    const json m = manifest_of(out);
    EXPECT_EQ(m["tokenizer"]["cleaning"], layout == "hf" ? "hf" : "open_clip");
    EXPECT_TRUE(m["failed"].empty());
  }
}

TEST(CliEncode, OpenClipImagesUseTorchvisionRounding) {
  const fs::path out = temp_dir() / "oc.safetensors";
  const CliResult r = run_cli("encode --model " + kDir + "open_clip --images " + kDir +
                              "images --out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = manifest_of(out);
  EXPECT_EQ(m["preprocessing"]["center_crop"]["rounding"], "round");
  EXPECT_EQ(m["output"]["format"], "safetensors");
  // Same numbers through metric clipscore's reader: .safetensors with tensor "embeddings".
  const fs::path npy = temp_dir() / "oc.npy";
  ASSERT_EQ(run_cli("encode --model " + kDir + "open_clip --images " + kDir + "images --out '" +
                    npy.string() + "'")
                .exit_code,
            0);
  expect_rows_match(read_npy_matrix(npy), read_npy_matrix(kAbs / "open_clip_images_folder.npy"),
                    "open_clip folder");
}

TEST(CliEncode, RawSkipsNormalisation) {
  const fs::path raw = temp_dir() / "raw.npy";
  const fs::path unit = temp_dir() / "unit.npy";
  ASSERT_EQ(run_cli("encode --raw --model " + kDir + "hf --texts " + kDir + "texts.csv --out '" +
                    raw.string() + "'")
                .exit_code,
            0);
  ASSERT_EQ(run_cli("encode --model " + kDir + "hf --texts " + kDir + "texts.csv --out '" +
                    unit.string() + "'")
                .exit_code,
            0);
  const Matrix a = read_npy_matrix(raw), b = read_npy_matrix(unit);
  ASSERT_EQ(a.rows, b.rows);
  double max_norm_gap = 0.0;
  for (std::size_t i = 0; i < a.rows; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < a.cols; ++j) s += static_cast<double>(a.at(i, j)) * a.at(i, j);
    const double norm = std::sqrt(s);
    max_norm_gap = std::max(max_norm_gap, std::fabs(norm - 1.0));
    for (std::size_t j = 0; j < a.cols; ++j) EXPECT_NEAR(a.at(i, j) / norm, b.at(i, j), 1e-6);
  }
  EXPECT_GT(max_norm_gap, 1e-3);  // the raw projections are not unit vectors
}

TEST(CliEncode, FailOnErrorStopsWithoutAnOutput) {
  const fs::path out = temp_dir() / "strict.npy";
  const CliResult r = run_cli("encode --fail-on-error --model " + kDir + "hf --images " + kDir +
                              "images.csv --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("broken.jpg"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(temp_dir() / "strict.manifest.json"));
}

TEST(CliEncode, BadInvocationsAreClearErrors) {
  const fs::path out = temp_dir() / "x.npy";
  CliResult r = run_cli("encode --model " + kDir + "hf --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--images or --texts"), std::string::npos) << r.err;
  r = run_cli("encode --model " + kDir + "hf --texts " + kDir + "texts.csv --column nope --out '" +
              out.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  r = run_cli("encode --model " + kDir + "images --texts " + kDir + "texts.csv --out '" +
              out.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli("encode --model " + kDir + "hf --texts " + kDir + "texts.csv --out '" +
              (temp_dir() / "x.txt").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(".npy or .safetensors"), std::string::npos) << r.err;
  r = run_cli("encode --model " + kDir + "hf --texts " + kDir + "texts.csv --crop ceil --out '" +
              out.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
}

// Writes a table of `copies` x the good images, so a run takes long enough to kill.
fs::path many_images(std::size_t copies) {
  const fs::path table = temp_dir() / "many.csv";
  std::ofstream f(table);
  f << "path\n";
  const json want = json::parse(read_file(kAbs / "expected.json"));
  for (std::size_t c = 0; c < copies; ++c) {
    for (const json& name : want["folder_order"]) {
      f << (kAbs / "images" / name.get<std::string>()).string() << "\n";
    }
  }
  return table;
}

TEST(CliEncode, ResumeAfterAKillGivesTheUninterruptedResult) {
  const fs::path table = many_images(40);
  const fs::path full = temp_dir() / "full.npy";
  const std::string common =
      "encode --model " + kDir + "hf --images '" + table.string() + "' --chunk 16 --batch 8 --out ";
  ASSERT_EQ(run_cli(common + "'" + full.string() + "'").exit_code, 0);

  // Kill -9 a run once its first checkpoint exists (or let it finish if it is faster).
  const fs::path out = temp_dir() / "killed.npy";
  const fs::path partial = out.string() + ".partial";
  const bool interrupted = run_killed_at_checkpoint("--quiet " + common + "'" + out.string() + "'",
                                                    partial / "chunk_000001.json", out);
  RecordProperty("interrupted", interrupted ? "yes" : "no");
  if (interrupted) {
    // Without --resume the checkpoint is refused, naming the flag.
    const CliResult refused = run_cli(common + "'" + out.string() + "'");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("--resume"), std::string::npos) << refused.err;
    const CliResult resumed = run_cli(common + "'" + out.string() + "' --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_GT(manifest_of(out)["resumed_items"].get<std::size_t>(), 0u);
  }
  const Matrix a = read_npy_matrix(full), b = read_npy_matrix(out);
  ASSERT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.data, b.data);  // bit-identical to the uninterrupted run
  EXPECT_FALSE(fs::exists(partial));
}

TEST(CliEncode, ResumeRefusesACheckpointOfOtherOptions) {
  const fs::path out = temp_dir() / "other.npy";
  const fs::path partial = out.string() + ".partial";
  fs::create_directories(partial);
  std::ofstream(partial / "job.json") << R"({"kind": "texts", "normalize": false})";
  const CliResult r = run_cli("encode --resume --model " + kDir + "hf --texts " + kDir +
                              "texts.csv --out '" + out.string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Cannot resume"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A folder of images p0.jpg .. p4.png (copies of the fixtures; p3.jpg is the truncated one).
fs::path image_folder() {
  const fs::path dir = temp_dir() / "img";
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, fs::path>> files = {
      {"p0.jpg", kAbs / "images/a_photo.jpg"},
      {"p1.png", kAbs / "images/b_rgba.png"},
      {"p2.png", kAbs / "images/c_grey.png"},
      {"p3.jpg", kAbs / "broken.jpg"},
      {"p4.png", kAbs / "images/d_palette.png"}};
  for (const auto& [name, from] : files) {
    fs::copy_file(from, dir / name, fs::copy_options::overwrite_existing);
  }
  return dir;
}

// issue 19: a resume took the checkpointed embedding of an image that changed after the run
// stopped. The run stops at the broken p3.jpg (--fail-on-error) with chunk 0 (p0, p1) done;
// p0 is replaced, p3 repaired; the resume encodes chunk 0 again, names p0, and gives exactly
// what a clean run on the folder as it is now gives.
TEST(CliEncode, ResumeEncodesAgainAnImageChangedSinceItsCheckpoint) {
  const fs::path dir = image_folder();
  const fs::path out = temp_dir() / "resumed.npy";
  const std::string common =
      "encode --model " + kDir + "hf --images '" + dir.string() + "' --chunk 2 --batch 1 --out ";
  const CliResult stopped = run_cli(common + "'" + out.string() + "' --fail-on-error");
  ASSERT_EQ(stopped.exit_code, 2) << stopped.err;
  ASSERT_TRUE(fs::exists(out.string() + ".partial/chunk_000000.json"));
  fs::copy_file(kAbs / "images/d_palette.png", dir / "p0.jpg",
                fs::copy_options::overwrite_existing);
  fs::copy_file(kAbs / "images/a_photo.jpg", dir / "p3.jpg", fs::copy_options::overwrite_existing);

  const CliResult resumed = run_cli(common + "'" + out.string() + "' --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("changed since"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("row 0 (p0.jpg)"), std::string::npos) << resumed.err;
  EXPECT_EQ(resumed.err.find("p1.png"), std::string::npos) << resumed.err;  // unchanged
  const json m = manifest_of(out);
  ASSERT_EQ(m["changed_since_checkpoint"].size(), 1u);
  EXPECT_EQ(m["changed_since_checkpoint"][0]["item"], "p0.jpg");

  const fs::path clean = temp_dir() / "clean.npy";
  ASSERT_EQ(run_cli(common + "'" + clean.string() + "'").exit_code, 0);
  const Matrix a = read_npy_matrix(clean), b = read_npy_matrix(out);
  ASSERT_EQ(a.rows, 5u);
  ASSERT_EQ(b.rows, a.rows);
  EXPECT_EQ(a.data, b.data);  // bit-identical to the clean run on the changed folder
}

// issue 19: --out naming a directory failed only after every image was encoded, leaving
// .partial/ behind; it is a usage error before any work now, as is a manifest path taken.
TEST(CliEncode, OutNamingADirectoryIsRefusedBeforeAnyWork) {
  const fs::path out = temp_dir() / "taken.npy";
  fs::create_directories(out);
  CliResult r = run_cli("encode --model " + kDir + "hf --images " + kDir + "images --out '" +
                        out.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // no image was read

  const fs::path other = temp_dir() / "other.npy";
  fs::create_directories(temp_dir() / "other.manifest.json");
  r = run_cli("encode --model " + kDir + "hf --texts " + kDir + "texts.csv --out '" +
              other.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("other.manifest.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(other.string() + ".partial"));
}

// Pillow's rule with --max-image-pixels N: more than 2 N pixels is refused (recorded, naming
// the size and the limit), more than N is decoded with a warning; N outside 1..2^30 is a usage
// error. The fixture images have 560 (b_rgba), 1,485 (a_photo), 1,550 and 1,600 pixels.
TEST(CliEncode, MaxImagePixelsRefusesLargerImagesAsPillowDoes) {
  const fs::path out = temp_dir() / "limited.npy";
  CliResult r = run_cli("encode --model " + kDir + "hf --images " + kDir + "images --out '" +
                        out.string() + "' --max-image-pixels 750");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = manifest_of(out);
  EXPECT_EQ(m["max_image_pixels"]["value"], 750);
  ASSERT_EQ(m["failed"].size(), 2u);  // c_grey.png (40 x 40) and d_palette.png (50 x 31)
  for (const json& f : m["failed"]) {
    const std::string error = f["error"];
    EXPECT_NE(error.find("more than the 1500 pixels allowed"), std::string::npos) << error;
    EXPECT_NE(error.find("--max-image-pixels"), std::string::npos) << error;
  }
  EXPECT_NE(r.err.find("a_photo.jpg has 45 x 33 pixels, more than --max-image-pixels 750"),
            std::string::npos)
      << r.err;
  r = run_cli("encode --model " + kDir + "hf --images " + kDir + "images --out '" + out.string() +
              "' --max-image-pixels 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected 1 to 1073741824"), std::string::npos) << r.err;
}

// issue 19: the warning for a path that is no image printed its first 8 bytes (e.g. of a
// shadow file); it names the detected type only.
TEST(CliEncode, AFileThatIsNoImageIsNamedByTypeNeverByContent) {
  const fs::path dir = temp_dir() / "mixed";
  fs::create_directories(dir);
  std::ofstream(dir / "shadow.png") << "root:*:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n";
  fs::copy_file(kAbs / "images/c_grey.png", dir / "ok.png", fs::copy_options::overwrite_existing);
  const fs::path out = temp_dir() / "mixed.npy";
  const CliResult r = run_cli("encode --model " + kDir + "hf --images '" + dir.string() +
                              "' --out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("not a JPEG or PNG image (it looks like text)"), std::string::npos) << r.err;
  const std::string manifest = read_file(temp_dir() / "mixed.manifest.json");
  // The leaks are the file's own text: "19000" alone can be in the temp folder's process id.
  for (const char* leak : {"root:", ":19000:", "72 6F 6F 74"}) {
    EXPECT_EQ(r.err.find(leak), std::string::npos) << leak << " in " << r.err;
    EXPECT_EQ(manifest.find(leak), std::string::npos) << leak;
  }
}

// issue 19: an eos_token_id outside the vocabulary was accepted (every text would pool
// position 0); the model folder is refused, and so are bos/pad ids past it.
TEST(CliEncode, TokenIdsOutsideTheVocabularyRefuseTheModelFolder) {
  for (const char* key : {"eos_token_id", "bos_token_id", "pad_token_id"}) {
    SCOPED_TRACE(key);
    const fs::path model = temp_dir() / (std::string("model_") + key);
    fs::create_directories(model);
    for (const auto& entry : fs::directory_iterator(kAbs / "hf")) {
      fs::copy_file(entry.path(), model / entry.path().filename(),
                    fs::copy_options::overwrite_existing);
    }
    json config = json::parse(read_file(model / "config.json"));
    config["text_config"][key] = 2014;  // vocab_size is 2014: ids 0..2013
    std::ofstream(model / "config.json") << config.dump(2);
    const fs::path out = temp_dir() / "t.npy";
    const CliResult r = run_cli("encode --model '" + model.string() + "' --texts " + kDir +
                                "texts.csv --out '" + out.string() + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(std::string("text_config.") + key +
                         "\" is 2014, outside the "
                         "vocabulary of 2014 token ids"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST(CliEncode, ClipScoreOnEncodedOutputs) {
  const fs::path images = temp_dir() / "i.npy";
  const fs::path texts = temp_dir() / "t.npy";
  ASSERT_EQ(run_cli("encode --model " + kDir + "hf --images " + kDir + "images --out '" +
                    images.string() + "'")
                .exit_code,
            0);
  ASSERT_EQ(run_cli("encode --model " + kDir + "hf --texts " + kDir + "one_text.csv --out '" +
                    texts.string() + "'")
                .exit_code,
            0);
  const CliResult r = run_cli("metric clipscore --images '" + images.string() + "' --texts '" +
                              texts.string() + "' --variant torchmetrics");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  const json want = json::parse(read_file(kAbs / "expected.json"));
  EXPECT_NEAR(out["overall"]["mean"].get<double>(),
              want["torchmetrics_clipscore_mean"].get<double>(), 2e-3);
}

}  // namespace in_encode_test
}  // namespace
