// The one input and output policy at the command line (issue 37 items 3, 7, 11, 17): a named pipe
// listed as an image or given as weights is refused before it is opened (features and
// convert-weights used to wait forever), a table that is a pipe nobody writes to ends with an
// error; the feature cache's folder is never written through a planted link; a dataset label path
// that leaves the folder through a folder link is malformed, never read; and messages say what
// is wrong (an image with no pixels, a vocabulary that is no object).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace vlbias {
namespace {
namespace in_file_policy_test {

namespace fs = std::filesystem;
using cli_util::CliResult;
using cli_util::read_file;
using cli_util::run_cli;
using cli_util::shell_quote;
using cli_util::temp_dir;
using PlainJson = nlohmann::json;

constexpr int kLimit = 60;  // seconds: what used to hang is killed (exit 124) and fails the test

const fs::path kInception = fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/encode/inception";

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(FilePolicy, ANamedPipeListedAsAnImageFailsThatImageInsteadOfHangingFeatures) {
  const fs::path dir = temp_dir();
  ASSERT_EQ(::mkfifo((dir / "fifo.jpg").c_str(), 0600), 0);  // no program ever writes to it
  write(dir / "images.csv", "path\n" + (kInception / "images/odd_97x61.jpg").string() + "\n" +
                                (dir / "fifo.jpg").string() + "\n");
  const CliResult r = run_cli(
      fmt::format("--quiet features --model {} --images {} --out {}",
                  shell_quote(kInception.string()), shell_quote((dir / "images.csv").string()),
                  shell_quote((dir / "f.npy").string())),
      "", kLimit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const PlainJson m = PlainJson::parse(read_file(dir / "f.manifest.json"));
  ASSERT_EQ(m["failed"].size(), 1u) << m.dump();
  const std::string error = m["failed"][0]["error"];
  EXPECT_NE(error.find("fifo.jpg' is a pipe, not a regular file"), std::string::npos) << error;
  EXPECT_EQ(m["output"]["rows"], 1);
}

TEST(FilePolicy, ANamedPipeGivenAsWeightsIsRefusedBeforeItIsOpened) {
  const fs::path dir = temp_dir();
  ASSERT_EQ(::mkfifo((dir / "weights.pth").c_str(), 0600), 0);
  const CliResult r = run_cli("convert-weights " + shell_quote((dir / "weights.pth").string()) +
                                  " " + shell_quote((dir / "out.safetensors").string()),
                              "", kLimit);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("weights.pth' is a pipe, not a regular file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));
}

TEST(FilePolicy, ATablePipeThatNoProgramWritesToEndsWithAnErrorNamingIt) {
  const fs::path dir = temp_dir();
  // The commands inherit a 1 s wait (OpenInputFile's tests check the 10 s default).
  const testing_util::ScopedEnv wait("VLBIAS_PIPE_WAIT_SECONDS", "1");
  ASSERT_EQ(::mkfifo((dir / "t.csv").c_str(), 0600), 0);
  const CliResult r = run_cli(
      "compare --table " + shell_quote((dir / "t.csv").string()) + " --value a --by g", "", kLimit);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("t.csv' is a named pipe that no program opened for writing within 1 s"),
            std::string::npos)
      << r.err;
  const testing_util::ScopedEnv bad("VLBIAS_PIPE_WAIT_SECONDS", "0");
  const CliResult refused = run_cli(
      "compare --table " + shell_quote((dir / "t.csv").string()) + " --value a --by g", "", kLimit);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("VLBIAS_PIPE_WAIT_SECONDS is '0'; expected a whole number"),
            std::string::npos)
      << refused.err;
}

// The fixture's images in dir/real and dir/fake, their cache folder dir/.vlbias-features.
CliResult fid_from_images(const fs::path& dir) {
  for (const char* set : {"real", "fake"}) {
    fs::create_directories(dir / set);
    for (const auto& e : fs::directory_iterator(kInception / "images")) {
      fs::copy_file(e.path(), dir / set / e.path().filename(),
                    fs::copy_options::overwrite_existing);
    }
  }
  return run_cli(
      fmt::format("--quiet metric fid --real-images {} --fake-images {} --model {}",
                  shell_quote((dir / "real").string()), shell_quote((dir / "fake").string()),
                  shell_quote(kInception.string())),
      "", kLimit);
}

TEST(FilePolicy, APlantedFeatureCacheLinkIsRefusedNeverWrittenThrough) {
  const fs::path dir = temp_dir() / "study";
  fs::create_directories(dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / ".vlbias-features");
  const CliResult r = fid_from_images(dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(".vlbias-features' is a symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "elsewhere"));
  // Without the link the cache is made and kept there.
  fs::remove(dir / ".vlbias-features");
  const CliResult ok = fid_from_images(dir);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::is_directory(dir / ".vlbias-features"));
  EXPECT_FALSE(fs::is_symlink(dir / ".vlbias-features"));
}

TEST(FilePolicy, DatasetLabelPathsThroughAFolderLinkOutOfTheFolderAreMalformed) {
  const fs::path dir = temp_dir() / "geode";
  const std::string jpeg =
      read_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/data/datasets/fairface/train/1.jpg");
  write(dir / "index.csv",
        "file_path,object,region,ip_country\n"
        "out/private.jpg,bag,Africa,Nigeria\n"
        "bag/1.jpg,bag,Europe,Italy\n");
  write(dir / "images/bag/1.jpg", jpeg);
  write(temp_dir() / "outside/private.jpg", jpeg);  // e.g. a private photo
  fs::create_directory_symlink(temp_dir() / "outside", dir / "images/out");
  // An image file that is itself a link to a file outside (GeoDE scans images/).
  fs::create_symlink(temp_dir() / "outside/private.jpg", dir / "images/bag/2.jpg");
  const CliResult r = run_cli("dataset geode " + shell_quote(dir.string()) + " --out " +
                              shell_quote((temp_dir() / "out.csv").string()) + " --summary " +
                              shell_quote((temp_dir() / "out.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(temp_dir() / "out.csv"),
            "path,object,region,country\ngeode/images/bag/1.jpg,bag,Europe,Italy\n");
  const PlainJson s = PlainJson::parse(read_file(temp_dir() / "out.json"));
  ASSERT_EQ(s.at("malformed").at("count"), 2) << s.dump(1);
  std::string reasons;
  for (const PlainJson& m : s.at("malformed").at("items")) {
    reasons += m.at("where").get<std::string>() + ": " + m.at("reason").get<std::string>() + "\n";
  }
  EXPECT_NE(reasons.find("images/out/private.jpg: the label path leaves the folder through a link"),
            std::string::npos)
      << reasons;
  EXPECT_NE(reasons.find("images/bag/2.jpg: a link to a file outside the folder"),
            std::string::npos)
      << reasons;
}

// CRC-32 (ISO-HDLC, as PNG chunks use), bit by bit.
std::uint32_t png_crc(const std::string& bytes) {
  std::uint32_t c = 0xffffffffu;
  for (const unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string png_chunk(const std::string& type, const std::string& data) {
  return be32(static_cast<std::uint32_t>(data.size())) + type + data + be32(png_crc(type + data));
}

TEST(FilePolicy, AnImageWithoutPixelsIsSaidToBeDamagedNotTooLarge) {
  const fs::path dir = temp_dir() / "utk";
  write(dir / "20_0_1_20170116174525125.jpg",
        read_file(fs::path(VLBIAS_SOURCE_DIR) / "tests/data/datasets/fairface/train/1.jpg"));
  // A 0 x 10 PNG: a valid IHDR (CRC included) whose width is 0, then an IDAT (zlib's empty
  // stream) as a writer that does not check the size would leave it.
  const std::string ihdr = be32(0) + be32(10) + std::string("\x08\x02\x00\x00\x00", 5);
  const std::string idat("\x78\x9c\x03\x00\x00\x00\x00\x01", 8);
  write(dir / "21_1_2_20170116174525125.png", std::string("\x89PNG\r\n\x1a\n", 8) +
                                                  png_chunk("IHDR", ihdr) +
                                                  png_chunk("IDAT", idat) + png_chunk("IEND", ""));
  const CliResult r = run_cli("dataset utkface " + shell_quote(dir.string()) + " --out " +
                              shell_quote((temp_dir() / "out.csv").string()) + " --summary " +
                              shell_quote((temp_dir() / "out.json").string()) + " --check-images");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const PlainJson s = PlainJson::parse(read_file(temp_dir() / "out.json"));
  ASSERT_EQ(s.at("unreadable").at("count"), 1) << s.dump(1);
  const std::string reason = s.at("unreadable").at("items")[0].at("reason");
  EXPECT_NE(reason.find("0 x 10 pixels; its header gives no pixels in one direction"),
            std::string::npos)
      << reason;
  EXPECT_EQ(reason.find("more than"), std::string::npos) << reason;
}

TEST(FilePolicy, AVocabularyThatIsNoJsonObjectIsSaidToBeOneNotEmpty) {
  const fs::path model = temp_dir() / "roberta";
  fs::copy(fs::path(VLBIAS_SOURCE_DIR) / "tests/fixtures/classifier/roberta_multilabel", model);
  fs::remove(model / "tokenizer.json");  // the slow tokenizer's files: vocab.json + merges.txt
  write(model / "vocab.json", "[]");
  write(temp_dir() / "texts.csv", "text\nhello\n");
  const CliResult r = run_cli("score classifier --model " + shell_quote(model.string()) + " " +
                                  shell_quote((temp_dir() / "texts.csv").string()) + " --out " +
                                  shell_quote((temp_dir() / "run").string()),
                              "", kLimit);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("vocab.json' is a JSON array, not an object"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("is empty"), std::string::npos) << r.err;
}

}  // namespace in_file_policy_test
}  // namespace
}  // namespace vlbias
