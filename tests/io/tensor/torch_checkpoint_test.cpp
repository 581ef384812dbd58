// PyTorch checkpoints read as data: the three containers torch writes, compared with the
// tensors torch itself described (tools/make_torch_checkpoint_fixtures.py ->
// tests/fixtures/io/torch/expected.json), and their conversion to safetensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/binary_test_util.h"
#include "vlbias/core/error.h"
#include "vlbias/io/tensor/safetensors.h"
#include "vlbias/io/tensor/torch_checkpoint.h"

namespace vlbias {
namespace {
namespace in_torch_checkpoint_test {

using testing_binary::read_bytes;
using testing_binary::TempDirTest;

std::filesystem::path torch_fixture(std::string_view name) {
  return testing_binary::fixture("torch") / name;
}

const nlohmann::json& torch_expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(torch_fixture("expected.json"));
    return nlohmann::json::parse(in);
  }();
  return j;
}

std::string hex(std::span<const std::uint8_t> b) {
  std::string out;
  for (std::uint8_t c : b) out += fmt::format("{:02x}", c);
  return out;
}

std::string tensor_hex(const TorchCheckpoint& c, std::size_t i) {
  std::vector<std::uint8_t> bytes(c.tensors()[i].count * dtype_size(c.tensors()[i].dtype));
  c.copy_tensor(i, bytes);
  return hex(bytes);
}

// name -> contiguous bytes in hex.
std::map<std::string, std::string> tensor_map(const TorchCheckpoint& c) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < c.tensors().size(); ++i) out[c.tensors()[i].name] = tensor_hex(c, i);
  return out;
}

void expect_as_torch_described(const std::string& file) {
  SCOPED_TRACE(file);
  const auto& want = torch_expected()[file];
  const TorchCheckpoint c = TorchCheckpoint::open(torch_fixture(file));
  EXPECT_EQ(torch_format_name(c.format()), want["format"].get<std::string>());
  EXPECT_EQ(c.ignored_leaves(), want["ignored"].get<std::size_t>());
  ASSERT_EQ(c.tensors().size(), want["tensors"].size());
  for (std::size_t i = 0; i < c.tensors().size(); ++i) {
    const auto& w = want["tensors"][i];
    const TorchTensorInfo& t = c.tensors()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, w["name"].get<std::string>());
    EXPECT_EQ(dtype_name(t.dtype), w["dtype"].get<std::string>());
    EXPECT_EQ(t.shape, w["shape"].get<std::vector<std::size_t>>());
    EXPECT_EQ(tensor_hex(c, i), w["hex"].get<std::string>());
  }
}

TEST(TorchCheckpoint, ReadsEveryDtypeViewAndSharedStorageOfAZipCheckpointAsTorchDoes) {
  expect_as_torch_described("mixed_zip.pth");
}

TEST(TorchCheckpoint, ReadsTheSameCheckpointInTheLegacyFormatAsTorchDoes) {
  expect_as_torch_described("mixed_legacy.pth");
}

TEST(TorchCheckpoint, ReadsStateDictsInBothFormatsSkippingTheirMetadata) {
  expect_as_torch_described("net_state_zip.pth");
  expect_as_torch_described("net_state_legacy.pth");
}

TEST(TorchCheckpoint, ResolvesANonContiguousViewAndTensorsSharingOneStorage) {
  const TorchCheckpoint c = TorchCheckpoint::open(torch_fixture("mixed_zip.pth"));
  std::map<std::string, const TorchTensorInfo*> by_name;
  for (const auto& t : c.tensors()) by_name[t.name] = &t;
  const TorchTensorInfo& view = *by_name.at("model.view");
  EXPECT_EQ(view.strides, (std::vector<std::size_t>{1, 12}));
  EXPECT_EQ(view.storage_offset, 1u);
  // The views and the alias read the same storage bytes.
  EXPECT_EQ(by_name.at("model.shared.a")->storage.data(),
            by_name.at("model.shared.b")->storage.data());
  EXPECT_EQ(by_name.at("model.shared.a")->storage_offset, 2u);
  EXPECT_EQ(by_name.at("model.shared.b")->storage_offset, 10u);
  const auto m = tensor_map(c);
  EXPECT_EQ(m.at("model.shared.a"), m.at("model.shared.tied"));
}

TEST(TorchCheckpoint, GivesTheSameWeightsFromAStateDictInBothFormatsAndATorchScriptArchive) {
  const auto zip = tensor_map(TorchCheckpoint::open(torch_fixture("net_state_zip.pth")));
  const auto legacy = tensor_map(TorchCheckpoint::open(torch_fixture("net_state_legacy.pth")));
  const TorchCheckpoint script = TorchCheckpoint::open(torch_fixture("net_script.pt"));
  EXPECT_EQ(script.format(), TorchFormat::TorchScript);
  const auto scripted = tensor_map(script);
  EXPECT_EQ(zip, legacy);
  EXPECT_EQ(zip.size(), 9u);
  // The module tree flattened with "." gives the state dict's names and bytes.
  EXPECT_EQ(scripted, zip);
  const auto& names = torch_expected()["net_script.pt"]["state_names"];
  for (const auto& n : names) EXPECT_TRUE(scripted.count(n.get<std::string>())) << n;
}

