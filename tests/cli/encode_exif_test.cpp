// `vlbias encode --exif-transpose`: a folder of JPEGs carrying EXIF orientations 1-8
// (tests/data/images/real/derived/, written by tools/make_real_image_fixtures.py) encoded
// through the tiny random CLIP model of tests/fixtures/encode/e2e/hf, with and without the flag.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "vlbias/io/tensor/npy.h"

namespace {
namespace in_encode_exif_test {

namespace fs = std::filesystem;
using nlohmann::json;
using vlbias::Matrix;
using vlbias::read_npy_matrix;
using vlbias::cli_util::CliResult;
using vlbias::cli_util::read_file;
using vlbias::cli_util::run_cli;
using vlbias::cli_util::temp_dir;

const std::string kModel = "tests/fixtures/encode/e2e/hf";
const fs::path kDerived = fs::path(VLBIAS_SOURCE_DIR) / "tests/data/images/real/derived";

// prefix + v + suffix (appended: GCC 12 warns falsely on chained std::string operator+).
std::string numbered(const char* prefix, std::size_t v, const char* suffix) {
  std::string s = prefix;
  s.append(std::to_string(v)).append(suffix);
  return s;
}

// o1.jpg .. o8.jpg: the same pixels, EXIF orientation 1 .. 8.
fs::path oriented_folder(const std::string& name) {
  const fs::path dir = temp_dir() / name;
  fs::create_directories(dir);
  for (std::size_t v = 1; v <= 8; ++v) {
    fs::copy_file(kDerived / numbered("exif_orientation_", v, ".jpg"),
                  dir / numbered("o", v, ".jpg"), fs::copy_options::overwrite_existing);
  }
  return dir;
}

std::vector<float> row_of(const Matrix& m, std::size_t r) {
  return std::vector<float>(m.row(r), m.row(r) + m.cols);
}

json manifest_of(const fs::path& out) {
  return json::parse(read_file(out.parent_path() / (out.stem().string() + ".manifest.json")));
}

std::string encode_cmd(const fs::path& images, const fs::path& out) {
  return "encode --model " + kModel + " --batch 1 --images '" + images.string() + "' --out '" +
         out.string() + "'";
}

TEST(CliEncodeExif, OrientationIsIgnoredByDefaultAndAppliedWithExifTranspose) {
  const fs::path dir = oriented_folder("oriented");
  const fs::path plain = temp_dir() / "plain.npy", turned = temp_dir() / "turned.npy";
  CliResult r = run_cli(encode_cmd(dir, plain));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(encode_cmd(dir, turned) + " --exif-transpose");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(manifest_of(plain)["exif_transpose"].get<bool>());
  EXPECT_TRUE(manifest_of(turned)["exif_transpose"].get<bool>());

  const Matrix a = read_npy_matrix(plain), b = read_npy_matrix(turned);
  ASSERT_EQ(a.rows, 8u);
  ASSERT_EQ(b.rows, 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(numbered("orientation ", i + 1, ""));
    // Without the flag every file is the same picture (Image.open ignores the tag).
    EXPECT_EQ(row_of(a, i), row_of(a, 0));
    // With it, orientation 1 is unchanged and 2-8 are eight different pictures.
    if (i == 0) {
      EXPECT_EQ(row_of(b, 0), row_of(a, 0));
    } else {
      for (std::size_t j = 0; j < i; ++j) EXPECT_NE(row_of(b, i), row_of(b, j)) << "vs " << j + 1;
    }
  }

  // Orientation 7 gives exactly the embedding of what exif_transpose made of it, saved as PNG.
  const fs::path ref_dir = temp_dir() / "reference";
  fs::create_directories(ref_dir);
  fs::copy_file(kDerived / "transposed_7.png", ref_dir / "t7.png");
  const fs::path ref = temp_dir() / "reference.npy";
  r = run_cli(encode_cmd(ref_dir, ref));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(row_of(b, 6), row_of(read_npy_matrix(ref), 0));
}

// The setting is part of the checkpoint's identity: a resume with the other one is refused.
TEST(CliEncodeExif, ResumeWithTheOtherExifSettingIsRefused) {
  const fs::path dir = oriented_folder("stopping");
  fs::copy_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/e2e/broken.jpg",
                dir / "z_broken.jpg");
  const fs::path out = temp_dir() / "stopped.npy";
  const std::string common = encode_cmd(dir, out) + " --chunk 2";
  const CliResult stopped = run_cli(common + " --exif-transpose --fail-on-error");
  ASSERT_EQ(stopped.exit_code, 2) << stopped.err;
  ASSERT_TRUE(fs::exists(out.string() + ".partial/chunk_000000.json"));

  const CliResult refused = run_cli(common + " --resume");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("Cannot resume"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("'exif_transpose'"), std::string::npos) << refused.err;

  const CliResult resumed = run_cli(common + " --exif-transpose --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const json m = manifest_of(out);
  EXPECT_TRUE(m["exif_transpose"].get<bool>());
  EXPECT_GT(m["resumed_items"].get<std::size_t>(), 0u);
  EXPECT_EQ(m["failed"].size(), 1u);  // z_broken.jpg
}

}  // namespace in_encode_exif_test
}  // namespace
