// `vlbias convert-weights`: PyTorch checkpoints (tests/fixtures/io/torch, written by
// tools/make_torch_checkpoint_fixtures.py) to safetensors through the real executable, the
// JSON summary line, and the refusals a user meets with a hostile or broken file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "vlbias/io/tensor/safetensors.h"

namespace vlbias {
namespace {
namespace in_convert_weights_test {

using cli_util::CliResult;
using cli_util::run_cli;
using cli_util::temp_dir;
using ::testing::HasSubstr;

constexpr int kLimit = 60;  // seconds: a hostile file that hung would be killed and fail

std::string torch_fixture(const std::string& name) {
  return "tests/fixtures/io/torch/" + name;
}

TEST(ConvertWeights, WritesTheSameSafetensorsFromAllThreeFormatsAndPrintsOneJsonLine) {
  const std::filesystem::path dir = temp_dir();
  std::map<std::string, std::string> reference;
  for (const auto& [file, format] : {std::pair{"net_state_zip.pth", "zip"},
                                     {"net_state_legacy.pth", "legacy"},
                                     {"net_script.pt", "torchscript"}}) {
    SCOPED_TRACE(file);
    const std::string out = (dir / (std::string(file) + ".safetensors")).string();
    const CliResult r =
        run_cli("convert-weights " + torch_fixture(file) + " '" + out + "'", "", kLimit);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    const auto summary = nlohmann::json::parse(r.out);
    EXPECT_EQ(summary["format"], format);
    EXPECT_EQ(summary["tensors"], 9);
    EXPECT_EQ(summary["dtype"], "keep");
    const SafetensorsFile f = SafetensorsFile::open(out);
    EXPECT_EQ(summary["tensor_bytes"], std::filesystem::file_size(out) - f.data_offset());
    std::map<std::string, std::string> tensors;
    for (const std::string& name : f.names()) {
      const auto b = f.bytes(name);
      tensors[name] = std::string(b.begin(), b.end());
    }
    if (reference.empty()) reference = tensors;
    EXPECT_EQ(tensors, reference);
  }
  EXPECT_TRUE(reference.count("features.1.running_var"));
}

TEST(ConvertWeights, ConvertsFloatTensorsToF16AndKeepsIntegerOnes) {
  const std::string out = (temp_dir() / "half.safetensors").string();
  const CliResult r =
      run_cli("convert-weights --dtype f16 " + torch_fixture("mixed_legacy.pth") + " '" + out + "'",
              "", kLimit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["format"], "legacy");
  EXPECT_EQ(summary["skipped_values"], 2);  // "epoch" and "note"
  const SafetensorsFile f = SafetensorsFile::open(out);
  EXPECT_EQ(dtype_name(f.info("model.d64").dtype), "F16");
  EXPECT_EQ(dtype_name(f.info("model.b16").dtype), "F16");
  EXPECT_EQ(dtype_name(f.info("model.i64").dtype), "I64");
  EXPECT_EQ(dtype_name(f.info("model.flags").dtype), "BOOL");
}

TEST(ConvertWeights, RefusesAPickleCallingOsSystemWithTheUsageExitCodeAndWritesNothing) {
  const std::filesystem::path out = temp_dir() / "evil.safetensors";
  const std::string marker = (temp_dir() / "pwned").string();
  const CliResult r = run_cli(
      "convert-weights " + torch_fixture("hostile/os_system.pth") + " '" + out.string() + "'", "",
      kLimit);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("refers to the Python global 'os.system'"));
  EXPECT_THAT(r.err, HasSubstr("nothing is called"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(r.out, "");
}

TEST(ConvertWeights, RefusesTruncatedAndOversizedCheckpointsNamingTheFile) {
  for (const auto& [file, needle] :
       {std::pair{"hostile/truncated.pth", "no end-of-central-directory record"},
        {"hostile/huge_storage.pth", "but its ZIP entry holds 8 bytes"},
        {"hostile/legacy_short_storage.pth", "12 bytes remain"},
        {"hostile/broadcast_bomb.pth", "resource limit"}}) {
    SCOPED_TRACE(file);
    const CliResult r = run_cli("convert-weights " + torch_fixture(file) + " '" +
                                    (temp_dir() / "x.safetensors").string() + "'",
                                "", kLimit);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(file));
    EXPECT_THAT(r.err, HasSubstr(needle));
  }
}

TEST(ConvertWeights, RefusesOneStorageReadAsTwoDtypesAndWritesNothing) {
  for (const char* file : {"hostile/zip_two_dtypes.pth", "hostile/constants_two_dtypes.pt"}) {
    SCOPED_TRACE(file);
    const std::filesystem::path out = temp_dir() / "x.safetensors";
    const CliResult r =
        run_cli("convert-weights " + torch_fixture(file) + " '" + out.string() + "'", "", kLimit);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(file));
    EXPECT_THAT(r.err, HasSubstr("declares storage '0' twice with different types or sizes (4 "
                                 "elements of F32, then 8 elements of F16)"));
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(ConvertWeights, RefusesAnOutputThatIsNotSafetensorsAndAFolderAsInput) {
  CliResult r = run_cli("convert-weights " + torch_fixture("mixed_zip.pth") + " out.bin");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("name the output '*.safetensors'"));
  r = run_cli("convert-weights tests/fixtures/io/torch '" +
              (temp_dir() / "x.safetensors").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("tests/fixtures/io/torch"));
}

}  // namespace in_convert_weights_test
}  // namespace
}  // namespace vlbias
