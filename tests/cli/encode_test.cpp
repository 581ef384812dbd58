// `vlbias encode` end to end: image files and texts through the tiny random CLIP
// models of tools/make_encode_fixtures.py, against the embeddings its independent
// PyTorch + Pillow pipeline wrote; manifests, failures, resume.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"
#include "vlbias/npy.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::Matrix;
using vlbias::read_npy_matrix;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
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
  const std::string cmd = std::string("cd '") + VLBIAS_SOURCE_DIR + "' && exec '" + VLBIAS_BINARY +
                          "' --threads 1 --quiet " + common + "'" + out.string() + "'";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(partial / "chunk_000001.json") && !fs::exists(out) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const bool interrupted = !fs::exists(out);
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

}  // namespace