TEST(TorchCheckpoint, NamesATracedModulesSubmodulesAndItsConstants) {
  const TorchCheckpoint traced = TorchCheckpoint::open(torch_fixture("net_traced.pt"));
  EXPECT_EQ(traced.format(), TorchFormat::TorchScript);
  const auto m = tensor_map(traced);
  const auto zip = tensor_map(TorchCheckpoint::open(torch_fixture("net_state_zip.pth")));
  for (const auto& [name, bytes] : zip) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(m.count("inner." + name));
    EXPECT_EQ(m.at("inner." + name), bytes);
  }
  // The traced forward's torch.tensor(2.5, float64) is constants.0 (constants/0 in the zip).
  ASSERT_TRUE(m.count("constants.0"));
  EXPECT_EQ(m.at("constants.0"), "0000000000000440");
}

TEST(TorchCheckpoint, ReadsTheSameBytesFromMemoryAsFromTheMappedFile) {
  const auto bytes = read_bytes(torch_fixture("mixed_legacy.pth"));
  const auto from_memory = TorchCheckpoint::from_bytes(bytes, "mem.pth");
  EXPECT_EQ(tensor_map(from_memory),
            tensor_map(TorchCheckpoint::open(torch_fixture("mixed_legacy.pth"))));
}

class TorchConvert : public TempDirTest {};

TEST_F(TorchConvert, WritesSafetensorsThatKeepEveryDtypeAndShape) {
  const TorchCheckpoint c = TorchCheckpoint::open(torch_fixture("mixed_legacy.pth"));
  write_torch_as_safetensors(c, path("out.safetensors"), WeightsDtype::Keep);
  const SafetensorsFile f = SafetensorsFile::open(path("out.safetensors"));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const auto& want = torch_expected()["mixed_legacy.pth"]["tensors"];
  ASSERT_EQ(f.names().size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::string name = want[i]["name"];
    SCOPED_TRACE(name);
    EXPECT_EQ(f.names()[i], name);
    EXPECT_EQ(dtype_name(f.info(name).dtype), want[i]["dtype"].get<std::string>());
    EXPECT_EQ(f.info(name).shape, want[i]["shape"].get<std::vector<std::size_t>>());
    EXPECT_EQ(hex(f.bytes(name)), want[i]["hex"].get<std::string>());
  }
}

TEST_F(TorchConvert, ConvertsFloatTensorsToF32AndF16AsTorchsFloatAndHalfDo) {
  const TorchCheckpoint c = TorchCheckpoint::open(torch_fixture("mixed_zip.pth"));
  const auto& want = torch_expected()["mixed_zip.pth"]["tensors"];
  for (const auto& [target, key, dtype] :
       {std::tuple{WeightsDtype::F32, "f32_hex", "F32"}, {WeightsDtype::F16, "f16_hex", "F16"}}) {
    SCOPED_TRACE(dtype);
    const SafetensorsFile f =
        SafetensorsFile::from_owned(torch_as_safetensors(c, target), "converted");
    for (const auto& w : want) {
      const std::string name = w["name"];
      SCOPED_TRACE(name);
      if (w.contains(key)) {
        EXPECT_EQ(dtype_name(f.info(name).dtype), dtype);
        EXPECT_EQ(hex(f.bytes(name)), w[key].get<std::string>());
      } else {
        EXPECT_EQ(dtype_name(f.info(name).dtype), w["dtype"].get<std::string>());
        EXPECT_EQ(hex(f.bytes(name)), w["hex"].get<std::string>());
      }
    }
  }
}

TEST_F(TorchConvert, OpensAnyWeightsFileAsSafetensorsWhateverItsFormat) {
  const SafetensorsFile bin = open_weights_file(torch_fixture("net_state_legacy.pth"));
  const SafetensorsFile script = open_weights_file(torch_fixture("net_script.pt"));
  ASSERT_EQ(bin.names().size(), 9u);
  for (const std::string& name : bin.names()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(hex(bin.bytes(name)), hex(script.bytes(name)));
  }
  EXPECT_EQ(bin.read_floats("fc.weight").size(), 6u);
  write_torch_as_safetensors(TorchCheckpoint::open(torch_fixture("net_state_zip.pth")),
                             path("model.safetensors"), WeightsDtype::Keep);
  const SafetensorsFile mapped = open_weights_file(path("model.safetensors"));
  EXPECT_EQ(hex(mapped.bytes("features.0.weight")), hex(bin.bytes("features.0.weight")));
}

}  // namespace in_torch_checkpoint_test
}  // namespace
}  // namespace vlbias
