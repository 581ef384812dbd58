// Images inside Parquet tables read in place (`--images T.parquet --column image`) by `encode`,
// `features`, `faces` and `label`, on the fixtures of tools/make_parquet_fixtures.mjs
// (tests/fixtures/io/parquet/items: five real images as Hugging Face's Image struct in row groups
// of two, as a plain binary column, as two shards). The reference for each command is the same
// command on the files `vlbias dataset extract-images` writes from the same table: the numbers
// must be identical, only the item names differ (T.parquet#ROW). Plus a resume after one row's
// bytes changed, and bad input (unknown column, null cell, bytes of no image format).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "generate/http_test_server.h"
#include "vlbias/io/base64.h"
#include "vlbias/io/table/table.h"
#include "vlbias/io/tensor/npy.h"

namespace {
namespace in_parquet_items_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::Matrix;
using vlbias::read_npy_matrix;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::shell_quote;
using vlbias::cli_util::temp_dir;

const fs::path kSource = VLBIAS_SOURCE_DIR;
const fs::path kItems = kSource / "tests/fixtures/io/parquet/items";
const fs::path kClip = kSource / "tests/fixtures/encode/e2e/hf";

std::string q(const fs::path& p) {
  return shell_quote(p.string());
}

// The images of `parquet` written as files; returns their images.csv.
fs::path extracted(const fs::path& parquet, const std::string& name) {
  const fs::path out = temp_dir() / (name + "_files");
  const CliResult r =
      run_cli("--quiet dataset extract-images " + q(parquet) + " --column image --out " + q(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out / "images.csv";
}

json manifest_of(const fs::path& out) {
  return json::parse(read_file(out.parent_path() / (out.stem().string() + ".manifest.json")));
}

std::vector<std::string> texts(const vlbias::Table& t, const std::string& column) {
  std::vector<std::string> out;
  const vlbias::Column& c = t.column(column);
  for (std::size_t r = 0; r < t.rows; ++r) out.push_back(c.text(r));
  return out;
}

std::vector<std::string> names(const std::string& table, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t r = 0; r < n; ++r) out.push_back(table + "#" + std::to_string(r));
  return out;
}

TEST(ParquetItems, EncodeOfTheTableEqualsEncodeOfItsExtractedFiles) {
  const fs::path files = temp_dir() / "files.npy";
  const std::string encode = "--quiet encode --model " + q(kClip) + " --chunk 2 --batch 2 ";
  ASSERT_EQ(run_cli(encode + "--images " + q(extracted(kItems / "images.parquet", "enc")) +
                    " --out " + q(files))
                .exit_code,
            0);
  const Matrix want = read_npy_matrix(files);
  ASSERT_EQ(want.rows, 5u);
  struct Case {
    fs::path input;
    std::string column, name;
  };
  // The struct (named, and found by default), a plain binary column, a folder of two shards.
  for (const Case& c : {Case{kItems / "images.parquet", " --column image", "images.parquet"},
                        Case{kItems / "images.parquet", "", "images.parquet"},
                        Case{kItems / "binary.parquet", " --column image", "binary.parquet"},
                        Case{kItems / "shards", " --column image", "shards"}}) {
    SCOPED_TRACE(c.input.string() + c.column);
    const fs::path out = temp_dir() / "table.npy";
    const CliResult r = run_cli(encode + "--images " + q(c.input) + c.column + " --out " + q(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_npy_matrix(out).data, want.data);  // bit-identical
    const vlbias::Table rows = vlbias::read_table((temp_dir() / "table.rows.csv").string());
    EXPECT_EQ(texts(rows, "path"), names(c.name, 5));
    const json m = manifest_of(out);
    EXPECT_EQ(m["input"]["items"], 5);
    EXPECT_TRUE(m["failed"].empty());
  }
}

// --shard I/N over the table's rows and `merge`: the single run's embeddings and rows file.
TEST(ParquetItems, ShardsOfATableMergeIntoTheSingleRun) {
  const std::string encode = "--quiet encode --model " + q(kClip) + " --images " +
                             q(kItems / "images.parquet") + " --column image --chunk 2 --batch 2";
  const fs::path root = temp_dir() / "sharded";
  const fs::path single = root / "single/e.npy", merged = root / "merged/e.npy";
  fs::create_directories(single.parent_path());
  fs::create_directories(merged.parent_path());
  ASSERT_EQ(run_cli(encode + " --out " + q(single)).exit_code, 0);
  for (const char* shard : {"0/2", "1/2"}) {
    const CliResult r =
        run_cli(encode + " --shard " + shard + " --out " + q(root / "shards/{shard}/e.npy"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const CliResult r = run_cli("--quiet merge " + q(merged) + " " + q(root / "shards/1") + " " +
                              q(root / "shards/0"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(merged), read_file(single));
  EXPECT_EQ(read_file(root / "merged/e.rows.csv"), read_file(root / "single/e.rows.csv"));
}

TEST(ParquetItems, FeaturesOfTheTableEqualFeaturesOfItsExtractedFiles) {
  const fs::path inception = kSource / "tests/fixtures/encode/inception";
  const std::string features =
      "--quiet features --model " + q(inception) + " --preprocess clean-fid --batch 2 --images ";
  const fs::path files = temp_dir() / "files.npy", table = temp_dir() / "table.npy";
  ASSERT_EQ(
      run_cli(features + q(extracted(kItems / "images.parquet", "feat")) + " --out " + q(files))
          .exit_code,
      0);
  const CliResult r =
      run_cli(features + q(kItems / "images.parquet") + " --column image --out " + q(table));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Matrix want = read_npy_matrix(files), got = read_npy_matrix(table);
  ASSERT_EQ(want.rows, 5u);
  EXPECT_EQ(got.data, want.data);
}

// Every column of two faces tables equal, except the item names: `names` in the table's run.
void expect_same_faces_table(const fs::path& got, const fs::path& want, std::size_t rows) {
  SCOPED_TRACE(got.string());
  const vlbias::Table g = vlbias::read_table(got.string()), w = vlbias::read_table(want.string());
  ASSERT_EQ(g.rows, rows);
  ASSERT_EQ(w.rows, rows);
  ASSERT_EQ(g.columns.size(), w.columns.size());
  for (std::size_t c = 0; c < g.columns.size(); ++c) {
    ASSERT_EQ(g.columns[c].name, w.columns[c].name);
    if (g.columns[c].name == "path" || g.columns[c].name == "image" ||
        g.columns[c].name == "chip") {
      continue;
    }
    for (std::size_t r = 0; r < rows; ++r) {
      EXPECT_EQ(g.columns[c].text(r), w.columns[c].text(r)) << g.columns[c].name << " row " << r;
    }
  }
}

TEST(ParquetItems, FacesOfTheTableEqualFacesOfItsExtractedFiles) {
  const fs::path list = extracted(kItems / "images.parquet", "faces");
  const std::string skin = " --no-detect --predictor /nonexistent/sp.dat --skin-tone heim --out ";
  const fs::path files = temp_dir() / "faces_of_files", table = temp_dir() / "faces_of_table";
  ASSERT_EQ(run_cli("--quiet faces --images " + q(list) + skin + q(files)).exit_code, 0);
  const CliResult r = run_cli("--quiet faces --images " + q(kItems / "images.parquet") +
                              " --column image" + skin + q(table));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_faces_table(table / "faces.csv", files / "faces.csv", 5);
  expect_same_faces_table(table / "images.csv", files / "images.csv", 5);
  const vlbias::Table images = vlbias::read_table((table / "images.csv").string());
  EXPECT_EQ(texts(images, images.find("image") ? "image" : "path"), names("images.parquet", 5));
}

TEST(ParquetItems, ClipLabelsOfTheTableEqualThoseOfItsExtractedFiles) {
  const fs::path prompts = kSource / "tests/fixtures/labels/prompts.json";
  const std::string label = "--quiet label --model " + q(kClip) + " --prompts " + q(prompts) +
                            " --attributes tone,mood --images ";
  const fs::path files = temp_dir() / "labels_files.csv", table = temp_dir() / "labels_table.csv";
  ASSERT_EQ(run_cli(label + q(extracted(kItems / "images.parquet", "label")) + " --out " + q(files))
                .exit_code,
            0);
  const CliResult r =
      run_cli(label + q(kItems / "images.parquet") + " --column image --out " + q(table));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const vlbias::Table g = vlbias::read_table(table.string()),
                      w = vlbias::read_table(files.string());
  ASSERT_EQ(g.rows, 10u);  // five images, two attributes
  ASSERT_EQ(w.rows, g.rows);
  for (const char* c :
       {"attribute", "label", "margin", "p_warm", "p_cold", "p_grey", "p_happy", "p_sad"}) {
    EXPECT_EQ(texts(g, c), texts(w, c)) << c;
  }
  std::vector<std::string> want;
  for (const std::string& n : names("images.parquet", 5)) want.insert(want.end(), {n, n});
  EXPECT_EQ(texts(g, "image"), want);
}

// explain: the CAM maps and probabilities of the table's rows equal those of its files.
TEST(ParquetItems, ExplainMapsOfTheTableEqualThoseOfItsExtractedFiles) {
  const fs::path pairs = temp_dir() / "pairs.csv";
  std::ofstream(pairs) << "text,word,dimension,valence,template\n"
                          "a photo of a smart person,smart,smart/dumb,+,a photo of a {} person\n"
                          "a photo of a dumb person,dumb,smart/dumb,-,a photo of a {} person\n";
  const std::string explain = "--quiet explain --model " + q(kClip) + " --manifest " + q(pairs) +
                              " --pair smart/dumb --images ";
  const fs::path files = temp_dir() / "maps_of_files", table = temp_dir() / "maps_of_table";
  ASSERT_EQ(
      run_cli(explain + q(extracted(kItems / "images.parquet", "explain")) + " --out " + q(files))
          .exit_code,
      0);
  const CliResult r =
      run_cli(explain + q(kItems / "images.parquet") + " --column image --out " + q(table));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(table / "maps.npy"), read_file(files / "maps.npy"));
  const vlbias::Table g = vlbias::read_table((table / "rows.csv").string()),
                      w = vlbias::read_table((files / "rows.csv").string());
  ASSERT_EQ(g.rows, 5u);
  EXPECT_EQ(texts(g, "probability"), texts(w, "probability"));
  EXPECT_EQ(texts(g, "status"), std::vector<std::string>(5, "ok"));
}

// A run stopped at row 4 (bytes of no image format, --fail-on-error) with rows 0-3 in finished
// chunks; the table is replaced by one whose row 3 changed and row 4 is an image. The resume
// encodes row 3's chunk again, names only row 3, and equals a clean run on the new table.
TEST(ParquetItems, AResumeAfterOneRowChangedRecomputesOnlyThatRowsChunk) {
  const fs::path t = temp_dir() / "T.parquet";
  fs::copy_file(kItems / "resume_before.parquet", t, fs::copy_options::overwrite_existing);
  const fs::path out = temp_dir() / "resumed.npy";
  const std::string common = "encode --model " + q(kClip) + " --images " + q(t) +
                             " --column image --chunk 2 --batch 1 --out ";
  const CliResult stopped = run_cli(common + q(out) + " --fail-on-error");
  ASSERT_EQ(stopped.exit_code, 2) << stopped.err;
  EXPECT_NE(stopped.err.find("T.parquet#4"), std::string::npos) << stopped.err;
  ASSERT_TRUE(fs::exists(out.string() + ".partial/chunk_000001.json"));
  fs::copy_file(kItems / "images_changed.parquet", t, fs::copy_options::overwrite_existing);

  const CliResult resumed = run_cli(common + q(out) + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("row 3 (T.parquet#3)"), std::string::npos) << resumed.err;
  for (const char* unchanged : {"T.parquet#0", "T.parquet#1", "T.parquet#2"}) {
    EXPECT_EQ(resumed.err.find(unchanged), std::string::npos) << resumed.err;
  }
  const json m = manifest_of(out);
  ASSERT_EQ(m["changed_since_checkpoint"].size(), 1u);
  EXPECT_EQ(m["changed_since_checkpoint"][0]["item"], "T.parquet#3");
  EXPECT_EQ(m["resumed_items"], 2);  // chunk 0 kept, chunk 1 (rows 2, 3) encoded again

  const fs::path clean = temp_dir() / "clean.npy";
  ASSERT_EQ(run_cli(common + q(clean)).exit_code, 0);
  const Matrix a = read_npy_matrix(clean), b = read_npy_matrix(out);
  ASSERT_EQ(a.rows, 5u);
  EXPECT_EQ(a.data, b.data);
}

TEST(ParquetItems, BadCellsAreRowReasonsAndABadColumnIsAnErrorNamingIt) {
  // hf_images.parquet: rows 0-3 images, row 4 a null image, rows 5-7 bytes of no decodable image.
  const fs::path hf = kSource / "tests/fixtures/io/parquet/hf_images.parquet";
  const fs::path out = temp_dir() / "hf.npy";
  const CliResult r = run_cli("encode --model " + q(kClip) + " --images " + q(hf) +
                              " --column image --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json m = manifest_of(out);
  ASSERT_EQ(m["failed"].size(), 4u) << m["failed"].dump();
  EXPECT_EQ(m["output"]["rows"], 4);
  const std::string failed = m["failed"].dump();
  EXPECT_NE(failed.find("hf_images.parquet#4"), std::string::npos) << failed;
  EXPECT_NE(failed.find("null"), std::string::npos) << failed;
  EXPECT_NE(failed.find("hf_images.parquet#7"), std::string::npos) << failed;

  // A corrupt page: the rows of its row group fail with the reason, the others are encoded.
  // Row group 1's image.bytes chunk of images.parquet starts with its dictionary page at byte
  // 2200 (DuckDB's parquet_metadata); 200 bytes of its snappy data are overwritten.
  std::string bytes = read_file(kItems / "images.parquet");
  ASSERT_GT(bytes.size(), 2430u);
  bytes.replace(2230, 200, std::string(200, '\xff'));
  const fs::path corrupt = temp_dir() / "corrupt.parquet";
  std::ofstream(corrupt, std::ios::binary) << bytes;
  const fs::path c_out = temp_dir() / "corrupt.npy";
  const CliResult c = run_cli("encode --model " + q(kClip) + " --images " + q(corrupt) +
                              " --column image --out " + q(c_out));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json cm = manifest_of(c_out);
  ASSERT_EQ(cm["failed"].size(), 2u) << cm["failed"].dump();
  EXPECT_NE(cm["failed"].dump().find("row group 1"), std::string::npos) << cm["failed"].dump();
  EXPECT_EQ(cm["output"]["rows"], 3);

  // A column the table lacks: exit 2 naming it.
  const CliResult unknown = run_cli("encode --model " + q(kClip) + " --images " + q(hf) +
                                    " --column picture --out " + q(temp_dir() / "u.npy"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("picture"), std::string::npos) << unknown.err;
  // The same for faces and label.
  const CliResult faces = run_cli("faces --images " + q(hf) + " --column picture --out " +
                                  q(temp_dir() / "faces_unknown"));
  EXPECT_EQ(faces.exit_code, 2);
  EXPECT_NE(faces.err.find("picture"), std::string::npos) << faces.err;
}

// generate lvlm: manifest cells "images.parquet#ROW" under image_root send that row's bytes. The
// server answers with the name of the fixture image whose base64 it received.
TEST(ParquetItems, GenerateLvlmSendsTheBytesOfTheRowEachManifestCellNames) {
  const std::vector<std::string> files = {"jpg_420.jpg", "png_rgb8.png", "jpg_grey.jpg",
                                          "jpg_444.jpg", "png_rgba8.png"};
  std::map<std::string, std::string> name_of;
  for (const std::string& f : files) {
    name_of[vlbias::base64_encode(read_file(kSource / "tests/fixtures/encode/images" / f))] = f;
  }
  std::mutex mutex;
  vlbias::test_http::Server server([&](const vlbias::test_http::Request& req) {
    const json body = json::parse(req.body, nullptr, false);
    std::string seen = "none";
    if (!body.is_discarded()) {
      for (const json& part : body["messages"].back()["content"]) {
        if (part["type"] != "image_url") continue;
        const std::string url = part["image_url"]["url"];
        std::lock_guard<std::mutex> lock(mutex);
        const auto it = name_of.find(url.substr(url.find(',') + 1));
        seen = it == name_of.end() ? "unknown" : it->second;
      }
    }
    const json answer = {{"id", "c"},
                         {"object", "chat.completion"},
                         {"model", "m"},
                         {"choices",
                          {{{"index", 0},
                            {"message", {{"role", "assistant"}, {"content", seen}}},
                            {"finish_reason", "stop"}}}}};
    return vlbias::test_http::Response{200, answer.dump(), {}, 0, false};
  });
  const fs::path dir = temp_dir() / "lvlm";
  fs::create_directories(dir);
  const auto write_spec = [&](const std::string& rows) {
    std::ofstream(dir / "manifest.csv") << "id,file\n" << rows;
    std::ofstream(dir / "spec.yaml")
        << "version: 1\nkind: generate-lvlm\nendpoint:\n  url: "
        << server.url("/v1/chat/completions")
        << "\n  model: m\n  timeout_s: 5\nmanifest: manifest.csv\n"
        << "image_root: " << kItems.string() << "\ncolumns: {image: file, id: id}\n"
        << "prompts:\n  - {name: describe, text: \"Describe.\"}\n"
        << "seeds: [0]\n";
  };
  write_spec("r3,images.parquet#3\nr0,images.parquet#0\nr4,shards#4\nr1,binary.parquet#1\n");
  fs::remove_all(dir / "run");
  const CliResult r =
      run_cli("--quiet generate lvlm " + q(dir / "spec.yaml") + " --out " + q(dir / "run"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> text_of;
  std::ifstream in(dir / "run/generations.jsonl");
  for (std::string line; std::getline(in, line);) {
    const json row = json::parse(line);
    text_of[row["file"].get<std::string>()] = row["text"].get<std::string>();
  }
  EXPECT_EQ(text_of["images.parquet#3"], "jpg_444.jpg");
  EXPECT_EQ(text_of["images.parquet#0"], "jpg_420.jpg");
  EXPECT_EQ(text_of["shards#4"], "png_rgba8.png");
  EXPECT_EQ(text_of["binary.parquet#1"], "png_rgb8.png");
  EXPECT_EQ(text_of.size(), 4u);

  // A row past the table's end is refused before any request, naming the line and the row.
  write_spec("r9,images.parquet#9\n");
  fs::remove_all(dir / "run");
  const CliResult past =
      run_cli("--quiet generate lvlm " + q(dir / "spec.yaml") + " --out " + q(dir / "run"));
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_NE(past.err.find("images.parquet#9"), std::string::npos) << past.err;
  EXPECT_NE(past.err.find("5 rows"), std::string::npos) << past.err;
}

}  // namespace in_parquet_items_test
}  // namespace
